#!/bin/bash
# Copies what the device calls need from the GPU build ($SRC, default .gpu/build) into $DST (default .gpu/run/build),
# stripped, so that it and the stack's tarball fit in 64 MiB: the plugin, the C tests, examples, bench_poisson and
# bench_pc, and the Kokkos executables named in $EXTRA (default: tests/test_kernels). On the GPU machine: B=$DST with
# LD_LIBRARY_PATH=$B (the executables' run path names this machine's build folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=${SRC:-$root/.gpu/build} dst=${DST:-$root/.gpu/run/build}
rm -rf "$dst"
mkdir -p "$dst/tests/tutorials" "$dst/bench" "$dst/examples"
strip --strip-unneeded -o "$dst/libpetscgpustream.so" "$src/libpetscgpustream.so.0.1.0"
ln -s libpetscgpustream.so "$dst/libpetscgpustream.so.0"
for f in tests/kspgpustream tests/kspbcgsf tests/kspsgmresf tests/kspchebyshevf tests/matgpustream tests/matstream tests/matcoo tests/mataij tests/aijcode tests/hostvecs tests/pcilu tests/devicevec tests/faults tests/badinput examples/ex1 bench/bench_poisson bench/bench_pc ${EXTRA:-tests/test_kernels}; do
  [ -f "$src/$f" ] && strip --strip-unneeded -o "$dst/$f" "$src/$f"
done
for f in "$src"/tests/tutorials/*; do [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dst/tests/tutorials/"; done
du -sh "$dst"
