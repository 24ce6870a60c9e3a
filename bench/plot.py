#!/usr/bin/env python3
"""Plots the results of scripts/gpu-run.sh (bench step) for docs/performance.md.
  plot.py PIPECG_CSV HW_CSV KERNELS_CSV OUT_PNG
Left: time per iteration against n (pipecgfused iterations alone and whole solves, PETSc's CG on every CPU core,
the memory floor of the fused iteration). Right: SpMVDot bandwidth against the launch shape (lanes per row)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

pipecg, hwcsv, kernels, out = sys.argv[1:5]
rows = list(csv.DictReader(open(pipecg)))
hw = dict(line.strip().split(",", 1) for line in open(hwcsv))
bw = float(hw["d2d_copy_GBps"]) * 1e9


def series(ksp, pc, col):
    pts = sorted((int(r["n"]), float(r[col])) for r in rows if r["ksp"] == ksp and r["pc"] == pc)
    return [p[0] for p in pts], [p[1] for p in pts]


fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6))
n, t = series("pipecgfused", "none", "us_per_it_loop")
a.loglog(n, t, "o-", label="pipecgfused, gpustream (iterations)")
n, t = series("pipecgfused", "none", "us_per_it_solve")
a.loglog(n, t, "o--", label="pipecgfused, gpustream (whole KSPSolve, b and x copied)")
cpu = [r for r in rows if r["ksp"] == "cg"]
n, t = series("cg", "none", "us_per_it_solve")
a.loglog(n, t, "s-", label="PETSc cg, aij, %s CPU processes" % (cpu[0]["nprocs"] if cpu else "?"))
floor = sorted((int(r["n"]), (12 * float(r["nnz"]) + 4 * (int(r["n"]) + 1) + 8 * 9 * int(r["n"])) / bw * 1e6) for r in rows if r["ksp"] == "pipecgfused" and r["pc"] == "none")
a.loglog([f[0] for f in floor], [f[1] for f in floor], "k:", label="memory floor of a fused iteration (%.2f TB/s copy)" % (bw / 1e12))
a.axhline(float(hw["launch_readback_us"]), color="gray", lw=0.8, ls="-.", label="one launch + 8-byte readback (%.1f us)" % float(hw["launch_readback_us"]))
a.set_xlabel("unknowns n (2D 5-point Laplacian)")
a.set_ylabel("microseconds per iteration")
a.set_title("CG, no preconditioner, 30 iterations, %s" % hw.get("device", "GPU"))
a.grid(True, which="both", alpha=0.3)
a.legend(fontsize=7)

krows = [r for r in csv.reader(open(kernels)) if r and r[0] == "spmvdot"]
sizes = sorted({int(r[1]) for r in krows})
for size in sizes:
    best = {}
    for r in krows:
        if int(r[1]) == size:
            v = int(r[2])
            best[v] = max(best.get(v, 0), float(r[6]))
    vl = sorted(best)
    b.semilogx(vl, [best[v] / 1000 for v in vl], "o-", base=2, label="n = %d" % size)
b.set_xlabel("Kokkos vector lanes per row (best team size and league for each)")
b.set_ylabel("SpMVDot effective bandwidth (TB/s)")
b.set_title("Fused SpMV + 2 dot products, 5-point Laplacian")
b.grid(True, alpha=0.3)
b.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
