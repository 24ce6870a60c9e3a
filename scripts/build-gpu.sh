#!/bin/bash
# Builds the GPU variant (Kokkos CUDA for sm_90, PETSc 3.18 of ../shared/gpu-stack) into .gpu/build, on this
# (CPU) machine; scripts/gpu-run.sh runs it on the GPU machine. Needs ../shared/gpu-stack/install.sh done once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stack=${GPU_STACK_SRC:-$root/../shared/gpu-stack}
[ -x /opt/gpu-stack/kokkos/bin/nvcc_wrapper ] || bash "$stack/install.sh"
source "$stack/build-env.sh"
mkdir -p "$root/.gpu"
cp -u "$stack/gpu-stack.tar.xz" "$root/.gpu/"
cmake -S "$root" -B "$root/.gpu/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc-11 \
  -DCMAKE_CXX_COMPILER=/opt/gpu-stack/kokkos/bin/nvcc_wrapper -DKokkos_ROOT=/opt/gpu-stack/kokkos \
  -DKokkosKernels_ROOT=/opt/gpu-stack/kokkos-kernels -DPETSC_DIR=/opt/gpu-stack/petsc -DGPUSTREAM_TESTS=ON -DGPUSTREAM_BENCH=ON
cmake --build "$root/.gpu/build" -j"$(nproc)"
