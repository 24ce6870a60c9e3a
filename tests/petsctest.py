#!/usr/bin/env python3
"""Runs the /*TEST ... TEST*/ blocks of a PETSc-style example and diffs each output with output/<file>.out.

A small equivalent of PETSc's gmakegentest.py harness for the keys this project uses:
  suffix, nsize, args, output_file, filter, and 'error: 1' (the run must fail; its output is still diffed).
Numbers in the output are compared with a relative tolerance (like PETSc's petscdiff), the rest exactly.

  petsctest.py --exe EXE --src SRC.c [--list] [--only SUFFIX] [--regenerate] [--mpiexec CMD] [--args EXTRA]
"""
import argparse
import concurrent.futures
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def parse_tests(src):
    text = open(src).read()
    m = re.search(r"/\*TEST(.*?)TEST\*/", text, re.S)
    if not m:
        return []
    tests, cur, key = [], None, None
    for line in m.group(1).splitlines():
        if not line.strip() or line.strip().startswith("#"):  # comments, as PETSc's harness allows
            continue
        if line.strip() == "test:":
            cur = {"suffix": "", "nsize": "1", "args": "", "output_file": None, "filter": None, "error": "0"}
            tests.append(cur)
            continue
        km = re.match(r"\s*(\w+):\s*(.*)$", line)
        if km and cur is not None:
            key, val = km.group(1), km.group(2).strip()
            cur[key] = val
        elif cur is not None and key:
            cur[key] += " " + line.strip()
    base = os.path.splitext(os.path.basename(src))[0]
    for t in tests:
        name = base + ("_" + t["suffix"] if t["suffix"] else "")
        t["name"] = name
        t["output_file"] = os.path.join(os.path.dirname(src), t["output_file"] or "output/%s.out" % name)
    return tests


# A report PETSc's versions word differently, mapped to one wording on both sides before they are compared (the
# numbers and everything else are still compared)
WORDING = [(re.compile(r"linear system matrix, which is also used to construct the preconditioner:"), "linear system matrix = precond matrix:")]


def reword(text):
    for pattern, words in WORDING:
        text = pattern.sub(words, text)
    return text


def same(expected, got, rtol, atol):
    a, b = expected.split(), got.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        xs, ys = x.rstrip(",;:)"), y.rstrip(",;:)")
        if NUM.match(xs) and NUM.match(ys):
            fx, fy = float(xs), float(ys)
            if abs(fx - fy) <= atol + rtol * max(abs(fx), abs(fy)):
                continue
        return False
    return True


def uses_server(t):
    """a test of PETSc's MPI linear solver server, whose shared memory (PETSc 3.22 on) has fixed System V keys: two of
    its runs at once would share segments, so such tests run one at a time"""
    return "-mpi_linear_solver_server" in t["args"]


def want_error(t):
    return t["error"] not in ("0", "false", "")


def kill_sid(sid):
    """Kills every process whose POSIX sid is the given one (os.getsid): Open MPI puts each rank in a process group of its own, and a
    rank left running would hold the GPU (and slow every later test) after its mpiexec is gone."""
    for pid in [int(d) for d in os.listdir("/proc") if d.isdigit()]:
        try:
            if os.getsid(pid) == sid:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def run_test(t, opts):
    cmd = shlex.split(opts.exe) + shlex.split(t["args"]) + shlex.split(opts.args or "")
    n = int(t["nsize"])
    if n > 1 or opts.always_mpiexec:
        cmd = shlex.split(opts.mpiexec) + ["-n", str(n)] + cmd
    # more ranks than cores: Open MPI 4's variable, and PRRTE's for Open MPI 5 and later; Kokkos' OpenMP backend: threads
    # that yield and stay unbound (Kokkos' advice for tests), unless the caller chose
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    env.setdefault("PRTE_MCA_mapby", ":oversubscribe")
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.setdefault("OMP_PROC_BIND", "false")
    env.setdefault("KOKKOS_DISABLE_WARNINGS", "1")  # Kokkos' start-up advice (more ranks than cores) is not output
    # a POSIX sid of its own (setsid), so that a hang is killed with every MPI process and fails this test alone
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True) as p:
        try:
            out, _ = p.communicate(timeout=opts.timeout)
        except subprocess.TimeoutExpired:
            kill_sid(p.pid)
            out, _ = p.communicate()
            return cmd, None, out.decode(errors="replace"), False
    out = out.decode(errors="replace")
    if t["filter"]:
        out = subprocess.run(t["filter"], shell=True, input=out.encode(), stdout=subprocess.PIPE).stdout.decode()
    status_ok = (p.returncode != 0) == want_error(t)
    return cmd, p.returncode, out, status_ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--list-server", action="store_true", help="the tests of PETSc's MPI linear solver server (one at a time)")
    ap.add_argument("--only")
    ap.add_argument("--skip", help="a regular expression: tests whose suffix matches are skipped (and counted)")
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--always-mpiexec", action="store_true")
    ap.add_argument("--args", default="", help="extra options for every run (e.g. -dll_append ...)")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-10)
    ap.add_argument("--timeout", type=int, default=600, help="seconds a test may run")
    ap.add_argument("--times", action="store_true", help="print the seconds each test took")
    ap.add_argument("--jobs", type=int, default=1, help="tests run at once (reported in their order as they end)")
    opts = ap.parse_args()

    tests = parse_tests(opts.src)
    if opts.list or opts.list_server:
        print(";".join(t["suffix"] or "-" for t in tests if opts.list or uses_server(t)))
        return 0
    if opts.only is not None:
        tests = [t for t in tests if (t["suffix"] or "-") == opts.only]
        if not tests:
            print("no test with suffix %r in %s" % (opts.only, opts.src))
            return 1
    skipped = []
    if opts.skip:
        skipped = [t["suffix"] for t in tests if re.search(opts.skip, t["suffix"])]
        tests = [t for t in tests if not re.search(opts.skip, t["suffix"])]
    passed = failed = 0

    exclusive = threading.Lock()  # uses_server()

    def timed(t):
        start = time.time()
        with exclusive if uses_server(t) else contextlib.nullcontext():
            return run_test(t, opts) + (time.time() - start,)

    # several at once where asked (a GPU machine's cores and MPS): map() hands the results back in the tests' order
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        results = pool.map(timed, tests) if opts.jobs > 1 else map(timed, tests)
        for t, (cmd, rc, out, status_ok, seconds) in zip(tests, results):
            passed, failed = report(t, opts, cmd, rc, out, status_ok, seconds, passed, failed)
    if skipped:
        print("# skipped: %s" % " ".join(skipped))
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % len(skipped) if skipped else ""))
    return 1 if failed else 0


def report(t, opts, cmd, rc, out, status_ok, seconds, passed, failed):
    """Compares one test's output with its expected one and prints the verdict; returns the updated counts."""
    took = " (%.1f s)" % seconds if opts.times else ""
    if opts.regenerate:
        os.makedirs(os.path.dirname(t["output_file"]), exist_ok=True)
        open(t["output_file"], "w").write(out)
    expected = open(t["output_file"]).read() if os.path.exists(t["output_file"]) else None
    el, gl = reword(expected or "").splitlines(), reword(out).splitlines()
    diff_ok = expected is not None and len(el) == len(gl) and all(same(a, b, opts.rtol, opts.atol) for a, b in zip(el, gl))
    if want_error(t) and not el:  # an expected failure must be recognised by its message
        diff_ok = False
    if diff_ok and status_ok:
        passed += 1
        print("ok %s%s" % (t["name"], took), flush=True)
    else:
        failed += 1
        print("not ok %s  # %s" % (t["name"], "missing " + t["output_file"] if expected is None else ("timed out after %d s" % opts.timeout if rc is None else "exit code %d" % rc if not status_ok else "output differs")) + took, flush=True)
        print("#   " + " ".join(shlex.quote(c) for c in cmd))
        if expected is not None and not diff_ok:
            import difflib
            for line in difflib.unified_diff(el, gl, "expected", "got", lineterm="", n=1):
                print("#   " + line)
        elif not status_ok:
            print("#   " + "\n#   ".join(gl[-15:]))
    return passed, failed


if __name__ == "__main__":
    sys.exit(main())
