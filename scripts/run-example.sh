#!/bin/bash
# Builds the plugin and runs the main example: Poisson's equation on a 512 x 512 grid with a gpustream matrix and
# pipelined CG with fused kernels, on Kokkos' default backend (Serial with Debian's Kokkos), with -log_view.
# Says each phase on stderr (dependencies, configuration, build, run); the example's output is all that goes to stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "run-example.sh: $*" >&2; }
say "checking the dependencies (apt-get installs the missing Debian packages)"
bash "$root/scripts/install-deps.sh"
say "configuring with CMake in $root/build"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
say "building the plugin and examples/ex1 (a few minutes the first time)"
cmake --build "$root/build" -j"$(nproc)" --target ex1 >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=(-m 512 -n 512 -mat_type gpustream -ksp_type pipecgfused -pc_type jacobi -ksp_converged_reason -ksp_view -log_view "$@")
say "running build/examples/ex1 ${args[*]}"
"$root/build/examples/ex1" "${args[@]}"
