#!/bin/bash
# Usage on an H100 (with .gpu64/run, .gpu64/gpu-stack.tar.xz, .gpu64/petsc64.tar.xz of scripts/build-gpu64.sh): bash scripts/gpu-larger-than-device.sh
# A cantilever cube of 94.8 GB CSR (cube 290, 3 dof, 5.9e9 entries) through an 80 GB device: the engine streams from
# the generated arrays page-locked in place (the host has 128 GB); the unit tests with 64-bit PetscInt first.
tar -xJf .gpu64/gpu-stack.tar.xz -C /opt && source /opt/gpu-stack/env.sh
mkdir -p /opt/gpu-stack64 && tar -xJf .gpu64/petsc64.tar.xz -C /opt/gpu-stack64
export LD_LIBRARY_PATH=/opt/gpu-stack64/petsc/lib:$LD_LIBRARY_PATH
B=.gpu64/run
nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv | tee $OUT/gpu.txt
free -g | tee $OUT/mem.txt; ulimit -l
timeout 150 $B/tests/test_kernels > $OUT/unit64.log 2>&1; echo "unit (64-bit PetscInt) exit $?: $(tail -1 $OUT/unit64.log)"
/usr/bin/time -v timeout 400 $B/bench/bench_stream -cube_n 290 -dof 3 -inplace -skip_mat -budget 8e9 -more_budgets 6e10 -subs 128 -ks 1,4 -reps 3 > $OUT/big.csv 2> $OUT/big.err
echo "bench_stream exit $?"; grep -E "Maximum resident|Elapsed" $OUT/big.err; tail -5 $OUT/big.err | head -3
cat $OUT/big.csv
