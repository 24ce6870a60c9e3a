#!/usr/bin/env python3
"""Acceptance test with a PETSc tutorial compiled unchanged: runs it once with PETSc's own solver (reference) and
once with the plugin loaded through -dll_append (new), both with -ksp_converged_reason, and checks that
  - both converge, for the same reason (the same tolerance);
  - the iteration counts differ by at most --its-tol;
  - every number the tutorial prints about the solution (error or residual norm) agrees within --norm-factor;
  - with -log_view, the new run lists the plugin's events (--events), each called at least once (A|B: either).
Prints 'N passed, N failed' for the checks."""
import argparse
import os
import re
import shlex
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--exe", required=True)
ap.add_argument("--dll", required=True)
ap.add_argument("--args", default="", help="options for both runs")
ap.add_argument("--ref", default="-mat_type aij -ksp_type cg", help="options of the reference run")
ap.add_argument("--new", default="-mat_type gpustream -ksp_type pipecgfused", help="options of the plugin run")
ap.add_argument("--nsize", type=int, default=1)
ap.add_argument("--its-tol", type=int, default=2)
ap.add_argument("--its-rtol", type=float, default=0.0, help="or this fraction of the reference's iterations, if larger")
ap.add_argument("--norm-factor", type=float, default=10.0)
ap.add_argument("--events", default="PCGFUpdate|PCGFStep,PCGFSpMVDot|PCGFStep,PCGFReduce")  # PCGFStep: both in one kernel
ap.add_argument("--mpiexec", default="mpiexec")
o = ap.parse_args()

# more ranks than cores: Open MPI 4's variable, and PRRTE's for Open MPI 5 and later; Kokkos' OpenMP backend: threads
# that yield and stay unbound (Kokkos' advice for tests), unless the caller chose
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
env.setdefault("PRTE_MCA_mapby", ":oversubscribe")
env.setdefault("OMP_WAIT_POLICY", "passive")
env.setdefault("OMP_PROC_BIND", "false")
env.setdefault("KOKKOS_DISABLE_WARNINGS", "1")  # Kokkos' start-up advice (more ranks than cores) is not output


def run(extra):
    cmd = shlex.split(o.mpiexec) + ["-n", str(o.nsize), o.exe] + shlex.split(o.args) + shlex.split(extra) + ["-ksp_converged_reason"]
    print("# " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=600)
    out = p.stdout.decode(errors="replace")
    if p.returncode:
        print(out)
    return p.returncode, out


def summary(out):
    m = re.search(r"Linear solve (converged|did not converge) due to (\w+) iterations (\d+)", out)
    norms = [float(x) for x in re.findall(r"(?:Norm of error|Residual norm)\s+([-+0-9.eE]+)", out)]
    return (m.group(1), m.group(2), int(m.group(3))) if m else None, norms


checks = []
rc_ref, out_ref = run(o.ref)
rc_new, out_new = run("-dll_append %s %s -log_view" % (o.dll, o.new))
checks.append(("both runs exit 0 (ref %d, new %d)" % (rc_ref, rc_new), rc_ref == 0 and rc_new == 0))
(s_ref, n_ref), (s_new, n_new) = summary(out_ref), summary(out_new)
print("# reference: %s norms %s\n# plugin:    %s norms %s" % (s_ref, n_ref, s_new, n_new))
checks.append(("both converge for the same reason", bool(s_ref and s_new and s_ref[0] == s_new[0] == "converged" and s_ref[1] == s_new[1])))
tol = max(o.its_tol, int(o.its_rtol * s_ref[2])) if s_ref else o.its_tol
checks.append(("iterations within %d" % tol, bool(s_ref and s_new and abs(s_ref[2] - s_new[2]) <= tol)))
close = len(n_ref) == len(n_new) > 0 and all(b <= max(a, 1e-14) * o.norm_factor and a <= max(b, 1e-14) * o.norm_factor for a, b in zip(n_ref, n_new))
checks.append(("solution norms within a factor %g" % o.norm_factor, close))
for evs in filter(None, o.events.split(",")):
    found = [(ev, m) for ev, m in ((ev, re.search(r"^%s\s+(\d+)" % re.escape(ev), out_new, re.M)) for ev in evs.split("|")) if m]
    ev, m = found[0] if found else (evs, None)
    checks.append(("-log_view lists %s (count %s)" % (ev, m.group(1) if m else "none"), bool(m and int(m.group(1)) > 0)))
for name, ok in checks:
    print("%s %s" % ("ok" if ok else "not ok", name))
failed = sum(not ok for _, ok in checks)
print("%d passed, %d failed" % (len(checks) - failed, failed))
sys.exit(1 if failed else 0)
