#!/usr/bin/env python3
"""PETSc's KSP and SNES tutorials, run as written and with the plugin's matrix type, and every difference classified.

For each tutorial (a C file with a /*TEST ... TEST*/ block) under PETSc's examples, the script compiles it with
PETSc's own compiler settings (the variables of PETSc's makefiles), then runs each test of the block twice with its
default arguments and process count:
  reference: the arguments as written;
  plugin:    the same, followed by -dll_append <lib> -mat_type gpustream -dm_mat_type gpustream.
The outputs (after the test's own filter, when it has one) are compared and each pair gets one class:
  identical             the same text;
  rounding              the same text but for numbers, each pair within --rtol, or within one unit of the last
                        digit printed, or both below --atol in magnitude;
  view only             the same but for views (-ksp_view, -mat_view): the matrix type's name (seqaij/mpiaij
                        against gpustream), the factorization package (petsc against gpustream), the lines on AIJ's
                        inode routines and a host ICC factor's block size, and the plugin's own "GPUStream:" lines;
  plugin options unused neither -mat_type nor -dm_mat_type was read: the tutorial never asked for a matrix type
                        from the options, so the plugin's matrix was not used (the outputs agree otherwise);
  numbers differ        the same text, numbers beyond the tolerance (iteration counts, residuals), both exit 0;
  output differs        lines added, missing or changed, both exit 0 and neither reports a divergence;
  plugin diverged       the plugin's run reports a divergence (DIVERGED_*, "did not converge") the reference does not;
  plugin error          the reference ran, the plugin's run failed (exit status or a PETSC ERROR; the first error
                        lines are the detail);
  error, test's type replaced
                        a plugin error where the test asks for another matrix type (-mat_type is, baij, sbaij,
                        hypre, ...) that the appended -mat_type gpustream replaced: the program needs that type;
  reference error       the run as written fails here already (not a plugin question);
  timeout               a run took more than --timeout seconds;
  build failed          the tutorial does not compile here;
  as with aij           a difference of the classes below (named first in the detail) that a third run, with
                        -mat_type aij -dm_mat_type aij appended instead (--control), shows as well (an error:
                        the same first lines, or the same exit status and an error message in common): it comes
                        from appending the options (the program's own shell, MFFD or MATIS matrices turned
                        into another type, a default changed), not from gpustream;
  skipped               the test requires what this PETSc lacks (packages, complex, data files, ...), or is a
                        custom command, TODO or SKIP.
Writes one CSV row per test (tutorial, suffix, nsize, class, detail) and prints the counts by class.
Standard library only."""
import argparse
import concurrent.futures
import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--lib", help="the plugin's library (default: build/libpetscgpustream.so of this repository)")
ap.add_argument("--petsc-dir", help="PETSc's prefix (default: pkg-config --variable=prefix PETSc, then PETSC_DIR)")
ap.add_argument("--examples", help="PETSc's examples/src (default: searched under the PETSc and share prefixes)")
ap.add_argument("--dirs", default="ksp/ksp/tutorials,ksp/pc/tutorials,snes/tutorials",
                help="tutorial folders under --examples, comma separated")
ap.add_argument("--work", help="scratch folder for executables and runs (default: a new temporary folder)")
ap.add_argument("--csv", default="petsc-harness.csv", help="the CSV written (petsc-harness.csv)")
ap.add_argument("--only", help="regular expression: tutorials (e.g. snes/tutorials/ex5) or tests (ex5_2) to run")
ap.add_argument("--limit", type=int, default=0, help="at most this many tests (after --only; 0: all)")
ap.add_argument("--jobs", type=int, default=2, help="pairs of runs at once (2)")
ap.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take (120)")
ap.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance of 'rounding' (1e-6)")
ap.add_argument("--atol", type=float, default=1e-10, help="numbers both below this in magnitude agree (1e-10)")
ap.add_argument("--extra", default="-mat_type gpustream -dm_mat_type gpustream", help="the plugin run's options")
ap.add_argument("--control", default="-mat_type aij -dm_mat_type aij",
                help="where a pair differs, a third run with these options instead of the plugin's; '' for none")
ap.add_argument("--mpiexec", default=None, help="MPI launcher (default: PETSc's MPIEXEC)")
ap.add_argument("--reclassify", action="store_true",
                help="classify again the pairs kept under --work/runs by an earlier run, rewriting --csv (no runs)")
ap.add_argument("--keep", action="store_true", help="keep the outputs of identical pairs too")
ap.add_argument("-v", "--verbose", action="store_true")
o = ap.parse_args()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
lib = os.path.abspath(o.lib or os.path.join(ROOT, "build", "libpetscgpustream.so"))
if not o.reclassify and not os.path.exists(lib):
    sys.exit("no plugin library at %s (build it, or give --lib)" % lib)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)


# --- PETSc's configuration: prefix, compiler settings (its makefiles' variables), configured packages
petsc_dir = o.petsc_dir
if not petsc_dir:
    p = sh(["pkg-config", "--variable=prefix", "PETSc"])
    petsc_dir = p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else os.environ.get("PETSC_DIR")
if not petsc_dir or not os.path.isdir(petsc_dir):
    sys.exit("PETSc not found: give --petsc-dir")
arch = os.environ.get("PETSC_ARCH", "")
mk = ("include ${PETSC_DIR}/lib/petsc/conf/variables\nshow:\n\t@echo 'CC=$(PCC)'\n"
      "\t@echo 'CFLAGS=$(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS)'\n\t@echo 'LIBS=$(PETSC_LIB)'\n\t@echo 'MPIEXEC=$(MPIEXEC)'\n")
p = subprocess.run(["make", "-s", "-f", "-", "show", "PETSC_DIR=" + petsc_dir, "PETSC_ARCH=" + arch], input=mk,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
if p.returncode:
    sys.exit("cannot read PETSc's makefile variables:\n" + p.stderr)
var = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
CC, CFLAGS, LIBS = var["CC"].strip(), var["CFLAGS"].split(), var["LIBS"].split()
mpiexec = shlex.split(o.mpiexec or var.get("MPIEXEC", "mpiexec").strip() or "mpiexec")

conf = {}
for inc in (os.path.join(petsc_dir, arch, "include", "petscconf.h"), os.path.join(petsc_dir, "include", "petscconf.h")):
    if os.path.exists(inc):
        for m in re.finditer(r"^#define\s+(\w+)\s*(.*)$", open(inc).read(), re.M):
            conf[m.group(1)] = m.group(2).strip()
        break


def have(req):
    """Whether one requirement of a TEST block holds for this PETSc (PETSc's own rules, the common cases)."""
    neg = req.startswith("!")
    r = req.lstrip("!")
    m = re.match(r"defined\((\w+)\)$", r)
    if m:
        ok = m.group(1) in conf
    elif r == "complex":
        ok = "PETSC_USE_COMPLEX" in conf
    elif r == "real":
        ok = "PETSC_USE_COMPLEX" not in conf
    elif r in ("single", "double", "__float128", "__fp16"):
        ok = "PETSC_USE_REAL_" + r.strip("_").upper() in conf
    elif r == "datafilespath":
        ok = bool(os.environ.get("DATAFILESPATH"))
    elif r in ("long_runtime", "todo", "petsc4py", "valgrind"):
        ok = False
    elif r.startswith("cuda_version") or r.endswith("_11PLUS"):
        ok = False
    else:
        ok = "PETSC_HAVE_" + r.upper() in conf
    return ok != neg


# --- the tutorials and their TEST blocks
def find_examples():
    if o.examples:
        return o.examples
    for base in (petsc_dir, os.path.join(petsc_dir, arch), "/usr/share/petsc"):
        for dp, dn, fn in os.walk(base):
            if dp.endswith(os.path.join("examples", "src")) and os.path.isdir(os.path.join(dp, "ksp")):
                return dp
    sys.exit("PETSc's examples not found (Debian: libpetsc3.18-dev-examples): give --examples")


def parse_block(text):
    """The TEST block as a tree of dicts: {'kind': 'test'|'testset'|'build', keys..., 'sub': [...]}."""
    text = text.replace("\\\n", " ")
    root = {"kind": "root", "sub": [], "indent": -1}
    stack = [root]
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.strip().startswith("#"):
            continue
        ind = len(line) - len(line.lstrip())
        key, _, val = line.strip().partition(":")
        key = key.strip()
        while len(stack) > 1 and ind <= stack[-1]["indent"]:
            stack.pop()
        if key in ("test", "testset", "build") and not val.strip():
            node = {"kind": key, "sub": [], "indent": ind}
            stack[-1]["sub"].append(node)
            stack.append(node)
        else:
            stack[-1][key] = val.strip()
    return root


def first_loop_values(s):
    """Default arguments: the first value of every {{a b c}separate output} or {{a b c}} loop."""
    return re.sub(r"\{\{(.*?)\}[^}\s]*(?:\s+output)?\}", lambda m: m.group(1).split()[0] if m.group(1).split() else "", s)


def tests_of(path):
    src = open(path, errors="replace").read()
    m = re.search(r"/\*TEST(.*?)TEST\*/", src, re.S)
    if not m:
        return [], []
    root = parse_block(m.group(1))
    build_req = []
    out = []
    for node in root["sub"]:
        if node["kind"] == "build":
            build_req += node.get("requires", "").split()
    for node in root["sub"]:
        if node["kind"] == "build":
            continue
        subs = [s for s in node["sub"] if s["kind"] == "test"] or [None]
        for s in subs:
            t = {}
            for k in ("args", "requires"):
                t[k] = " ".join(x for x in (node.get(k, ""), (s or {}).get(k, "")) if x)
            for k in ("nsize", "filter", "output_file", "localrunfiles", "command", "TODO", "SKIP", "env", "timeoutfactor"):
                v = (s or {}).get(k, node.get(k))
                if v is not None:
                    t[k] = v
            suf = "_".join(x for x in (node.get("suffix", ""), (s or {}).get("suffix", "")) if x)
            t["suffix"] = suf
            t["requires"] = (t["requires"] + " " + " ".join(build_req)).split()
            out.append(t)
    return out, build_req


# --- runs
env0 = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
            OMPI_MCA_rmaps_base_oversubscribe="1", KOKKOS_DISABLE_WARNINGS="1")
env0.setdefault("PRTE_MCA_mapby", ":oversubscribe")
env0.setdefault("OMP_NUM_THREADS", "1")
# what PETSc's own harness sets for every test
env0["PETSC_OPTIONS"] = (os.environ.get("PETSC_OPTIONS", "") + " -check_pointer_intensity 0 -error_output_stdout -malloc_dump").strip()
env0["PETSC_DIR"] = petsc_dir
env0["wPETSC_DIR"] = petsc_dir  # the name some tests' arguments use

build_locks = {}
build_results = {}
glock = threading.Lock()


def build(tut, srcdir, work):
    with glock:
        lk = build_locks.setdefault(tut, threading.Lock())
    with lk:
        if tut in build_results:
            return build_results[tut]
        bdir = os.path.join(work, "bin", tut.replace("/", "_"))
        os.makedirs(bdir, exist_ok=True)
        exe = os.path.join(bdir, os.path.basename(tut))
        p = sh([CC] + CFLAGS + ["-o", exe, os.path.join(srcdir, os.path.basename(tut) + ".c")] + LIBS + ["-lm"], cwd=bdir)
        res = (exe, None) if p.returncode == 0 else (None, p.stdout.strip().splitlines()[-1:] or ["compile failed"])
        build_results[tut] = res
        return res


def run_one(exe, t, extra, rdir, srcdir):
    os.makedirs(rdir, exist_ok=True)
    for f in t.get("localrunfiles", "").split():
        dst = os.path.join(rdir, os.path.basename(f))
        if not os.path.lexists(dst):
            os.symlink(os.path.join(srcdir, f), dst)
    env = dict(env0)
    for kv in shlex.split(t.get("env", "")):
        if "=" in kv:
            k, v = kv.split("=", 1)
            env[k] = v
    nsize = t.get("nsize", "1")
    args = first_loop_values(t.get("args", ""))
    args = args.replace("${DATAFILESPATH}", os.environ.get("DATAFILESPATH", "")).replace("${PETSC_DIR}", petsc_dir).replace("${wPETSC_DIR}", petsc_dir)
    cmd = mpiexec + ["-n", nsize, exe] + shlex.split(args) + shlex.split(extra)
    tmo = o.timeout * float(t.get("timeoutfactor", "1"))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=rdir, env=env, timeout=tmo,
                           start_new_session=True)
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.output or b"").decode(errors="replace")
    dt = time.time() - t0
    if t.get("filter") and rc != "timeout":
        f = first_loop_values(t["filter"]).replace("${PETSC_DIR}", petsc_dir)
        fp = subprocess.run(["sh", "-c", f], input=out.encode(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=rdir, env=env)
        out = fp.stdout.decode(errors="replace")
    with open(os.path.join(rdir, "out.txt"), "w") as fh:
        fh.write("# %s\n# exit %s after %.1f s\n%s" % (" ".join(shlex.quote(c) for c in cmd), rc, dt, out))
    return rc, out, dt


# --- comparison
NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.I)
TYPE = re.compile(r"\b(?:gpustream|seqaij|mpiaij|aij)\b")
# the factorization package a view names: the default LU, ILU and ICC of a sequential gpustream matrix are the
# plugin's (MATSOLVERGPUSTREAM), AIJ's PETSc's own
PACKAGE = re.compile(r"(package used to perform factorization: )(?:gpustream|petsc)\b")
# a view's lines on AIJ's inode routines (a matrix's, a host factor's) and a host ICC factor's block size, where the
# device factor has its GPUStream: line
INODE = re.compile(r"^\s*(?:(?:not )?using I-node routines|block size is \d+\s*$)")
UNUSED_HDR = re.compile(r"^(?:\[\d+\]PETSC ERROR: )?(WARNING! There are option|WARNING! could be spelling mistake"
                        r"|There (?:is|are) \S+ unused database options?\.)")
UNUSED_OPT = re.compile(r"^(?:\[\d+\]PETSC ERROR: )?Option left: name:-?(\S+)")


def split_unused(out):
    """The output without PETSc's unused-option warning, and the options it names."""
    keep, unused = [], set()
    for line in out.splitlines():
        m = UNUSED_OPT.match(line.strip())
        if m:
            unused.add(m.group(1))
        elif not UNUSED_HDR.match(line.strip()):
            keep.append(line)
    return keep, unused


def last_digit(u):
    """One unit in the last printed digit of the number u (a string)."""
    m = re.match(r"[-+]?\d*(?:\.(\d*))?(?:[eE]([-+]?\d+))?$", u)
    if not m:
        return 0.0
    return 10.0 ** (int(m.group(2) or 0) - len(m.group(1) or ""))


MAXREL = threading.local()


def lines_agree(a, b, types=False):
    """(text equal, numbers within tolerance) for two lists of lines; MAXREL.v: the largest relative difference."""
    MAXREL.v = 0.0
    if len(a) != len(b):
        return False, False
    num_ok = True
    for x, y in zip(a, b):
        if x == y:
            continue
        if types:
            x, y = TYPE.sub("<aij>", PACKAGE.sub(r"\1<package>", x)), TYPE.sub("<aij>", PACKAGE.sub(r"\1<package>", y))
        if NUM.sub("#", x).split() != NUM.sub("#", y).split():
            return False, False
        for u, v in zip(NUM.findall(x), NUM.findall(y)):
            if u == v:
                continue
            try:
                fu, fv = float(u), float(v)
            except ValueError:
                return False, False
            d, big = abs(fu - fv), max(abs(fu), abs(fv))
            if not (d <= o.rtol * big or big < o.atol or d <= 1.000001 * max(last_digit(u), last_digit(v))):
                num_ok = False
                if d == d:
                    MAXREL.v = max(MAXREL.v, d / big if big else float("inf"))
    return True, num_ok


ERRLINE = re.compile(r"PETSC ERROR: (?!-|See |WARNING! There are option|PETSc Option Table|Petsc Release|Configure|#\d|.*Error Message|Option left|.*Nonconforming"
                     r"|.*at \w+\(\)|.*on a .* named|.*Configure options|.*\d+ \w+\(\) at )(.+)")


def first_error(out):
    msgs = []
    for line in out.splitlines():
        m = ERRLINE.search(line)
        if m and m.group(1).strip() and m.group(1).strip() not in msgs:
            msgs.append(m.group(1).strip())
        if len(msgs) == 2:
            break
    if msgs:
        return " | ".join(msgs)
    tail = [l for l in out.splitlines() if l.strip() and not l.strip().startswith("---")]
    return tail[-1][:200] if tail else "no output"


FRAME1 = re.compile(r"PETSC ERROR: #1 (\S+\(\) at \S+)")


def error_set(out):
    """Every error message of a run's output and where each error was raised (its first frame), in any order (several
    processes interleave their lines)."""
    lines = out.splitlines()
    return ({m.group(1).strip() for m in map(ERRLINE.search, lines) if m and m.group(1).strip()} |
            {m.group(1) for m in map(FRAME1.search, lines) if m})


DIVERGED = re.compile(r"DIVERGED_\w+|did not converge", re.I)


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "line %d: '%s' vs '%s'" % (i + 1, x.strip()[:90], y.strip()[:90])
    return "%d lines vs %d" % (len(a), len(b))


def classify(ref, new, args=""):
    cls, detail = classify_outputs(ref, new)
    own = [m for m in re.findall(r"(?:^|\s)(-(?:\w+_)?mat_type)\s+(\S+)", args)
           if not re.search(r"pc_|sub_|schur|ksp_|solver", m[0])]  # the program's matrices, not a PC's inner ones
    own.sort(key=lambda m: m[1] in ("aij", "seqaij", "mpiaij"))
    if own and cls not in ("identical", "reference error"):
        detail = "(replaces the test's %s %s) %s" % (own[0][0], own[0][1], detail)
        if cls == "plugin error" and own[0][1] not in ("aij", "seqaij", "mpiaij"):
            cls = "error, test's type replaced"
    return cls, detail


def classify_outputs(ref, new):
    (rrc, rout, _), (nrc, nout, _) = ref, new
    if rrc == "timeout":
        return "reference error", "reference run timed out"
    if rrc != 0 or "PETSC ERROR" in rout:
        same = "; the plugin's run fails alike" if nrc == rrc and first_error(nout) == first_error(rout) else ""
        return "reference error", "exit %s: %s%s" % (rrc, first_error(rout), same)
    if nrc == "timeout":
        return "timeout", "plugin run over %g s" % o.timeout
    if nrc != 0 or ("PETSC ERROR" in nout and "PETSC ERROR" not in rout):
        return "plugin error", "exit %s: %s" % (nrc, first_error(nout))
    if rout == nout:
        return "identical", ""
    a, ua = split_unused(rout)
    b, ub = split_unused(nout)
    extra = ub - ua
    text, nums = lines_agree(a, b)
    if text and nums and {"mat_type", "dm_mat_type"} <= extra:
        return "plugin options unused", "unused: " + " ".join("-" + x for x in sorted(extra))
    if text and nums and a == b and not extra:
        return "identical", "but for the unused-option warning"
    if text and nums:
        return "rounding", first_diff(a, b) if a != b else ""
    bv = [l for l in b if not l.lstrip().startswith("GPUStream:") and not INODE.match(l)]
    av = [l for l in a if not INODE.match(l)]
    ttext, tnums = lines_agree(av, bv, types=True)
    if ttext and tnums:
        return "view only", first_diff(a, b)
    if len(DIVERGED.findall("\n".join(b))) > len(DIVERGED.findall("\n".join(a))):
        m = DIVERGED.search("\n".join(l for l in b if l not in a))
        return "plugin diverged", (m.group(0) + "; " if m else "") + first_diff(a, b)
    if text or ttext:
        if text:
            lines_agree(a, b)
        return "numbers differ", "largest relative difference %.1e; %s" % (MAXREL.v, first_diff(a, b))
    return "output differs", first_diff(a, b)


CONTROLLED = ("numbers differ", "output differs", "plugin diverged", "plugin error", "error, test's type replaced",
              "timeout")


def controlled(cls, detail, ctl, new):
    """'as with aij' where the control run (the appended options with AIJ) shows the plugin run's outcome."""
    same = classify_outputs(ctl, new)[0] in ("identical", "rounding", "view only")
    if ctl[0] != 0 or "PETSC ERROR" in ctl[1]:
        same = (new[0] != 0 or "PETSC ERROR" in new[1]) and (first_error(ctl[1]) == first_error(new[1]) or (ctl[0] == new[0] and bool(error_set(ctl[1]) & error_set(new[1]))))
    return ("as with aij", "%s, %s" % (cls, detail)) if same else (cls, detail)


def read_run(path):
    with open(path, errors="replace") as fh:
        cmd, status, out = fh.readline(), fh.readline(), fh.read()
    rc = status.split()[2]
    return (rc if rc == "timeout" else int(rc)), out, 0.0


def reclassify(work):
    rows = list(csv.reader(open(o.csv)))[1:]
    for r in rows:
        rdir = os.path.join(work, "runs", r[0].replace("/", "_") + ("_" + r[1] if r[1] else ""))
        if os.path.exists(os.path.join(rdir, "plugin", "out.txt")):
            ref = read_run(os.path.join(rdir, "reference", "out.txt"))
            args = open(os.path.join(rdir, "reference", "out.txt")).readline()
            new = read_run(os.path.join(rdir, "plugin", "out.txt"))
            r[3:5] = classify(ref, new, args)
            if r[3] in CONTROLLED and os.path.exists(os.path.join(rdir, "control", "out.txt")):
                r[3:5] = controlled(r[3], r[4], read_run(os.path.join(rdir, "control", "out.txt")), new)
    return rows


ORDER = ["identical", "rounding", "view only", "plugin options unused", "as with aij", "numbers differ", "output differs",
         "plugin diverged", "plugin error", "error, test's type replaced", "timeout", "reference error", "build failed", "skipped", "harness error"]


def report(rows):
    rows.sort(key=lambda r: (r[0], r[1]))
    with open(o.csv, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["tutorial", "suffix", "nsize", "class", "detail"])
        w.writerows(rows)
    counts = {}
    for r in rows:
        counts[r[3]] = counts.get(r[3], 0) + 1
    print("\n| class | tests |\n|---|---|")
    for c in ORDER + sorted(set(counts) - set(ORDER)):
        if counts.get(c):
            print("| %s | %d |" % (c, counts[c]))
    print("| total | %d |" % len(rows))


# --- driver
def main():
    if o.reclassify:
        if not o.work:
            sys.exit("--reclassify needs --work")
        report(reclassify(os.path.abspath(o.work)))
        return 0
    ex = find_examples()
    work = os.path.abspath(o.work) if o.work else tempfile.mkdtemp(prefix="petsc-harness-")
    os.makedirs(work, exist_ok=True)
    todo = []
    for d in o.dirs.split(","):
        sd = os.path.join(ex, d)
        if not os.path.isdir(sd):
            print("# no folder %s" % sd)
            continue
        for fn in sorted(os.listdir(sd), key=lambda f: (len(f), f)):
            if not fn.endswith(".c"):
                continue
            tut = d + "/" + fn[:-2]
            tests, _ = tests_of(os.path.join(sd, fn))
            for t in tests:
                name = fn[:-2] + ("_" + t["suffix"] if t["suffix"] else "")
                if o.only and not (re.search(o.only, tut) or re.search(o.only, name)):
                    continue
                todo.append((tut, sd, t, name))
    if o.limit:
        todo = todo[:o.limit]
    # a copy of the library, so that a rebuild during the run changes nothing; loaded once to check it is whole
    os.makedirs(os.path.join(work, "lib"), exist_ok=True)
    snap = os.path.join(work, "lib", os.path.basename(lib))
    shutil.copy2(os.path.realpath(lib), snap)
    chk = sh(["python3", "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", snap])
    if chk.returncode:
        sys.exit("the plugin library does not load: " + chk.stdout)
    print("# PETSc %s, examples %s, plugin %s, work %s: %d tests, %d jobs" % (petsc_dir, ex, lib, work, len(todo), o.jobs))
    extra = "-dll_append %s %s" % (snap, o.extra)

    def one(item):
        tut, sd, t, name = item
        nsize = t.get("nsize", "1")
        nsize = first_loop_values(nsize)
        t["nsize"] = nsize
        miss = [r for r in t["requires"] if not have(r)]
        row = [tut, t["suffix"], nsize]
        if miss:
            return row + ["skipped", "requires " + " ".join(miss)]
        for k in ("command", "TODO", "SKIP"):
            if k in t:
                return row + ["skipped", "%s: %s" % (k, t[k])[:150]]
        exe, err = build(tut, sd, work)
        if not exe:
            return row + ["build failed", err[0][:200]]
        rdir = os.path.join(work, "runs", tut.replace("/", "_") + name[len(os.path.basename(tut)):])
        ref = run_one(exe, t, "", os.path.join(rdir, "reference"), sd)
        new = run_one(exe, t, extra, os.path.join(rdir, "plugin"), sd)
        cls, detail = classify(ref, new, first_loop_values(t.get("args", "")))
        if cls in CONTROLLED and o.control:
            # the same options with AIJ: does the difference come from the appended options themselves?
            ctl = run_one(exe, t, o.control, os.path.join(rdir, "control"), sd)
            cls, detail = controlled(cls, detail, ctl, new)
        if cls == "identical" and not o.keep:
            shutil.rmtree(rdir, ignore_errors=True)
        return row + [cls, detail]

    rows = []
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as pool, open(o.csv, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["tutorial", "suffix", "nsize", "class", "detail"])
        futs = {pool.submit(one, it): it for it in todo}
        for n, f in enumerate(concurrent.futures.as_completed(futs), 1):
            try:
                row = f.result()
            except Exception as e:  # a harness fault is a row too, not the end of the run
                it = futs[f]
                row = [it[0], it[2]["suffix"], it[2].get("nsize", "1"), "harness error", repr(e)[:200]]
            rows.append(row)
            w.writerow(row)
            fh.flush()
            if o.verbose or row[3] not in ("identical", "skipped", "rounding"):
                print("[%d/%d %4.0fs] %s %s np%s: %s %s" % (n, len(todo), time.time() - t0, row[0], row[1], row[2], row[3],
                                                            row[4]), flush=True)
    report(rows)
    print("# %.0f s; CSV %s; outputs of the differing pairs under %s/runs" % (time.time() - t0, o.csv, work))
    return 0


sys.exit(main())
