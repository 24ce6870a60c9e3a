#!/bin/bash
# Installs the plugin from build folder $1 into a scratch prefix, then builds and runs a consumer program with the
# installed CMake package and with the installed pkg-config file.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LD_LIBRARY_PATH="$tmp/prefix/lib:${LD_LIBRARY_PATH:-}"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer" | grep -q "type: gpustream" && echo "ok CMake package"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
mpicc -o "$tmp/pc" "$here/consumer.c" $(pkg-config --cflags --libs petscgpustream)
"$tmp/pc" | grep -q "type: gpustream" && echo "ok pkg-config"
echo "2 passed, 0 failed"
