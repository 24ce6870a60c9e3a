#!/usr/bin/env python3
"""Summary of scripts/gpu-run.sh's pcs step: time to solution with a preconditioner, the plugin's pipecgfused on
gpustream against PETSc's CG on aijcusparse with the same kind of preconditioner, measured in the same run.

  pc_summary.py pcs.csv [ex56.csv]
  pc_summary.py --ex56 LOG CASE NE     (one ex56.csv line from the output of ex56 -two_solves -ksp_converged_reason
                                         -log_view)

pcs.csv: case,ksp,pc,mat,n,nnz,its,first_ms,setup_ms,solve_ms,total_ms,relres,vec (bench/bench_pc lines; case
<ksp>_<pc>). ex56.csv: case,ne,n,its,setup_ms,solve_ms,total_ms (PETSc's ex56, its second set-up and solve).
Ratio: plugin / PETSc time to solution (set-up included); target <= 0.8 with iterations within 10%.
"""
import csv
import sys


def table(path, key):
    rows = {}
    for r in csv.DictReader(open(path)):
        try:
            rows[(r["case"], int(float(r[key])))] = r
        except (KeyError, ValueError, TypeError):  # a failed case's line
            continue
    return rows


def f(r, k):
    try:
        return float(r[k])
    except (TypeError, KeyError, ValueError, AttributeError):
        return float("nan")


def report(title, rows, size, extra):
    print(title)
    print("%-8s %10s %-6s %9s %9s %9s %7s %9s %9s %9s %7s %7s %6s" % (size, "n", "pc", "petsc ms", "setup", "its", "",
          "plugin ms", "setup", "its", "", "ratio", "its"))
    for s in sorted({k[1] for k in rows}):
        for pc in ("ilu", "icc", "gamg", "jacobi"):
            p, g = rows.get(("cg_" + pc, s)), rows.get(("pipecgfused_" + pc, s))
            if not p and not g:
                continue
            tp, tg = f(p, "total_ms"), f(g, "total_ms")
            ip, ig = f(p, "its"), f(g, "its")
            print("%-8d %10s %-6s %9.2f %9.2f %9.0f %7s %9.2f %9.2f %9.0f %7s %7.3f %6.2f" % (s, (p or g or {}).get("n", ""), pc, tp, f(p, "setup_ms"), ip, extra(p),
                  tg, f(g, "setup_ms"), ig, extra(g), tg / tp, ig / ip))


if sys.argv[1] == "--ex56":
    import re
    out = open(sys.argv[2]).read()
    its = re.findall(r"Linear solve converged due to \S+ iterations (\d+)", out)
    st = dict((m.group(1).strip(), float(m.group(2))) for m in re.finditer(r"^\s*\d+:\s+([^:]+):\s+([0-9.e+-]+)", out, re.M))
    ne = int(sys.argv[4])
    s, v = st.get("2nd Setup", float("nan")) * 1e3, st.get("2nd Solve", float("nan")) * 1e3
    print("%s,%d,%d,%s,%.3f,%.3f,%.3f" % (sys.argv[3], ne, 3 * (ne + 1) ** 3, its[1] if len(its) > 1 else "nan", s, v, s + v))
    sys.exit(0)

rows = table(sys.argv[1], "n")
report("3D Laplacian (bench_pc), a set-up and a solve after new values; first = first solve, symbolic set-up included",
       rows, "n", lambda r: "%.0f" % f(r, "first_ms") if r else "")
if len(sys.argv) > 2:
    report("3D elasticity (PETSc's ex56), its second set-up and solve", table(sys.argv[2], "ne"), "ne", lambda r: "")


def variants(title, rows):
    """Cases outside the peer pairs (gpu-run.sh's PC_EXTRA), as they are"""
    other = sorted(k for k in rows if not k[0].startswith(("cg_", "pipecgfused_")))
    if other:
        print(title + ", variants")
        for case, size in other:
            r = rows[(case, size)]
            print("%-20s %10d  total %9.2f ms  set-up %9.2f ms  its %5.0f" % (case, size, f(r, "total_ms"), f(r, "setup_ms"), f(r, "its")))


variants("3D Laplacian", rows)
if len(sys.argv) > 2:
    variants("ex56", table(sys.argv[2], "ne"))
