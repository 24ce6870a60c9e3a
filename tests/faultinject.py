#!/usr/bin/env python3
"""Device faults end in a PETSc error (GPU machine): each path (the product under PETSc's CG, the three fused solvers,
a host PC, a streamed matrix, KSPMatSolve, two processes) runs once to count its CUDA launches and copies
(tests/faultshim.c), then again with one failing, for a few calls of each kind spread over the run: a launch that
fails, a kernel that faults (every later CUDA call fails), a copy that fails. A case passes when the run ends with a nonzero exit and a PETSc error, within the timeout, with no signal, and
prints no convergence or result after the failure.
  faultinject.py --shim libfaultshim.so --ex1 EXE --ksp KSPGPUSTREAM [--mpiexec CMD] [--per-kind 4] [--jobs 4]"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--shim", required=True)
ap.add_argument("--ex1", required=True)
ap.add_argument("--ksp", required=True, help="the kspgpustream test program")
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--per-kind", type=int, default=4, help="failing calls tried per kind and path")
ap.add_argument("--jobs", type=int, default=4)
ap.add_argument("--timeout", type=int, default=120)
ap.add_argument("--only", default="", help="comma-separated paths")
o = ap.parse_args()

grid = "-m 40 -n 30 -ksp_converged_reason"
paths = {
    "matmult": (1, o.ex1, "%s -ksp_type cg -pc_type jacobi" % grid),
    "pipecgfused": (1, o.ex1, "%s -ksp_type pipecgfused -pc_type jacobi" % grid),
    "pipebcgsf": (1, o.ex1, "%s -ksp_type pipebcgsf -pc_type jacobi" % grid),
    "sgmresf": (1, o.ex1, "%s -ksp_type sgmresf -pc_type jacobi" % grid),
    "hostpc": (1, o.ex1, "%s -ksp_type pipecgfused -pc_type sor" % grid),
    "streamed": (1, o.ex1, "-m 300 -n 300 -ksp_converged_reason -ksp_type pipecgfused -pc_type jacobi -mat_gpustream_max_device_bytes 5e6 -mat_gpustream_subdivisions 8" % ()),
    "matsolve": (1, o.ksp, "-scenario matsolve -ks 3"),
    "matmult_2": (2, o.ex1, "%s -ksp_type cg -pc_type jacobi" % grid),
    "pipecgfused_2": (2, o.ex1, "%s -ksp_type pipecgfused -pc_type jacobi" % grid),
    "sgmresf_2": (2, o.ex1, "%s -ksp_type sgmresf -pc_type jacobi" % grid),
}
if o.only:
    paths = {k: v for k, v in paths.items() if k in o.only.split(",")}
env0 = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
env0.setdefault("PRTE_MCA_mapby", ":oversubscribe")
claim = re.compile(r"converged due to|Relative error|columns? converged|agree", re.I)


def run(path, kind=None, at=None):
    n, exe, args = paths[path]
    cmd = ([] if n == 1 else shlex.split(o.mpiexec) + ["-n", str(n), "-x", "LD_PRELOAD", "-x", "GS_FAULT_KIND", "-x", "GS_FAULT_AT", "-x", "GS_FAULT_COUNTS"]) + [exe] + shlex.split(args)
    with tempfile.NamedTemporaryFile("r", suffix=".counts") as counts:
        env = dict(env0, LD_PRELOAD=o.shim, GS_FAULT_COUNTS=counts.name)
        if kind:
            env.update(GS_FAULT_KIND=kind, GS_FAULT_AT=str(at))
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=o.timeout, start_new_session=True)
            rc, out = p.returncode, p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            rc, out = 124, (e.stdout or b"").decode(errors="replace")
        per = {}
        for line in counts.read().splitlines():  # a line per process: the most calls of each kind
            c = line.split()
            for k, v in zip(c[0::2], map(int, c[1::2])):
                per[k] = max(per.get(k, 0), v)
    return rc, out, per


def verdict(rc, out):
    """'' when the run ended as a fault should, else why not"""
    i = out.find("faultshim:")
    if i < 0:
        return "no call failed"
    after = out[i:]
    if rc == 124:
        return "timeout"
    if rc == 0:
        return "exit 0"
    if re.search(r"Segmentation|signal|core dumped|terminate called", out):
        return "crash"
    if "PETSC ERROR" not in out:
        return "no PETSc error"
    m = claim.search(after)
    if m:
        return "claims a result after the fault: " + after[m.start():].splitlines()[0]
    return ""


results = []
with concurrent.futures.ThreadPoolExecutor(o.jobs) as pool:
    jobs = []
    for path in paths:
        rc, out, counts = run(path)
        ok = rc == 0 and claim.search(out) is not None
        print("# %s: %s, calls %s" % (path, "runs" if ok else "FAILS WITHOUT A FAULT (exit %d)" % rc, counts))
        if not ok:
            print(out[-3000:])
            results.append((path, "-", 0, "fails without a fault"))
            continue
        for kind in ("launch", "fault", "copy"):
            total = counts.get(kind, 0)
            if total == 0:
                continue
            k = min(o.per_kind, total)
            ats = sorted({1 + (total - 1) * j // max(1, k - 1) for j in range(k)})
            for at in ats:
                jobs.append((path, kind, at, pool.submit(run, path, kind, at)))
    for path, kind, at, f in jobs:
        rc, out, _ = f.result()
        why = verdict(rc, out)
        if why == "no call failed":  # fewer calls of that kind in this run (several processes differ): not a case
            continue
        results.append((path, kind, at, why))
        err = next((l for l in out.splitlines() if "PETSC ERROR" in l and ("CUDA" in l or "GPU" in l or "Kokkos" in l or "cuda" in l)), "")
        print("%s %s %s %d: %s%s" % ("ok" if not why else "not ok", path, kind, at, why or "exit %d" % rc, ("  | " + err.strip()) if err else ""))
        if why:
            lines = out.splitlines()
            first = [l for l in lines if re.search(r"error|abort|Kokkos|faultshim", l, re.I)][:12]
            print("\n".join("#   " + l for l in first + ["..."] + lines[-25:]))
bad = [r for r in results if r[3]]
print("%d passed, %d failed" % (len(results) - len(bad), len(bad)))
