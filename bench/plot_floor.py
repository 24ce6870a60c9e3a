#!/usr/bin/env python3
"""SVG bar chart (no plotting library needed) of each solver's time per iteration over its memory floor, per size from 1e6 on,
from the bench step of scripts/gpu-run.sh (the summary table's loop/floor column).
  plot_floor.py OUT_SVG SUMMARY_TXT"""
import sys

svg, summary = sys.argv[1], sys.argv[2]
rows = []
for line in open(summary):
    f = line.split()
    if len(f) == 8 and f[0] in ("pipecgfused", "pipebcgsf", "sgmresf") and f[6].replace(".", "", 1).isdigit() and int(f[2]) >= 1000000:  # the floor targets hold from 4e6
        rows.append(("%s %s" % (f[0], f[1]), int(f[2]), float(f[6])))
labels = list(dict.fromkeys(r[0] for r in rows))
sizes = sorted({r[1] for r in rows})
val = {(r[0], r[1]): r[2] for r in rows}
colors = ["#9aa7b8", "#2f6db5", "#d98c2b", "#4a9b5a"]
W, H, left, bottom, top = 80 + 90 * len(labels), 360, 60, 110, 40
ymax = max(2.0, max(val.values()) * 1.05)
y = lambda v: top + (H - top - bottom) * (1 - v / ymax)
bw = 70 / len(sizes)
e = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
     '<text x="%d" y="20" font-size="13">Time per iteration over the memory floor, one H200 (1 = the copy bandwidth)</text>' % left]
for v in [0.5 * k for k in range(int(ymax / 0.5) + 1)]:
    e.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (left, W - 10, y(v), y(v), left - 4, y(v) + 4, v))
for tgt, name in ((1.15, "1.15"), (1.2, "1.2")):
    e.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c33" stroke-dasharray="4 3"/>' % (left, W - 10, y(tgt), y(tgt)))
for i, lab in enumerate(labels):
    x0 = left + 10 + 90 * i
    for j, n in enumerate(sizes):
        if (lab, n) in val:
            v = val[(lab, n)]
            e.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (x0 + j * bw, y(v), bw - 2, y(0) - y(v), colors[j % 4]))
            e.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9">%.2f</text>' % (x0 + j * bw + bw / 2, y(v) - 3, v))
    e.append('<text transform="translate(%.1f,%d) rotate(40)">%s</text>' % (x0 + 10, H - bottom + 14, lab))
for j, n in enumerate(sizes):
    e.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">n = %.0e</text>' % (W - 110, 30 + 14 * j, colors[j % 4], W - 96, 39 + 14 * j, n))
e.append('<text x="%d" y="%d" fill="#c33">dashed: the targets 1.15 (pipecgfused, pipebcgsf) and 1.2 (sgmresf)</text>' % (left, H - 8))
e.append("</svg>")
open(svg, "w").write("\n".join(e) + "\n")
