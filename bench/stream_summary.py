#!/usr/bin/env python3
"""Summary of bench_stream's CSV (scripts/gpu-run.sh, stream step) against the streaming targets:
  single-vector streamed SpMV at >= 90% of the pinned bandwidth measured in the same run;
  k vectors per pass within 1.1x of max(transfer time, compute time);
  overlap on >= 1.6x faster than off where transfer and compute times are about equal.
  stream_summary.py STREAM_CSV"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("no data")
get = lambda b: [r for r in rows if r["bench"] == b]
pinned = float(get("pinned_h2d")[0]["GBps"])
r0 = rows[0]
print("cube %s nodes per edge, %s dof: %s rows, %s nonzeros, CSR %.3g GB; budget %.3g GB; pinned H2D %.2f GB/s"
      % (r0["cube_n"], r0["dof"], r0["rows"], r0["nnz"], float(r0["csr_bytes"]) / 1e9,
         float((get("stream_spmv_auto") or [{"budget": 0}])[0]["budget"]) / 1e9, pinned))
for r in get("matmult_resident") + get("matmult_stream_auto"):
    print("%-22s %10.3f ms (MatMult with host vectors)" % (r["bench"], float(r["ms"])))
print("%-18s %5s %8s %10s %10s %8s %8s %7s" % ("streamed SpMV", "subs", "resident", "on ms", "off ms", "on GB/s", "/pinned", "off/on"))
best = 0
for r in get("stream_spmv") + get("stream_spmv_auto"):
    if r["overlap"] != "1":
        continue
    off = [o for o in rows if o["bench"] == r["bench"] and o["subs"] == r["subs"] and o["overlap"] == "0" and o["k"] == "1"]
    on_ms, gbps = float(r["ms"]), float(r["GBps"])
    best = max(best, gbps)
    print("%-18s %5s %8s %10.3f %10s %8.2f %8.2f %7s" % ("auto" if r["bench"].endswith("auto") else "", r["subs"], r["resident_subs"], on_ms,
          "%.3f" % float(off[0]["ms"]) if off else "", gbps, gbps / pinned, "%.2f" % (float(off[0]["ms"]) / on_ms) if off else ""))
for r in get("stream_infeasible"):
    print("%-18s %5s  (buffers do not fit the budget)" % ("", r["subs"]))
print("best single-vector streamed rate: %.2f GB/s = %.0f%% of pinned (target >= 90%%)" % (best, 100 * best / pinned))
res = {r["k"]: float(r["ms"]) for r in get("resident_block")}
print("%4s %10s %10s %12s %12s %14s %10s %8s" % ("k", "on ms", "off ms", "transfer ms", "compute ms", "streamed comp.", "on/max", "off/on"))
equal = None  # the k where transfer and compute are closest: (min/max, k, off/on)
sequal = None  # the same with the streamed compute, off minus transfer (off runs them one after the other)
for r in get("stream_block"):
    if r["overlap"] != "1":
        continue
    off = [o for o in get("stream_block") if o["k"] == r["k"] and o["overlap"] == "0"]
    on_ms = float(r["ms"])
    transfer = float(r["bytes_copied"]) / pinned / 1e6
    compute = res.get(r["k"])
    m = max(transfer, compute) if compute is not None else transfer
    scomp = float(off[0]["ms"]) - transfer if off else None
    print("%4s %10.3f %10s %12.3f %12s %14s %10.2f %8s" % (r["k"], on_ms, "%.3f" % float(off[0]["ms"]) if off else "", transfer,
          "%.3f" % compute if compute is not None else "", "%.3f" % scomp if scomp is not None else "", on_ms / m,
          "%.2f" % (float(off[0]["ms"]) / on_ms) if off else ""))
    if compute is not None and off:
        close = min(transfer, compute) / max(transfer, compute)
        if equal is None or close > equal[0]:
            equal = (close, r["k"], float(off[0]["ms"]) / on_ms)
    if scomp is not None and scomp > 0:
        close = min(transfer, scomp) / max(transfer, scomp)
        if sequal is None or close > sequal[0]:
            sequal = (close, r["k"], float(off[0]["ms"]) / on_ms, on_ms / max(transfer, scomp))
if equal:
    print("transfer and resident compute closest at k = %s (min/max %.2f): off/on %.2f" % (equal[1], equal[0], equal[2]))
if sequal:
    print("transfer and streamed compute closest at k = %s (min/max %.2f): off/on %.2f, on/max %.2f" % (sequal[1], sequal[0], sequal[2], sequal[3]))
print("targets: on/max <= 1.1 for every k; off/on >= 1.6 at the k where transfer ~ compute")
