#!/bin/bash
# Builds the plugin with its tests and runs all of them with ctest (ends with ctest's summary line).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSTREAM_TESTS=ON -DGPUSTREAM_BENCH=ON
cmake --build "$root/build" -j"$(nproc)"
cd "$root/build"
ctest --output-on-failure -j"$(nproc)" "$@"
