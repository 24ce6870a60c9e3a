#!/bin/bash
# Usage on the GPU machine (device tool, .gpu carried): bash scripts/gpu-profile.sh; CSV files in $OUT/p.tgz
# Kernel durations and DRAM bytes (ncu) of one stretch of iterations: sgmresf at 1e5, pipecgfused and pipebcgsf at 4e6
[ -d /opt/gpu-stack ] || tar -xJf .gpu/gpu-stack.tar.xz -C /opt
source /opt/gpu-stack/env.sh
B=.gpu/build; mkdir -p $OUT/p
S="--clock-control none --kernel-name-base demangled --csv --page raw --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
run() { name=$1; shift; timeout 150 ncu $S --launch-skip 150 --launch-count 24 $B/bench/bench_poisson "$@" -dll_append $B/libpetscgpustream.so -mat_type gpustream -reps 2 > $OUT/p/$name.csv 2>$OUT/p/$name.err; echo "$name exit $?"; }
run sgmresf-1e5 -n 1e5 -ksp_type sgmresf -pc_type none
run pipecg-4e6 -n 4e6 -ksp_type pipecgfused -pc_type none
run pipebcgs-4e6 -n 4e6 -ksp_type pipebcgsf -pc_type none
for n in 1e5 4e6; do $B/bench/bench_poisson -n $n -dll_append $B/libpetscgpustream.so -mat_type gpustream -ksp_type sgmresf -pc_type none -loop_event SGMRESFIteration; done > $OUT/p/plain.csv
cd $OUT && tar -czf p.tgz p && rm -rf p
