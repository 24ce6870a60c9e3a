static char help[] = "PETSc code that reads AIJ's data and checks type names, handed a gpustream matrix, against the same on the AIJ\n\
matrix holding the same values: the solver packages' factorizations (every package this PETSc has, each factorization\n\
it offers; a package PETSc was configured with must be used), PCML, PCGAMG's classical coarsening, PCHYPRE, the greedy\n\
coloring, nested-dissection orderings and MatGetRowIJ() on several processes, MatConvert() to dense (block sizes), and\n\
the bits of MatMult() and MatMultAdd().\n\
Before each, both matrices are scaled, which on the gpustream one happens on the device: the host arrays the code reads\n\
must be brought up to date first.\n\
  -scenario <all,factors,gamg,hypre,coloring,ordering,convert,products,submatrix,ml,server,shiftview>\n\
  -v : the numbers compared\n";

#include <dlfcn.h>
#include <string.h>
#include <petscgpustream.h>
#include <petscksp.h>
#include "vecdiff.h"
#include "collective.h"

static PetscBool verbose = PETSC_FALSE;

/* The same matrix as gpustream (A) and AIJ (B): the 5-point Laplacian of an m x m grid (bs unknowns per node, each
   coupled to every unknown of its node and of the neighbouring nodes), symmetric, or with a convection term; every value times a factor of its own between 0.7 and 1.3
   where wiggle (sums that round); then both scaled by 0.5 (on the device for A) */
static PetscErrorCode PairWiggled(PetscInt m, PetscInt bs, PetscBool sym, PetscBool wiggle, Mat *A, Mat *B)
{
  PetscInt rstart, rend, n = m * m * bs;
  Mat      M[2];

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &M[k]));
    PetscCall(MatSetSizes(M[k], PETSC_DECIDE, PETSC_DECIDE, n, n));
    PetscCall(MatSetBlockSize(M[k], bs));
    PetscCall(MatSetType(M[k], k ? MATAIJ : MATGPUSTREAM));
    PetscCall(MatSeqAIJSetPreallocation(M[k], 5 * bs, NULL));
    PetscCall(MatMPIAIJSetPreallocation(M[k], 5 * bs, NULL, 4 * bs, NULL));
    PetscCall(MatGetOwnershipRange(M[k], &rstart, &rend));
    for (PetscInt row = rstart; row < rend; row++) {
      const PetscInt node = row / bs, c = row % bs, i = node % m, j = node / m, ni[4] = {i - 1, i + 1, i, i}, nj[4] = {j, j, j - 1, j + 1};
      for (PetscInt e = 0; e < bs; e++) {
        const PetscInt    col = bs * node + e;
        const PetscScalar v   = (e == c ? 4.5 : -0.25) * (wiggle ? 1.0 + 0.3 * PetscSinReal(1.7 * row + 0.9 * col) : 1.0);
        PetscCall(MatSetValues(M[k], 1, &row, 1, &col, &v, INSERT_VALUES));
      }
      for (int d = 0; d < 4; d++) {
        if (ni[d] < 0 || ni[d] >= m || nj[d] < 0 || nj[d] >= m) continue;
        for (PetscInt e = 0; e < bs; e++) { /* every unknown of the neighbour: the node's rows share a pattern */
          const PetscInt    col = bs * (ni[d] + m * nj[d]) + e;
          const PetscScalar v   = (e == c ? -1.0 + (sym ? 0.0 : 0.3 * (d % 2 ? 1 : -1)) : 0.125) * (wiggle ? 1.0 + 0.3 * PetscSinReal(1.7 * row + 0.9 * col) : 1.0);
          PetscCall(MatSetValues(M[k], 1, &row, 1, &col, &v, INSERT_VALUES));
        }
      }
    }
    PetscCall(MatAssemblyBegin(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatScale(M[k], 0.5));
    if (sym) PetscCall(MatSetOption(M[k], MAT_SPD, PETSC_TRUE));
  }
  *A = M[0];
  *B = M[1];
  PetscFunctionReturn(0);
}

static PetscErrorCode Pair(PetscInt m, PetscInt bs, PetscBool sym, Mat *A, Mat *B)
{
  PetscFunctionBeginUser;
  PetscCall(PairWiggled(m, bs, sym, PETSC_FALSE, A, B));
  PetscFunctionReturn(0);
}

/* PCML's aggregation draws random numbers from a seed of ML's that runs on from one set-up to the next: every set-up
   starts from the same seed (ML's own function, looked up at run time: nothing to link where this PETSc has no ML) */
static PetscErrorCode MLSeed(void)
{
  void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "ML_set_random_seed");

  PetscFunctionBeginUser;
  if (set) set(1);
  PetscFunctionReturn(0);
}

/* KSP of type ksptype with PC pctype on M, configured by the options under prefix, solving for b; its solution,
   iterations, residual history, error code (PetscReturnErrorHandler) and the solver type of its factor, if any */
typedef struct {
  PetscErrorCode err;
  PetscInt       its;
  PetscReal      hist[200];
  PetscInt       nhist;
  Vec            x;
  char           stype[64];
  PetscInt       shift; /* the factor's shift type after set-up */
} Outcome;

static PetscErrorCode Solve(Mat M, Vec b, KSPType ksptype, PCType pctype, MatSolverType stype, PetscInt shift, const char prefix[], Outcome *o)
{
  KSP            ksp;
  PC             pc;
  PetscBool      isfactor, isml;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(o, sizeof(*o)));
  PetscCall(MatCreateVecs(M, &o->x, NULL));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, prefix));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  /* a PC this PETSc lacks (PCML without ML) is an error here, which both matrices must meet alike */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PCSetType(pc, pctype);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    o->err = ierr;
    PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
  }
  if (stype) PetscCall(PCFactorSetMatSolverType(pc, stype));
  if (shift >= 0) PetscCall(PCFactorSetShiftType(pc, (MatFactorShiftType)shift));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  PetscCall(KSPSetResidualHistory(ksp, o->hist, 200, PETSC_TRUE));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &isfactor, PCLU, PCILU, PCCHOLESKY, PCICC, PCQR, ""));
  /* the factorizations are configured in the code: PCFactor makes the factor in KSPSetFromOptions(), and PETSc's options
     block leaks its strings when an error leaves it */
  if (!isfactor) PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscStrcmp(pctype, PCML, &isml));
  if (isml) PetscCall(MLSeed());
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = KSPSolve(ksp, b, o->x);
  PetscCall(PetscPopErrorHandler());
  o->err = ierr;
  if (!ierr) {
    PetscCall(KSPGetIterationNumber(ksp, &o->its));
    PetscCall(KSPGetResidualHistory(ksp, NULL, &o->nhist));
    if (isfactor) {
      Mat                F;
      MatSolverType      t;
      MatFactorShiftType shift;
      PetscCall(PCFactorGetShiftType(pc, &shift));
      o->shift = (PetscInt)shift;
      PetscCall(PCFactorGetMatrix(pc, &F));
      PetscCall(MatFactorGetSolverType(F, &t));
      PetscCall(PetscStrncpy(o->stype, t, sizeof(o->stype)));
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* Whether the two outcomes agree: the same error, or both solved with the same iterations, residual history (to rtol)
   and solution (to rtol), by the same solver package */
/* The solver type a gpustream matrix takes where AIJ's is another (NULL: the same): the default LU of a sequential
   gpustream matrix is MATSOLVERGPUSTREAM's, PETSc's own factor solved on the device */
static const char *gs_stype = NULL;

static PetscErrorCode Compare(const char what[], Outcome *a, Outcome *b, PetscReal rtol, PetscBool mustwork)
{
  PetscReal d = 0, h = 0;
  PetscBool same;

  PetscFunctionBeginUser;
  same = (PetscBool)(a->err == b->err);
  if (same && !a->err) {
    PetscCall(VecRelDiff(a->x, b->x, &d));
    same = (PetscBool)(a->its == b->its && a->nhist == b->nhist && d <= rtol);
    for (PetscInt i = 0; same && i < a->nhist; i++) h = PetscMax(h, PetscAbsReal(a->hist[i] - b->hist[i]) / PetscMax(b->hist[i], PETSC_SMALL));
    same = (PetscBool)(same && h <= rtol && !strcmp(a->stype, gs_stype ? gs_stype : b->stype) && a->shift == b->shift);
  }
  if (verbose)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: errors %d %d, iterations %" PetscInt_FMT " %" PetscInt_FMT ", solution differs by %g, residuals by %g, packages '%s' '%s'\n", what, (int)a->err, (int)b->err, a->its, b->its, (double)d, (double)h,
                          a->stype, b->stype));
  if (same && mustwork && b->err) same = PETSC_FALSE;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", what, same ? "as with AIJ" : (mustwork && b->err ? "FAILED WITH AIJ TOO, THOUGH THIS PETSC HAS THE PACKAGE" : "DIFFERS FROM AIJ")));
  PetscCall(VecDestroy(&a->x));
  PetscCall(VecDestroy(&b->x));
  PetscFunctionReturn(0);
}

/* The same KSP on A and B, compared */
static PetscErrorCode Both(const char what[], Mat A, Mat B, Vec b, KSPType ksptype, PCType pctype, MatSolverType stype, MatSolverType aijstype, PetscInt shift, PetscReal rtol, PetscBool mustwork)
{
  Outcome oa, ob;

  PetscFunctionBeginUser;
  PetscCall(Solve(A, b, ksptype, pctype, stype, shift, "gs_", &oa));
  PetscCall(Solve(B, b, ksptype, pctype, aijstype, shift, "aij_", &ob));
  PetscCall(Compare(what, &oa, &ob, rtol, mustwork));
  PetscFunctionReturn(0);
}

/* Every factorization of every package this PETSc may have: a direct solve, the same bits as AIJ's (the factor is
   made from the same host values by the same code). "default": no solver type, PETSc's choice for AIJ. Not SuperLU's
   ILU, which Debian's SuperLU ends with abort() (its MC64 left out) */
static PetscErrorCode Factors(PetscRandom rnd)
{
  static const struct {
    const char *stype;
    PCType      pc;
    PetscBool   have, serial; /* configured in; serial only */
  } cases[] = {
      {"petsc", PCLU, PETSC_TRUE, PETSC_TRUE},
      {"petsc", PCILU, PETSC_TRUE, PETSC_TRUE},
      {"petsc", PCCHOLESKY, PETSC_TRUE, PETSC_TRUE},
      {"petsc", PCICC, PETSC_TRUE, PETSC_TRUE},
      {"default", PCLU, PETSC_TRUE, PETSC_TRUE},
      {"mumps", PCLU, PetscDefined(HAVE_MUMPS), PETSC_FALSE},
      {"mumps", PCCHOLESKY, PetscDefined(HAVE_MUMPS), PETSC_FALSE},
      {"superlu", PCLU, PetscDefined(HAVE_SUPERLU), PETSC_TRUE},
      {"superlu_dist", PCLU, PetscDefined(HAVE_SUPERLU_DIST), PETSC_FALSE},
      {"umfpack", PCLU, PetscDefined(HAVE_SUITESPARSE), PETSC_TRUE},
      {"klu", PCLU, PetscDefined(HAVE_SUITESPARSE), PETSC_TRUE},
      {"cholmod", PCCHOLESKY, PetscDefined(HAVE_SUITESPARSE), PETSC_TRUE},
      {"spqr", PCQR, PetscDefined(HAVE_SUITESPARSE), PETSC_TRUE},
      {"bas", PCICC, PETSC_TRUE, PETSC_TRUE},
      {"strumpack", PCLU, PetscDefined(HAVE_STRUMPACK), PETSC_FALSE},
      {"mkl_pardiso", PCLU, PetscDefined(HAVE_MKL_PARDISO), PETSC_TRUE},
      {"pastix", PCLU, PetscDefined(HAVE_PASTIX), PETSC_FALSE},
  };
  PetscMPIInt size;
  Mat         A[2], B[2];
  Vec         b;
  PetscBool   devicelu = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int s = 0; s < 2; s++) PetscCall(Pair(12, 1, (PetscBool)!s, &A[s], &B[s]));
  PetscCall(MatCreateVecs(B[0], NULL, &b));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(MatGetFactorAvailable(A[0], MATSOLVERGPUSTREAM, MAT_FACTOR_LU, &devicelu)); /* where the plugin has Kokkos-Kernels */
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    const PetscBool sym = (PetscBool)(!strcmp(cases[c].pc, PCCHOLESKY) || !strcmp(cases[c].pc, PCICC));
    const PetscBool def = (PetscBool)!strcmp(cases[c].stype, "default");
    PetscBool       petsc, complete;
    MatSolverType   stype = def ? NULL : cases[c].stype, aijstype = stype;
    char            what[128];

    /* several processes: what AIJ does, a factor or an error (serial packages); MATSOLVERPETSC's LU and Cholesky,
       which AIJ refuses there, are the factorizations AIJ takes with no solver type (PETSc's first package for
       MATMPIAIJ: MUMPS where it is configured), as the default LU is */
    PetscCall(PetscStrcmp(cases[c].stype, MATSOLVERPETSC, &petsc));
    complete = (PetscBool)(!strcmp(cases[c].pc, PCLU) || !strcmp(cases[c].pc, PCCHOLESKY));
    if (size > 1 && petsc && complete) aijstype = NULL;
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s%s", cases[c].stype, cases[c].pc, aijstype != stype ? " (AIJ's with no solver type)" : ""));
    gs_stype = def && size == 1 && !strcmp(cases[c].pc, PCLU) && devicelu ? MATSOLVERGPUSTREAM : NULL;
    PetscCall(Both(what, A[sym], B[sym], b, KSPPREONLY, cases[c].pc, stype, aijstype, -1, 1e-12, (PetscBool)(cases[c].have && (size == 1 || !cases[c].serial))));
    gs_stype = NULL;
  }
  /* ILU with a shift of zero pivots (PCILU changes it to shifts in blocks for other types than AIJ) */
  PetscCall(Both("petsc ilu, shift type nonzero", A[1], B[1], b, KSPPREONLY, PCILU, MATSOLVERPETSC, MATSOLVERPETSC, MAT_SHIFT_NONZERO, 1e-12, PETSC_FALSE));
  /* the same factor again after new values (the numeric phase alone, with the host arrays stale again) */
  for (int k = 0; k < 2; k++) PetscCall(MatShift(k ? B[1] : A[1], 1.0));
  gs_stype = size == 1 && devicelu ? MATSOLVERGPUSTREAM : NULL;
  PetscCall(Both("LU after new values", A[1], B[1], b, KSPPREONLY, PCLU, NULL, NULL, -1, 1e-12, PETSC_FALSE));
  gs_stype = NULL;
  for (int s = 0; s < 2; s++) {
    PetscCall(MatDestroy(&A[s]));
    PetscCall(MatDestroy(&B[s]));
  }
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* Preconditioners that read AIJ's data: CG with PCGAMG's classical AMG, PCML, PCHYPRE's BoomerAMG */
static PetscErrorCode Preconditioners(const char *scenario, PetscRandom rnd)
{
  Mat A, B;
  Vec b;

  PetscFunctionBeginUser;
  PetscCall(Pair(20, 1, PETSC_TRUE, &A, &B));
  PetscCall(MatCreateVecs(B, NULL, &b));
  PetscCall(VecSetRandom(b, rnd));
  if (!strcmp(scenario, "all") || !strcmp(scenario, "gamg")) {
    PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_gamg_type", "classical"));
    PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_gamg_type", "classical"));
    PetscCall(Both("CG with PCGAMG, classical", A, B, b, KSPCG, PCGAMG, NULL, NULL, -1, 1e-10, PETSC_TRUE));
    PetscCall(PetscOptionsSetValue(NULL, "-gs_pc_gamg_classical_type", "direct"));
    PetscCall(PetscOptionsSetValue(NULL, "-aij_pc_gamg_classical_type", "direct"));
    PetscCall(Both("CG with PCGAMG, classical, direct interpolation", A, B, b, KSPCG, PCGAMG, NULL, NULL, -1, 1e-10, PETSC_TRUE));
  }
  if (!strcmp(scenario, "all") || !strcmp(scenario, "ml")) PetscCall(Both("CG with PCML", A, B, b, KSPCG, PCML, NULL, NULL, -1, 1e-10, PetscDefined(HAVE_ML)));
  if (!strcmp(scenario, "all") || !strcmp(scenario, "hypre")) PetscCall(Both("CG with PCHYPRE", A, B, b, KSPCG, PCHYPRE, NULL, NULL, -1, 1e-10, PetscDefined(HAVE_HYPRE)));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* PCMPI, the MPI linear solver server (run with -mpi_linear_solver_server), always used, its KSP CG with Jacobi: the
   first process's matrix is sent to the others from its host arrays. Its options: PETSc 3.20 on, the server's KSP
   keeps the prefix and PCMPI's own options follow mpi_linear_solver_server_; before, both took mpi_ */
static PetscErrorCode Server(PetscRandom rnd)
{
  const char *pre[2] = {"-gs_", "-aij_"};
  Mat         A, B;
  Vec         b;

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    const char *opts[4][2] = {
#if PETSC_VERSION_GE(3, 20, 0)
      {"mpi_linear_solver_server_always_use_server", NULL},
      {"ksp_type", "cg"},
      {"pc_type", "jacobi"},
      {"ksp_rtol", "1e-10"}
#else
      {"pc_mpi_always_use_server", NULL},
      {"mpi_ksp_type", "cg"},
      {"mpi_pc_type", "jacobi"},
      {"mpi_ksp_rtol", "1e-10"}
#endif
    };
    for (int o = 0; o < 4; o++) {
      char name[96];
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s%s", pre[k], opts[o][0]));
      PetscCall(PetscOptionsSetValue(NULL, name, opts[o][1]));
    }
  }
  PetscCall(Pair(10, 1, PETSC_TRUE, &A, &B));
  PetscCall(MatSetFromOptions(A)); /* -mat_gpustream_pinned_vecs: the server's shared memory takes no pinned vectors */
  PetscCall(MatCreateVecs(B, NULL, &b));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(Both("PCMPI", A, B, b, KSPPREONLY, PCMPI, NULL, NULL, -1, 1e-12, PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* MatCreateSubMatrix() reused (PCFIELDSPLIT's blocks at each Newton step) after the values changed on the device, of
   the matrix and of the submatrix: AIJ's code zeroes the submatrix (contiguous rows) or writes its host arrays
   directly, then assembles it; its products must be AIJ's */
static PetscErrorCode Submatrix(void)
{
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int general = 0; general < 2; general++) {
    Mat       A, B, S[2];
    IS        is;
    Vec       x, y[2];
    PetscInt  rstart, rend, n;
    PetscBool same;

    PetscCall(PairWiggled(12, 1, PETSC_FALSE, PETSC_TRUE, &A, &B)); /* one unknown a node: no inodes (docs/tutorials.md) */
    PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
    n = (rend - rstart) / 2;
    if (general)
      PetscCall(ISCreateStride(PETSC_COMM_WORLD, n, rstart, 2, &is)); /* every other row */
    else
      PetscCall(ISCreateStride(PETSC_COMM_WORLD, n, rstart, 1, &is)); /* the first half */
    for (int k = 0; k < 2; k++) PetscCall(MatCreateSubMatrix(k ? B : A, is, is, MAT_INITIAL_MATRIX, &S[k]));
    for (int k = 0; k < 2; k++) {
      PetscCall(MatScale(S[k], 2.0)); /* on the device for the gpustream one */
      PetscCall(MatScale(k ? B : A, 3.0));
      PetscCall(MatCreateSubMatrix(k ? B : A, is, is, MAT_REUSE_MATRIX, &S[k]));
    }
    PetscCall(MatCreateVecs(S[1], &x, &y[1]));
    PetscCall(VecDuplicate(y[1], &y[0]));
    PetscCall(VecSet(x, 1.0));
    for (int k = 0; k < 2; k++) PetscCall(MatMult(S[k], x, y[k]));
    PetscCall(VecEqual(y[0], y[1], &same));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatCreateSubMatrix reused after changes on the device, %s rows: %s\n", general ? "every other" : "contiguous", same ? "AIJ's products" : "DIFFERS FROM AIJ'S"));
    PetscCall(VecDestroy(&x));
    for (int k = 0; k < 2; k++) {
      PetscCall(VecDestroy(&y[k]));
      PetscCall(MatDestroy(&S[k]));
    }
    PetscCall(ISDestroy(&is));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(0);
}

/* MatShift() on the device views the matrix under -mat_view, as AIJ's shift, which ends in an assembly (the TEST
   block counts the views) */
static PetscErrorCode ShiftView(void)
{
  Mat A, B;

  PetscFunctionBeginUser;
  PetscCall(Pair(4, 1, PETSC_TRUE, &A, &B));
  PetscCall(MatSetOptionsPrefix(A, "gs_"));
  PetscCall(MatSetOptionsPrefix(B, "aij_"));
  PetscCall(PetscOptionsSetValue(NULL, "-gs_mat_view", "::ascii_info"));
  PetscCall(PetscOptionsSetValue(NULL, "-aij_mat_view", "::ascii_info"));
  PetscCall(MatShift(A, 1.0));
  PetscCall(MatShift(B, 1.0));
  PetscCall(PetscOptionsClearValue(NULL, "-gs_mat_view"));
  PetscCall(PetscOptionsClearValue(NULL, "-aij_mat_view"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The greedy coloring of distance 1 and 2 (SNES's finite-difference Jacobians): the same colors as AIJ's */
static PetscErrorCode Coloring(void)
{
  Mat A, B;

  PetscFunctionBeginUser;
  PetscCall(Pair(9, 2, PETSC_FALSE, &A, &B));
  for (PetscInt dist = 1; dist <= 2; dist++) {
    ISColoring             c[2];
    PetscInt               n[2], nc[2];
    const ISColoringValue *colors[2];
    PetscBool              same;
    for (int k = 0; k < 2; k++) {
      MatColoring mc;
      PetscCall(MatColoringCreate(k ? B : A, &mc));
      PetscCall(MatColoringSetType(mc, MATCOLORINGGREEDY));
      PetscCall(MatColoringSetDistance(mc, dist));
      PetscCall(MatColoringApply(mc, &c[k]));
      PetscCall(MatColoringDestroy(&mc));
      PetscCall(ISColoringGetColors(c[k], &n[k], &nc[k], &colors[k]));
    }
    same = (PetscBool)(n[0] == n[1] && nc[0] == nc[1]);
    for (PetscInt i = 0; same && i < n[0]; i++) same = (PetscBool)(colors[0][i] == colors[1][i]);
    PetscCall(AllTrue(&same));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "greedy coloring of distance %" PetscInt_FMT ": %s\n", dist, same ? "the colors of AIJ's" : "DIFFERS FROM AIJ'S"));
    for (int k = 0; k < 2; k++) PetscCall(ISColoringDestroy(&c[k]));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* MatGetRowIJ() (on several processes AIJ gathers the local rows) and the orderings made from it */
static PetscErrorCode Ordering(void)
{
  Mat             A, B;
  const PetscInt *ia[2], *ja[2];
  PetscInt        n[2];
  PetscBool       done[2], same;

  PetscFunctionBeginUser;
  PetscCall(Pair(10, 1, PETSC_FALSE, &A, &B));
  PetscCall(MatGetRowIJ(A, 0, PETSC_TRUE, PETSC_FALSE, &n[0], &ia[0], &ja[0], &done[0]));
  PetscCall(MatGetRowIJ(B, 0, PETSC_TRUE, PETSC_FALSE, &n[1], &ia[1], &ja[1], &done[1]));
  same = (PetscBool)(done[0] && done[1] && n[0] == n[1]);
  for (PetscInt i = 0; same && i <= n[0]; i++) same = (PetscBool)(ia[0][i] == ia[1][i]);
  for (PetscInt k = 0; same && k < ia[0][n[0]]; k++) same = (PetscBool)(ja[0][k] == ja[1][k]);
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_TRUE, PETSC_FALSE, &n[0], &ia[0], &ja[0], &done[0]));
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_TRUE, PETSC_FALSE, &n[1], &ia[1], &ja[1], &done[1]));
  PetscCall(AllTrue(&same));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatGetRowIJ, symmetric: %s\n", same ? "AIJ's rows" : "DIFFERS FROM AIJ'S"));
  {
    const MatOrderingType types[] = {MATORDERINGND, MATORDERINGRCM, MATORDERINGQMD};
    for (int t = 0; t < 3; t++) {
      IS        r[2], c[2];
      PetscBool sr, sc;
      PetscCall(MatGetOrdering(A, types[t], &r[0], &c[0]));
      PetscCall(MatGetOrdering(B, types[t], &r[1], &c[1]));
      PetscCall(ISEqual(r[0], r[1], &sr));
      PetscCall(ISEqual(c[0], c[1], &sc));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatGetOrdering %s: %s\n", types[t], sr && sc ? "AIJ's permutations" : "DIFFERS FROM AIJ'S"));
      if (t == 0) { /* the matrix permuted so (ksp ex18 -permute nd): a gpustream matrix, AIJ's values */
        Mat       PA, PB;
        Vec       x, y[2];
        PetscBool isgs, same;
        PetscCall(MatPermute(A, r[0], c[0], &PA));
        PetscCall(MatPermute(B, r[1], c[1], &PB));
        PetscCall(MatCreateVecs(PB, &x, &y[1]));
        PetscCall(VecDuplicate(y[1], &y[0]));
        PetscCall(VecSet(x, 1.0));
        PetscCall(MatMult(PA, x, y[0]));
        PetscCall(MatMult(PB, x, y[1]));
        PetscCall(VecEqual(y[0], y[1], &same));
        PetscCall(MatEqual(PA, PB, &sr));
        PetscCall(PetscObjectTypeCompare((PetscObject)PA, MATGPUSTREAM, &isgs));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatPermute by it: %s\n", same && sr && isgs ? "a gpustream matrix, AIJ's values" : "DIFFERS FROM AIJ'S"));
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&y[0]));
        PetscCall(VecDestroy(&y[1]));
        PetscCall(MatDestroy(&PA));
        PetscCall(MatDestroy(&PB));
      }
      for (int k = 0; k < 2; k++) {
        PetscCall(ISDestroy(&r[k]));
        PetscCall(ISDestroy(&c[k]));
      }
    }
  }
  { /* the overlap of the local rows (PCASM), by AIJ's scalable variant too */
    for (int scalable = 0; scalable < 2; scalable++) {
      IS        is[2];
      PetscInt  rstart, rend;
      PetscBool same;
      if (scalable) PetscCall(PetscOptionsSetValue(NULL, "-mat_increase_overlap_scalable", "1"));
      PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
      for (int k = 0; k < 2; k++) {
        PetscCall(ISCreateStride(PETSC_COMM_SELF, rend - rstart, rstart, 1, &is[k]));
        PetscCall(MatIncreaseOverlap(k ? B : A, 1, &is[k], 2));
        PetscCall(ISSort(is[k]));
      }
      PetscCall(ISEqual(is[0], is[1], &same));
      PetscCall(AllTrue(&same));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatIncreaseOverlap%s: %s\n", scalable ? ", scalable" : "", same ? "AIJ's rows" : "DIFFERS FROM AIJ'S"));
      for (int k = 0; k < 2; k++) PetscCall(ISDestroy(&is[k]));
      if (scalable) PetscCall(PetscOptionsClearValue(NULL, "-mat_increase_overlap_scalable"));
    }
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* MatConvert() to dense (PCASM's -pc_asm_sub_mat_type): AIJ's converter, the same values and block sizes; made,
   reused after new values, and in place */
static PetscErrorCode Convert(void)
{
  Mat         A, B, D[2];
  const char *how[] = {"MAT_INITIAL_MATRIX", "MAT_REUSE_MATRIX after new values", "MAT_INPLACE_MATRIX"};

  PetscFunctionBeginUser;
  PetscCall(Pair(4, 2, PETSC_FALSE, &A, &B));
  for (int h = 0; h < 3; h++) {
    PetscInt  rbs[2], cbs[2];
    PetscBool eq, isdense;
    MatType   t;
    if (h == 1)
      for (int k = 0; k < 2; k++) PetscCall(MatScale(k ? B : A, -3.0));
    for (int k = 0; k < 2; k++) {
      Mat M = k ? B : A;
      if (h < 2)
        PetscCall(MatConvert(M, MATDENSE, h ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &D[k]));
      else {
        PetscCall(MatDestroy(&D[k]));
        PetscCall(MatDuplicate(M, MAT_COPY_VALUES, &D[k]));
        PetscCall(MatConvert(D[k], MATDENSE, MAT_INPLACE_MATRIX, &D[k]));
      }
      PetscCall(MatGetBlockSizes(D[k], &rbs[k], &cbs[k]));
    }
    PetscCall(MatEqual(D[0], D[1], &eq));
    PetscCall(MatGetType(D[0], &t));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)D[0], MATSEQDENSE, &isdense));
    if (!isdense) PetscCall(PetscObjectBaseTypeCompare((PetscObject)D[0], MATMPIDENSE, &isdense));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: type %s, block sizes %" PetscInt_FMT " %" PetscInt_FMT " (AIJ's %" PetscInt_FMT " %" PetscInt_FMT ")\n", how[h], t, rbs[0], cbs[0], rbs[1], cbs[1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatConvert to dense, %s: %s\n", how[h], eq && isdense && rbs[0] == rbs[1] && cbs[0] == cbs[1] ? "AIJ's values and block sizes" : "DIFFERS FROM AIJ'S"));
  }
  for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&D[k]));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* MatMult() and MatMultAdd() (into another vector and in place) bitwise equal to AIJ's with one lane a row: each row's
   products added one at a time to 0, to z, and on several processes the off-diagonal block's to the diagonal block's
   sum, as AIJ adds them. AIJ's inode kernels (consecutive rows of one pattern, several unknowns per node) add products in pairs: the
   unknowns-per-node matrix is compared with AIJ's without inodes (MAT_USE_INODES false), and to rounding with them. */
static PetscErrorCode Products(PetscRandom rnd)
{
  for (PetscInt bs = 1; bs <= 4; bs += 3) {
    for (int inodes = 0; inodes < (bs > 1 ? 2 : 1); inodes++) {
      Mat       A, B;
      Vec       x, z, y[2], w[2];
      PetscBool same[3];
      PetscReal d = 0;

      PetscCall(PairWiggled(7, bs, PETSC_FALSE, PETSC_TRUE, &A, &B));
      /* one lane a row on a GPU too (a warp sums in another order) */
      PetscCall(MatSetOptionsPrefix(A, "prod_"));
      PetscCall(PetscOptionsSetValue(NULL, "-prod_mat_gpustream_kernel", "thread"));
      PetscCall(MatSetFromOptions(A));
      PetscCall(PetscOptionsClearValue(NULL, "-prod_mat_gpustream_kernel"));
      if (bs > 1 && !inodes) { /* AIJ's inodes are found at assembly: assembled again without */
        PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_FALSE));
        PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
      }
      PetscCall(MatCreateVecs(B, &x, &z));
      PetscCall(VecSetRandom(x, rnd));
      PetscCall(VecSetRandom(z, rnd));
      for (int k = 0; k < 2; k++) {
        PetscCall(VecDuplicate(z, &y[k]));
        PetscCall(VecDuplicate(z, &w[k]));
        PetscCall(MatMult(k ? B : A, x, y[k]));
        PetscCall(MatMultAdd(k ? B : A, x, z, w[k]));
      }
      PetscCall(VecEqual(y[0], y[1], &same[0]));
      PetscCall(VecEqual(w[0], w[1], &same[1]));
      PetscCall(VecRelDiff(y[0], y[1], &d));
      for (int k = 0; k < 2; k++) PetscCall(MatMultAdd(k ? B : A, x, w[k], w[k])); /* in place: z is y */
      PetscCall(VecEqual(w[0], w[1], &same[2]));
      if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  bs %" PetscInt_FMT ", inodes %d: MatMult differs by %g\n", bs, inodes, (double)d));
      if (bs == 1 || !inodes)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMult, MatMultAdd, MatMultAdd in place, %" PetscInt_FMT " unknowns a node%s: %s\n", bs, bs > 1 ? " (AIJ without inodes)" : "", same[0] && same[1] && same[2] ? "AIJ's bits" : "DIFFERS FROM AIJ'S"));
      else
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMult, %" PetscInt_FMT " unknowns a node (AIJ with inodes): %s\n", bs, d < 1e-14 ? "AIJ's to rounding" : "DIFFERS FROM AIJ'S"));
      for (int k = 0; k < 2; k++) {
        PetscCall(VecDestroy(&y[k]));
        PetscCall(VecDestroy(&w[k]));
      }
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&z));
      PetscCall(MatDestroy(&A));
      PetscCall(MatDestroy(&B));
    }
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char        scenario[32] = "all";
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-scenario", scenario, sizeof(scenario), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &verbose, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  if (!strcmp(scenario, "all") || !strcmp(scenario, "factors")) PetscCall(Factors(rnd));
  if (!strcmp(scenario, "all") || !strcmp(scenario, "gamg") || !strcmp(scenario, "ml") || !strcmp(scenario, "hypre")) PetscCall(Preconditioners(scenario, rnd));
  if (!strcmp(scenario, "server")) PetscCall(Server(rnd));
  if (!strcmp(scenario, "shiftview")) PetscCall(ShiftView());
  if (!strcmp(scenario, "all") || !strcmp(scenario, "coloring")) PetscCall(Coloring());
  if (!strcmp(scenario, "all") || !strcmp(scenario, "ordering")) PetscCall(Ordering());
  if (!strcmp(scenario, "all") || !strcmp(scenario, "convert")) PetscCall(Convert());
  if (!strcmp(scenario, "all") || !strcmp(scenario, "products")) PetscCall(Products(rnd));
  if (!strcmp(scenario, "all") || !strcmp(scenario, "submatrix")) PetscCall(Submatrix());
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -malloc_debug -malloc_dump

   test:
      suffix: 2
      nsize: 2
      args: -malloc_dump

   test:
      suffix: 3
      nsize: 3
      args: -malloc_dump
      output_file: output/aijcode_2.out

   # PCMPI: the first process sends its matrix to the server's processes
   test:
      suffix: server_2
      nsize: 2
      args: -scenario server -mpi_linear_solver_server -malloc_dump

   # the same with pinned vectors asked for (a GPU's default): MatCreateVecs() gives plain ones to a server that moves
   # vectors through shared memory (PETSc 3.22 on), which maps only arrays PETSc allocated
   test:
      suffix: server_pinned_2
      nsize: 2
      args: -scenario server -mpi_linear_solver_server -mat_gpustream_pinned_vecs true -malloc_dump
      output_file: output/aijcode_server_2.out

   # MatShift views the gpustream matrix under its -mat_view where it views the AIJ one (PETSc up to 3.24)
   test:
      suffix: shiftview
      args: -scenario shiftview
      filter: awk '/Mat Object: [(]gs_[)]/ { g++ } /Mat Object: [(]aij_[)]/ { a++ } END { print (g == a ? "MatShift views as AIJ" : "MatShift VIEWS OTHERWISE") }'

TEST*/
