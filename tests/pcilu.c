static char help[] = "ILU(0), ICC(0) and LU of gpustream matrices (MATSOLVERGPUSTREAM) against PETSc's on AIJ.\n\
  -problem <lap2d,lap3d,convdiff,random,randsym> : the matrix\n\
  -m <n> : grid points a side (random: rows per process times 10)\n\
  -scenario <all,solve,transpose,matsolve,lu,fused,fallback,refactor,zeropivot,shift,blocks,errors,empty> : a list\n\
            (and sweeps, not in all: the device factors solved by Jacobi sweeps against AIJ's exact solves)\n\
  -v : print the numbers behind each verdict\n\n";

/* Each check runs the same solve on the gpustream matrix and on the same matrix as AIJ (PETSc's ILU and ICC on the
   host) and prints whether they agree: the same converged reason and iterations, the final residual norms and the
   solutions within rounding (see Verdict()), and where the factor ran. Options with the prefix gs_ go to the gpustream
   solve, aij_ to AIJ's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <petscksp.h>
#include <petscgpustream.h>
#include "vecdiff.h"

/* PetscErrorMessage()'s specific message: const in newer PETSc (cmake/probes/ERRORMESSAGE_CONST.c) */
#if defined(GPUSTREAM_PETSC_ERRORMESSAGE_CONST)
typedef const char *ErrorText;
#else
typedef char *ErrorText;
#endif

static PetscBool verbose = PETSC_FALSE;
static PetscBool terse   = PETSC_FALSE; /* verdicts without the reason and iterations (PETSc's host shifts: their
                                           iterations change with PETSc's version) */

/* call, its error returned instead of printed: the code and the first message into code and msg */
static PetscErrorCode Message(PetscErrorCode code, char msg[], size_t len)
{
  ErrorText specific = NULL;

  PetscFunctionBeginUser;
  msg[0] = 0;
  if (code) PetscCall(PetscErrorMessage(code, NULL, &specific));
  if (specific) PetscCall(PetscStrncpy(msg, specific, len));
  PetscFunctionReturn(0);
}
#define CATCH(code, msg, call)                                                                                                                                                                                                                           \
  do {                                                                                                                                                                                                                                                   \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));                                                                                                                                                                                     \
    code = (call);                                                                                                                                                                                                                                       \
    PetscCall(PetscPopErrorHandler());                                                                                                                                                                                                                   \
    PetscCall(Message(code, msg, sizeof(msg)));                                                                                                                                                                                                          \
  } while (0)

/* A deterministic pseudo-random number in [0, 1) from two integers (the same matrix on any number of processes) */
static PetscReal Hash(PetscInt a, PetscInt b)
{
  unsigned long long h = 1469598103934665603ull ^ (unsigned long long)a;
  h                    = (h ^ (unsigned long long)b * 0x9E3779B97F4A7C15ull) * 1099511628211ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (PetscReal)(h % 1000003ull) / 1000003.0;
}

/* lap2d: 5-point Laplacian (m^2); lap3d: 7-point (m^3); convdiff: 2D upwind convection-diffusion, wind (1, 0.5) at Peclet
   20 (m^2, not symmetric); random: 10 m rows, 6 entries a row at random columns, diagonally dominant, not symmetric;
   randsym: its symmetric counterpart */
static PetscErrorCode MakeProblem(const char *problem, MatType type, PetscInt m, Mat *A)
{
  PetscInt  n, rstart, rend;
  PetscBool lap2d, lap3d, convdiff, random, randsym;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(problem, "lap2d", &lap2d));
  PetscCall(PetscStrcmp(problem, "lap3d", &lap3d));
  PetscCall(PetscStrcmp(problem, "convdiff", &convdiff));
  PetscCall(PetscStrcmp(problem, "random", &random));
  PetscCall(PetscStrcmp(problem, "randsym", &randsym));
  PetscCheck(lap2d || lap3d || convdiff || random || randsym, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -problem %s", problem);
  n = lap3d ? m * m * m : (random || randsym ? 10 * m : m * m);
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  {
    PetscMPIInt size, rank;
    PetscInt    local = PETSC_DECIDE;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (size > 2) local = rank ? n / (size - 1) + (rank <= n % (size - 1)) : 0; /* the first process owns no rows */
    PetscCall(MatSetSizes(*A, local, local, n, n));
  }
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, 13, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 13, NULL, 13, NULL));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* randsym's transposed entries */
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscScalar diag = 0;
    if (lap2d || convdiff) {
      const PetscInt  i = row % m, j = row / m, ni[4] = {i - 1, i + 1, i, i}, nj[4] = {j, j, j - 1, j + 1};
      const PetscReal pe = convdiff ? 20.0 / (m + 1) : 0, w[4] = {pe, 0, 0.5 * pe, 0}; /* upwind: the west and south neighbours carry the wind */
      for (int d = 0; d < 4; d++) {
        const PetscScalar v = -1.0 - w[d];
        diag += 1.0 + w[d];
        if (ni[d] >= 0 && ni[d] < m && nj[d] >= 0 && nj[d] < m) {
          const PetscInt col = ni[d] + m * nj[d];
          PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, ADD_VALUES));
        }
      }
    } else if (lap3d) {
      const PetscInt ijk[3] = {row % m, (row / m) % m, row / (m * m)}, stride[3] = {1, m, m * m};
      diag = 6.0;
      for (int d = 0; d < 3; d++)
        for (int side = -1; side <= 1; side += 2) {
          const PetscInt    nb = ijk[d] + side, col = row + side * stride[d];
          const PetscScalar v = -1.0;
          if (nb >= 0 && nb < m) PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, ADD_VALUES));
        }
    } else {
      for (PetscInt k = 0; k < 6; k++) {
        const PetscInt    col = (PetscInt)(Hash(row, k) * n);
        const PetscScalar v   = Hash(row, k + 100) - 0.7;
        if (col == row || (randsym && col < row)) continue;
        PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, ADD_VALUES));
        if (randsym) PetscCall(MatSetValues(*A, 1, &col, 1, &row, &v, ADD_VALUES));
      }
    }
    PetscCall(MatSetValues(*A, 1, &row, 1, &row, &diag, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  if (random || randsym) { /* the diagonal just dominant: 1.02 times the row's off-diagonal sum, and 0.05 */
    Vec d;
    PetscCall(MatCreateVecs(*A, &d, NULL));
    for (PetscInt row = rstart; row < rend; row++) {
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscInt           nc;
      PetscScalar        s = 0.05;
      PetscCall(MatGetRow(*A, row, &nc, &cols, &vals));
      for (PetscInt k = 0; k < nc; k++)
        if (cols[k] != row) s += 1.02 * PetscAbsScalar(vals[k]);
      PetscCall(MatRestoreRow(*A, row, &nc, &cols, &vals));
      PetscCall(VecSetValue(d, row, s, INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(d));
    PetscCall(VecAssemblyEnd(d));
    PetscCall(MatDiagonalSet(*A, d, INSERT_VALUES));
    PetscCall(VecDestroy(&d));
  }
  PetscFunctionReturn(0);
}

/* Where the factor of pc ran (through its view): "device", "host", "host, solved on the device" (PETSc's factor,
   whose triangular solves the device makes) or, for a PC without one, "-" */
static PetscErrorCode FactorPlace(PC pc, const char **place)
{
  Mat         F;
  PetscBool   isfactor;
  PetscViewer v;
  char       *buf = NULL;
  size_t      len = 0;
  FILE       *f;

  PetscFunctionBeginUser;
  *place = "-";
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &isfactor, PCILU, PCICC, PCLU, ""));
  if (!isfactor) PetscFunctionReturn(0);
  PetscCall(PCFactorGetMatrix(pc, &F));
  f = open_memstream(&buf, &len); /* the factor's ASCII view into memory */
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_SYS, "open_memstream() failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_SELF, f, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(F, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  fclose(f);
  if (strstr(buf, "its triangular solves on the device") || strstr(buf, "among them, solved on the device"))
    *place = "host, solved on the device";
  else
    *place = strstr(buf, "on the device") && (!strstr(buf, "on the host") || strstr(buf, "the last one on the device")) ? "device" : "host";
  free(buf);
  PetscFunctionReturn(0);
}

/* The place of the first block's factor (PCBJACOBI, PCASM) or of pc's own */
static PetscErrorCode PCPlace(PC pc, const char **place)
{
  PetscBool bj, asm_;
  KSP      *sub;
  PetscInt  n;
  PC        spc;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &bj));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCASM, &asm_));
  if (!bj && !asm_) {
    PetscCall(FactorPlace(pc, place));
    PetscFunctionReturn(0);
  }
  if (bj)
    PetscCall(PCBJacobiGetSubKSP(pc, &n, NULL, &sub));
  else
    PetscCall(PCASMGetSubKSP(pc, &n, NULL, &sub));
  *place = "-";
  if (n > 0) {
    PetscCall(KSPGetPC(sub[0], &spc));
    PetscCall(FactorPlace(spc, place));
    if (verbose) {
      PCType t;
      PetscCall(PCGetType(spc, &t));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  the first block's PC: %s\n", t));
    }
  }
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          rnorm, bnorm;
  const char        *place;
} Result;

static PetscErrorCode MakeKSP(Mat A, const char *prefix, KSPType ksptype, PCType pctype, KSP *ksp)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, ksptype));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetTolerances(*ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(0);
}

static PetscErrorCode Run(KSP ksp, PetscBool transpose, Vec b, Vec x, Result *r)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(VecSet(x, 0.0));
  if (transpose)
    PetscCall(KSPSolveTranspose(ksp, b, x));
  else
    PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &r->its));
  PetscCall(KSPGetConvergedReason(ksp, &r->reason));
  PetscCall(KSPGetResidualNorm(ksp, &r->rnorm));
  PetscCall(VecNorm(b, NORM_2, &r->bnorm));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCPlace(pc, &r->place));
  { /* the host where any process's factor is there */
    PetscMPIInt p = !strcmp(r->place, "host") ? 2 : !strcmp(r->place, "device");
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &p, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp)));
    if (strcmp(r->place, "host, solved on the device")) r->place = p == 2 ? "host" : (p == 1 ? "device" : "-");
  }
  PetscFunctionReturn(0);
}

/* The verdict on two solves: the same reason and iterations, the final residual norms within 1e-12 of the initial one
   (||b||; they are 1e-10 to 1e-9 of it, and their rounding differences 1e-17 to 1e-15) and the solutions within 1e-10 */
static PetscErrorCode Verdict(const char *what, const Result *g, const Result *a, Vec xg, Vec xa)
{
  PetscReal dx, dr = PetscAbsReal(g->rnorm - a->rnorm) / PetscMax(a->bnorm, PETSC_SMALL);
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(VecRelDiff(xg, xa, &dx));
  ok = (PetscBool)(g->reason == a->reason && g->its == a->its && (g->reason < 0 || (dr < 1e-12 && dx < 1e-10)));
  if (verbose)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: gpustream %" PetscInt_FMT " its %s %g, aij %" PetscInt_FMT " its %s %g; residual difference %g, solution difference %g\n", what, g->its, KSPConvergedReasons[g->reason], (double)g->rnorm, a->its,
                          KSPConvergedReasons[a->reason], (double)a->rnorm, (double)dr, (double)dx));
  if (terse)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: factor on the %s: %s\n", what, g->place, ok ? "as AIJ" : "DIFFERS FROM AIJ"));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s, %" PetscInt_FMT " iterations, factor on the %s: %s\n", what, KSPConvergedReasons[g->reason], g->its, g->place, ok ? "as AIJ" : "DIFFERS FROM AIJ"));
  PetscFunctionReturn(0);
}

/* KSP ksptype with PC pctype on A (gpustream, options prefix prefix) and on Aij (aij_), from x = 0, against b = 1:
   the results, solutions x[] and right-hand sides b[] (the caller destroys the vectors) */
static PetscErrorCode SolveBoth(Mat A, Mat Aij, const char *prefix, KSPType ksptype, PCType pctype, PetscBool transpose, Result r[2], Vec x[2], Vec b[2])
{
  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    KSP ksp;
    PetscCall(MatCreateVecs(A, &x[k], &b[k])); /* the gpustream matrix's vectors for both (CUDA ones on a GPU build) */
    PetscCall(VecSet(b[k], 1.0));
    PetscCall(MakeKSP(k ? Aij : A, k ? "aij_" : prefix, ksptype, pctype, &ksp));
    PetscCall(Run(ksp, transpose, b[k], x[k], &r[k]));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode DestroyBoth(Vec x[2], Vec b[2])
{
  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&x[k]));
    PetscCall(VecDestroy(&b[k]));
  }
  PetscFunctionReturn(0);
}

/* KSP ksptype with PC pctype on A (gpustream) and on Aij, from x = 0, against one right-hand side */
static PetscErrorCode Compare(const char *what, Mat A, Mat Aij, KSPType ksptype, PCType pctype, PetscBool transpose)
{
  Vec    b[2], x[2];
  Result r[2];

  PetscFunctionBeginUser;
  PetscCall(SolveBoth(A, Aij, "gs_", ksptype, pctype, transpose, r, x, b));
  PetscCall(Verdict(what, &r[0], &r[1], x[0], x[1]));
  PetscCall(DestroyBoth(x, b));
  PetscFunctionReturn(0);
}

static PetscErrorCode IsSymmetricProblem(const char *problem, PetscBool *sym)
{
  PetscBool c, r;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(problem, "convdiff", &c));
  PetscCall(PetscStrcmp(problem, "random", &r));
  *sym = (PetscBool) !(c || r);
  PetscFunctionReturn(0);
}

/* ICC's symmetric application, PCApplySymmetricLeft() and PCApplySymmetricRight() (the factor's forward and backward
   solves), against AIJ's on a random vector */
static PetscErrorCode SymmetricHalves(const char *what, Mat A, Mat Aij)
{
  PC        pc[2];
  Vec       x[2], y[2];
  PetscReal d[2];

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreateVecs(A, &x[k], &y[k]));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc[k]));
    PetscCall(PCSetOperators(pc[k], k ? Aij : A, k ? Aij : A));
    PetscCall(PCSetType(pc[k], PCICC));
    PetscCall(PCSetUp(pc[k]));
  }
  for (int half = 0; half < 2; half++) {
    for (int k = 0; k < 2; k++) {
      PetscInt rstart, rend;
      PetscCall(VecGetOwnershipRange(x[k], &rstart, &rend));
      for (PetscInt i = rstart; i < rend; i++) PetscCall(VecSetValue(x[k], i, Hash(i, 11), INSERT_VALUES));
      PetscCall(VecAssemblyBegin(x[k]));
      PetscCall(VecAssemblyEnd(x[k]));
      if (half)
        PetscCall(PCApplySymmetricRight(pc[k], x[k], y[k]));
      else
        PetscCall(PCApplySymmetricLeft(pc[k], x[k], y[k]));
    }
    PetscCall(VecRelDiff(y[0], y[1], &d[half]));
  }
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  symmetric halves: differences %g and %g\n", (double)d[0], (double)d[1]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, PCApplySymmetricLeft() and PCApplySymmetricRight(): %s\n", what, d[0] < 1e-12 && d[1] < 1e-12 ? "as AIJ" : "DIFFERS FROM AIJ"));
  for (int k = 0; k < 2; k++) {
    PetscCall(PCDestroy(&pc[k]));
    PetscCall(VecDestroy(&x[k]));
    PetscCall(VecDestroy(&y[k]));
  }
  PetscFunctionReturn(0);
}

/* ILU with GMRES on every problem, ICC with CG on the symmetric ones */
static PetscErrorCode ScenarioSolve(const char *problem, Mat A, Mat Aij)
{
  PetscBool sym;
  char      what[128];

  PetscFunctionBeginUser;
  PetscCall(IsSymmetricProblem(problem, &sym));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s ilu gmres", problem));
  PetscCall(Compare(what, A, Aij, KSPGMRES, PCILU, PETSC_FALSE));
  if (sym) {
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s icc cg", problem));
    PetscCall(Compare(what, A, Aij, KSPCG, PCICC, PETSC_FALSE));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s icc", problem));
    PetscCall(SymmetricHalves(what, A, Aij));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s ilu cg", problem));
    PetscCall(Compare(what, A, Aij, KSPCG, PCILU, PETSC_FALSE));
  }
  PetscFunctionReturn(0);
}

/* -mat_gpustream_trisolve jacobi with its default sweeps against AIJ's exact solves: the same reason, the true
   residual at the tolerance, and iterations within a quarter of AIJ's (the sweeps approximate the solves) */
static PetscErrorCode ScenarioSweeps(const char *problem, Mat A, Mat Aij)
{
  const struct {
    KSPType   ksp;
    PCType    pc;
    PetscBool symmetric; /* only on symmetric problems */
  } cases[] = {{KSPGMRES, PCILU, PETSC_FALSE}, {KSPCG, PCICC, PETSC_TRUE}, {KSPCG, PCILU, PETSC_TRUE}};
  PetscBool sym;

  PetscFunctionBeginUser;
  PetscCall(IsSymmetricProblem(problem, &sym));
  PetscCall(PetscOptionsSetValue(NULL, "-sw_mat_gpustream_trisolve", "jacobi"));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    Vec       b[2], x[2], r;
    Result    res[2];
    PetscReal tn;

    if (cases[c].symmetric && !sym) continue;
    PetscCall(SolveBoth(A, Aij, "sw_", cases[c].ksp, cases[c].pc, PETSC_FALSE, res, x, b));
    PetscCall(VecDuplicate(b[0], &r));
    PetscCall(MatMult(A, x[0], r));
    PetscCall(VecAYPX(r, -1.0, b[0]));
    PetscCall(VecNorm(r, NORM_2, &tn));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  sweeps: %" PetscInt_FMT " its, aij %" PetscInt_FMT "; true residual %g of %g\n", res[0].its, res[1].its, (double)tn, (double)res[0].bnorm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s %s, Jacobi sweeps: %s, factor on the %s: %s\n", problem, cases[c].pc, cases[c].ksp, KSPConvergedReasons[res[0].reason], res[0].place,
                          res[0].reason == res[1].reason && res[0].reason > 0 && tn <= 1e-8 * res[0].bnorm && 4 * res[0].its <= 5 * res[1].its ? "iterations within 25% of AIJ's" : "UNLIKE AIJ"));
    PetscCall(VecDestroy(&r));
    PetscCall(DestroyBoth(x, b));
  }
  { /* one sweep a triangle (L's diagonal and U's): far from the exact solves, so the sweeps are what ran */
    Vec    b[2], x[2];
    Result res[2];
    PetscCall(PetscOptionsSetValue(NULL, "-sw_mat_gpustream_trisolve_sweeps", "1"));
    PetscCall(SolveBoth(A, Aij, "sw_", KSPGMRES, PCILU, PETSC_FALSE, res, x, b));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s ilu gmres, one Jacobi sweep: %s\n", problem, res[0].its > res[1].its ? "more iterations than AIJ's" : "AS MANY ITERATIONS AS AIJ'S"));
    PetscCall(DestroyBoth(x, b));
    PetscCall(PetscOptionsClearValue(NULL, "-sw_mat_gpustream_trisolve_sweeps"));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-sw_mat_gpustream_trisolve"));
  PetscFunctionReturn(0);
}

/* The plugin's solvers apply ILU as any host PC: the device factor against the host one (-pc_factor_mat_solver_type
   petsc) on the same gpustream matrix and solver, which then run the same iterations */
static PetscErrorCode ScenarioFused(const char *problem, Mat A)
{
  const KSPType types[3] = {KSPPIPECGFUSED, KSPPIPEBCGSF, KSPSGMRESF};
  PetscBool     sym;

  PetscFunctionBeginUser;
  PetscCall(IsSymmetricProblem(problem, &sym));
  for (int t = sym ? 0 : 1; t < 3; t++) {
    KSP    ksp[2];
    Vec    b, x[2];
    Result r[2];
    char   what[128];
    PetscCall(MatCreateVecs(A, &x[0], &b));
    PetscCall(VecDuplicate(x[0], &x[1]));
    PetscCall(VecSet(b, 1.0));
    PetscCall(PetscOptionsSetValue(NULL, "-host_pc_factor_mat_solver_type", MATSOLVERPETSC)); /* before set-up creates the factor */
    for (int k = 0; k < 2; k++) {
      PetscCall(MakeKSP(A, k ? "host_" : "gs_", types[t], PCILU, &ksp[k]));
      PetscCall(Run(ksp[k], PETSC_FALSE, b, x[k], &r[k]));
    }
    PetscCall(PetscOptionsClearValue(NULL, "-host_pc_factor_mat_solver_type"));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s ilu %s against the factor on the %s", problem, types[t], r[1].place));
    PetscCall(Verdict(what, &r[0], &r[1], x[0], x[1]));
    for (int k = 0; k < 2; k++) {
      PetscCall(KSPDestroy(&ksp[k]));
      PetscCall(VecDestroy(&x[k]));
    }
    PetscCall(VecDestroy(&b));
  }
  PetscFunctionReturn(0);
}

/* The host copies of the gpustream matrix's values so far (event GPUSMatToHost) */
static PetscErrorCode HostCopies(PetscInt *n)
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetId("GPUSMatToHost", &ev));
  PetscCall(PetscLogEventGetPerfInfo(0, ev, &info));
  *n = info.count;
  PetscFunctionReturn(0);
}

/* New values on the same pattern, three ways (on the device: MatScale() and MatShift(); on the host: MatSetValues());
   each solve after a change factors numerically again, on the device, with the factor (and its symbolic phase) kept
   and nothing copied back to the host for the device changes; block Jacobi and ASM likewise on their blocks */
static PetscErrorCode ScenarioRefactor(const char *problem, Mat A, Mat Aij, PCType pctype)
{
  KSP      ksp[2];
  Vec      b[2], x[2];
  PetscInt rstart;
  Mat      F0 = NULL;

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreateVecs(A, &x[k], &b[k])); /* the gpustream matrix's vectors for both (CUDA ones on a GPU build) */
    PetscCall(VecSet(b[k], 1.0));
    PetscCall(MakeKSP(k ? Aij : A, k ? "aij_" : "gs_", KSPGMRES, pctype, &ksp[k]));
  }
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  for (int step = 0; step < 4; step++) {
    Result   r[2];
    PetscInt c0, c1;
    char     what[128];
    Mat      F;
    PC       pc, fpc;
    for (int k = 0; k < 2; k++) {
      Mat M = k ? Aij : A;
      if (step == 1) PetscCall(MatScale(M, 2.0));
      if (step == 2) PetscCall(MatShift(M, 0.5));
      if (step == 3) { /* the first local row's diagonal, on the host */
        const PetscScalar v = 1.0;
        PetscCall(MatSetValues(M, 1, &rstart, 1, &rstart, &v, ADD_VALUES));
        PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
      }
    }
    PetscCall(HostCopies(&c0));
    for (int k = 0; k < 2; k++) PetscCall(Run(ksp[k], PETSC_FALSE, b[k], x[k], &r[k]));
    PetscCall(HostCopies(&c1));
    /* the factor of the first block (or of the PC) is the same object as after the first solve: no symbolic phase */
    PetscCall(KSPGetPC(ksp[0], &pc));
    fpc = pc;
    {
      PetscBool bj, asm_;
      KSP      *sub;
      PetscInt  n = 0;
      PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &bj));
      PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCASM, &asm_));
      if (bj) PetscCall(PCBJacobiGetSubKSP(pc, &n, NULL, &sub));
      if (asm_) PetscCall(PCASMGetSubKSP(pc, &n, NULL, &sub));
      if (bj || asm_) {
        fpc = NULL;
        if (n > 0) PetscCall(KSPGetPC(sub[0], &fpc));
      }
    }
    F = NULL;
    if (fpc) PetscCall(PCFactorGetMatrix(fpc, &F));
    if (!step) F0 = F;
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s after %s", problem, pctype, step == 0 ? "assembly" : (step == 1 ? "MatScale" : (step == 2 ? "MatShift" : "MatSetValues"))));
    PetscCall(Verdict(what, &r[0], &r[1], x[0], x[1]));
    {
      PetscInt same = F == F0 ? 1 : 0, copies = c1 - c0;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &copies, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
      if (step) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  the same factor (no symbolic phase): %s; values copied to the host: %s\n", same ? "yes" : "NO", copies ? "yes" : "none"));
    }
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(KSPDestroy(&ksp[k]));
    PetscCall(VecDestroy(&x[k]));
    PetscCall(VecDestroy(&b[k]));
  }
  PetscFunctionReturn(0);
}

/* A matrix whose ILU(0) meets an exact zero pivot in row 1 (from the elimination: rows 0 and 1 are [1 1; 1 1] with
   the rest of the identity shifted by 2), or in row n/2 (its diagonal entry 0, no entries left of it) */
static PetscErrorCode ZeroPivotMatrix(MatType type, PetscInt n, PetscBool eliminated, Mat *A)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, 3, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 3, NULL, 3, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscScalar d = (eliminated && row < 2) ? 1.0 : (!eliminated && row == n / 2 ? 0.0 : 3.0);
    PetscCall(MatSetValues(*A, 1, &row, 1, &row, &d, INSERT_VALUES));
    if (eliminated && row < 2) {
      const PetscInt    col = 1 - row;
      const PetscScalar v   = 1.0;
      PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, INSERT_VALUES));
    }
    if (row + 1 < n && (eliminated ? row >= 1 : row != n / 2)) {
      const PetscInt    col = row + 1;
      const PetscScalar v   = -1.0;
      PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* A zero pivot: the PC fails as PETSc's ILU (MAT_FACTOR_NUMERIC_ZEROPIVOT, the same row and value) and the solve
   stops with KSP_DIVERGED_PC_FAILED; with -pc_error_if_failure ... KSPSetErrorIfNotConverged() it is PETSc's error,
   PETSC_ERR_MAT_LU_ZRPVT with the same message */
static PetscErrorCode ScenarioZeroPivot(void)
{
  PetscFunctionBeginUser;
  for (int e = 0; e < 2; e++) {
    Mat            A[2];
    KSP            ksp[2];
    Vec            b, x;
    Result         r[2];
    MatFactorError err[2];
    PetscReal      pv[2];
    PetscInt       prow[2];
    PetscErrorCode code[2];
    char           msg[2][256];
    for (int k = 0; k < 2; k++) {
      Mat F;
      PC  pc;
      PetscCall(ZeroPivotMatrix(k ? MATAIJ : MATGPUSTREAM, 12, (PetscBool)e, &A[k]));
      PetscCall(MatCreateVecs(A[k], &x, &b));
      PetscCall(VecSet(b, 1.0));
      PetscCall(MakeKSP(A[k], k ? "aij_" : "gs_", KSPGMRES, PCILU, &ksp[k]));
      PetscCall(Run(ksp[k], PETSC_FALSE, b, x, &r[k]));
      PetscCall(KSPGetPC(ksp[k], &pc));
      PetscCall(PCFactorGetMatrix(pc, &F));
      PetscCall(MatFactorGetError(F, &err[k]));
      PetscCall(MatFactorGetErrorZeroPivot(F, &pv[k], &prow[k]));
      /* again, now as an error */
      PetscCall(KSPDestroy(&ksp[k]));
      PetscCall(MakeKSP(A[k], k ? "aij_" : "gs_", KSPGMRES, PCILU, &ksp[k]));
      PetscCall(KSPSetErrorIfNotConverged(ksp[k], PETSC_TRUE));
      CATCH(code[k], msg[k], KSPSolve(ksp[k], b, x));
      PetscCall(KSPDestroy(&ksp[k]));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
    }
    if (verbose)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  zero pivot: gpustream row %" PetscInt_FMT " value %g, aij row %" PetscInt_FMT " value %g; errors %d \"%s\" and %d \"%s\"\n", prow[0], (double)pv[0], prow[1], (double)pv[1], (int)code[0], msg[0],
                            (int)code[1], msg[1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero pivot %s: %s, %s, row %" PetscInt_FMT ", %s; as an error: %s: %s\n", e ? "from the elimination" : "on the diagonal", KSPConvergedReasons[r[0].reason],
                          err[0] == MAT_FACTOR_NUMERIC_ZEROPIVOT ? "MAT_FACTOR_NUMERIC_ZEROPIVOT" : "no factor error", prow[0], (r[0].reason == r[1].reason && err[0] == err[1] && prow[0] == prow[1] && pv[0] == pv[1]) ? "as AIJ" : "DIFFERS FROM AIJ",
                          code[0] == PETSC_ERR_MAT_LU_ZRPVT ? "PETSC_ERR_MAT_LU_ZRPVT" : "ANOTHER ERROR", code[0] == code[1] && !strcmp(msg[0], msg[1]) ? "as AIJ" : "DIFFERS FROM AIJ"));
    for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&A[k]));
  }
  PetscFunctionReturn(0);
}

/* Shifts: PETSc shifts only where a pivot fails its test, so the device factors until then and the host takes over
   for that factorization: ICC's default (positive definite) on an indefinite matrix, and each shift type on the zero
   pivot matrix (PCILU turns nonzero into inblocks for every type but AIJ: ILU's nonzero is not compared) */
static PetscErrorCode ScenarioShift(void)
{
  const char *types[3] = {"nonzero", "inblocks", "positive_definite"};

  PetscFunctionBeginUser;
  terse = PETSC_TRUE;
  { /* ICC's default shift on an indefinite matrix (the host shifts), then on the same matrix made definite again
       (the device factors again) */
    Mat    A[2];
    KSP    ksp[2];
    Vec    b[2], x[2];
    Result r[2];
    PetscCall(MakeProblem("lap2d", MATGPUSTREAM, 8, &A[0]));
    PetscCall(MatShift(A[0], -3.5)); /* indefinite: ILU(0)'s third pivot is -1.5 */
    PetscCall(MatConvert(A[0], MATAIJ, MAT_INITIAL_MATRIX, &A[1]));
    for (int k = 0; k < 2; k++) {
      PetscCall(MatCreateVecs(A[0], &x[k], &b[k]));
      PetscCall(VecSet(b[k], 1.0));
      PetscCall(MakeKSP(A[k], k ? "aij_" : "gs_", KSPGMRES, PCICC, &ksp[k]));
    }
    for (int step = 0; step < 2; step++) {
      for (int k = 0; k < 2; k++) {
        if (step) PetscCall(MatShift(A[k], 3.5));
        PetscCall(Run(ksp[k], PETSC_FALSE, b[k], x[k], &r[k]));
      }
      PetscCall(Verdict(step ? "definite again: icc gmres" : "indefinite: icc gmres (positive definite shift)", &r[0], &r[1], x[0], x[1]));
    }
    for (int k = 0; k < 2; k++) {
      PetscCall(KSPDestroy(&ksp[k]));
      PetscCall(VecDestroy(&x[k]));
      PetscCall(VecDestroy(&b[k]));
      PetscCall(MatDestroy(&A[k]));
    }
  }
  for (int t = 0; t < 3; t++) {
    Mat  A, Aij;
    char what[128];
    PetscCall(ZeroPivotMatrix(MATGPUSTREAM, 12, PETSC_TRUE, &A));
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aij));
    PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_factor_shift_type", types[t]));
    PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_factor_shift_type", types[t]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "zero pivot ilu gmres, shift %s", types[t]));
    if (t > 0) PetscCall(Compare(what, A, Aij, KSPGMRES, PCILU, PETSC_FALSE));
    PetscCall(PetscSNPrintf(what, sizeof(what), "zero pivot icc gmres, shift %s", types[t]));
    PetscCall(Compare(what, A, Aij, KSPGMRES, PCICC, PETSC_FALSE));
    PetscCall(PetscOptionsClearValue(NULL, "-gs_pc_factor_shift_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-aij_pc_factor_shift_type"));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&Aij));
  }
  terse = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* What the device does not do goes to PETSc's host factorization, with the same results: levels of fill, another
   ordering, the host package asked for by name */
static PetscErrorCode ScenarioFallback(const char *problem, Mat A, Mat Aij)
{
  const char *opts[3][2] = {{"pc_factor_levels", "1"}, {"pc_factor_mat_ordering_type", "rcm"}, {"pc_factor_mat_solver_type", "petsc"}};

  PetscFunctionBeginUser;
  for (int o = 0; o < 3; o++) {
    char name[2][64], what[128];
    PetscCall(PetscSNPrintf(name[0], sizeof(name[0]), "-gs_%s", opts[o][0]));
    PetscCall(PetscSNPrintf(name[1], sizeof(name[1]), "-aij_%s", opts[o][0]));
    PetscCall(PetscOptionsSetValue(NULL, name[0], opts[o][1]));
    if (o < 2) PetscCall(PetscOptionsSetValue(NULL, name[1], opts[o][1]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s ilu gmres -%s %s", problem, opts[o][0], opts[o][1]));
    PetscCall(Compare(what, A, Aij, KSPGMRES, PCILU, PETSC_FALSE));
    PetscCall(PetscOptionsClearValue(NULL, name[0]));
    PetscCall(PetscOptionsClearValue(NULL, name[1]));
  }
  PetscFunctionReturn(0);
}

/* Block Jacobi and ASM: their blocks are gpustream matrices whose ILU(0) runs on the device */
static PetscErrorCode ScenarioBlocks(const char *problem, Mat A, Mat Aij)
{
  PetscFunctionBeginUser;
  for (int p = 0; p < 2; p++) {
    char what[128];
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s ilu gmres", problem, p ? "asm" : "bjacobi"));
    PetscCall(Compare(what, A, Aij, KSPGMRES, p ? PCASM : PCBJACOBI, PETSC_FALSE));
  }
  /* ASM's subdomain matrices converted to AIJ (-pc_asm_sub_mat_type): PETSc's factors on the host */
  PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_asm_sub_mat_type", MATAIJ));
  PetscCall(Compare("asm, -pc_asm_sub_mat_type aij", A, Aij, KSPGMRES, PCASM, PETSC_FALSE));
  PetscCall(PetscOptionsClearValue(NULL, "-gs_pc_asm_sub_mat_type"));
  PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_bjacobi_local_blocks", "2"));
  PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_bjacobi_local_blocks", "2"));
  PetscCall(Compare("two blocks a process: bjacobi ilu gmres", A, Aij, KSPGMRES, PCBJACOBI, PETSC_FALSE));
  PetscCall(PetscOptionsClearValue(NULL, "-gs_pc_bjacobi_local_blocks"));
  PetscCall(PetscOptionsClearValue(NULL, "-aij_pc_bjacobi_local_blocks"));
  {
    PetscBool sym;
    PetscCall(IsSymmetricProblem(problem, &sym));
    if (sym) { /* the blocks of a matrix known to be symmetric: ICC, PETSc's default there */
      PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
      PetscCall(MatSetOption(Aij, MAT_SYMMETRIC, PETSC_TRUE));
      PetscCall(Compare("symmetric: bjacobi (default sub-PC) cg", A, Aij, KSPCG, PCBJACOBI, PETSC_FALSE));
      PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_FALSE));
      PetscCall(MatSetOption(Aij, MAT_SYMMETRIC, PETSC_FALSE));
    }
  }
  PetscCall(PetscOptionsSetValue(NULL, "-gs_sub_pc_type", "icc"));
  PetscCall(PetscOptionsSetValue(NULL, "-aij_sub_pc_type", "icc"));
  {
    PetscBool sym;
    PetscCall(IsSymmetricProblem(problem, &sym));
    if (sym) PetscCall(Compare("bjacobi icc cg", A, Aij, KSPCG, PCBJACOBI, PETSC_FALSE));
    PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_asm_type", "basic")); /* symmetric, for CG */
    PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_asm_type", "basic"));
    if (sym) PetscCall(Compare("asm (basic) icc cg", A, Aij, KSPCG, PCASM, PETSC_FALSE));
    PetscCall(PetscOptionsClearValue(NULL, "-gs_pc_asm_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-aij_pc_asm_type"));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-gs_sub_pc_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-aij_sub_pc_type"));
  PetscFunctionReturn(0);
}

/* KSPMatSolve(): PCMatApply() with the factor goes through MatSolve() column by column */
static PetscErrorCode ScenarioMatSolve(const char *problem, Mat A, Mat Aij)
{
  KSP       ksp[2];
  Mat       B, Bh, X[2];
  PetscInt  m, M;
  PetscReal d;
  PetscBool ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(Aij, &m, NULL));
  PetscCall(MatGetSize(Aij, &M, NULL));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, m, PETSC_DECIDE, M, 3, NULL, &B));
  { /* dense columns of the gpustream matrix's vector type: CUDA ones on a GPU build */
    Vec       v;
    PetscBool cuda;
    PetscCall(MatCreateVecs(A, &v, NULL));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cuda, "seqcuda", "mpicuda", ""));
    if (cuda) PetscCall(MatConvert(B, "densecuda", MAT_INPLACE_MATRIX, &B));
    PetscCall(VecDestroy(&v));
  }
  PetscCall(MatSetRandom(B, NULL));
  /* AIJ's twin solves host columns: PETSc 3.25's KSPMatSolve() on an AIJ operator with MATDENSECUDA columns leaks
     vector headers (PETSc's own, seen without the plugin) */
  PetscCall(MatConvert(B, MATDENSE, MAT_INITIAL_MATRIX, &Bh));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDuplicate(k ? Bh : B, MAT_DO_NOT_COPY_VALUES, &X[k]));
    PetscCall(MakeKSP(k ? Aij : A, k ? "aij_" : "gs_", KSPGMRES, PCILU, &ksp[k]));
    PetscCall(KSPMatSolve(ksp[k], k ? Bh : B, X[k]));
  }
  PetscCall(MatConvert(X[0], MATDENSE, MAT_INPLACE_MATRIX, &X[0]));
  for (PetscInt c = 0; c < 3; c++) {
    Vec x[2];
    for (int k = 0; k < 2; k++) PetscCall(MatDenseGetColumnVecRead(X[k], c, &x[k]));
    PetscCall(VecRelDiff(x[0], x[1], &d));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  column %" PetscInt_FMT ": solution difference %g\n", c, (double)d));
    ok = (PetscBool)(ok && d < 1e-8);
    for (int k = 0; k < 2; k++) PetscCall(MatDenseRestoreColumnVecRead(X[k], c, &x[k]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s ilu gmres KSPMatSolve of 3 columns: %s\n", problem, ok ? "as AIJ" : "DIFFERS FROM AIJ"));
  for (int k = 0; k < 2; k++) {
    PetscCall(KSPDestroy(&ksp[k]));
    PetscCall(MatDestroy(&X[k]));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&Bh));
  PetscFunctionReturn(0);
}

/* LU (no solver type: MATSOLVERGPUSTREAM's, PETSc's factor solved on the device) in PETSc's default ordering (nested
   dissection) and the natural one, a transposed solve, and GMRES with LU after new values (the numeric phase alone)
   against AIJ's MATSOLVERPETSC */
static PetscErrorCode ScenarioLU(const char *problem, Mat A, Mat Aij)
{
  char what[128];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s lu gmres", problem));
  PetscCall(Compare(what, A, Aij, KSPGMRES, PCLU, PETSC_FALSE));
  PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_factor_mat_ordering_type", "natural"));
  PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_factor_mat_ordering_type", "natural"));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s lu gmres, natural ordering", problem));
  PetscCall(Compare(what, A, Aij, KSPGMRES, PCLU, PETSC_FALSE));
  PetscCall(PetscOptionsClearValue(NULL, "-gs_pc_factor_mat_ordering_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-aij_pc_factor_mat_ordering_type"));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s lu gmres, transposed solve", problem));
  PetscCall(Compare(what, A, Aij, KSPGMRES, PCLU, PETSC_TRUE));
  { /* on copies: the later scenarios see the matrices as made */
    Mat B, Bij;
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
    PetscCall(MatDuplicate(Aij, MAT_COPY_VALUES, &Bij));
    PetscCall(ScenarioRefactor(problem, B, Bij, PCLU));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&Bij));
  }
  PetscFunctionReturn(0);
}

/* Bad requests: MATSOLVERGPUSTREAM factors one process's matrix only (ILU and ICC; LU there is AIJ's package's) */
static PetscErrorCode ScenarioErrors(Mat A)
{
  Mat            F = NULL;
  PetscErrorCode code;
  char           msg[256];
  PetscMPIInt    size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) { /* a row without its diagonal entry: PETSc's ILU(0) refuses it, and so does the host it goes to */
    PetscErrorCode c[2];
    char           m[2][256];
    for (int k = 0; k < 2; k++) {
      Mat      M;
      KSP      ksp;
      Vec      b, x;
      PetscInt rstart, rend;
      PetscCall(MatCreate(PETSC_COMM_WORLD, &M));
      PetscCall(MatSetSizes(M, PETSC_DECIDE, PETSC_DECIDE, 8, 8));
      PetscCall(MatSetType(M, k ? MATAIJ : MATGPUSTREAM));
      PetscCall(MatSetUp(M));
      PetscCall(MatGetOwnershipRange(M, &rstart, &rend));
      for (PetscInt row = rstart; row < rend; row++) {
        const PetscScalar d = 4, o = -1;
        const PetscInt    c1 = (row + 1) % 8;
        if (row != 3) PetscCall(MatSetValues(M, 1, &row, 1, &row, &d, INSERT_VALUES));
        PetscCall(MatSetValues(M, 1, &row, 1, &c1, &o, INSERT_VALUES));
      }
      PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
      PetscCall(MatCreateVecs(M, &x, &b));
      PetscCall(VecSet(b, 1.0));
      PetscCall(MakeKSP(M, k ? "aij_" : "gs_", KSPGMRES, PCILU, &ksp));
      CATCH(c[k], m[k], KSPSolve(ksp, b, x));
      PetscCall(KSPDestroy(&ksp));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&M));
    }
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  errors %d \"%s\" and %d \"%s\"\n", (int)c[0], m[0], (int)c[1], m[1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ILU of a matrix without a diagonal entry: PETSc's error: %s\n", c[0] && c[0] == c[1] && !strcmp(m[0], m[1]) ? "as AIJ" : "DIFFERS FROM AIJ"));
  }
  if (size > 1) {
    CATCH(code, msg, MatGetFactor(A, MATSOLVERGPUSTREAM, MAT_FACTOR_ILU, &F));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ILU of the whole matrix on several processes: %s: %s\n", code == PETSC_ERR_SUP ? "PETSC_ERR_SUP" : "ANOTHER ERROR", msg));
    PetscCall(MatDestroy(&F));
  }
  PetscFunctionReturn(0);
}

static char    *scenarios[16];
static PetscInt nscenarios = 0;

/* Whether -scenario names this one itself */
static PetscBool Named(const char *name)
{
  PetscBool is;
  for (PetscInt i = 0; i < nscenarios; i++)
    if (!PetscStrcmp(scenarios[i], name, &is) && is) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Whether -scenario names this one (or all, or was not given) */
static PetscBool Want(const char *name)
{
  return (PetscBool)(!nscenarios || Named("all") || Named(name));
}

int main(int argc, char **argv)
{
  char        problem[32] = "lap2d";
  PetscInt    m           = 12;
  Mat         A, Aij;
  PetscMPIInt size;
  PetscBool   sym;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscLogDefaultBegin()); /* the event counts HostCopies() reads */
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  nscenarios = 16;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-scenario", scenarios, &nscenarios, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-v", &verbose));
  PetscCall(IsSymmetricProblem(problem, &sym));
  PetscCall(MakeProblem(problem, MATGPUSTREAM, m, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MakeProblem(problem, MATAIJ, m, &Aij));
  /* the factorizations of the whole matrix on one process */
  if (size == 1) {
    if (Want("solve")) PetscCall(ScenarioSolve(problem, A, Aij));
    if (Want("transpose")) PetscCall(Compare("ilu gmres, transposed solve", A, Aij, KSPGMRES, PCILU, PETSC_TRUE));
    if (Want("transpose") && sym) PetscCall(Compare("icc gmres, transposed solve", A, Aij, KSPGMRES, PCICC, PETSC_TRUE));
    if (Want("matsolve")) PetscCall(ScenarioMatSolve(problem, A, Aij));
    if (Want("lu")) PetscCall(ScenarioLU(problem, A, Aij));
    if (Want("fused")) PetscCall(ScenarioFused(problem, A));
    if (Want("fallback")) PetscCall(ScenarioFallback(problem, A, Aij));
    if (Want("refactor")) PetscCall(ScenarioRefactor(problem, A, Aij, PCILU));
    if (Want("refactor") && sym) PetscCall(ScenarioRefactor(problem, A, Aij, PCICC));
    if (Want("zeropivot")) PetscCall(ScenarioZeroPivot());
    if (Want("shift")) PetscCall(ScenarioShift());
    if (Named("sweeps")) PetscCall(ScenarioSweeps(problem, A, Aij));
  }
  /* block Jacobi and ASM, whose blocks are factored */
  if (Want("blocks")) PetscCall(ScenarioBlocks(problem, A, Aij));
  if (Want("refactor")) PetscCall(ScenarioRefactor(problem, A, Aij, PCBJACOBI));
  if (Want("refactor")) PetscCall(ScenarioRefactor(problem, A, Aij, PCASM));
  if (Want("errors")) PetscCall(ScenarioErrors(A));
  if (Want("empty")) {
    Mat Ae, Aije;
    PetscCall(MakeProblem("lap2d", MATGPUSTREAM, 0, &Ae));
    PetscCall(MakeProblem("lap2d", MATAIJ, 0, &Aije));
    PetscCall(Compare("empty ilu gmres", Ae, Aije, KSPGMRES, size > 1 ? PCBJACOBI : PCILU, PETSC_FALSE));
    PetscCall(MatDestroy(&Ae));
    PetscCall(MatDestroy(&Aije));
  }
  for (PetscInt i = 0; i < nscenarios; i++) PetscCall(PetscFree(scenarios[i]));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aij));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # -malloc_dump: every scenario but the zero pivot as an error, where PETSc's own LU of the AIJ twin leaks its work
   # array (MatLUFactorNumeric_SeqAIJ() returns at the error before freeing it)
   test:
      suffix: lap2d
      args: -problem lap2d -malloc_dump -scenario solve,transpose,matsolve,fused,fallback,refactor,shift,blocks,errors,empty

   test:
      suffix: lap3d
      args: -problem lap3d -m 6

   test:
      suffix: convdiff
      args: -problem convdiff

   test:
      suffix: random
      args: -problem random -m 30

   test:
      suffix: randsym
      args: -problem randsym -m 30

   # one process: the whole matrix's factors; several: block Jacobi and ASM (with more than two processes the first
   # owns no rows)
   test:
      suffix: lap2d_2
      nsize: 2
      args: -problem lap2d

   test:
      suffix: lap2d_3
      nsize: 3
      args: -problem lap2d

   test:
      suffix: lap2d_4
      nsize: 4
      args: -problem lap2d

   test:
      suffix: lap3d_2
      nsize: 2
      args: -problem lap3d -m 6

   test:
      suffix: convdiff_3
      nsize: 3
      args: -problem convdiff

   test:
      suffix: random_2
      nsize: 2
      args: -problem random -m 30

   test:
      suffix: randsym_4
      nsize: 4
      args: -problem randsym -m 30

   # a streamed matrix: its values come to the factor from the host
   test:
      suffix: stream
      args: -problem convdiff -mat_gpustream_mode stream

   test:
      suffix: stream_2
      nsize: 2
      args: -problem convdiff -mat_gpustream_mode stream

   # the factor's view: where it ran and why
   test:
      suffix: view
      args: -scenario solve,fallback,shift -gs_ksp_view -gs_mat_gpustream_trisolve kokkoskernels
      filter: grep -E "GPUStream: (ILU|ICC|[0-9]+ of|its triangular)|package used|^  type: (ilu|icc)|as AIJ|DIFFERS" | sed -E -e "s/on the device \([A-Za-z]+\)/on the device (SPACE)/" -e "s/[0-9.]+(e[-+]?[0-9]+)? MB/X MB/"

   # both exact solves in one kernel (the default for small factors on a device only), on ILU(0) and ICC(0), on a
   # host LU with and without its ordering, after new values: as AIJ
   test:
      suffix: one_kernel
      args: -problem lap2d -m 8 -scenario solve,transpose,matsolve,lu,refactor -gs_ksp_view -gs_mat_gpustream_trisolve_one_kernel -gs_sub_mat_gpustream_trisolve_one_kernel
      filter: grep -E "GPUStream: (ILU|ICC|its triangular)|as AIJ|DIFFERS" | sed -E -e "s/^ +//" -e "s/on the device \([A-Za-z]+\)/on the device (SPACE)/" -e "s/[0-9.]+(e[-+]?[0-9]+)? MB/X MB/" -e "s/, [0-9]+ levels, L/, L/"

   # Jacobi sweeps in place of the triangular solves: enough of them (more than the factors' levels) solve exactly,
   # as AIJ; the default ones take a few more iterations
   test:
      suffix: sweeps_exact
      args: -problem lap3d -m 8 -scenario solve,transpose -gs_mat_gpustream_trisolve jacobi -gs_mat_gpustream_trisolve_sweeps 30

   test:
      suffix: sweeps
      args: -problem lap3d -scenario sweeps

   test:
      suffix: sweeps_convdiff
      args: -problem convdiff -scenario sweeps

   # the numeric factorization by fixed-point sweeps: enough of them (more than the chains of dependencies) factor
   # exactly, as AIJ, also after new values; two, with Jacobi sweeps for the solves, as the sweeps above
   test:
      suffix: factor_sweeps_exact
      args: -problem lap3d -m 8 -scenario solve,transpose,refactor -gs_mat_gpustream_factor_sweeps 40

   test:
      suffix: factor_sweeps
      args: -problem lap3d -scenario sweeps -sw_mat_gpustream_factor_sweeps 2
      output_file: output/pcilu_sweeps.out

   test:
      suffix: factor_sweeps_convdiff
      args: -problem convdiff -scenario sweeps -sw_mat_gpustream_factor_sweeps 2
      output_file: output/pcilu_sweeps_convdiff.out

   test:
      suffix: factor_sweeps_view
      args: -scenario solve -gs_ksp_view -gs_mat_gpustream_factor_sweeps 3
      filter: grep -o "GPUStream: I[CL][CU](0) on the device ([A-Za-z]*): 3 fixed-point sweeps (-mat_gpustream_factor_sweeps)" | sed -E "s/on the device \([A-Za-z]+\)/on the device (SPACE)/" | sort -u

   test:
      suffix: bad_factor_sweeps
      args: -scenario solve -gs_mat_gpustream_factor_sweeps -1
      error: 1
      filter: grep -o -E -- "-[a-z_]*mat_gpustream_factor_sweeps -1: give 0 \(exact\) or more" | sort -u

   # a bad backend for the triangular solves: PETSc's error naming the option with its prefix
   test:
      suffix: bad_trisolve
      args: -scenario solve -gs_mat_gpustream_trisolve fast
      error: 1
      filter: grep -o -E "Unknown .*trisolve[^ ]*" | tr -d '"' | sort -u

   # no sweeps: PETSc's error naming the option with its prefix
   test:
      suffix: bad_sweeps
      args: -scenario solve -gs_mat_gpustream_trisolve jacobi -gs_mat_gpustream_trisolve_sweeps 0
      error: 1
      filter: grep -o -E -- "-[a-z_]*mat_gpustream_trisolve_sweeps 0: give at least 1" | sort -u

TEST*/
