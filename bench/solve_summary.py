#!/usr/bin/env python3
"""Summary of scripts/gpu-run.sh's solve step: the whole KSPSolve per iteration of the plugin's solvers against
PETSc's own GPU solvers measured in the same run, and the fixed cost of a solve.

  solve_summary.py solve.csv [hw.csv]

solve.csv: case,ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec (bench/bench_poisson lines).
Fixed cost of a solve: its * (whole solve per iteration - loop per iteration), in microseconds and as a share of the
whole solve. For host vectors it is compared with moving b in and x out at the pinned host-device rate of hw.csv;
cases <solver>_host are MatCreateVecs()'s host vectors (pinned memory); <solver>_hostpg (pageable, through pinned
staging) and <solver>_host0 (pageable, staging off: the driver's copies) are shown beside them when present.
"""
import csv
import sys

TARGET = {"pipecgfused": ("cg", 0.5), "pipebcgsf": ("bcgs", 0.55), "sgmresf": ("gmres", 0.6)}

rows = {}
for r in csv.DictReader(open(sys.argv[1])):
    try:
        rows[(r["case"], int(r["n"]))] = r
    except (KeyError, ValueError, TypeError):  # a failed case's line
        continue
hw = {}
if len(sys.argv) > 2:
    for line in open(sys.argv[2]):
        k, _, v = line.strip().partition(",")
        hw[k] = v
pinned = float(hw.get("h2d_pinned_GBps", "nan"))
sizes = sorted({n for (_, n) in rows})


def us(case, n, key="us_per_it_solve"):
    r = rows.get((case, n))
    try:
        v = float(r[key])
        return v if v >= 0 else float("nan")
    except (TypeError, KeyError, ValueError):
        return float("nan")


print("Whole KSPSolve, microseconds per iteration at 30 iterations (2D Laplacian, no PC); ratio = ours / PETSc's;")
print("fixed = a solve's time outside its iteration loop, share of the whole solve (device: %s)" % hw.get("device", "?"))
print("%-11s %9s %9s %9s %9s %7s %7s %9s %6s %6s | %9s %9s %8s %8s %9s" % ("solver", "n", "PETSc", "sellcuda", "ours", "ratio", "r_sell", "loop", "fixed", "target",
                                                                       "host vec", "fixed us", "x pinned", "staged", "pageable"))
fails = 0
for ours, (peer, target) in TARGET.items():
    for n in sizes:
        p, ps, o, lo, h, hl = us(peer, n), us(peer + "_sell", n), us(ours, n), us(ours, n, "us_per_it_loop"), us(ours + "_host", n), us(ours + "_host", n, "us_per_it_loop")
        its = float(rows.get((ours, n), {}).get("its", "nan") or "nan")
        ratio, fixed = o / p, (o - lo) / o
        hfixed = (h - hl) * its
        move = 2 * 8 * n / (pinned * 1e3) if pinned == pinned else float("nan")  # b in, x out, microseconds
        ok = ratio <= target and (n < 1e6 or fixed <= 0.05) and (ours != "pipecgfused" or not 5e4 < n < 2e5 or o <= 15)
        fails += 0 if ok else 1
        h0, h0l = us(ours + "_host0", n), us(ours + "_host0", n, "us_per_it_loop")
        hp, hpl = us(ours + "_hostpg", n), us(ours + "_hostpg", n, "us_per_it_loop")
        print("%-11s %9d %9.1f %9.1f %9.1f %7.3f %7.3f %9.1f %5.1f%% %6s | %9.1f %9.0f %7.2fx %7.2fx %8.2fx" % (ours, n, p, ps, o, ratio, o / ps, lo, 100 * fixed, "met" if ok else "MISSED", h, hfixed, hfixed / move, (hp - hpl) * its / move, (h0 - h0l) * its / move))
print("targets: ours / PETSc <= 0.5 (CG), 0.55 (BiCGStab), 0.6 (GMRES(30)); fixed <= 5%% from 1e6 on; pipecgfused <= 15 us at 1e5; %d missed" % fails)
print("host vectors: fixed cost of a solve against moving b and x at %.1f GB/s pinned (target <= 1.25x)" % pinned)
copies = ", ".join("%s threads %s GB/s" % (k.rsplit("_t", 1)[1], v) for k, v in hw.items() if k.startswith("host_copy_GBps_t"))
if copies:
    print("host memcpy from pageable into pinned memory (the ceiling of pinned staging): " + copies)
