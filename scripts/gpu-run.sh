#!/bin/bash
# Runs on the GPU machine, from the repository root, with .gpu/ copied there (gpu-stack.tar.xz and the
# build of scripts/build-gpu.sh):
#   scripts/gpu-run.sh [tests] [sanitizer] [spmv] [bench] [mpi] [stream] [benchmarks] [NS="1e4 1e5 1e6 1e7"]
# tests:     unit tests (kernels vs serial twins), example tests, PETSc tutorials through -dll_append ($TESTS selects
#            among unit ex1 matgpustream matstream matcoo mataij aijcode hostvecs pcilu kspgpustream kspbcgsf kspsgmresf kspchebyshevf
#            faults faultinject badinput devicevec tutorials; $TEST_TIMEOUT: seconds each; $TEST_JOBS: at once; faults adds the device-memory-full scenario, its output diffed with
#            the GPU reference; faultinject makes CUDA calls fail on purpose, tests/faultinject.py)
# sanitizer: compute-sanitizer memcheck, racecheck, synccheck on a small solve and on the unit tests
# solve:     the whole KSPSolve per iteration against PETSc's own GPU solvers (aijcusparse, sellcuda) in the same run,
#            device and host vectors (host: MatCreateVecs()'s pinned ones; hostpg: pageable, through pinned staging;
#            host0: pageable, staging off), the fixed cost of a solve (needs a PETSc with CUDA;
#            NS_SOLVE, REPS; SOLVE_CASES: the cases to run, all by default; SOLVE_EXTRA: more cases)
# pcs:       time to solution with preconditioners (ILU(0), ICC(0), GAMG, Jacobi) against PETSc's own GPU ones (needs a PETSc
#            with CUDA; NS_PC, NE_PC, REPS_PC; PC_EXTRA: variants, e.g. "ilu_kk|-mat_type gpustream -ksp_type pipecgfused
#            -pc_type ilu -mat_gpustream_trisolve kokkoskernels"; PCS_PROFILE: cases whose -log_view events are listed)
# spmv:      our SpMV and cuSPARSE's on the matrices of bench/generators.h (MATS="spec ..."), ratios and GB/s
# bench:     hardware limits, then time per iteration of pipecgfused, pipebcgsf, sgmresf (GPU) and PETSc's CG, BCGS,
#            GMRES on AIJ with every CPU core; cuSPARSE/cuBLAS SpMV, CG and GMRES(30) peers
# mpi:       the tests of several processes with each halo path forced, then the solvers and MatMult alone
#            (bench_matmult) on 1, 2 and (with 4 GPUs) 4 processes, one GPU each: weak scaling at 4e6 and 1.6e7 rows a
#            GPU and strong at 1.6e7 rows, each halo path (bench/scaling_summary.py)
# stream:    the streaming engine on the cantilever cube (bench/bench_stream): pinned bandwidth, MatMult resident and
#            streamed, streamed SpMV against the number of subdivisions with overlap on and off, k = 1..64 vectors
#            per pass; $STREAM_ARGS (default: 3 dof, 160 nodes per edge: an 11.5 GB CSR under a 2 GB budget)
# benchmarks: every benchmark in one command, sized to run in a few minutes: bench with NS="1e5 1e6 1e7" and no
#            launch-shape sweeps, spmv, and stream on a 5 GB CSR under a 1 GB budget
# Logs and CSV files go to $OUT (or ./gpu-out); a summary table is printed last. GPU=H200: stop unless the GPU is one.
# LIB=<folder>: the tests and sanitizer steps load the plugin from another build of the same tree (its
# libpetscgpustream.so, and its tests/test_kernels where it has one), e.g. one made with the other team launch; $B's
# test executables must find their library through RUNPATH (link them with -Wl,--enable-new-dtags) so that
# LD_LIBRARY_PATH comes first.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
B=${B:-$root/.gpu/build}
what="${*:-tests bench}"
if [[ $what == *benchmarks* ]]; then
  what="bench spmv stream"
  NS=${NS:-"1e5 1e6 1e7"}
  KERNELS=${KERNELS:-0}
  STREAM_ARGS=${STREAM_ARGS:-"-cube_n 120 -dof 3 -budget 1e9 -subs 16,32,64 -ks 1,4,16,32,48,64 -reps 3"}
fi
NS=${NS:-"1e4 1e5 1e6 1e7"}
TESTS=${TESTS:-"unit ex1 matgpustream matstream matcoo mataij aijcode hostvecs pcilu kspgpustream kspbcgsf kspsgmresf kspchebyshevf faults faultinject badinput devicevec tutorials"} # the parts of the tests step
TEST_TIMEOUT=${TEST_TIMEOUT:-120} # seconds per example test: a hang fails that test instead of the whole run
TEST_JOBS=${TEST_JOBS:-4}         # example tests of one file run at once (MPS shares the GPU among them); 1: one by one
summary=$OUT/summary.txt
: >"$summary"
step=$(mktemp)
# keeps the last step's log in $step and appends it to $OUT/$1 (few files: fewer are easier to bring back)
log() { cat "$step" >>"$OUT/$1"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "No GPU on this machine: running the CPU comparisons (scripts/cpu-bench.sh) on the CPU build instead"
  exec bash "$root/scripts/cpu-bench.sh"
fi
# GPU=H200: run only where the GPU's name says so (a machine may come with an H100 where an H200 was asked for), else stop at once
if [ -n "${GPU:-}" ] && ! nvidia-smi -L | grep -q "$GPU"; then
  echo "Not a $GPU here ($(nvidia-smi -L | head -1)): nothing run" | tee -a "$summary"
  exit 0
fi
# GPU_ENV: another stack's environment script (same contract as scripts/gpu-env.sh: sets the paths, defines hwlimits)
source "${GPU_ENV:-$root/scripts/gpu-env.sh}" || exit 1
L=$B # where the plugin's library (and the unit tests) come from
if [ -n "${LIB:-}" ]; then
  L=$(cd "$LIB" && pwd) || exit 1
  export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
  if ! ldd "$B/tests/kspgpustream" | grep -q "libpetscgpustream.so.0 => $L/"; then
    echo "LIB=$LIB: $B's test executables do not load the library from there (built without --enable-new-dtags?): nothing run" | tee -a "$summary"
    exit 1
  fi
  echo "the plugin from $L" | tee -a "$summary"
fi
ut=$L/tests/test_kernels
[ -x "$ut" ] || ut=$B/tests/test_kernels
export OMPI_MCA_rmaps_base_oversubscribe=1
MPIEXEC=$(command -v mpiexec || command -v mpirun)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
ncpu=$(nproc)

if [[ $what == *tests* ]]; then
  echo "== tests" | tee -a "$summary"
  # the halo's auto before MPS runs: two processes on one GPU without MPS take MPI (their contexts take turns on the
  # GPU, so the shared path's event waits would each cost a turn); under MPS matstream.view_auto_2 expects the shared one
  if ! pgrep -x nvidia-cuda-mps >/dev/null; then
    got=$(CUDA_VISIBLE_DEVICES=0 timeout 60 "$MPIEXEC" -n 2 "$B/tests/matstream" -view 2>&1 | grep -o "halo .*" | sort -u)
    r=FAILED
    [[ $got == *"halo messages"*"auto: a neighbour on this process's GPU, which MPS does not share"* ]] && r=passed
    echo "halo auto, two processes on one GPU without MPS, takes MPI: $r${got:+ ($got)}" | tee -a "$summary"
  fi
  # several processes on one GPU: MPS runs their kernels side by side (time-sliced, cg_2 took 19 s against 1.7 s)
  mps=""
  if command -v nvidia-cuda-mps-control >/dev/null && ! pgrep -x nvidia-cuda-mps >/dev/null && nvidia-cuda-mps-control -d; then
    mps=1
    echo "MPS daemon started for the tests" | tee -a "$summary"
  fi
  # a device fault in one MPS client fails the others on the GPU until they exit: after a file whose log shows one, the
  # daemon is restarted, so that the next file starts clean and the summary tells where the fault was
  mps_quit() { # and gone, so that a daemon started next (here, or by a later step or run) starts
    echo quit | nvidia-cuda-mps-control
    for _ in $(seq 20); do pgrep -x nvidia-cuda-mps >/dev/null || break; sleep 0.5; done
  }
  mps_recover() {
    [ -n "$mps" ] && grep -q "cudaErrorIllegalAddress\|cudaErrorDevicesUnavailable\|cudaErrorLaunchFailure" "$step" || return 0
    mps_quit
    nvidia-cuda-mps-control -d && echo "  (a device fault in this file's log: MPS daemon restarted)" | tee -a "$summary"
  }
  # host-only tests: faults.alloc* (an address-space limit, which a CUDA context cannot live under) and the CPU output
  # of faults.devicefull (its GPU output is checked below); -mat_gpustream_device_mpi true is refused, as it should
  # be, by an MPI without CUDA support (Debian's Open MPI)
  SKIP="^alloc|^devicefull$"
  if ! ompi_info --parsable --all 2>/dev/null | grep -q "mpi_built_with_cuda_support:value:true"; then
    SKIP="$SKIP|_device_[0-9]"
    echo "MPI without CUDA support: the tests of -mat_gpustream_device_mpi true are skipped" | tee -a "$summary"
  fi
  if [[ " $TESTS " == *" unit "* ]]; then
    "$ut" >"$step" 2>&1
    log tests.log
    echo "unit kernels: $(tail -1 "$step")" | tee -a "$summary"
  fi
  # a PETSc with CUDA: MatCreateVecs() gives CUDA vectors, which the tests then use (the plugin reads them in place)
  cuda=""
  grep -q "define PETSC_HAVE_CUDA 1" "$PETSC_DIR/include/petscconf.h" 2>/dev/null && cuda=1
  for t in examples/ex1.c:examples/ex1 tests/matgpustream.c:tests/matgpustream tests/matstream.c:tests/matstream tests/matcoo.c:tests/matcoo tests/mataij.c:tests/mataij tests/aijcode.c:tests/aijcode tests/hostvecs.c:tests/hostvecs tests/pcilu.c:tests/pcilu tests/kspgpustream.c:tests/kspgpustream tests/kspbcgsf.c:tests/kspbcgsf tests/kspsgmresf.c:tests/kspsgmresf tests/kspchebyshevf.c:tests/kspchebyshevf tests/faults.c:tests/faults tests/badinput.c:tests/badinput; do
    [[ " $TESTS " == *" $(basename "${t##*:}") "* ]] || continue
    python3 tests/petsctest.py --mpiexec "$MPIEXEC" --timeout "$TEST_TIMEOUT" --jobs "$TEST_JOBS" --times ${SKIP:+--skip "$SKIP"} --src "${t%%:*}" --exe "$B/${t##*:}" 2>&1 | tee "$step" >>"$OUT/tests.log"
    echo "$(basename "${t%%:*}"): $(tail -1 "$step")" | tee -a "$summary"
    mps_recover
  done
  if [[ " $TESTS " == *" devicevec "* ]]; then
    # the same expected output for every kind of vector: device vectors from MatCreateVecs(), host vectors, and the
    # user's own -vec_type cuda vectors with host vectors from MatCreateVecs(); the variants that set the vector type
    # themselves (vec_mpi*, for host builds) are left out
    variants=("host vectors|-mat_gpustream_vec_type standard")
    [ -n "$cuda" ] && variants+=("device vectors|-expect_vec_type cuda" "-vec_type cuda on host MatCreateVecs|-mat_gpustream_vec_type standard -vec_type cuda")
    for v in "${variants[@]}"; do
      python3 tests/petsctest.py --mpiexec "$MPIEXEC" --timeout "$TEST_TIMEOUT" --jobs "$TEST_JOBS" --times --skip "bad_vec_type|^vec_mpi" --src tests/devicevec.c --exe "$B/tests/devicevec" --args "${v#*|}" 2>&1 | tee "$step" >>"$OUT/tests.log"
      echo "devicevec, ${v%%|*}: $(tail -1 "$step")" | tee -a "$summary"
    done
    if [ -n "$cuda" ]; then
      # PETSc's device context on a non-blocking stream: a PETSc error naming it, no wrong answer
      timeout "$TEST_TIMEOUT" "$B/tests/devicevec" -expect_vec_type cuda -root_device_context_stream_type nonblocking >"$step" 2>&1
      rc=$?
      log tests.log
      echo "devicevec, PETSc on a non-blocking stream: exit $rc ($([ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "not a non-blocking one" "$step" && ! grep -q -i "segmentation\|signal" "$step" && echo refused as it should || echo FAILED))" | tee -a "$summary"
    fi
  fi
  if [[ " $TESTS " == *" matgpustream "* && $SKIP == *_device_* ]]; then
    # the skipped tests' option where the MPI cannot read device memory: a PETSc error naming it on every process,
    # no hang, no crash
    timeout "$TEST_TIMEOUT" "$MPIEXEC" -n 3 "$B/tests/matgpustream" -mat_gpustream_device_mpi true >"$step" 2>&1
    rc=$?
    log tests.log
    n=$(grep -c "mat_gpustream_device_mpi true: this MPI reports no CUDA support" "$step")
    echo "matgpustream -mat_gpustream_device_mpi true without CUDA-aware MPI: exit $rc, $n error lines ($([ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$n" -ge 1 ] && ! grep -q -i "segmentation\|signal" "$step" && echo refused as it should || echo FAILED))" | tee -a "$summary"
  fi
  if [[ " $TESTS " == *" pcilu "* ]]; then
    # who solves the device factors' triangles on a GPU: one kernel for these small factors by default, else cuSPARSE
    # (pcilu.view pins Kokkos-Kernels, so that its output is the CPU's), as -ksp_view says
    for be in auto "auto -gs_mat_gpustream_trisolve_one_kernel false" kokkoskernels; do
      timeout "$TEST_TIMEOUT" "$B/tests/pcilu" -scenario solve -gs_ksp_view -gs_mat_gpustream_trisolve $be >"$step" 2>&1
      log tests.log
      # (auto: Kokkos-Kernels' where the CUDA runtime's cuSPARSE does not load, as on the Kokkos 3 stack's CUDA 11)
      echo "pcilu view, -mat_gpustream_trisolve $be: $(grep -c "both solves in one kernel" "$step") factors solved in one kernel, $(grep -c "cuSPARSE's SpSV" "$step") by cuSPARSE's SpSV, $(grep -c "spiluk and sptrsv" "$step") by spiluk and sptrsv, $(grep -c "DIFFERS" "$step") differences from AIJ" | tee -a "$summary"
    done
  fi
  if [[ " $TESTS " == *" faults "* ]]; then # (its CPU reference output fails faults.devicefull above)
    timeout "$TEST_TIMEOUT" "$B/tests/faults" -scenario devicefull >"$step" 2>&1
    log tests.log
    echo "faults devicefull (GPU): $(diff -q "$step" tests/output/faults_devicefull_gpu.out >/dev/null && echo passed || echo FAILED)" | tee -a "$summary"
  fi
  if [[ " $TESTS " == *" faultinject "* ]]; then
    # device faults: the Nth CUDA launch, copy or synchronization fails (tests/faultshim.c, preloaded) on each path,
    # on 1 and 2 processes; each must end in a PETSc error
    gcc -O2 -shared -fPIC -I"$(dirname "$(command -v nvcc)")/../include" -o /tmp/libfaultshim.so tests/faultshim.c -ldl &&
      python3 tests/faultinject.py --mpiexec "$MPIEXEC" --timeout "$TEST_TIMEOUT" --shim /tmp/libfaultshim.so --ex1 "$B/examples/ex1" --ksp "$B/tests/kspgpustream" >"$step" 2>&1
    log tests.log
    echo "faultinject: $(tail -1 "$step")" | tee -a "$summary"
  fi
  tutorials=("ex2|-pc_type none|" "ex2|-pc_type jacobi -m 100 -n 100|" "ex46|-pc_type jacobi -da_grid_x 300 -da_grid_y 200|dm")
  # PETSc's tutorials unchanged on CUDA vectors: both runs (PETSc's CG on AIJ, the plugin's) take them
  [ -n "$cuda" ] && tutorials+=("ex2|-pc_type jacobi -m 100 -n 100 -vec_type cuda|" "ex2|-pc_type sor -m 60 -n 50 -vec_type cuda|" "ex46|-pc_type jacobi -da_grid_x 300 -da_grid_y 200 -dm_vec_type cuda|dm")
  [[ " $TESTS " == *" tutorials "* ]] && for c in "${tutorials[@]}"; do
    IFS='|' read -r ex args dm <<<"$c"
    ref="-${dm:+dm_}mat_type aij -ksp_type cg"
    new="-${dm:+dm_}mat_type gpustream -ksp_type pipecgfused"
    python3 tests/tutorials/compare.py --mpiexec "$MPIEXEC" --exe "$B/tests/tutorials/$ex" --dll "$L/libpetscgpustream.so" \
      --args "$args" --ref "$ref" --new "$new" >"$step" 2>&1
    log tests.log
    echo "tutorial $ex $args: $(tail -1 "$step")" | tee -a "$summary"
  done
  [ -n "$mps" ] && mps_quit
fi

if [[ $what == *mpi* ]]; then
  ngpu=$(nvidia-smi -L | wc -l)
  echo "== mpi ($ngpu GPUs)" | tee -a "$summary"
  # each halo path forced (shared: CUDA IPC; mpi: MPI messages) against one process's results
  for t in matgpustream:ops_2 matgpustream:ops_shared_2 matgpustream:ops_shared_4 matgpustream:ops_staged_2 matstream:ops_2 matstream:ops_shared_3 matstream:ops_staged_2 \
    matstream:view_shared_2 mataij:3 mataij:mpi_3 kspgpustream:cg_2 kspgpustream:cg_shared_3 kspgpustream:cg_mpi_3 kspbcgsf:cmp_2 kspbcgsf:cmp_shared_3 kspbcgsf:cmp_mpi_3 \
    kspsgmresf:cmp_2 kspsgmresf:cmp_shared_3 kspsgmresf:cmp_mpi_3 kspsgmresf:halo_view_2; do
    IFS=: read -r exe suffix <<<"$t"
    python3 tests/petsctest.py --mpiexec "$MPIEXEC" --timeout "$TEST_TIMEOUT" --times --src "tests/$exe.c" --exe "$B/tests/$exe" --only "$suffix" 2>&1 | tee "$step" >>"$OUT/tests.log"
    echo "$exe.c $suffix: $(tail -1 "$step")" | tee -a "$summary"
  done
  python3 tests/tutorials/compare.py --mpiexec "$MPIEXEC" --nsize 2 --exe "$B/tests/tutorials/ex2" --dll "$B/libpetscgpustream.so" \
    --args "-pc_type jacobi -m 300 -n 200" >"$step" 2>&1
  log tests.log
  echo "tutorial ex2 on 2 processes: $(tail -1 "$step")" | tee -a "$summary"
  "$MPIEXEC" -n 2 "$B/tests/matstream" -view 2>&1 | grep -m1 "halo" | sed "s/^ */the halo on 2 processes: /" | tee -a "$summary"
  # Weak scaling at 4e6 and 1.6e7 rows per GPU, strong at 1.6e7 rows; 1, 2 and (with 4 GPUs) 4 processes, one GPU
  # each; every halo path on several. Whole solve and loop per iteration (bench_poisson, device vectors).
  nps="1 2"
  [ "$ngpu" -ge 4 ] && nps="1 2 4"
  # the runs: "processes rows path" (one process: no halo, labelled shared)
  runs() {
    for np in $nps; do
      for n in $(python3 -c "print(*sorted({int(4e6 * $np), int(1.6e7 * $np), int(1.6e7)}))"); do
        echo "$np $n shared"
        [ "$np" -gt 1 ] && echo "$np $n mpi"
      done
    done
  }
  hopt() { # the options of a path, into the array h_opt
    h_opt=()
    [ "$1" = mpi ] && h_opt=(-mat_gpustream_halo_shared false)
    return 0
  }
  csv=$OUT/scaling.csv
  echo "case,halo,ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec" >"$csv"
  for s in "cg|pipecgfused" "cg_overlap|pipecgfused -ksp_pipecgfused_overlap_reduction" "bcgs|pipebcgsf -loop_event PBCGSFIteration" "gmres|sgmresf -loop_event SGMRESFIteration"; do
    IFS='|' read -r label k <<<"$s"
    while read -r np n h; do
      hopt "$h"
      echo "$label,$h,$("$MPIEXEC" -n "$np" "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -pc_type jacobi -ksp_type $k "${h_opt[@]}" </dev/null | tail -1)" | tee -a "$csv"
    done < <(runs)
  done
  # MatMult alone with device vectors (bench_matmult), the same runs
  mcsv=$OUT/matmult.csv
  : >"$mcsv"
  while read -r np n h; do
    hopt "$h"
    echo "$h,$("$MPIEXEC" -n "$np" "$B/bench/bench_matmult" -n "$n" -reps 100 "${h_opt[@]}" </dev/null)" | tee -a "$mcsv"
  done < <(runs)
  python3 bench/scaling_summary.py "$csv" "$mcsv" | tee "$OUT/scaling-summary.txt" | tee -a "$summary"
fi

if [[ $what == *sanitizer* ]]; then
  echo "== compute-sanitizer" | tee -a "$summary"
  for tool in memcheck racecheck synccheck; do
    for ksp in pipecgfused pipebcgsf sgmresf; do
      timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 9 "$B/examples/ex1" -m 24 -n 24 -pc_type jacobi -ksp_type $ksp >"$step" 2>&1
      echo "$tool ex1 ($ksp, jacobi, 576 rows): exit $? $(grep -E -o '(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+' "$step" | tail -1)" | tee -a "$summary"
      log sanitizer.log
    done
  done
  for tool in memcheck racecheck synccheck; do # the streaming engine: two streams and events
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/matstream" >"$step" 2>&1
    echo "$tool matstream (streamed products): exit $? $(grep -E -o '(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+' "$step" | tail -1), $(grep -c FAILED "$step") FAILED lines" | tee -a "$summary"
    log sanitizer.log
  done
  for tool in memcheck synccheck; do # the error paths of bad input and options, then the same objects on good input
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/badinput" -malloc_debug >"$step" 2>&1
    echo "$tool badinput: exit $? $(grep -E -o '(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+' "$step" | tail -1), $(grep -c -E 'UNEXPECTED|UNLIKE|FAILED|LEAKED' "$step") failed checks" | tee -a "$summary"
    log sanitizer.log
  done
  timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool memcheck --error-exitcode 9 "$ut" -max_size 1000 -skip AllocationFailure >"$step" 2>&1
  echo "memcheck unit tests: exit $? $(grep -E -o '(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+' "$step" | tail -1), $(grep passed "$step" | tail -1)" | tee -a "$summary"
  log sanitizer.log
  for tool in racecheck synccheck; do # the SpMV kernels' scratch memory (the whole unit suite outlasts the timeout)
    timeout $((2 * ${SAN_TIMEOUT:-120})) compute-sanitizer --tool $tool --error-exitcode 9 "$ut" -max_size 1000 -only SpMV,Tiles,BlockFormat,Step >"$step" 2>&1 # racecheck: 111 s on an H200 without Step
    echo "$tool unit tests SpMV,Tiles,BlockFormat,Step: exit $? $(grep -E -o '(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+' "$step" | tail -1), $(grep passed "$step" | tail -1)" | tee -a "$summary"
    log sanitizer.log
  done
fi

if [[ $what == *solve* ]]; then
  # The whole KSPSolve (b and x in the program's vectors, from MatCreateVecs()) per iteration at 30 iterations on the
  # 2D Laplacian, no PC, against PETSc's own GPU solvers (aijcusparse and sellcuda with CUDA vectors) in the same
  # run; the plugin with its default vectors (the GPU vectors of a PETSc with CUDA) and with host vectors. Needs a
  # PETSc with CUDA (GPU_ENV). NS_SOLVE: sizes; REPS: timed solves (median).
  echo "== solve (whole KSPSolve against PETSc's GPU solvers)" | tee -a "$summary"
  hwlimits "$OUT/hw.csv"
  csv=$OUT/solve.csv
  echo "case,ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec" >"$csv"
  dll="-dll_append $B/libpetscgpustream.so"
  cases=("cg|-mat_type aijcusparse -ksp_type cg" "cg_sell|-mat_type sellcuda -ksp_type cg"
    "pipecgfused|$dll -mat_type gpustream -ksp_type pipecgfused"
    "pipecgfused_host|$dll -mat_type gpustream -mat_gpustream_vec_type standard -ksp_type pipecgfused"
    "pipecgfused_hostpg|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type pipecgfused -gpustream_staging_threads 8"
    "pipecgfused_host0|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type pipecgfused -gpustream_staging_threads 0"
    "bcgs|-mat_type aijcusparse -ksp_type bcgs" "bcgs_sell|-mat_type sellcuda -ksp_type bcgs"
    "pipebcgsf|$dll -mat_type gpustream -ksp_type pipebcgsf -loop_event PBCGSFIteration"
    "pipebcgsf_host|$dll -mat_type gpustream -mat_gpustream_vec_type standard -ksp_type pipebcgsf -loop_event PBCGSFIteration"
    "pipebcgsf_hostpg|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type pipebcgsf -loop_event PBCGSFIteration -gpustream_staging_threads 8"
    "pipebcgsf_host0|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type pipebcgsf -loop_event PBCGSFIteration -gpustream_staging_threads 0"
    "gmres|-mat_type aijcusparse -ksp_type gmres -ksp_gmres_restart 30" "gmres_sell|-mat_type sellcuda -ksp_type gmres -ksp_gmres_restart 30"
    "sgmresf|$dll -mat_type gpustream -ksp_type sgmresf -ksp_gmres_restart 30 -loop_event SGMRESFIteration"
    "sgmresf_host|$dll -mat_type gpustream -mat_gpustream_vec_type standard -ksp_type sgmresf -ksp_gmres_restart 30 -loop_event SGMRESFIteration"
    "sgmresf_hostpg|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type sgmresf -ksp_gmres_restart 30 -loop_event SGMRESFIteration -gpustream_staging_threads 8"
    "sgmresf_host0|$dll -mat_type gpustream -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -ksp_type sgmresf -ksp_gmres_restart 30 -loop_event SGMRESFIteration -gpustream_staging_threads 0")
  # SOLVE_EXTRA: more cases, "label|options;label|options" (another build of the plugin, say, for an A/B comparison)
  if [ -n "${SOLVE_EXTRA:-}" ]; then IFS=';' read -r -a extra <<<"$SOLVE_EXTRA" && cases+=("${extra[@]}"); fi
  for n in ${NS_SOLVE:-1e4 1e5 1e6 4e6 1e7}; do
    for c in "${cases[@]}"; do
      [ -n "${SOLVE_CASES:-}" ] && [[ " $SOLVE_CASES " != *" ${c%%|*} "* ]] && continue
      line=$(timeout 300 "$B/bench/bench_poisson" -n "$n" -its 30 -reps "${REPS:-7}" ${c#*|} 2>>"$OUT/solve.err" | tail -1)
      echo "${c%%|*},${line:-failed}" | tee -a "$csv" >/dev/null
    done
  done
  python3 bench/solve_summary.py "$csv" "$OUT/hw.csv" | tee "$OUT/solve-summary.txt" | tee -a "$summary"
fi

if [[ $what == *pcs* ]]; then
  # Time to solution with a preconditioner, set-up included: the 3D Laplacian (bench/bench_pc.c; NS_PC sizes) and
  # PETSc's ex56 (3D elasticity, its second set-up and solve; NE_PC elements a side); PETSc's CG on aijcusparse with
  # its own ILU(0) and ICC(0) (cuSPARSE) and GAMG against pipecgfused on gpustream with the device ILU(0) and ICC(0) and
  # GAMG (gpustream levels), Jacobi for scale; CUDA vectors from MatCreateVecs() on both (needs a PETSc with CUDA)
  echo "== pcs (time to solution with preconditioners)" | tee -a "$summary"
  dll="-dll_append $B/libpetscgpustream.so"
  pcases=("cg_ilu|-mat_type aijcusparse -ksp_type cg -pc_type ilu" "pipecgfused_ilu|$dll -mat_type gpustream -ksp_type pipecgfused -pc_type ilu"
    "cg_icc|-mat_type aijcusparse -ksp_type cg -pc_type icc" "pipecgfused_icc|$dll -mat_type gpustream -ksp_type pipecgfused -pc_type icc"
    "cg_gamg|-mat_type aijcusparse -ksp_type cg -pc_type gamg" "pipecgfused_gamg|$dll -mat_type gpustream -ksp_type pipecgfused -pc_type gamg"
    "cg_jacobi|-mat_type aijcusparse -ksp_type cg -pc_type jacobi" "pipecgfused_jacobi|$dll -mat_type gpustream -ksp_type pipecgfused -pc_type jacobi")
  # PC_EXTRA: more cases, "label|options" separated by ';' (variants of the plugin's: listed apart in the summary)
  IFS=';' read -r -a extra <<<"${PC_EXTRA:-}"
  for c in "${extra[@]}"; do [ -n "$c" ] && pcases+=("${c%%|*}|$dll ${c#*|}"); done
  echo "case,ksp,pc,mat,n,nnz,its,first_ms,setup_ms,solve_ms,total_ms,relres,vec" >"$OUT/pcs.csv"
  for n in ${NS_PC:-1e6 4e6}; do
    for c in "${pcases[@]}"; do
      line=$(timeout 240 "$B/bench/bench_pc" -n "$n" -reps "${REPS_PC:-3}" ${c#*|} 2>>"$OUT/pcs.err" | tail -1)
      echo "${c%%|*},${line:-failed}" | tee -a "$OUT/pcs.csv" >/dev/null
    done
  done
  echo "case,ne,n,its,setup_ms,solve_ms,total_ms" >"$OUT/ex56.csv"
  for ne in ${NE_PC:-39}; do
    for c in "${pcases[@]}"; do
      # ICC(0) of ex56's elasticity: PETSc's cuSPARSE one breaks down (NaN), the device one needs 33x ILU's iterations
      [[ ${c%%|*} == *icc* ]] && [ -z "${EX56_ICC:-}" ] && continue
      timeout 240 "$B/tests/tutorials/ex56" -ne "$ne" -two_solves -ksp_rtol 1e-8 -ksp_norm_type unpreconditioned -ksp_max_it 20000 -ksp_converged_reason -log_view ${c#*|} >"$step" 2>&1
      log ex56.log
      python3 bench/pc_summary.py --ex56 "$step" "${c%%|*}" "$ne" >>"$OUT/ex56.csv"
    done
  done
  python3 bench/pc_summary.py "$OUT/pcs.csv" "$OUT/ex56.csv" | tee "$OUT/pcs-summary.txt" | tee -a "$summary"
  # PCS_PROFILE="case ...": -log_view of those cases on the first NS_PC size, the events of the timed solves (set-ups
  # after new values included; bench_pc's stage "Timed solves") by time, into pcs-profile.txt
  for name in ${PCS_PROFILE:-}; do
    for c in "${pcases[@]}"; do
      [ "${c%%|*}" == "$name" ] || continue
      timeout 240 "$B/bench/bench_pc" -n "${NS_PC%% *}" -reps "${REPS_PC:-3}" ${c#*|} -log_view >"$step" 2>&1
      log pcs-logview.log
      { echo "== $name: the timed solves' events, by time (count, max time s)"; awk '/Event Stage [0-9]+: Timed solves/ {s = 1; next} s && /^---/ {s = 0} s && NF > 3 && $2 + 0 > 0 && $4 ~ /^[0-9.]+e[-+][0-9]+$/ {print $1, $2, $4}' "$step" | sort -k3 -g -r | head -25; } >>"$OUT/pcs-profile.txt"
    done
  done
fi

if [[ $what == *spmv* ]]; then
  # small and large (at least 5e8 nonzeros) 27-point matrices with 1, 3 and 6 unknowns per node, uneven rows
  MATS=${MATS:-"poisson2d:1e4 poisson2d:1e5 poisson2d:1e6 poisson2d:1e7 cube27:20:1 cube27:265:1 cube27:14:3 cube27:128:3 cube27:10:6 cube27:81:6 powerlaw:1e5:16 powerlaw:1e7:16"}
  echo "== spmv" | tee -a "$summary"
  hwlimits "$OUT/hw.csv"
  nvcc -O3 -arch=sm_90 -o /tmp/cusparse_spmv bench/cusparse_spmv.cu -lcusparse && /tmp/cusparse_spmv $MATS | tee "$OUT/spmv_cusparse.csv"
  "$B/bench/bench_spmv" -mats "$(echo $MATS | tr ' ' ,)" | tee "$OUT/spmv_ours.csv"
  python3 - "$OUT/spmv_ours.csv" "$OUT/spmv_cusparse.csv" "$OUT/hw.csv" <<'PY' | tee -a "$summary"
import csv, sys
ours = list(csv.DictReader(open(sys.argv[1])))
peers = list(csv.DictReader(open(sys.argv[2])))
peer = {r["matrix"]: r for r in peers if r["peer"] == "cusparse_spmv"}
bsr = {r["matrix"]: r for r in peers if r["peer"] == "cusparse_bsrmv"}
hw = dict(l.strip().split(",", 1) for l in open(sys.argv[3]))
print("device copy %s GB/s; default: MatMult's automatic choice (block column indices on full-block matrices)" % hw["d2d_copy_GBps"])
print("%-16s %10s %11s %9s %9s %-18s %9s %7s %7s %7s %7s %7s %9s" % ("matrix", "n", "nnz", "ours us", "best us", "best kernel", "cusp us", "default", "best", "GB/s", "cusp", "of copy", "bsr/ours"))
for m in peer:
    rs = [r for r in ours if r["matrix"] == m]
    if not rs:
        continue
    d = ([r for r in rs if r["kernel"] == "spmv_block_default"] or [r for r in rs if r["kernel"] == "spmv_default"])[0]
    b = min(rs, key=lambda r: float(r["us"]))
    c = float(peer[m]["us"])
    vb = "%.2f" % (float(bsr[m]["us"]) / float(d["us"])) if m in bsr else "-"
    print("%-16s %10s %11s %9s %9s %-18s %9.1f %7.2f %7.2f %7s %7s %7.2f %9s" % (m, d["n"], d["nnz"], d["us"], b["us"], "%s/%s" % (b["kernel"][5:], b["vlen"]), c, float(d["us"]) / c, float(b["us"]) / c, d["GBps"], peer[m]["GBps"], float(d["GBps"]) / float(hw["d2d_copy_GBps"]), vb))
PY
fi

if [[ $what == *bench* ]]; then
  echo "== bench" | tee -a "$summary"
  hwlimits "$OUT/hw.csv" && tee -a "$summary" <"$OUT/hw.csv"
  # the launch-shape sweeps behind the kernel choices (KERNELS=0 skips them; the SpMV column below then stays empty)
  if [ "${KERNELS:-1}" != 0 ]; then for n in $NS; do "$B/bench/bench_kernels" -n $n -reps 30 >>"$OUT/kernels.csv"; done; fi
  nvcc -O3 -arch=sm_90 -o /tmp/cusparse_peers bench/cusparse_peers.cu -lcusparse -lcublas && /tmp/cusparse_peers $NS >"$OUT/peers.csv"
  csv=$OUT/pipecg.csv
  echo "ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec" >"$csv"
  for n in $NS; do
    for pc in none jacobi; do
      "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type pipecgfused -pc_type $pc | tee -a "$csv"
    done
    # KSPMatSolve: NRHS columns in the block kernels (time per iteration of all of them)
    for k in ${NRHS:-8}; do
      "$B/bench/bench_poisson" -n "$n" -nrhs "$k" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type pipecgfused -pc_type jacobi | tee -a "$csv"
    done
    "$MPIEXEC" -n "$ncpu" --bind-to core "$B/bench/bench_poisson" -n "$n" -mat_type aij -ksp_type cg -pc_type none | tee -a "$csv"
    "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type pipebcgsf -pc_type none -loop_event PBCGSFIteration | tee -a "$csv"
    "$MPIEXEC" -n "$ncpu" --bind-to core "$B/bench/bench_poisson" -n "$n" -mat_type aij -ksp_type bcgs -pc_type none | tee -a "$csv"
    # restart 30 (the default) and 30 iterations: one whole cycle per solve; pc "none": the default (delayed) refinement,
    # "ifneeded": PETSc's refinement in the same iteration, "never": no second Gram-Schmidt pass
    "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type sgmresf -pc_type none -loop_event SGMRESFIteration | tee -a "$csv"
    for r in ifneeded never; do
      "$B/bench/bench_poisson" -n "$n" -dll_append "$B/libpetscgpustream.so" -mat_type gpustream -ksp_type sgmresf -pc_type none -loop_event SGMRESFIteration -ksp_sgmresf_cgs_refinement $r | sed "s/,none,/,$r,/" | tee -a "$csv"
    done
    "$MPIEXEC" -n "$ncpu" --bind-to core "$B/bench/bench_poisson" -n "$n" -mat_type aij -ksp_type gmres -pc_type none | tee -a "$csv"
  done
  python3 - "$OUT/kernels.csv" "$OUT/peers.csv" "$csv" <<'PY' | tee -a "$summary"
import csv, sys
k = {int(r[1]): r for r in csv.reader(open(sys.argv[1])) if r and r[0] == "spmv_default"} if __import__("os").path.exists(sys.argv[1]) else {}
peers = list(csv.DictReader(open(sys.argv[2])))
ours = {int(r["n"]): float(r["us_per_it_loop"]) for r in csv.DictReader(open(sys.argv[3])) if r["ksp"] == "pipecgfused" and r["pc"] == "none"}
print("%9s %12s %12s %7s %14s %14s %7s" % ("n", "spmv us", "cusparse us", "ratio", "pipecgf us/it", "cusparse cg", "ratio"))
for n in sorted(ours):
    sp = [float(p["us"]) for p in peers if p["peer"] == "cusparse_spmv" and int(p["n"]) == n]
    cg = [float(p["us"]) for p in peers if p["peer"] == "cusparse_cublas_cg" and int(p["n"]) == n]
    spmv = float(k[n][5]) if n in k else float("nan")
    if sp and cg:
        print("%9d %12.2f %12.2f %7.2f %14.2f %14.2f %7.2f" % (n, spmv, sp[0], spmv / sp[0], ours[n], cg[0], ours[n] / cg[0]))
bc = {int(r["n"]): float(r["us_per_it_loop"]) for r in csv.DictReader(open(sys.argv[3])) if r["ksp"] == "pipebcgsf" and r["pc"] == "none"}
print("%9s %14s %20s %7s" % ("n", "pipebcgsf us/it", "cusparse bicgstab us", "ratio"))
for n in sorted(bc):
    bi = [float(p["us"]) for p in peers if p["peer"] == "cusparse_cublas_bicgstab" and int(p["n"]) == n]
    if bi:
        print("%9d %14.2f %20.2f %7.2f" % (n, bc[n], bi[0], bc[n] / bi[0]))
sg = {int(r["n"]): float(r["us_per_it_loop"]) for r in csv.DictReader(open(sys.argv[3])) if r["ksp"] == "sgmresf" and r["pc"] == "none"}
print("%9s %14s %18s %7s" % ("n", "sgmresf us/it", "cusparse gmres us", "ratio"))
for n in sorted(sg):
    gm = [float(p["us"]) for p in peers if p["peer"] == "cusparse_cublas_gmres" and int(p["n"]) == n]
    if gm:
        print("%9d %14.2f %18.2f %7.2f" % (n, sg[n], gm[0], sg[n] / gm[0]))
PY
  python3 - "$csv" "$OUT/hw.csv" <<'PY' | tee -a "$summary"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
hw = dict(l.strip().split(",", 1) for l in open(sys.argv[2]))
bw = float(hw["d2d_copy_GBps"]) * 1e9
lat = float(hw["launch_readback_us"])
print("%-11s %-6s %9s %10s %10s %9s %8s %8s" % ("ksp", "pc", "n", "solve us/it", "loop us/it", "floor us", "loop/floor", "loop/lat"))
for r in rows:
    n, nnz = int(r["n"]), float(r["nnz"])
    floor = ""
    if r["ksp"] == "pipecgfused":  # bytes the fused kernels must move per iteration
        if n <= 2e6:  # one kernel (-ksp_pipecgfused_one_kernel auto): x,r,p,w (+dinv) read, x,r,p,w written
            vec = 8 + (1 if r["pc"] == "jacobi" else 0)
        else:  # Update r/w x,r,p,w (+dinv); SpMVDot p,w (+dinv)
            vec = 7 + 2 + (2 if r["pc"] == "jacobi" else 0)
        floor = "%.1f" % ((12 * nnz + 4 * (n + 1) + 8 * vec * n) / bw * 1e6)
    if r["ksp"] == "pipebcgsf":  # two SpMVs; p,v,r0 + r,v,s,t,r0 (s formed in the second, the default up to 3e6 rows, 2e5 with Jacobi) + x,p,s,t,v,r0 read and x,r,p written; one pass more (s written and read) above
        vec = 17 if n <= (2e5 if r["pc"] == "jacobi" else 3e6) else 18
        floor = "%.1f" % ((2 * (12 * nnz + 4 * (n + 1)) + 8 * vec * n) / bw * 1e6)
    if r["ksp"] == "sgmresf" and r["pc"] != "none":  # restart m = 30, averaged over the cycle; without the refinement's two extra reads of v_1..v_{k-1}
        m = 30
        cols = sum(max(k - 1, 1) + 1 + (k - 1 + 2 if k > 1 else 0) + 3 for k in range(1, m + 1))  # SpMVDot, Orthogonalize, Normalize
        cols += (m + 2) + 3  # UpdateSolution (m columns, x read and written), Residual (x, b, r0)
    if r["ksp"] == "sgmresf" and r["pc"] == "none":  # the default delayed refinement: its own bytes
        m = 30
        cols = 2 + sum((k - 1) + 1 + (k + 1) + 2 for k in range(2, m + 1))  # SpMVDot(1); SpMVDotDelayed (v_1..v_{k-1}, x), OrthogonalizeDelayed (r0, v_1..v_{k-1}, x; v_{k-1}, w'_k)
        cols += m + (m + 2) + (m + 2) + 3  # the close (Dot, Normalize), UpdateSolution, Residual
    if r["ksp"] == "sgmresf":
        floor = "%.1f" % (((m + 1) * (12 * nnz + 4 * (n + 1)) + 8 * cols * n) / m / bw * 1e6)
    ratio = "%.2f" % (float(r["us_per_it_loop"]) / float(floor)) if floor else ""
    # against the latency of one launch and readback: the limit of small problems
    t = float(r["us_per_it_loop"]) if float(r["us_per_it_loop"]) > 0 else float(r["us_per_it_solve"])
    print("%-11s %-6s %9d %10s %10s %9s %8s %8.2f" % (r["ksp"] + ("x%s" % r["nprocs"] if r["nprocs"] != "1" else ""), r["pc"], n, r["us_per_it_solve"], r["us_per_it_loop"], floor, ratio, t / lat))
PY
fi
if [[ $what == *stream* ]]; then
  echo "== stream" | tee -a "$summary"
  STREAM_ARGS=${STREAM_ARGS:-"-cube_n 160 -dof 3 -budget 2e9 -subs 16,24,32,48,64,128 -ks 1,4,16,64 -reps 5"}
  timeout 540 "$B/bench/bench_stream" $STREAM_ARGS -log_view :"$OUT/stream_log.txt" >"$OUT/stream.csv" 2>"$step"
  echo "bench_stream $STREAM_ARGS: exit $?" | tee -a "$summary"
  log stream.log
  grep GPUStream "$step" | tee -a "$summary"
  python3 bench/stream_summary.py "$OUT/stream.csv" | tee -a "$summary"
fi

echo "================ summary"
cat "$summary"
