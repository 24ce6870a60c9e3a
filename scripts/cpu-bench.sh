#!/bin/bash
# The CPU comparisons: our solvers on Kokkos' CPU backend (this build) against PETSc's KSPCG, KSPPIPECG, KSPBCGS,
# KSPPIPEBCGS, KSPGMRES and KSPPGMRES on AIJ, same problem (2D Laplacian), 30 iterations, no preconditioner.
#   scripts/cpu-bench.sh [BUILD=build] [NS="1e4 1e5"] [NP=<cores>]
# CSV on stdout's last table and in $OUT/cpu.csv (or ./cpu-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$root/build}
NS=${NS:-"1e4 1e5"}
NP=${NP:-$(nproc)}
OUT=${OUT:-$root/cpu-out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
csv=$OUT/cpu.csv
echo "ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec" >"$csv"
for n in $NS; do
  for k in "pipecgfused PCGFIterations" "pipebcgsf PBCGSFIteration" "sgmresf SGMRESFIteration"; do
    read -r ksp ev <<<"$k"
    "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type "$ksp" -loop_event "$ev" | tee -a "$csv"
  done
  for ksp in cg pipecg bcgs pipebcgs gmres pgmres; do
    mpiexec -n "$NP" "$B/bench/bench_poisson" -n "$n" -mat_type aij -ksp_type $ksp | tee -a "$csv"
  done
done
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
column -s, -t "$csv"
