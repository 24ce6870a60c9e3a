static char help[] = "Coordinate assembly (MatSetPreallocationCOO(), MatSetValuesCOO()) of a gpustream matrix against AIJ:\n\
insert and add, repeated entries, negative indices, entries of other processes' rows, values set again and again\n\
with a solve after each; then MatScale, MatShift, MatDiagonalScale, MatGetDiagonal, MatAXPY and MatZeroEntries\n\
after such values, and what the host sees afterwards (MatGetValues, MatGetRow, MatView, MatMult, conversions, host\n\
PCs). The values are multiples of small powers of two, so that every result is exact and compared exactly.\n\
  -m <9>     : grid edge (m x m nodes)\n\
  -bs <1>    : unknowns per node, coupled by full blocks (2 to 6: the device may store block column indices)\n\
  -counts    : print how often MatSetValuesCOO() ran on the device and the host arrays were brought up to date\n\
  -view      : view the gpustream matrix (-mat_view ::ascii_info's lines) after its first values\n\
  -setup     : MatSetUp() before MatSetPreallocationCOO()\n\n";

#include <petscgpustream.h>
#include <petscksp.h>
#include <unistd.h> /* getpid() */

typedef struct {
  PetscInt   m, bs, n; /* grid edge, unknowns per node, rows */
  PetscInt   mloc;     /* local rows */
  PetscCount ncoo;     /* entries this process gives */
  PetscInt  *ci, *cj;  /* their indices */
  PetscBool  counts, view, setup;
} Problem;

/* Local rows: with more than two processes the first owns none, the last takes the remainder (whole nodes) */
static PetscErrorCode LocalRows(Problem *P)
{
  PetscMPIInt size, rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  {
    const PetscMPIInt skip = size > 2, np = size - skip;
    const PetscInt    nodes = P->m * P->m;
    P->mloc                 = P->bs * ((rank < skip) ? 0 : nodes / np + (rank == size - 1 ? nodes % np : 0));
  }
  PetscFunctionReturn(0);
}

/* The entries: for each edge (p, q) of the grid, p < q, the process owning p's rows gives the bs x bs blocks (p, p),
   (q, q), (p, q) and (q, p) of the edge's element (so rows of q may belong to the next process); every node's
   diagonal block comes once more from its owner; and two entries with a negative index, to be ignored */
static PetscErrorCode Entries(Problem *P)
{
  PetscInt   rstart, nodes = P->m * P->m, bs = P->bs, p0, p1;
  PetscCount k = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Scan(&P->mloc, &rstart, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart -= P->mloc;
  p0      = rstart / bs;
  p1      = (rstart + P->mloc) / bs;
  P->ncoo = 2;
  for (PetscInt p = p0; p < p1; p++) P->ncoo += (PetscCount)bs * bs * (1 + 4 * ((p % P->m < P->m - 1) + (p + P->m < nodes)));
  PetscCall(PetscMalloc2(P->ncoo, &P->ci, P->ncoo, &P->cj));
  for (PetscInt p = p0; p < p1; p++) {
    const PetscInt q[2] = {p % P->m < P->m - 1 ? p + 1 : -1, p + P->m < nodes ? p + P->m : -1};
    for (int e = 0; e < 2; e++) {
      const PetscInt a[4] = {p, q[e], p, q[e]}, b[4] = {p, q[e], q[e], p};
      if (q[e] < 0) continue;
      for (int t = 0; t < 4; t++)
        for (PetscInt c1 = 0; c1 < bs; c1++)
          for (PetscInt c2 = 0; c2 < bs; c2++) P->ci[k] = a[t] * bs + c1, P->cj[k++] = b[t] * bs + c2;
    }
    for (PetscInt c1 = 0; c1 < bs; c1++)
      for (PetscInt c2 = 0; c2 < bs; c2++) P->ci[k] = p * bs + c1, P->cj[k++] = p * bs + c2;
  }
  P->ci[k] = -1, P->cj[k++] = 0;
  P->ci[k] = p0 * bs, P->cj[k++] = -1; /* a negative column in a row that may not be ours */
  PetscCheck(k == P->ncoo, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Counted %" PetscCount_FMT " entries, made %" PetscCount_FMT, P->ncoo, k);
  PetscFunctionReturn(0);
}

/* The values of step s, in the order of Entries(): the element of edge (p, q) is w [1 -1; -1 1] (x) K, with w in
   1, 1.25, 1.5, 1.75 and K = [1 1/4 ...; 1/4 1 ...], and the extra diagonal block (1/2 + s/8) K: symmetric positive
   definite. Multiples of 1/128, summed exactly in any order. The two ignored entries get huge values. */
static PetscErrorCode Values(Problem *P, PetscInt s, PetscScalar v[])
{
  PetscInt   nodes = P->m * P->m, bs = P->bs;
  PetscCount k = 0;

  PetscFunctionBeginUser;
  for (PetscCount t = 0; t < P->ncoo - 2;) {
    const PetscInt p = P->ci[t] / bs, nedge = (p % P->m < P->m - 1) + (p + P->m < nodes);
    for (PetscInt e = 0; e < nedge; e++) {
      const PetscInt    q = P->cj[t + bs * bs] / bs; /* the second block of the element is (q, q) */
      const PetscScalar w = 1.0 + 0.25 * (PetscScalar)((p + q + s) % 4), sign[4] = {1, 1, -1, -1};
      for (int b = 0; b < 4; b++)
        for (PetscInt c1 = 0; c1 < bs; c1++)
          for (PetscInt c2 = 0; c2 < bs; c2++) v[k++] = sign[b] * w * (c1 == c2 ? 1.0 : 0.25);
      t += 4 * bs * bs;
    }
    for (PetscInt c1 = 0; c1 < bs; c1++)
      for (PetscInt c2 = 0; c2 < bs; c2++) v[k++] = (0.5 + 0.125 * (PetscScalar)s) * (c1 == c2 ? 1.0 : 0.25);
    t += bs * bs;
  }
  v[k++] = 1e30;
  v[k++] = -1e30;
  PetscFunctionReturn(0);
}

/* The matrix of the given type with the COO pattern (preallocated only) */
static PetscErrorCode Create(Problem *P, MatType type, Mat *A)
{
  PetscInt *i, *j;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, P->mloc, P->mloc, P->n, P->n));
  PetscCall(MatSetBlockSize(*A, P->bs));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  if (P->setup) PetscCall(MatSetUp(*A));             /* set up without preallocation first (from PETSc 3.20: a hash table) */
  PetscCall(PetscMalloc2(P->ncoo, &i, P->ncoo, &j)); /* AIJ may change the arrays it is given */
  PetscCall(PetscArraycpy(i, P->ci, P->ncoo));
  PetscCall(PetscArraycpy(j, P->cj, P->ncoo));
  PetscCall(MatSetPreallocationCOO(*A, P->ncoo, i, j));
  PetscCall(PetscFree2(i, j));
  PetscFunctionReturn(0);
}

/* The same entries of step s through MatSetValues() (rows of other processes through the stash), into a matrix of the
   given type preallocated generously: nodiag leaves out the diagonal entries of every third row, extra adds an entry
   outside the pattern on each process's first row */
static PetscErrorCode Assemble(Problem *P, MatType type, PetscInt s, PetscBool nodiag, PetscBool extra, Mat *A)
{
  PetscScalar *v;
  PetscInt     rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, P->mloc, P->mloc, P->n, P->n));
  PetscCall(MatSetBlockSize(*A, P->bs));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 6 * P->bs, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 6 * P->bs, NULL, 6 * P->bs, NULL));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(PetscMalloc1(P->ncoo, &v));
  PetscCall(Values(P, s, v));
  for (PetscCount k = 0; k < P->ncoo; k++)
    if (P->ci[k] >= 0 && P->cj[k] >= 0 && !(nodiag && P->ci[k] == P->cj[k] && P->ci[k] % 3 == 0)) PetscCall(MatSetValues(*A, 1, &P->ci[k], 1, &P->cj[k], &v[k], ADD_VALUES));
  PetscCall(PetscFree(v));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  if (extra && rend > rstart) {
    const PetscInt    c   = (rstart + P->n / 2) % P->n;
    const PetscScalar one = 1.0;
    PetscCall(MatSetValues(*A, 1, &rstart, 1, &c, &one, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Both matrices get the values of step s */
static PetscErrorCode SetBoth(Problem *P, Mat A, Mat B, PetscInt s, InsertMode mode)
{
  PetscScalar *v;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(P->ncoo, &v));
  PetscCall(Values(P, s, v));
  PetscCall(MatSetValuesCOO(A, v, mode));
  PetscCall(MatSetValuesCOO(B, v, mode));
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}

/* x(i) = 1 + (i mod 5) / 4 - shift, exact */
static PetscErrorCode FillExact(Vec x, PetscReal shift)
{
  PetscInt     lo, hi;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  PetscCall(VecGetArrayWrite(x, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = 1.0 + 0.25 * (PetscReal)(i % 5) - shift;
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscFunctionReturn(0);
}

/* max |a - b| over both processes' entries */
static PetscErrorCode VecMaxDiff(Vec a, Vec b, PetscReal *d)
{
  Vec t;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(a, &t));
  PetscCall(VecWAXPY(t, -1.0, a, b));
  PetscCall(VecNorm(t, NORM_INFINITY, d));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* A (gpustream) and B (AIJ) hold the same values: every local entry through MatGetValues() and MatGetRow(), the
   diagonal, products and transposed products, all exactly; prints one line */
static PetscErrorCode Compare(const char what[], Mat A, Mat B)
{
  PetscInt  rstart, rend, bad = 0;
  Vec       x, ya, yb;
  PetscReal d[4];
  PetscBool isgs;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nb, na;
    const PetscInt    *cb, *ca;
    const PetscScalar *vb, *va;
    PetscScalar       *vg;
    PetscCall(MatGetRow(B, r, &nb, &cb, &vb));
    PetscCall(PetscMalloc1(nb + 1, &vg));
    PetscCall(MatGetValues(A, 1, &r, nb, cb, vg));
    for (PetscInt k = 0; k < nb; k++) bad += vg[k] != vb[k];
    PetscCall(MatGetRow(A, r, &na, &ca, &va));
    bad += na != nb;
    for (PetscInt k = 0; k < PetscMin(na, nb); k++) bad += ca[k] != cb[k] || va[k] != vb[k];
    PetscCall(MatRestoreRow(A, r, &na, &ca, &va));
    PetscCall(PetscFree(vg));
    PetscCall(MatRestoreRow(B, r, &nb, &cb, &vb));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(MatCreateVecs(B, &x, &yb));
  PetscCall(VecDuplicate(yb, &ya));
  PetscCall(MatGetDiagonal(A, ya));
  PetscCall(MatGetDiagonal(B, yb));
  PetscCall(VecMaxDiff(ya, yb, &d[0]));
  PetscCall(FillExact(x, 0.5));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecMaxDiff(ya, yb, &d[1]));
  PetscCall(MatMultAdd(A, x, yb, ya));
  PetscCall(MatMultAdd(B, x, yb, yb));
  PetscCall(VecMaxDiff(ya, yb, &d[2]));
  PetscCall(MatMultTranspose(A, x, ya));
  PetscCall(MatMultTranspose(B, x, yb));
  PetscCall(VecMaxDiff(ya, yb, &d[3]));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, "gpustream", &isgs));
  if (isgs && !bad && d[0] == 0 && d[1] == 0 && d[2] == 0 && d[3] == 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: entries, diagonal and products equal AIJ's\n", what));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: DIFFERS (gpustream %d): %" PetscInt_FMT " entries, differences %g %g %g %g\n", what, (int)isgs, bad, (double)d[0], (double)d[1], (double)d[2], (double)d[3]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* The ASCII views of A and B (files, one per matrix) are the same but for the type line */
static PetscErrorCode CompareViews(const char what[], Mat A, Mat B)
{
  char        name[2][PETSC_MAX_PATH_LEN];
  PetscMPIInt size, rank;
  PetscBool   same = PETSC_TRUE;
  Mat         M[2] = {A, B};
  int         pid;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  pid = (int)getpid(); /* rank 0's in the names: runs of the test side by side in one folder keep their own files */
  PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  for (int t = 0; t < 2; t++) {
    PetscViewer v;
    PetscCall(PetscSNPrintf(name[t], sizeof(name[t]), "matcoo-view-%d-%d-%d.txt", pid, (int)size, t));
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, name[t], &v));
    PetscCall(MatView(M[t], v));
    PetscCall(PetscViewerDestroy(&v));
  }
  if (!rank) {
    FILE *f[2];
    char  line[2][4096];
    f[0] = fopen(name[0], "r");
    f[1] = fopen(name[1], "r");
    PetscCheck(f[0] && f[1], PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot read the views back");
    for (;;) {
      char *g0 = fgets(line[0], sizeof(line[0]), f[0]), *g1 = fgets(line[1], sizeof(line[1]), f[1]);
      if (!g0 || !g1) {
        same = (PetscBool)(same && !g0 && !g1);
        break;
      }
      if (strstr(line[0], "type:") && strstr(line[1], "type:")) continue;
      same = (PetscBool)(same && !strcmp(line[0], line[1]));
    }
    fclose(f[0]);
    fclose(f[1]);
    (void)remove(name[0]);
    (void)remove(name[1]);
  }
  {
    int b = same ? 1 : 0;
    PetscCallMPI(MPI_Bcast(&b, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    same = b ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: MatView %s AIJ's\n", what, same ? "equals" : "DIFFERS from"));
  PetscFunctionReturn(0);
}

/* How often, so far, the plugin set coordinate values on the device and copied values back to the host arrays (the
   most over the processes) */
static PetscErrorCode Counts(PetscLogDouble c[2])
{
  const char *names[2] = {"GPUSMatSetCOO", "GPUSMatToHost"};

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscLogEvent      ev;
    PetscEventPerfInfo info;
    PetscCall(PetscLogEventGetId(names[k], &ev));
    PetscCall(PetscLogEventGetPerfInfo(0, ev, &info));
    c[k] = (PetscLogDouble)info.count;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c, 2, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

static PetscErrorCode PrintCounts(Problem *P, const char what[], PetscLogDouble before[2])
{
  PetscLogDouble now[2];

  PetscFunctionBeginUser;
  if (!P->counts) PetscFunctionReturn(0);
  PetscCall(Counts(now));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: MatSetValuesCOO on the device %d times, values copied to the host %d times\n", what, (int)(now[0] - before[0]), (int)(now[1] - before[1])));
  PetscFunctionReturn(0);
}

/* MatMultTranspose() and MatMultTransposeAdd() after values set with MatSetValuesCOO(), and again after new values (the
   device transpose's values follow): as AIJ's, without copying the values to the host */
static PetscErrorCode TransposeSteps(Problem *P, Mat A, Mat B)
{
  Vec            x, z, ya, yb;
  PetscLogDouble before[2];
  PetscReal      d, dmax = 0;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &ya, &x));
  PetscCall(VecDuplicate(ya, &yb));
  PetscCall(VecDuplicate(ya, &z));
  if (P->counts) PetscCall(Counts(before));
  for (PetscInt s = 0; s < 2; s++) {
    PetscCall(SetBoth(P, A, B, 8 + s, INSERT_VALUES));
    PetscCall(FillExact(x, 0.25 * (PetscReal)(s + 1)));
    PetscCall(FillExact(z, 0.5));
    PetscCall(MatMultTranspose(A, x, ya));
    PetscCall(MatMultTranspose(B, x, yb));
    PetscCall(VecMaxDiff(ya, yb, &d));
    dmax = PetscMax(dmax, d);
    PetscCall(MatMultTransposeAdd(A, x, z, ya));
    PetscCall(MatMultTransposeAdd(B, x, z, yb));
    PetscCall(VecMaxDiff(ya, yb, &d));
    dmax = PetscMax(dmax, d);
    PetscCall(MatMultTransposeAdd(A, x, ya, ya));
    PetscCall(MatMultTransposeAdd(B, x, yb, yb));
    PetscCall(VecMaxDiff(ya, yb, &d));
    dmax = PetscMax(dmax, d);
  }
  if (dmax == 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMultTranspose, MatMultTransposeAdd after MatSetValuesCOO, twice: equal to AIJ's\n"));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMultTranspose, MatMultTransposeAdd after MatSetValuesCOO: DIFFER from AIJ's by %g\n", (double)dmax));
  PetscCall(PrintCounts(P, "MatMultTranspose", before));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* Values set step after step, each followed by a solve with the same KSP (KSPCG and the given PC, whose set-up follows
   the new values): the same iterations and solution as AIJ */
static PetscErrorCode Steps(Problem *P, Mat A, Mat B, PCType pctype, const char pcname[], PetscInt first, PetscInt nsteps)
{
  KSP            ksp[2];
  Mat            M[2] = {A, B};
  Vec            b, x[2];
  PetscLogDouble before[2];
  PetscInt       diffits = 0;
  PetscReal      dmax    = 0;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x[1], &b));
  PetscCall(VecDuplicate(x[1], &x[0]));
  PetscCall(FillExact(b, 0.0));
  for (int t = 0; t < 2; t++) {
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp[t]));
    PetscCall(KSPSetOperators(ksp[t], M[t], M[t]));
    PetscCall(KSPSetType(ksp[t], KSPCG));
    PetscCall(KSPGetPC(ksp[t], &pc));
    PetscCall(PCSetType(pc, pctype));
    if (!strcmp(pctype, PCICC)) PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERPETSC)); /* the host's, not the device ICC */
    PetscCall(KSPSetTolerances(ksp[t], 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  }
  if (P->counts) PetscCall(Counts(before));
  for (PetscInt s = first; s < first + nsteps; s++) {
    PetscInt  its[2];
    PetscReal d;
    PetscCall(SetBoth(P, A, B, s, INSERT_VALUES));
    for (int t = 0; t < 2; t++) {
      PetscCall(KSPSolve(ksp[t], b, x[t]));
      PetscCall(KSPGetIterationNumber(ksp[t], &its[t]));
    }
    PetscCall(VecMaxDiff(x[0], x[1], &d));
    diffits += its[0] != its[1];
    dmax = PetscMax(dmax, d);
  }
  {
    char what[128];
    PetscCall(PetscSNPrintf(what, sizeof(what), "%" PetscInt_FMT " steps of new values then KSPCG with %s", nsteps, pcname));
    if (!diffits && dmax <= 1e-12)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: the same iterations and solutions as AIJ\n", what));
    else
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: DIFFERS: %" PetscInt_FMT " steps of other iterations, solutions %g apart\n", what, diffits, (double)dmax));
    PetscCall(PrintCounts(P, what, before));
  }
  for (int t = 0; t < 2; t++) {
    PetscCall(KSPDestroy(&ksp[t]));
    PetscCall(VecDestroy(&x[t]));
  }
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* pipecgfused with Jacobi on the gpustream matrix after new values, against KSPCG on AIJ: converged to the same
   solution */
static PetscErrorCode FusedSolve(Problem *P, Mat A, Mat B)
{
  KSP                ksp[2];
  Mat                M[2]     = {A, B};
  KSPType            types[2] = {"pipecgfused", KSPCG};
  Vec                b, x[2];
  PetscReal          d;
  KSPConvergedReason reason;
  PetscLogDouble     before[2];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x[1], &b));
  PetscCall(VecDuplicate(x[1], &x[0]));
  PetscCall(FillExact(b, 0.0));
  if (P->counts) PetscCall(Counts(before));
  PetscCall(SetBoth(P, A, B, 7, INSERT_VALUES));
  for (int t = 0; t < 2; t++) {
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp[t]));
    PetscCall(KSPSetOperators(ksp[t], M[t], M[t]));
    PetscCall(KSPSetType(ksp[t], types[t]));
    PetscCall(KSPGetPC(ksp[t], &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(ksp[t], 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
    PetscCall(KSPSolve(ksp[t], b, x[t]));
  }
  PetscCall(KSPGetConvergedReason(ksp[0], &reason));
  PetscCall(VecMaxDiff(x[0], x[1], &d));
  if (reason > 0 && d < 1e-9)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "new values, then pipecgfused with jacobi: converged to AIJ's solution\n"));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "new values, then pipecgfused with jacobi: DIFFERS: %s, solutions %g apart\n", KSPConvergedReasons[reason], (double)d));
  PetscCall(PrintCounts(P, "new values, then pipecgfused with jacobi", before));
  for (int t = 0; t < 2; t++) {
    PetscCall(KSPDestroy(&ksp[t]));
    PetscCall(VecDestroy(&x[t]));
  }
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* The operations that run on the device, each after values set on the device, against AIJ */
static PetscErrorCode Operations(Problem *P, Mat A, Mat B)
{
  Vec            l, r;
  Mat            X[2], Y[2];
  MatType        types[2] = {"gpustream", MATAIJ};
  PetscLogDouble before[2];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &r, &l));
  PetscCall(FillExact(l, 0.0));
  PetscCall(FillExact(r, 0.75));
  if (P->counts) PetscCall(Counts(before));
  PetscCall(SetBoth(P, A, B, 1, INSERT_VALUES));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(MatShift(A, -0.5));
  PetscCall(MatShift(B, -0.5));
  PetscCall(MatDiagonalScale(A, l, r));
  PetscCall(MatDiagonalScale(B, l, r));
  PetscCall(MatDiagonalScale(A, NULL, l));
  PetscCall(MatDiagonalScale(B, NULL, l));
  PetscCall(MatDiagonalScale(A, r, NULL));
  PetscCall(MatDiagonalScale(B, r, NULL));
  for (int t = 0; t < 2; t++) PetscCall(Create(P, types[t], &X[t])); /* a second matrix of the same pattern */
  PetscCall(SetBoth(P, X[0], X[1], 2, INSERT_VALUES));
  PetscCall(MatAXPY(A, -0.5, X[0], SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, -0.5, X[1], SAME_NONZERO_PATTERN));
  PetscCall(PrintCounts(P, "MatSetValuesCOO, MatScale, MatShift, MatDiagonalScale, MatAXPY", before));
  PetscCall(Compare("MatSetValuesCOO, MatScale, MatShift, MatDiagonalScale, MatAXPY", A, B));

  PetscCall(SetBoth(P, A, B, 3, INSERT_VALUES));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(B));
  PetscCall(Compare("MatZeroEntries", A, B));
  PetscCall(SetBoth(P, A, B, 2, ADD_VALUES));
  PetscCall(SetBoth(P, A, B, 5, ADD_VALUES));
  PetscCall(Compare("MatZeroEntries, then MatSetValuesCOO adding twice", A, B));

  /* entries set on other processes' rows, where the values changed on the device: they meet the host arrays made
     current at assembly */
  PetscCall(SetBoth(P, A, B, 4, INSERT_VALUES));
  for (int t = 0; t < 2; t++) {
    Mat               M = t ? B : A;
    PetscInt          rend, row;
    const PetscScalar two = 2.0;
    PetscCall(MatGetOwnershipRange(M, NULL, &rend));
    row = rend % P->n; /* the next process's first row, or the first of all */
    PetscCall(MatSetValues(M, 1, &row, 1, &row, &two, ADD_VALUES));
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Compare("MatSetValuesCOO, then MatSetValues on other processes' rows", A, B));

  /* another pattern: X has an entry outside A's, so MatAXPY is AIJ's on the host and A's pattern grows */
  for (int t = 0; t < 2; t++) {
    PetscCall(MatDestroy(&X[t]));
    PetscCall(Assemble(P, types[t], 2, PETSC_FALSE, PETSC_TRUE, &X[t]));
  }
  PetscCall(SetBoth(P, A, B, 5, INSERT_VALUES));
  PetscCall(MatAXPY(A, 2.0, X[0], DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, 2.0, X[1], DIFFERENT_NONZERO_PATTERN));
  PetscCall(Compare("MatAXPY of another pattern (AIJ's, on the host)", A, B));
  PetscCall(MatScale(A, 0.5)); /* the new pattern's values on the device */
  PetscCall(MatScale(B, 0.5));
  PetscCall(Compare("then MatScale", A, B));
  /* X's pattern within A's (PCGAMG's smoothed prolongator): on one process on the device, with the values moving
     nowhere, on several AIJ's on the host */
  for (int t = 0; t < 2; t++) {
    PetscCall(MatDestroy(&X[t]));
    PetscCall(Assemble(P, types[t], 6, PETSC_TRUE, PETSC_FALSE, &X[t]));
    PetscCall(MatScale(X[t], 2.0)); /* on the device */
  }
  if (P->counts) PetscCall(Counts(before));
  PetscCall(MatAXPY(A, 0.75, X[0], SUBSET_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, 0.75, X[1], SUBSET_NONZERO_PATTERN));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 1) PetscCall(PrintCounts(P, "MatAXPY of a pattern within A's", before));
  }
  PetscCall(Compare("MatAXPY of a pattern within A's", A, B));
  /* a shift where rows have no diagonal entry: AIJ's on the host, which adds them (a new pattern) */
  for (int t = 0; t < 2; t++) PetscCall(Assemble(P, types[t], 6, PETSC_TRUE, PETSC_FALSE, &Y[t]));
  for (int t = 0; t < 2; t++) {
    PetscCall(MatScale(Y[t], 0.5));
    PetscCall(MatShift(Y[t], 2.0));
  }
  PetscCall(Compare("MatScale, MatShift where rows have no diagonal entry", Y[0], Y[1]));
  PetscCall(MatScale(Y[0], 0.25)); /* the new pattern's values on the device again */
  PetscCall(MatScale(Y[1], 0.25));
  PetscCall(MatShift(Y[0], 1.0));
  PetscCall(MatShift(Y[1], 1.0));
  PetscCall(Compare("then MatScale, MatShift", Y[0], Y[1]));
  for (int t = 0; t < 2; t++) {
    PetscCall(MatDestroy(&X[t]));
    PetscCall(MatDestroy(&Y[t]));
  }
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

/* What the host sees after values set on the device: conversions, duplicates, views, norms, equality */
static PetscErrorCode HostReads(Problem *P, Mat A, Mat B)
{
  Mat         C;
  PetscReal   na, nb;
  PetscBool   eq;
  MatType     aij;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  aij = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  PetscCall(SetBoth(P, A, B, 2, INSERT_VALUES));
  PetscCall(MatScale(A, 0.5));
  PetscCall(MatScale(B, 0.5));
  PetscCall(CompareViews("MatSetValuesCOO, MatScale", A, B));
  PetscCall(Compare("MatSetValuesCOO, MatScale", A, B));
  PetscCall(SetBoth(P, A, B, 3, ADD_VALUES));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &na));
  PetscCall(MatNorm(B, NORM_FROBENIUS, &nb));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO adding, MatNorm: %s\n", na == nb ? "equals AIJ's" : "DIFFERS"));
  PetscCall(SetBoth(P, A, B, 5, INSERT_VALUES));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(Compare("MatSetValuesCOO, MatDuplicate", C, B));
  PetscCall(MatDestroy(&C));
  PetscCall(SetBoth(P, A, B, 6, INSERT_VALUES));
  PetscCall(MatConvert(A, aij, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatEqual(C, B, &eq));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO, MatConvert to AIJ: %s\n", eq ? "equals AIJ" : "DIFFERS"));
  PetscCall(MatDestroy(&C));
  PetscCall(SetBoth(P, A, B, 1, INSERT_VALUES));
  PetscCall(MatEqual(A, B, &eq));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO, MatEqual with AIJ: %s\n", eq ? "equal" : "NOT equal"));
  PetscCall(SetBoth(P, A, B, 0, INSERT_VALUES));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(MatConvert(C, aij, MAT_INPLACE_MATRIX, &C));
  PetscCall(MatScale(A, 2.0)); /* on the device: C, converted in place, keeps its own values */
  PetscCall(MatScale(C, 2.0));
  PetscCall(Compare("MatSetValuesCOO, MatScale, against the converted duplicate", A, C));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Problem     P = {9, 1, 0, 0, 0, NULL, NULL, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  Mat         A, B;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &P.m, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bs", &P.bs, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-counts", &P.counts, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &P.view, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-setup", &P.setup, NULL));
  if (P.counts) PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  P.n = P.m * P.m * P.bs;
  PetscCall(LocalRows(&P));
  PetscCall(Entries(&P));
  PetscCall(Create(&P, "gpustream", &A));
  PetscCall(Create(&P, MATAIJ, &B));

  PetscCall(SetBoth(&P, A, B, 0, INSERT_VALUES));
  PetscCall(Compare("MatSetValuesCOO inserting", A, B));
  if (P.view) {
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
  }
  PetscCall(SetBoth(&P, A, B, 1, ADD_VALUES));
  PetscCall(Compare("MatSetValuesCOO adding", A, B));
  PetscCall(SetBoth(&P, A, B, 2, INSERT_VALUES));
  PetscCall(Compare("MatSetValuesCOO inserting again", A, B));
  PetscCall(Steps(&P, A, B, PCJACOBI, "jacobi", 3, 4));
  PetscCall(TransposeSteps(&P, A, B));
  /* host PCs: their set-up reads the host arrays */
  PetscCall(Steps(&P, A, B, PCSOR, "a host PC (sor)", 1, 3));
  PetscCall(Steps(&P, A, B, size > 1 ? PCASM : PCLU, "a host factorization (lu; on several processes asm)", 2, 2));
  PetscCall(Steps(&P, A, B, size > 1 ? PCGAMG : PCICC, "another host PC (icc of MATSOLVERPETSC; on several processes gamg)", 4, 2));
  PetscCall(FusedSolve(&P, A, B));
  PetscCall(Operations(&P, A, B)); /* A and B get another pattern at its end */
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(Create(&P, "gpustream", &A));
  PetscCall(Create(&P, MATAIJ, &B));
  PetscCall(HostReads(&P, A, B));

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFree2(P.ci, P.cj));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # on several processes the host PC is PCGAMG, whose set-up copies to the host once more: the product A P of its
   # smoothed interpolation, scaled on the device (MatDiagonalScale()) before MatAYPX() on the host
   test:
      args: -counts -malloc_dump

   test:
      suffix: 2
      nsize: 2
      output_file: output/matcoo_np.out
      args: -counts -m 7

   test:
      suffix: setup
      output_file: output/matcoo.out
      args: -counts -setup

   test:
      suffix: setup_2
      nsize: 2
      output_file: output/matcoo_np.out
      args: -counts -m 7 -setup

   test:
      suffix: 3
      nsize: 3
      output_file: output/matcoo_np.out
      args: -counts -m 8

   test:
      suffix: 4
      nsize: 4
      output_file: output/matcoo_np.out
      args: -counts -m 10

   test:
      suffix: blocks
      args: -bs 3 -counts -view
      filter: grep -v "GPUStream: mode\\|SpMV kernel\\|MatCreateVecs\\|Mat Object\\|type:\\|rows=\\|total\\|I-node" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/[0-9.]+(e[-+]?[0-9]+)? MB/X MB/g"

   test:
      suffix: blocks_3
      nsize: 3
      output_file: output/matcoo_np.out
      args: -bs 2 -m 6 -counts

   test:
      suffix: stream
      args: -mat_gpustream_mode stream -counts
      output_file: output/matcoo_host.out

   # streamed values stay on the host, and so do those of GAMG's Galerkin levels, which take the operator's mode
   test:
      suffix: stream_2
      nsize: 2
      args: -mat_gpustream_mode stream -m 7 -counts
      output_file: output/matcoo_host_np.out

TEST*/
