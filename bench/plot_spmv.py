#!/usr/bin/env python3
"""Plots scripts/gpu-run.sh's spmv step for docs/performance.md: effective bandwidth of our SpMV (default kernel and
the best launch shape tried) and of cuSPARSE on each matrix, against the device copy bandwidth of the same run.
  plot_spmv.py OURS_CSV CUSPARSE_CSV HW_CSV OUT_PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ours, peer, hwcsv, out = sys.argv[1:5]
rows = list(csv.DictReader(open(ours)))
cusp = {r["matrix"]: float(r["GBps"]) for r in csv.DictReader(open(peer))}
hw = dict(line.strip().split(",", 1) for line in open(hwcsv))
mats = [m for m in cusp if any(r["matrix"] == m for r in rows)]
default = [float([r for r in rows if r["matrix"] == m and r["kernel"] == "spmv_default"][0]["GBps"]) for m in mats]
best = [max(float(r["GBps"]) for r in rows if r["matrix"] == m) for m in mats]
x = range(len(mats))
fig, ax = plt.subplots(figsize=(11, 4.6))
ax.bar([i - 0.27 for i in x], default, 0.27, label="ours, default kernel")
ax.bar(list(x), best, 0.27, label="ours, best launch shape tried")
ax.bar([i + 0.27 for i in x], [cusp[m] for m in mats], 0.27, label="cusparseSpMV (CSR, default algorithm)")
ax.axhline(float(hw["d2d_copy_GBps"]), color="k", ls=":", label="device copy (%.0f GB/s)" % float(hw["d2d_copy_GBps"]))
ax.set_xticks(list(x))
ax.set_xticklabels(mats, rotation=25, ha="right", fontsize=8)
ax.set_ylabel("effective bandwidth (GB/s): CSR + x + y bytes over time")
ax.set_title("SpMV on one H200, double precision")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
