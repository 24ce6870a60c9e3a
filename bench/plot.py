#!/usr/bin/env python3
"""Plots the results of scripts/gpu-run.sh for docs/performance.md.
  plot.py PIPECG_CSV HW_CSV KERNELS_CSV OUT_PNG   (bench step)
Left: time per iteration against n (pipecgfused iterations alone and whole solves, PETSc's CG on every CPU core,
the memory floor of the fused iteration). Right: SpMVDot bandwidth against the launch shape (lanes per row).
  plot.py --solvers SOLVERS_CSV PEERS_CSV HW_CSV OUT_PNG   (bench step: the three solvers against their peers)
  plot.py --stream STREAM_CSV OUT_PNG             (stream step, bench_stream)
Left: streamed single-vector SpMV rate against the number of subdivisions, overlap on and off, with the pinned
bandwidth of the same run. Right: time of the block product against the vectors per pass, streamed with overlap on
and off, the compute alone (resident) and the transfer alone (streamed bytes at the pinned bandwidth)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def plot_stream(path, out):
    rows = list(csv.DictReader(open(path)))
    pinned = [float(r["GBps"]) for r in rows if r["bench"] == "pinned_h2d"]
    spmv = [r for r in rows if r["bench"] == "stream_spmv"]
    block = [r for r in rows if r["bench"] == "stream_block"]
    if not spmv and not block:
        sys.exit("no streaming data in " + path)
    r0 = rows[0]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6))
    for ov, style in (("1", "o-"), ("0", "s--")):
        pts = sorted((int(r["subs"]), float(r["GBps"])) for r in spmv if r["overlap"] == ov)
        a.plot([p[0] for p in pts], [p[1] for p in pts], style, label="overlap " + ("on" if ov == "1" else "off"))
    if pinned:
        a.axhline(pinned[0], color="k", ls=":", label="pinned host to device, %.1f GB/s" % pinned[0])
    a.set_xscale("log", base=2)
    a.set_xlabel("subdivisions")
    a.set_ylabel("streamed bytes per second (GB/s)")
    a.set_title("Streamed SpMV, cube %s^3 nodes x %s dof, CSR %.1f GB" % (r0["cube_n"], r0["dof"], float(r0["csr_bytes"]) / 1e9))
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)
    for ov, style in (("1", "o-"), ("0", "s--")):
        pts = sorted((int(r["k"]), float(r["ms"])) for r in block if r["overlap"] == ov)
        b.plot([p[0] for p in pts], [p[1] for p in pts], style, label="streamed, overlap " + ("on" if ov == "1" else "off"))
    pts = sorted((int(r["k"]), float(r["ms"])) for r in rows if r["bench"] == "resident_block")
    b.plot([p[0] for p in pts], [p[1] for p in pts], "^:", label="compute alone (resident)")
    if pinned and block:
        b.axhline(float(block[0]["bytes_copied"]) / pinned[0] / 1e6, color="k", ls=":", label="transfer alone")
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    b.set_xlabel("vectors per pass k")
    b.set_ylabel("ms per block product")
    b.set_title("Block product, %s subdivisions (model's choice)" % (block[0]["subs"] if block else "?"))
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


def plot_solvers(path, peers, hwcsv, out):
    """Time per iteration against n for the three fused solvers, their cuSPARSE+cuBLAS peers and PETSc on the CPU
    (the paper's Fig. 4), each solver in its own panel with the one-launch-plus-readback latency"""
    rows = list(csv.DictReader(open(path)))
    prs = list(csv.DictReader(open(peers)))
    hw = dict(line.strip().split(",", 1) for line in open(hwcsv))
    sets = (("pipecgfused", "cg", "cusparse_cublas_cg", "CG"), ("pipebcgsf", "bcgs", "cusparse_cublas_bicgstab", "BiCGStab"), ("sgmresf", "gmres", "cusparse_cublas_gmres", "GMRES(30)"))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, (ours, cpu, peer, name) in zip(axes, sets):
        def pts(pred, col):
            p = sorted((int(r["n"]), float(r[col])) for r in rows if pred(r))
            return [q[0] for q in p], [q[1] for q in p]
        n, t = pts(lambda r: r["ksp"] == ours and r["pc"] == "none", "us_per_it_loop")
        ax.loglog(n, t, "o-", label="%s, gpustream (iterations)" % ours)
        n, t = pts(lambda r: r["ksp"] == ours and r["pc"] == "none", "us_per_it_solve")
        ax.loglog(n, t, "o--", label="%s (whole KSPSolve)" % ours)
        n, t = pts(lambda r: r["ksp"] == cpu, "us_per_it_solve")
        nprocs = [r["nprocs"] for r in rows if r["ksp"] == cpu]
        ax.loglog(n, t, "s-", label="PETSc %s, aij, %s CPU processes" % (cpu, nprocs[0] if nprocs else "?"))
        pp = sorted((int(r["n"]), float(r["us"])) for r in prs if r["peer"] == peer)
        ax.loglog([q[0] for q in pp], [q[1] for q in pp], "^-", label="cuSPARSE + cuBLAS %s" % name)
        ax.axhline(float(hw["launch_readback_us"]), color="gray", lw=0.8, ls="-.", label="one launch + readback (%.1f us)" % float(hw["launch_readback_us"]))
        ax.set_title("%s, 2D Laplacian, no PC, %s" % (name, hw.get("device", "GPU")))
        ax.set_xlabel("unknowns n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("microseconds per iteration")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if len(sys.argv) > 1 and sys.argv[1] == "--solvers":
    plot_solvers(*sys.argv[2:6])
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "--stream":
    plot_stream(sys.argv[2], sys.argv[3])
    sys.exit(0)

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
