#!/bin/bash
# Builds the plugin and runs the main example: Poisson's equation on a 512 x 512 grid with a gpustream matrix and
# pipelined CG with fused kernels, on Kokkos' default backend (Serial with Debian's Kokkos), with -log_view.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target ex1 >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$root/build/examples/ex1" -m 512 -n 512 -mat_type gpustream -ksp_type pipecgfused -pc_type jacobi -ksp_converged_reason -ksp_view -log_view "$@"
