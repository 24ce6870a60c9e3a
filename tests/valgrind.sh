#!/bin/bash
# Runs a program under valgrind's memcheck: fails on any memory error (invalid access, uninitialised value) and on any
# leak whose stack passes through the plugin or Kokkos. Leaks inside Open MPI's own initialization are not ours and
# are left out; PETSc objects are checked by PETSc itself (run with -malloc_dump).
#   valgrind.sh PROGRAM [ARGS...]
set -uo pipefail
log=$(mktemp)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the OpenMP threads of a Kokkos with that backend yield instead of spinning, unless the caller chose: valgrind runs
# one thread at a time, and a spinning one holds it for its whole time slice (as the other test drivers do)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_PROC_BIND=${OMP_PROC_BIND:-false} KOKKOS_DISABLE_WARNINGS=${KOKKOS_DISABLE_WARNINGS:-1}
supp=""
for f in /usr/share/openmpi/openmpi-valgrind.supp /usr/share/petsc/*/share/petsc/valgrind/petsc-val.supp; do
  [ -f "$f" ] && supp="$supp --suppressions=$f"
done
valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=none $supp "$@" >"$log" 2>&1
rc=$?
ours=$(awk '/definitely lost in loss record/ { rec = 1; hit = 0; next } rec && /==[0-9]+== *$/ { if (hit) n++; rec = 0 } rec && /\((gpustream|factor|aijreaders|pipecgfused|spmvref|pipecgfusedref|pipebcgsf|pipebcgsfref|sgmresf|sgmresfref|petsc-registration|options|residualgap|rightpc|pcblocks)\.c:|\.kokkos\.cxx:|Kokkos|libpetscgpustream/ { hit = 1 } END { print n + 0 }' "$log")
echo "valgrind exit $rc, leaks through the plugin or Kokkos: $ours"
if [ "$rc" -ne 0 ] || [ "$ours" -ne 0 ]; then
  cat "$log"
  echo "0 passed, 1 failed"
  exit 1
fi
grep -v "^==" "$log" | tail -3
echo "1 passed, 0 failed"
