#!/usr/bin/env python3
"""SVG chart (no plotting library needed) of A/B runs of scripts/gpu-ab.sh: for each pair NEW:OLD of variants, the
median time per iteration of NEW over OLD's at every size (below 1: NEW is faster), with the rounds' range.
  plot_ab.py OUT_SVG TITLE AB_CSV NEW:OLD[:LABEL] [AB_CSV NEW:OLD[:LABEL] ...]"""
import csv
import math
import statistics
import sys

svg, title, args = sys.argv[1], sys.argv[2], sys.argv[3:]
series = []  # (label, [(n, median ratio, lo, hi)])
for path, spec in zip(args[0::2], args[1::2]):
    new, old, *label = spec.split(":")
    rows = list(csv.DictReader(open(path)))
    t = lambda v, n: [float(r["us_per_it_loop"]) if float(r["us_per_it_loop"]) > 0 else float(r["us_per_it_solve"]) for r in rows if r["variant"] == v and int(r["n"]) == n]
    pts = []
    for n in sorted({int(r["n"]) for r in rows if r["variant"] == new}):
        a, b = t(new, n), t(old, n)
        if a and b:
            pts.append((n, statistics.median(a) / statistics.median(b), min(a) / max(b), max(a) / min(b)))
    series.append((label[0] if label else "%s / %s" % (new, old), pts))
W, H, left, right, top, bottom = 640, 360, 60, 200, 40, 50
ns = [p[0] for _, pts in series for p in pts]
lo, hi = min(0.6, min(p[2] for _, pts in series for p in pts)), max(1.1, max(p[3] for _, pts in series for p in pts))
x = lambda n: left + (W - left - right) * (math.log10(n) - math.log10(min(ns))) / max(1e-9, math.log10(max(ns)) - math.log10(min(ns)))
y = lambda v: top + (H - top - bottom) * (hi - v) / (hi - lo)
colors = ["#2f6db5", "#d98c2b", "#4a9b5a", "#b53f3f"]
out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H), '<rect width="100%" height="100%" fill="white"/>']
out.append('<text x="%d" y="20" font-size="14">%s</text>' % (left, title))
for v in [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]:
    if lo <= v <= hi:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (left, W - right, y(v), y(v), "#444" if v == 1.0 else "#ddd"))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (left - 6, y(v) + 4, v))
for n in sorted(set(ns)):
    out.append('<text x="%.1f" y="%d" text-anchor="middle">%.0e</text>' % (x(n), H - bottom + 18, n))
out.append('<text x="%d" y="%d" text-anchor="middle">rows (2D Laplacian)</text>' % ((left + W - right) // 2, H - 10))
out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">time per iteration, new / old</text>' % (H // 2, H // 2))
for k, (label, pts) in enumerate(series):
    c = colors[k % len(colors)]
    out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join("%.1f,%.1f" % (x(n), y(m)) for n, m, _, _ in pts)))
    for n, m, a, b in pts:
        out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>' % (x(n), x(n), y(a), y(b), c))
        out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(n), y(m), c))
    out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>' % (W - right + 12, top + 20 * k, c, W - right + 30, top + 20 * k + 10, label))
out.append("</svg>")
open(svg, "w").write("\n".join(out) + "\n")
