#!/usr/bin/env python3
"""SVG bar chart (no plotting library needed) of our SpMV time over cuSPARSE's CSR time, per matrix, for one or more
runs of scripts/gpu-run.sh's spmv step; ours is MatMult's default (block storage where bench_spmv ran it).
  plot_ratio.py OUT_SVG LABEL OURS_CSV CUSPARSE_CSV [LABEL OURS_CSV CUSPARSE_CSV ...]"""
import csv
import sys


def ratios(ours, peer):
    rows = list(csv.DictReader(open(ours)))
    cusp = {r["matrix"]: float(r["us"]) for r in csv.DictReader(open(peer)) if r["peer"] == "cusparse_spmv"}
    out = {}
    for m, c in cusp.items():
        d = [r for r in rows if r["matrix"] == m and r["kernel"] == "spmv_block_default"] or [r for r in rows if r["matrix"] == m and r["kernel"] == "spmv_default"]
        if d:
            out[m] = float(d[0]["us"]) / c
    return out


svg, args = sys.argv[1], sys.argv[2:]
runs = [(args[i], ratios(args[i + 1], args[i + 2])) for i in range(0, len(args), 3)]
mats = [m for m in runs[-1][1] if all(m in r for _, r in runs)]
colors = ["#9aa7b8", "#2f6db5", "#d98c2b", "#4a9b5a"]
W, H, left, bottom, top = 80 + 70 * len(mats), 360, 60, 110, 40
ymax = max(2.0, max(max(r.values()) for _, r in runs) * 1.05)
y = lambda v: top + (H - top - bottom) * (1 - v / ymax)
bw = 56 / len(runs)
e = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
     '<text x="%d" y="20" font-size="13">SpMV time over cuSPARSE CSR time, one H200 (below 1: faster than cuSPARSE)</text>' % left]
for v in [0.5 * k for k in range(int(ymax / 0.5) + 1)]:
    e.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (left, W - 10, y(v), y(v), "#000" if v == 1 else "#ddd"))
    e.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (left - 5, y(v) + 4, v))
for i, m in enumerate(mats):
    x0 = left + 10 + 70 * i
    for j, (label, r) in enumerate(runs):
        v = min(r[m], ymax)
        e.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (x0 + j * bw, y(v), bw - 2, y(0) - y(v), colors[j % 4]))
        e.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="8">%.2f</text>' % (x0 + j * bw + bw / 2, y(v) - 3, r[m]))
    e.append('<text transform="translate(%.1f,%d) rotate(40)">%s</text>' % (x0 + 10, H - bottom + 14, m))
for j, (label, _) in enumerate(runs):
    e.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>' % (left + 260 * j, H - 14, colors[j % 4], left + 14 + 260 * j, H - 5, label))
e.append("</svg>")
open(svg, "w").write("\n".join(e) + "\n")
print("wrote", svg)
