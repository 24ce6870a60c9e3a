# shellcheck shell=bash disable=SC2154,SC1091
# Sourced, with $root set to the repository root, by the scripts that run on the GPU machine (gpu-run.sh, gpu-ab.sh,
# gpu-profile.sh): unpacks the GPU stack carried in .gpu/ once, loads its environment, and defines
# `hwlimits FILE`, which writes this GPU's limits (bench/hwlimits.cu: copy bandwidth, launch plus readback) to FILE.
if [ ! -d /opt/gpu-stack ]; then tar -xJf "$root/.gpu/gpu-stack.tar.xz" -C /opt || exit 1; fi
source /opt/gpu-stack/env.sh
# (compiled once a machine: gpu-run.sh measures again in each step that reports ratios)
hwlimits() { { [ /tmp/hwlimits -nt "$root/bench/hwlimits.cu" ] || nvcc -O3 -arch=sm_90 -o /tmp/hwlimits "$root/bench/hwlimits.cu"; } && /tmp/hwlimits >"$1"; }
