#!/usr/bin/env python3
"""Summary of scripts/gpu-run.sh's mpi step: weak and strong scaling of the solvers and of MatMult alone, per halo path.

  scaling_summary.py scaling.csv matmult.csv

scaling.csv: case,halo,ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec (bench_poisson lines behind a
case and a halo label); matmult.csv: halo,nprocs,n,nnz,us,path (bench_matmult lines behind a halo label). Weak
efficiency at s rows per GPU on p GPUs: t(1, s) / t(p, p s); strong speed-up at 1.6e7 rows: t(1) / t(p). The one-process
times serve every halo label. Targets: weak >= 0.90, strong >= 1.8 on 2 GPUs and >= 3.3 on 4.
"""
import csv
import sys

PER_GPU = (4e6, 1.6e7)
STRONG = 1.6e7


def key(n):
    return round(float(n) / 1e5)  # bench_poisson's n is m * m for the nearest m


def nan():
    return float("nan")


def table(rows, value):
    """(case, halo, p, size) -> value; one process under every halo label"""
    t = {}
    for r in rows:
        try:
            v = value(r)
        except (KeyError, ValueError, TypeError):
            continue
        t[(r["case"], r["halo"], int(r["nprocs"]), key(r["n"]))] = v
    return t


def report(title, tables):
    """tables: column name -> table()"""
    print(title)
    first = next(iter(tables.values()))
    cases = list(dict.fromkeys((c, h) for c, h, p, _ in first if p > 1))
    procs = sorted({p for _, _, p, _ in first if p > 1})
    head = "%-12s %-7s %3s" % ("case", "halo", "P")
    for s in PER_GPU:
        head += "".join(" %15s" % ("weak %.1e%s" % (s, c)) for c in tables)
    head += "".join(" %17s" % ("strong %.1e%s" % (STRONG, c)) for c in tables)
    print(head)
    for c, h in cases:
        for p in procs:
            line = "%-12s %-7s %3d" % (c, h, p)
            for s in PER_GPU:
                for t in tables.values():
                    line += " %15.2f" % (t.get((c, "shared", 1, key(s)), nan()) / t.get((c, h, p, key(p * s)), nan()))
            for t in tables.values():
                line += " %17.2f" % (t.get((c, "shared", 1, key(STRONG)), nan()) / t.get((c, h, p, key(STRONG)), nan()))
            print(line)


rows = list(csv.DictReader(open(sys.argv[1])))
report("Solvers per iteration (bench_poisson, Jacobi, device vectors): weak efficiency and strong speed-up, whole solve and loop",
       {" solve": table(rows, lambda r: float(r["us_per_it_solve"])), " loop": table(rows, lambda r: float(r["us_per_it_loop"]))})
if len(sys.argv) > 2:
    mm = []
    for line in open(sys.argv[2]):
        f = line.strip().split(",")
        if len(f) >= 5:
            mm.append({"case": "MatMult", "halo": f[0], "nprocs": f[1], "n": f[2], "us": f[4]})
    report("MatMult alone (bench_matmult, device vectors)", {"": table(mm, lambda r: float(r["us"]))})
