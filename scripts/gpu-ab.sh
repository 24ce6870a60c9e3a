#!/bin/bash
# A/B of solver variants in one device call (scripts/gpu-run.sh's set-up: .gpu/ carried, the build of
# scripts/build-gpu.sh; or another stack's B and GPU_ENV, as for gpu-run.sh). Each round runs every variant at every
# size (bench_poisson, 2D Laplacian, 30 iterations, the median of 7 solves), rounds interleaved so that a drift of the
# machine hits all variants alike; the summary gives each variant's median over the rounds of its iteration loop's
# time and its ratio to its own memory floor (copy bandwidth of this run); ab.csv has the whole solve's too.
#   VARIANTS="label|passes|bench_poisson options[|library];..."   passes: V or V/C, the vector passes of an iteration
#                                                         (8 bytes a row each) and its passes over the CSR (values,
#                                                         column indices, row pointer; 1 if not given); "-": no floor;
#                                                         library: another build of the plugin (default $B's)
#   NS="1e5 4e6 1e7"  ROUNDS=3
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
B=${B:-$root/.gpu/build}
NS=${NS:-"1e5 4e6 1e7"}
ROUNDS=${ROUNDS:-3}
: "${VARIANTS:?VARIANTS=\"label|passes|options;...\"}"
source "${GPU_ENV:-$root/scripts/gpu-env.sh}"
hwlimits "$OUT/ab-hw.csv" || exit 1
cat "$OUT/ab-hw.csv"
csv=$OUT/ab.csv
echo "round,variant,passes,ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec" >"$csv"
IFS=';' read -r -a vs <<<"$VARIANTS"
for r in $(seq 1 "$ROUNDS"); do
  for n in $NS; do
    for v in "${vs[@]}"; do
      IFS='|' read -r label passes opts lib <<<"$v"
      line=$("$B/bench/bench_poisson" -n "$n" -dll_append "${lib:-$B/libpetscgpustream.so}" -mat_type gpustream $opts | tail -1)
      echo "$r,$label,$passes,$line" | tee -a "$csv"
    done
  done
done
python3 - "$csv" "$OUT/ab-hw.csv" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
hw = dict(l.strip().split(",", 1) for l in open(sys.argv[2]))
bw = float(hw["d2d_copy_GBps"]) * 1e9
print("copy %s GB/s, launch plus readback %s us" % (hw["d2d_copy_GBps"], hw["launch_readback_us"]))
print("%-22s %9s %10s %22s %9s %8s" % ("variant", "n", "median us", "rounds us", "floor us", "/floor"))
keys = []
for r in rows:
    k = (r["variant"], int(r["n"]))
    if k not in keys:
        keys.append(k)
for v, n in sorted(keys, key=lambda k: (k[1], keys.index(k))):
    rs = [r for r in rows if r["variant"] == v and int(r["n"]) == n]
    t = [float(r["us_per_it_loop"]) if float(r["us_per_it_loop"]) > 0 else float(r["us_per_it_solve"]) for r in rs]
    nnz, vc = float(rs[0]["nnz"]), (rs[0]["passes"] + "/1").split("/")
    floor = (int(vc[1]) * (12 * nnz + 4 * (n + 1)) + 8 * int(vc[0]) * n) / bw * 1e6 if vc[0] != "-" else float("nan")
    m = statistics.median(t)
    print("%-22s %9d %10.2f %22s %9.1f %8.3f" % (v, n, m, " ".join("%.2f" % x for x in t), floor, m / floor))
PY
