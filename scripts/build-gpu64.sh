#!/bin/bash
# Builds, on this (CPU) machine, what the larger-than-device run needs: PETSc 3.18.5 with 64-bit PetscInt (a CSR of
# more than 2^31 entries; minimal, as ../shared/gpu-stack/build.sh makes the stack's own, from Debian's source
# package) into /opt/gpu-stack64, and bench_stream and test_kernels against it into .gpu64/build. About 30 minutes
# on 2 cores. Then: carry .gpu64 to an H100 and run scripts/gpu-larger-than-device.sh there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stack=${GPU_STACK_SRC:-$root/../shared/gpu-stack}
[ -x /opt/gpu-stack/kokkos/bin/nvcc_wrapper ] || bash "$stack/install.sh"
W=${W:-/tmp/p64}
if [ ! -f /opt/gpu-stack64/petsc/lib/libpetsc.so ]; then
  mkdir -p "$W" && cd "$W"
  if [ ! -f /etc/apt/sources.list.d/debsrc.sources ]; then
    source "$root/scripts/debian-mirror.sh"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" >/etc/apt/sources.list.d/debsrc.sources
  fi
  apt-get update -qq && apt-get source --download-only petsc
  mkdir -p petsc && tar xJf petsc_*.orig.tar.xz -C petsc --strip-components=1 && cd petsc
  PATH=/usr/bin:$PATH python3 ./configure --prefix=/opt/gpu-stack64/petsc --with-cc=mpicc --with-cxx=mpicxx --with-fc=0 \
    --with-debugging=0 --with-shared-libraries=1 --with-x=0 --with-ssl=0 --with-fortran-bindings=0 --with-64-bit-indices=1 \
    --with-blaslapack-lib="-llapack -lblas" COPTFLAGS=-O2 CXXOPTFLAGS=-O2
  make PETSC_DIR=$PWD PETSC_ARCH=arch-linux-c-opt -j"$(nproc)" && make PETSC_DIR=$PWD PETSC_ARCH=arch-linux-c-opt install
  strip --strip-unneeded /opt/gpu-stack64/petsc/lib/libpetsc.so*
fi
source "$stack/build-env.sh"
export PETSC_DIR=/opt/gpu-stack64/petsc PKG_CONFIG_PATH=/opt/gpu-stack64/petsc/lib/pkgconfig
cmake -S "$root" -B "$root/.gpu64/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc-11 \
  -DCMAKE_CXX_COMPILER=/opt/gpu-stack/kokkos/bin/nvcc_wrapper -DKokkos_ROOT=/opt/gpu-stack/kokkos \
  -DKokkosKernels_ROOT=/opt/gpu-stack/kokkos-kernels -DPETSC_DIR=/opt/gpu-stack64/petsc -DGPUSTREAM_TESTS=ON -DGPUSTREAM_BENCH=ON
cmake --build "$root/.gpu64/build" --target bench_stream test_kernels -j"$(nproc)"
# what travels to the GPU machine (64 MiB at most): the stack, the 64-bit libpetsc, the two stripped programs
cp -u "$stack/gpu-stack.tar.xz" "$root/.gpu64/"
tar -cJf "$root/.gpu64/petsc64.tar.xz" -C /opt/gpu-stack64 petsc/lib/libpetsc.so petsc/lib/libpetsc.so.3.18 petsc/lib/libpetsc.so.3.18.5
mkdir -p "$root/.gpu64/run/bench" "$root/.gpu64/run/tests"
cp "$root/.gpu64/build/bench/bench_stream" "$root/.gpu64/run/bench/" && cp "$root/.gpu64/build/tests/test_kernels" "$root/.gpu64/run/tests/"
strip "$root/.gpu64/run/bench/bench_stream" "$root/.gpu64/run/tests/test_kernels"
echo "carry: .gpu64/run .gpu64/gpu-stack.tar.xz .gpu64/petsc64.tar.xz"
