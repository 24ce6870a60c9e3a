#!/bin/bash
# Usage on the GPU machine (.gpu copied there): bash scripts/gpu-profile.sh [name:args ...]
# Kernel durations, DRAM bytes and occupancy (ncu) of one stretch of iterations (default: sgmresf at 1e5 and 4e6,
# pipecgfused and pipebcgsf at 4e6), then a table per kernel: time, GB/s and that over the device-to-device copy
# rate (hwlimits) of the same call, and tail: how long the busiest multiprocessor ran past the average one (the
# last team's finish, or uneven rows). CSV files in $OUT/p.tgz ($OUT: ./gpu-out unless set, as in gpu-run.sh).
# B: the build (default .gpu/run/build, gpu-slim.sh's); LIB: the plugin (default $B's). Each run is PCNONE unless
# its arguments name a -pc_type. SKIP: launches left out first (default 150, past the warm-up solve); a run with
# fewer launches than that, such as pipecgfused's one kernel per iteration at 1e5 (three solves of 31), gets no
# rows: lower SKIP or raise -its. METRICS: more ncu metrics (comma-separated), averaged per kernel in a second table,
# e.g. the L1 and L2 sectors behind the SpMV's gathers:
# METRICS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/gpu-out}
source "${GPU_ENV:-$root/scripts/gpu-env.sh}"
B=${B:-.gpu/run/build}
mkdir -p "$OUT/p"
S="--clock-control none --print-units base --kernel-name-base demangled --csv --page raw --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max${METRICS:+,$METRICS}"
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=("sgmresf-1e5:-n 1e5 -ksp_type sgmresf" "sgmresf-4e6:-n 4e6 -ksp_type sgmresf" "pipecg-4e6:-n 4e6 -ksp_type pipecgfused" "pipebcgs-4e6:-n 4e6 -ksp_type pipebcgsf")
hwlimits "$OUT/p/hw.csv"
for r in "${runs[@]}"; do
  name=${r%%:*}
  # shellcheck disable=SC2086
  timeout 200 ncu $S --launch-skip "${SKIP:-150}" --launch-count 32 "$B/bench/bench_poisson" -pc_type none ${r#*:} -dll_append "${LIB:-$B/libpetscgpustream.so}" -mat_type gpustream -reps 2 >"$OUT/p/$name.csv" 2>"$OUT/p/$name.err"
  echo "$name exit $?"
done
python3 - "$OUT/p" <<'PY'
import csv, glob, os, re, sys
d = sys.argv[1]
hw = dict(l.strip().split(",", 1) for l in open(os.path.join(d, "hw.csv")))
copy = float(hw["d2d_copy_GBps"])
extra = [x for x in os.environ.get("METRICS", "").split(",") if x]
tables = []
print("device %s, copy %.1f GB/s" % (hw.get("device", "?"), copy))
print("%-14s %-26s %4s %9s %8s %9s %7s %6s %4s %5s %7s" % ("run", "kernel", "n", "us", "us/n", "MB", "GB/s", "/copy", "regs", "occ%", "tail us"))
for f in sorted(glob.glob(os.path.join(d, "*.csv"))):
    if f.endswith("hw.csv"):
        continue
    lines = [l for l in open(f) if l.startswith('"')]
    rows = list(csv.DictReader(lines))[1:]  # the second row holds the units
    by, more = {}, {}
    for r in rows:
        num = lambda k: float(r[k].replace(",", ""))  # base units: ns, bytes, cycles
        m = re.search(r"(?:ParallelFor|TeamKernel|TeamKernelUnbounded)<(?:void )?(?:[A-Za-z_0-9]+::)*([A-Za-z_0-9]+)", r["Kernel Name"])
        name = (m.group(1) if m else r["Kernel Name"].split("(")[0])[:26]
        g = by.setdefault(name, [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        ns = num("gpu__time_duration.sum")
        g[0] += 1
        g[1] += ns * 1e-3
        g[2] += (num("dram__bytes_read.sum") + num("dram__bytes_write.sum")) / 1e6
        g[3] = num("launch__registers_per_thread")
        g[4] += num("sm__warps_active.avg.pct_of_peak_sustained_active")
        g[5] += (num("sm__cycles_active.max") - num("sm__cycles_active.avg")) / (num("gpc__cycles_elapsed.max") / ns) * 1e-3
        for x in extra:
            more.setdefault((name, x), []).append(num(x))
    for k, (c, us, mb, regs, occ, tail) in sorted(by.items()):
        print("%-14s %-26s %4d %9.1f %8.2f %9.1f %7.0f %6.2f %4d %5.0f %7.2f" % (os.path.basename(f)[:-4], k, c, us, us / c, mb, mb / us * 1e3, mb / us * 1e3 / copy, regs, occ / c, tail / c))
    tables.append((os.path.basename(f)[:-4], more))
for run, more in tables:
    for (k, x), v in sorted(more.items()):
        print("%-14s %-26s %-56s %14.4g" % (run, k, x, sum(v) / len(v)))
PY
cd "$OUT" && tar -czf p.tgz p && rm -rf p
