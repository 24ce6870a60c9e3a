static char help[] = "Operations a gpustream matrix takes from AIJ's code, each against the same on the AIJ matrix holding the same\n\
values: MatTranspose() and MatHermitianTranspose() (initial, reused after a change of values, reused after a change of\n\
pattern on one process, in place; MatTransposeSymbolic() on one process), MatConvert() to MATIS (initial, reused, in\n\
place), sparse products (of gpustream matrices: gpustream; with an AIJ partner: AIJ), the square of the graph PCGAMG makes of a\n\
gpustream matrix, and PCMG's Galerkin coarse operators (MatPtAP() with the MAIJ interpolation of a DMDA with 2 and 3 unknowns\n\
per node) in KSPCG and KSPGMRES.\n\
On several processes the rows are split unevenly.\n";

#include <string.h>
#include <petscgpustream.h>
#include <petscdmda.h>
#include <petscksp.h>
#include "vecdiff.h"

/* The same nonsymmetric matrix as gpustream (A) and AIJ (B): m rows on each process but the last, which has m + 3;
   a tridiagonal band with random values and a random entry per row anywhere */
static PetscErrorCode PairBS(PetscInt m, PetscInt bs, PetscRandom rnd, Mat *A, Mat *B)
{
  PetscMPIInt rank, size;
  PetscInt    rstart, rend, N;
  Mat         M[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &M[k]));
    PetscCall(MatSetSizes(M[k], m + (rank == size - 1 ? 3 : 0), m + (rank == size - 1 ? 3 : 0), PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(MatSetType(M[k], k ? MATAIJ : MATGPUSTREAM));
    if (bs > 1) PetscCall(MatSetBlockSize(M[k], bs));
    PetscCall(MatSeqAIJSetPreallocation(M[k], 4, NULL));
    PetscCall(MatMPIAIJSetPreallocation(M[k], 4, NULL, 2, NULL));
  }
  PetscCall(MatGetOwnershipRange(M[0], &rstart, &rend));
  PetscCall(MatGetSize(M[0], &N, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    cols[4] = {i, i - 1, i + 1, 0};
    PetscScalar v[4];
    PetscReal   r;
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    cols[3] = PetscMin(N - 1, (PetscInt)(r * N));
    for (int c = 0; c < 4; c++) PetscCall(PetscRandomGetValue(rnd, &v[c]));
    v[0] += 4.0;
    for (int c = 0; c < 4; c++) {
      if (cols[c] < 0 || cols[c] >= N) continue;
      PetscCall(MatSetValues(M[0], 1, &i, 1, &cols[c], &v[c], ADD_VALUES));
      PetscCall(MatSetValues(M[1], 1, &i, 1, &cols[c], &v[c], ADD_VALUES));
    }
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatAssemblyBegin(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[k], MAT_FINAL_ASSEMBLY));
  }
  *A = M[0];
  *B = M[1];
  PetscFunctionReturn(0);
}

static PetscErrorCode Pair(PetscInt m, PetscRandom rnd, Mat *A, Mat *B)
{
  PetscFunctionBeginUser;
  PetscCall(PairBS(m, 1, rnd, A, B));
  PetscFunctionReturn(0);
}

/* Whether A (of type `type`, MATAIJ: seqaij or mpiaij; assembled) multiplies as B: MatMult and MatMultTranspose on a random vector to 1e-14,
   with as many nonzeros stored and the same block sizes */
static PetscErrorCode Same(Mat A, Mat B, MatType type, PetscRandom rnd, PetscBool *ok)
{
  Vec       x, ya, yb, u, va, vb;
  PetscReal d[2];
  PetscBool istype, assembled;
  MatType   atype;
  MatInfo   info[2];
  PetscInt  bs[2][2];

  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &atype));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, type, &istype));
  if (!istype && !strcmp(type, MATAIJ)) PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &istype, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCall(MatAssembled(A, &assembled));
  PetscCall(MatCreateVecs(B, &x, &yb));
  PetscCall(VecDuplicate(yb, &ya));
  PetscCall(VecDuplicate(yb, &u));
  PetscCall(VecDuplicate(x, &va));
  PetscCall(VecDuplicate(x, &vb));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(u, rnd));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecRelDiff(ya, yb, &d[0]));
  PetscCall(MatMultTranspose(A, u, va));
  PetscCall(MatMultTranspose(B, u, vb));
  PetscCall(VecRelDiff(va, vb, &d[1]));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info[0]));
  PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &info[1]));
  PetscCall(MatGetBlockSizes(A, &bs[0][0], &bs[0][1]));
  PetscCall(MatGetBlockSizes(B, &bs[1][0], &bs[1][1]));
  *ok = (PetscBool)(istype && assembled && d[0] < 1e-14 && d[1] < 1e-14 && info[0].nz_used == info[1].nz_used && bs[0][0] == bs[1][0] && bs[0][1] == bs[1][1]);
  if (!*ok)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  type %s (expected %s), assembled %d, MatMult differs by %g, MatMultTranspose by %g, %g and %g nonzeros, block sizes %" PetscInt_FMT " x %" PetscInt_FMT " and %" PetscInt_FMT " x %" PetscInt_FMT "\n",
                          atype, type, (int)assembled, (double)d[0], (double)d[1], (double)info[0].nz_used, (double)info[1].nz_used, bs[0][0], bs[0][1], bs[1][0], bs[1][1]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&va));
  PetscCall(VecDestroy(&vb));
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char *what, Mat A, Mat B, MatType type, PetscRandom rnd)
{
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(Same(A, B, type, rnd, &ok));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", what, ok ? "multiplies as AIJ's, both ways" : "DIFFERS FROM AIJ'S"));
  PetscFunctionReturn(0);
}

/* MatTranspose() and MatHermitianTranspose() of the gpustream matrix: a gpustream matrix, equal to AIJ's transpose,
   made, reused and made in place */
static PetscErrorCode Transposes(PetscRandom rnd)
{
  Mat         A, B, TA, TB, HA, HB;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Pair(7, rnd, &A, &B));
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &TA));
  PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &TB));
  PetscCall(Report("MatTranspose, MAT_INITIAL_MATRIX", TA, TB, MATGPUSTREAM, rnd));
  PetscCall(MatHermitianTranspose(A, MAT_INITIAL_MATRIX, &HA));
  PetscCall(MatHermitianTranspose(B, MAT_INITIAL_MATRIX, &HB));
  PetscCall(Report("MatHermitianTranspose, MAT_INITIAL_MATRIX", HA, HB, MATGPUSTREAM, rnd));

  /* new values, same pattern: the transposes reused (their device copies follow) */
  for (int k = 0; k < 2; k++) {
    PetscCall(MatScale(k ? B : A, -2.0));
    PetscCall(MatShift(k ? B : A, 1.5));
  }
  PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &TA));
  PetscCall(MatTranspose(B, MAT_REUSE_MATRIX, &TB));
  PetscCall(Report("MatTranspose, MAT_REUSE_MATRIX after new values", TA, TB, MATGPUSTREAM, rnd));
  PetscCall(MatHermitianTranspose(A, MAT_REUSE_MATRIX, &HA));
  PetscCall(MatHermitianTranspose(B, MAT_REUSE_MATRIX, &HB));
  PetscCall(Report("MatHermitianTranspose, MAT_REUSE_MATRIX after new values", HA, HB, MATGPUSTREAM, rnd));

  /* a new nonzero: on one process AIJ's transpose takes the new pattern into the reused matrix (on several it
     refuses, for AIJ as for gpustream) */
  if (size == 1) {
    for (int k = 0; k < 2; k++) {
      Mat M = k ? B : A;
      PetscCall(MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatSetValue(M, 0, 5, 0.25, ADD_VALUES));
      PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &TA));
    PetscCall(MatTranspose(B, MAT_REUSE_MATRIX, &TB));
    PetscCall(Report("MatTranspose, MAT_REUSE_MATRIX after a new nonzero (one process)", TA, TB, MATGPUSTREAM, rnd));
  }

  /* in place: A itself becomes the transpose, still a gpustream matrix */
  PetscCall(MatTranspose(A, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatTranspose(B, MAT_INPLACE_MATRIX, &B));
  PetscCall(Report("MatTranspose, MAT_INPLACE_MATRIX", A, B, MATGPUSTREAM, rnd));
  PetscCall(MatDestroy(&TA));
  PetscCall(MatDestroy(&TB));
  PetscCall(MatDestroy(&HA));
  PetscCall(MatDestroy(&HB));

  /* MatTransposeSymbolic(): AIJ's on one process only; the pattern, a gpustream matrix */
  if (size == 1) {
    const PetscInt *ia[2], *ja[2];
    PetscInt        n[2];
    PetscBool       done[2], same;
    PetscCall(MatTransposeSymbolic(A, &TA));
    PetscCall(MatTransposeSymbolic(B, &TB));
    PetscCall(MatGetRowIJ(TA, 0, PETSC_FALSE, PETSC_FALSE, &n[0], &ia[0], &ja[0], &done[0]));
    PetscCall(MatGetRowIJ(TB, 0, PETSC_FALSE, PETSC_FALSE, &n[1], &ia[1], &ja[1], &done[1]));
    PetscCall(PetscObjectTypeCompare((PetscObject)TA, MATGPUSTREAM, &same));
    same = (PetscBool)(same && done[0] && done[1] && n[0] == n[1]);
    for (PetscInt i = 0; same && i <= n[0]; i++) same = (PetscBool)(ia[0][i] == ia[1][i]);
    for (PetscInt k = 0; same && k < ia[0][n[0]]; k++) same = (PetscBool)(ja[0][k] == ja[1][k]);
    PetscCall(MatRestoreRowIJ(TA, 0, PETSC_FALSE, PETSC_FALSE, &n[0], &ia[0], &ja[0], &done[0]));
    PetscCall(MatRestoreRowIJ(TB, 0, PETSC_FALSE, PETSC_FALSE, &n[1], &ia[1], &ja[1], &done[1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatTransposeSymbolic (one process): %s\n", same ? "a gpustream matrix with AIJ's pattern" : "DIFFERS FROM AIJ'S"));
    PetscCall(MatDestroy(&TA));
    PetscCall(MatDestroy(&TB));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* MatConvert() to MATIS, as from the AIJ matrix: the MATIS multiplies as AIJ's, its local matrix can be viewed; reused
   after new values; in place */
static PetscErrorCode ToIS(PetscRandom rnd)
{
  Mat         A, B, IA, IB, L;
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(Pair(6, rnd, &A, &B));
  PetscCall(MatConvert(A, MATIS, MAT_INITIAL_MATRIX, &IA));
  PetscCall(MatConvert(B, MATIS, MAT_INITIAL_MATRIX, &IB));
  PetscCall(Report("MatConvert to MATIS, MAT_INITIAL_MATRIX", IA, IB, MATIS, rnd));
  PetscCall(Report("  the gpustream matrix after it", A, B, MATGPUSTREAM, rnd));
  PetscCall(MatISGetLocalMat(IA, &L));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, "/dev/null", &viewer));
  PetscCall(MatView(IA, viewer)); /* the local matrix, a duplicate made while A wore its base name, views as SeqAIJ */
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatISRestoreLocalMat(IA, &L));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatScale(k ? B : A, 3.0));
    PetscCall(MatShift(k ? B : A, -0.5));
  }
  PetscCall(MatConvert(A, MATIS, MAT_REUSE_MATRIX, &IA));
  PetscCall(MatConvert(B, MATIS, MAT_REUSE_MATRIX, &IB));
  PetscCall(Report("MatConvert to MATIS, MAT_REUSE_MATRIX after new values", IA, IB, MATIS, rnd));
  PetscCall(MatConvert(A, MATIS, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatConvert(B, MATIS, MAT_INPLACE_MATRIX, &B));
  PetscCall(Report("MatConvert to MATIS, MAT_INPLACE_MATRIX", A, B, MATIS, rnd));
  PetscCall(MatDestroy(&IA));
  PetscCall(MatDestroy(&IB));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* dof unknowns per node of the DMDA's grid: the 5-point Laplacian on each, plus 1 + c on the diagonal of component c
   and 0.3 between the unknowns of a node (SPD: the node's block is diagonally dominant) */
static PetscErrorCode Operator(KSP ksp, Mat J, Mat A, void *ctx)
{
  DM            dm;
  DMDALocalInfo info;

  PetscFunctionBeginUser;
  PetscCall(KSPGetDM(ksp, &dm));
  PetscCall(DMDAGetLocalInfo(dm, &info));
  for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
    for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
      for (PetscInt c = 0; c < info.dof; c++) {
        MatStencil  row = {0}, col[8];
        PetscScalar v[8];
        PetscInt    n = 0;
        row.i         = i;
        row.j         = j;
        row.c         = c;
        col[n]        = row;
        v[n++]        = 5.0 + c;
        for (int d = 0; d < 4; d++) {
          const PetscInt ni = i + (d == 0 ? -1 : d == 1 ? 1 : 0), nj = j + (d == 2 ? -1 : d == 3 ? 1 : 0);
          if (ni < 0 || ni >= info.mx || nj < 0 || nj >= info.my) continue;
          col[n]   = row;
          col[n].i = ni;
          col[n].j = nj;
          v[n++]   = -1.0;
        }
        for (PetscInt e = 0; e < info.dof; e++) {
          if (e == c) continue;
          col[n]   = row;
          col[n].c = e;
          v[n++]   = 0.3;
        }
        PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode RHS(KSP ksp, Vec b, void *ctx)
{
  PetscFunctionBeginUser;
  PetscCall(VecSet(b, 1.0));
  PetscFunctionReturn(0);
}

/* A solve with PCMG, 3 levels, Galerkin coarse operators (MatPtAP() with the DMDA's interpolation, MAIJ for dof > 1),
   on a DMDA whose operator has the type mattype (typed: it has); the iterations, the reason, the solution and the
   coarse operators */
static PetscErrorCode SolveMG(PetscInt dof, KSPType type, MatType mattype, PetscInt *its, KSPConvergedReason *reason, Vec *x, Mat coarse[2], PetscBool *typed)
{
  DM  da;
  KSP ksp;
  PC  pc;
  Mat A;

  PetscFunctionBeginUser;
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 17, 17, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, &da));
  PetscCall(DMSetMatType(da, mattype));
  PetscCall(DMSetUp(da));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetComputeOperators(ksp, Operator, NULL));
  PetscCall(KSPSetComputeRHS(ksp, RHS, NULL));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(PCMGSetLevels(pc, 3, NULL));
  PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_PMAT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, NULL, NULL));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, typed, mattype, MATSEQAIJ, MATMPIAIJ, ""));
  if (!strcmp(mattype, MATGPUSTREAM)) PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, typed)); /* the fine operator */
  {
    Vec s;
    PetscCall(KSPGetSolution(ksp, &s));
    PetscCall(VecDuplicate(s, x));
    PetscCall(VecCopy(s, *x));
  }
  for (PetscInt l = 0; l < 2; l++) {
    KSP smoother;
    PetscCall(PCMGGetSmoother(pc, l, &smoother));
    PetscCall(KSPGetOperators(smoother, NULL, &coarse[l]));
    PetscCall(PetscObjectReference((PetscObject)coarse[l]));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

/* PCMG with Galerkin coarse operators on a gpustream operator against an AIJ one: the same iterations and reason,
   solutions within 1e-10, and coarse operators (plain AIJ) that multiply alike */
static PetscErrorCode Galerkin(PetscInt dof, KSPType type, PetscRandom rnd)
{
  PetscInt           its[2];
  KSPConvergedReason reason[2];
  Vec                x[2];
  Mat                coarse[2][2];
  PetscReal          d;
  PetscBool          ok[2], typed[2];

  PetscFunctionBeginUser;
  PetscCall(SolveMG(dof, type, MATGPUSTREAM, &its[0], &reason[0], &x[0], coarse[0], &typed[0]));
  PetscCall(SolveMG(dof, type, MATAIJ, &its[1], &reason[1], &x[1], coarse[1], &typed[1]));
  PetscCall(VecRelDiff(x[0], x[1], &d));
  for (int l = 0; l < 2; l++) PetscCall(Same(coarse[0][l], coarse[1][l], MATAIJ, rnd, &ok[l]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PCMG, Galerkin coarse operators, DMDA with %" PetscInt_FMT " unknowns per node, %s: %s\n", dof, type,
                        typed[0] && typed[1] && reason[0] > 0 && reason[0] == reason[1] && its[0] == its[1] && d < 1e-10 && ok[0] && ok[1] ? "as with -dm_mat_type aij: the same iterations, solution and coarse operators" : "UNLIKE WITH AIJ"));
  if (its[0] != its[1] || reason[0] != reason[1] || reason[0] <= 0 || d >= 1e-10)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  gpustream: %s in %" PetscInt_FMT "; aij: %s in %" PetscInt_FMT "; solutions %g apart\n", KSPConvergedReasons[reason[0]], its[0], KSPConvergedReasons[reason[1]], its[1], (double)d));
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&x[k]));
    for (int l = 0; l < 2; l++) PetscCall(MatDestroy(&coarse[k][l]));
  }
  PetscFunctionReturn(0);
}

/* Products of gpustream matrices only are gpustream matrices (PCGAMG's hierarchy stays on the device), with a plain
   AIJ partner plain AIJ ones; each multiplies as the product of the AIJ matrices holding the same values, at once and
   reused (MAT_REUSE_MATRIX) after the operands' values changed on the device. streamed: the first gpustream operand
   streams (-s_mat_gpustream_mode stream), so that the numeric phases run on the host arrays */
static PetscErrorCode Products(PetscBool streamed, PetscRandom rnd)
{
  const MatProductType types[] = {MATPRODUCT_AB, MATPRODUCT_AtB, MATPRODUCT_PtAP, MATPRODUCT_ABC};
  const char          *names[] = {"AB", "AtB", "PtAP", "ABC"};
  Mat                  A[2], B[2], C[2];
  PetscBool            own = PETSC_TRUE;
  PetscMPIInt          size;

  PetscFunctionBeginUser;
  PetscCall(Pair(7, rnd, &A[0], &A[1]));
  PetscCall(Pair(7, rnd, &B[0], &B[1]));
  PetscCall(Pair(7, rnd, &C[0], &C[1]));
  if (streamed) {
    PetscCall(MatSetOptionsPrefix(A[0], "s_"));
    PetscCall(PetscOptionsSetValue(NULL, "-s_mat_gpustream_mode", "stream"));
    PetscCall(MatSetFromOptions(A[0]));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_mode"));
  }
  for (int t = 0; t < 4; t++) {
    Mat  X[2];
    char what[128];
    for (int k = 0; k < 2; k++) {
      PetscCall(MatProductCreate(A[k], B[k], types[t] == MATPRODUCT_ABC ? C[k] : NULL, &X[k]));
      PetscCall(MatProductSetType(X[k], types[t]));
      PetscCall(MatProductSetFromOptions(X[k]));
      PetscCall(MatProductSymbolic(X[k]));
      PetscCall(MatProductNumeric(X[k]));
    }
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatProduct %s of gpustream matrices%s, initial: a gpustream matrix", names[t], streamed ? ", A streamed" : ""));
    PetscCall(Report(what, X[0], X[1], MATGPUSTREAM, rnd));
    for (int k = 0; k < 2; k++) { /* new values: on the device for the gpustream operands */
      PetscCall(MatScale(A[k], 2.0));
      PetscCall(MatShift(B[k], 1.0));
      PetscCall(MatProductNumeric(X[k]));
    }
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatProduct %s of gpustream matrices%s, reused after new values", names[t], streamed ? ", A streamed" : ""));
    PetscCall(Report(what, X[0], X[1], MATGPUSTREAM, rnd));
    for (int k = 0; k < 2; k++) { /* another A of the same pattern */
      Mat D;
      PetscCall(MatDuplicate(A[k], MAT_COPY_VALUES, &D));
      PetscCall(MatShift(D, 2.0));
      PetscCall(MatProductReplaceMats(D, NULL, NULL, X[k]));
      PetscCall(MatProductNumeric(X[k]));
      PetscCall(MatDestroy(&D));
    }
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatProduct %s of gpustream matrices%s, reused with another A", names[t], streamed ? ", A streamed" : ""));
    PetscCall(Report(what, X[0], X[1], MATGPUSTREAM, rnd));
    for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&X[k]));
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gpustream_device_products", &own, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (!streamed && own && size == 1) { /* a value set on the plugin's product result between its symbolic and numeric
                                          phases (AIJ's has no values there): in the device copy */
    Mat X[2];
    for (int k = 0; k < 2; k++) {
      PetscInt        nc, c0 = -1, r0;
      const PetscInt *cols;
      PetscCall(MatProductCreate(A[k], B[k], NULL, &X[k]));
      PetscCall(MatProductSetType(X[k], MATPRODUCT_AB));
      PetscCall(MatProductSetFromOptions(X[k]));
      PetscCall(MatProductSymbolic(X[k]));
      if (k) PetscCall(MatProductNumeric(X[k])); /* AIJ's result has no values before it */
      PetscCall(MatZeroEntries(X[k]));
      PetscCall(MatGetOwnershipRange(X[k], &r0, NULL));
      PetscCall(MatGetRow(X[k], r0, &nc, &cols, NULL));
      if (nc) c0 = cols[0];
      PetscCall(MatRestoreRow(X[k], r0, &nc, &cols, NULL));
      if (c0 >= 0) PetscCall(MatSetValue(X[k], r0, c0, 5.0, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(X[k], MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(X[k], MAT_FINAL_ASSEMBLY));
    }
    PetscCall(Report("MatProduct AB of gpustream matrices, a value set before its numeric phase", X[0], X[1], MATGPUSTREAM, rnd));
    for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&X[k]));
  }
  if (!streamed) { /* a plain AIJ partner: AIJ's result */
    Mat X, Y;
    PetscCall(MatPtAP(A[0], B[1], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &X));
    PetscCall(MatPtAP(A[1], B[1], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y));
    PetscCall(Report("MatPtAP of a gpustream A and an AIJ P: an AIJ matrix", X, Y, MATAIJ, rnd));
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&Y));
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&A[k]));
    PetscCall(MatDestroy(&B[k]));
    PetscCall(MatDestroy(&C[k]));
  }
  PetscFunctionReturn(0);
}

/* A B and P^T A P with a rectangular P whose columns are laid out unlike its rows (PCGAMG's interpolations), on layouts
   where the first process has no rows and the last no columns of P: as AIJ's, made and reused after new values of
   either operand */
static PetscErrorCode RectProducts(PetscRandom rnd)
{
  PetscMPIInt rank, size;
  PetscInt    m, mc, rstart, rend, N, Nc;
  Mat         A[2], P[2], X[2], Y[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  m  = size > 1 && rank == 0 ? 0 : 6 + rank;
  mc = size > 1 && rank == size - 1 ? 0 : 3 + rank;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, m, m, PETSC_DETERMINE, PETSC_DETERMINE, 4, NULL, 2, NULL, &A[1]));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, m, mc, PETSC_DETERMINE, PETSC_DETERMINE, 2, NULL, 2, NULL, &P[1]));
  PetscCall(MatGetOwnershipRange(A[1], &rstart, &rend));
  PetscCall(MatGetSize(P[1], &N, &Nc));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    cols[4] = {i, i - 1, i + 1, 0}, pc[2] = {i * Nc / N, 0};
    PetscScalar v[4], pv[2];
    PetscReal   r;
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    cols[3] = PetscMin(N - 1, (PetscInt)(r * N));
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    pc[1] = PetscMin(Nc - 1, (PetscInt)(r * Nc));
    for (int c = 0; c < 4; c++) PetscCall(PetscRandomGetValue(rnd, &v[c]));
    for (int c = 0; c < 2; c++) PetscCall(PetscRandomGetValue(rnd, &pv[c]));
    v[0] += 4.0;
    for (int c = 0; c < 4; c++)
      if (cols[c] >= 0 && cols[c] < N) PetscCall(MatSetValues(A[1], 1, &i, 1, &cols[c], &v[c], ADD_VALUES));
    PetscCall(MatSetValues(P[1], 1, &i, 2, pc, pv, ADD_VALUES));
  }
  for (int k = 0; k < 2; k++) {
    Mat M = k ? P[1] : A[1];
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(MatConvert(A[1], MATGPUSTREAM, MAT_INITIAL_MATRIX, &A[0]));
  PetscCall(MatConvert(P[1], MATGPUSTREAM, MAT_INITIAL_MATRIX, &P[0]));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatMatMult(A[k], P[k], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &X[k]));
    PetscCall(MatPtAP(A[k], P[k], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y[k]));
  }
  PetscCall(Report("MatMatMult of gpustream A and a rectangular P, uneven layouts, initial", X[0], X[1], MATGPUSTREAM, rnd));
  PetscCall(Report("MatPtAP of gpustream A and a rectangular P, uneven layouts, initial", Y[0], Y[1], MATGPUSTREAM, rnd));
  for (int k = 0; k < 2; k++) { /* new values of A (on the device for the gpustream one) */
    PetscCall(MatScale(A[k], 2.0));
    PetscCall(MatShift(A[k], 1.0));
    PetscCall(MatMatMult(A[k], P[k], MAT_REUSE_MATRIX, PETSC_DEFAULT, &X[k]));
    PetscCall(MatPtAP(A[k], P[k], MAT_REUSE_MATRIX, PETSC_DEFAULT, &Y[k]));
  }
  PetscCall(Report("MatMatMult of gpustream A and a rectangular P, uneven layouts, reused after new values of A", X[0], X[1], MATGPUSTREAM, rnd));
  PetscCall(Report("MatPtAP of gpustream A and a rectangular P, uneven layouts, reused after new values of A", Y[0], Y[1], MATGPUSTREAM, rnd));
  for (int k = 0; k < 2; k++) { /* new values of P, its ghost rows among them */
    PetscCall(MatScale(P[k], 0.5));
    PetscCall(MatMatMult(A[k], P[k], MAT_REUSE_MATRIX, PETSC_DEFAULT, &X[k]));
    PetscCall(MatPtAP(A[k], P[k], MAT_REUSE_MATRIX, PETSC_DEFAULT, &Y[k]));
  }
  PetscCall(Report("MatMatMult of gpustream A and a rectangular P, uneven layouts, reused after new values of P", X[0], X[1], MATGPUSTREAM, rnd));
  PetscCall(Report("MatPtAP of gpustream A and a rectangular P, uneven layouts, reused after new values of P", Y[0], Y[1], MATGPUSTREAM, rnd));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&X[k]));
    PetscCall(MatDestroy(&Y[k]));
    PetscCall(MatDestroy(&A[k]));
    PetscCall(MatDestroy(&P[k]));
  }
  PetscFunctionReturn(0);
}

/* Whether the local CSR patterns of A and B are the same (on several processes those of the diagonal and off-diagonal
   blocks), and their ownership ranges */
static PetscErrorCode SamePattern(Mat A, Mat B, PetscBool *same)
{
  PetscMPIInt size;
  Mat         X[2][2] = {{A, NULL}, {B, NULL}};
  PetscInt    range[2][4];

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &range[0][0], &range[0][1]));
  PetscCall(MatGetOwnershipRangeColumn(A, &range[0][2], &range[0][3]));
  PetscCall(MatGetOwnershipRange(B, &range[1][0], &range[1][1]));
  PetscCall(MatGetOwnershipRangeColumn(B, &range[1][2], &range[1][3]));
  PetscCall(PetscArraycmp(range[0], range[1], 4, same));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1)
    for (int k = 0; k < 2; k++) PetscCall(MatMPIAIJGetSeqAIJ(k ? B : A, &X[k][0], &X[k][1], NULL));
  for (int b = 0; b < (size > 1 ? 2 : 1); b++) {
    const PetscInt *ia[2], *ja[2];
    PetscInt        m[2];
    PetscBool       done[2];
    for (int k = 0; k < 2; k++) PetscCall(MatGetRowIJ(X[k][b], 0, PETSC_FALSE, PETSC_FALSE, &m[k], &ia[k], &ja[k], &done[k]));
    if (!done[0] || !done[1] || m[0] != m[1])
      *same = PETSC_FALSE;
    else {
      PetscBool eq;
      PetscCall(PetscArraycmp(ia[0], ia[1], m[0] + 1, &eq));
      if (eq) PetscCall(PetscArraycmp(ja[0], ja[1], ia[0][m[0]], &eq));
      if (!eq) *same = PETSC_FALSE;
    }
    for (int k = 0; k < 2; k++)
      if (done[k]) PetscCall(MatRestoreRowIJ(X[k][b], 0, PETSC_FALSE, PETSC_FALSE, &m[k], &ia[k], &ja[k], &done[k]));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, same, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

/* PCGAMG's graph of a gpustream matrix (MatCreateGraph()), a plain AIJ matrix, and its square as PCGAMG's aggressive
   coarsening makes it (A B and A^T B of the graph with itself, the symbolic phase alone), against the same of the AIJ
   matrix: the pattern after the symbolic phase; then with the numeric phase, made and made again after new values */
static PetscErrorCode GraphSquare(PetscRandom rnd)
{
  const MatProductType types[] = {MATPRODUCT_AB, MATPRODUCT_AtB};
  const char          *names[] = {"AB", "AtB"};
  Mat                  A[2], G[2];

  PetscFunctionBeginUser;
  PetscCall(Pair(40, rnd, &A[0], &A[1]));
  for (int k = 0; k < 2; k++) {
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
    PetscCall(MatCreateGraph(A[k], PETSC_TRUE, PETSC_TRUE, -1.0, 0, NULL, &G[k]));
#else
    PetscCall(MatCreateGraph(A[k], PETSC_TRUE, PETSC_TRUE, -1.0, &G[k]));
#endif
  }
  PetscCall(Report("MatCreateGraph() of a gpustream matrix: an AIJ matrix", G[0], G[1], MATAIJ, rnd));
  for (int t = 0; t < 2; t++) {
    Mat       X[2];
    PetscBool same;
    char      what[128];
    for (int k = 0; k < 2; k++) {
      PetscCall(MatProductCreate(G[k], G[k], NULL, &X[k]));
      PetscCall(MatProductSetType(X[k], types[t]));
      PetscCall(MatProductSetFromOptions(X[k]));
      PetscCall(MatProductSymbolic(X[k]));
    }
    PetscCall(SamePattern(X[0], X[1], &same));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatProduct %s of the graph with itself, symbolic phase: %s\n", names[t], same ? "AIJ's pattern" : "NOT AIJ'S PATTERN"));
    for (int k = 0; k < 2; k++) PetscCall(MatProductNumeric(X[k]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatProduct %s of the graph with itself: an AIJ matrix", names[t]));
    PetscCall(Report(what, X[0], X[1], MATAIJ, rnd));
    for (int k = 0; k < 2; k++) {
      PetscCall(MatScale(G[k], 2.0));
      PetscCall(MatProductNumeric(X[k]));
    }
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatProduct %s of the graph with itself, reused after new values", names[t]));
    PetscCall(Report(what, X[0], X[1], MATAIJ, rnd));
    for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&X[k]));
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&A[k]));
    PetscCall(MatDestroy(&G[k]));
  }
  PetscFunctionReturn(0);
}

/* A block matrix with full 3x3 blocks between neighbouring nodes (its three rows of a node alike) and an aggregation-like
   P with full 3x2 blocks from each node to its aggregate and the next (rows of a node and of neighbouring nodes alike):
   the repeated patterns of GAMG's levels, which the device product's host pattern of A P skips. As gpustream (M[0],
   P[0]) and AIJ (M[1], P[1]); nodes on each process, the last one more */
static PetscErrorCode BlockPair(PetscInt nodes, PetscBool blocked, PetscRandom rnd, Mat M[2], Mat P[2])
{
  PetscMPIInt rank, size;
  PetscInt    rstart, rend, N, mloc, aggs;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  mloc = nodes + (rank == size - 1 ? 1 : 0);
  PetscCall(MPIU_Allreduce(&mloc, &N, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  aggs = (N + 2) / 3;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &M[k]));
    PetscCall(MatSetSizes(M[k], 3 * mloc, 3 * mloc, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(MatSetType(M[k], k ? MATAIJ : MATGPUSTREAM));
    if (blocked) PetscCall(MatSetBlockSize(M[k], 3));
    PetscCall(MatSeqAIJSetPreallocation(M[k], 9, NULL));
    PetscCall(MatMPIAIJSetPreallocation(M[k], 9, NULL, 6, NULL));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &P[k]));
    PetscCall(MatSetSizes(P[k], 3 * mloc, PETSC_DECIDE, PETSC_DETERMINE, 2 * aggs));
    PetscCall(MatSetType(P[k], k ? MATAIJ : MATGPUSTREAM));
    PetscCall(MatSeqAIJSetPreallocation(P[k], 4, NULL));
    PetscCall(MatMPIAIJSetPreallocation(P[k], 4, NULL, 4, NULL));
  }
  PetscCall(MatGetOwnershipRange(M[0], &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    const PetscInt v = r / 3;
    for (PetscInt w = v - 1; w <= v + 1; w++) {
      if (w < 0 || w >= N) continue;
      for (PetscInt c = 3 * w; c < 3 * w + 3; c++) {
        PetscScalar a;
        PetscCall(PetscRandomGetValue(rnd, &a));
        if (c == r) a += 12.0;
        for (int k = 0; k < 2; k++) PetscCall(MatSetValues(M[k], 1, &r, 1, &c, &a, INSERT_VALUES));
      }
    }
    for (PetscInt g = v / 3; g <= PetscMin(v / 3 + 1, aggs - 1); g++)
      for (PetscInt c = 2 * g; c < 2 * g + 2; c++) {
        PetscScalar a;
        PetscCall(PetscRandomGetValue(rnd, &a));
        for (int k = 0; k < 2; k++) PetscCall(MatSetValues(P[k], 1, &r, 1, &c, &a, INSERT_VALUES));
      }
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatAssemblyBegin(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(P[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(P[k], MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* MatPtAP() of the block pair: as AIJ's, made and reused after new values */
static PetscErrorCode BlockProducts(PetscRandom rnd)
{
  Mat M[2], P[2], X[2];

  PetscFunctionBeginUser;
  PetscCall(BlockPair(10, PETSC_FALSE, rnd, M, P));
  for (int k = 0; k < 2; k++) PetscCall(MatPtAP(M[k], P[k], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &X[k]));
  PetscCall(Report("MatPtAP of block gpustream matrices, initial: a gpustream matrix", X[0], X[1], MATGPUSTREAM, rnd));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatScale(M[k], 3.0));
    PetscCall(MatPtAP(M[k], P[k], MAT_REUSE_MATRIX, PETSC_DEFAULT, &X[k]));
  }
  PetscCall(Report("MatPtAP of block gpustream matrices, reused after new values", X[0], X[1], MATGPUSTREAM, rnd));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&M[k]));
    PetscCall(MatDestroy(&P[k]));
    PetscCall(MatDestroy(&X[k]));
  }
  PetscFunctionReturn(0);
}

/* Whether the graphs G[0] and G[1] are the same to the bit: pattern, values and the symmetry flags known */
static PetscErrorCode SameGraph(Mat G[2], PetscBool *same)
{
  PetscInt  rstart, rend;
  PetscBool set[2][2], flg[2][2];

  PetscFunctionBeginUser;
  PetscCall(SamePattern(G[0], G[1], same));
  PetscCall(MatGetOwnershipRange(G[0], &rstart, &rend));
  for (PetscInt r = rstart; r < rend && *same; r++) {
    const PetscScalar *v[2];
    const PetscInt    *c[2];
    PetscInt           n[2];
    for (int k = 0; k < 2; k++) PetscCall(MatGetRow(G[k], r, &n[k], &c[k], &v[k]));
    if (n[0] != n[1]) *same = PETSC_FALSE;
    for (PetscInt q = 0; q < n[0] && *same; q++)
      if (c[0][q] != c[1][q] || v[0][q] != v[1][q]) *same = PETSC_FALSE;
    for (int k = 0; k < 2; k++) PetscCall(MatRestoreRow(G[k], r, &n[k], &c[k], &v[k]));
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatIsSymmetricKnown(G[k], &set[k][0], &flg[k][0]));
    PetscCall(MatIsStructurallySymmetricKnown(G[k], &set[k][1], &flg[k][1]));
  }
  for (int f = 0; f < 2; f++)
    if (set[0][f] != set[1][f] || (set[0][f] && flg[0][f] != flg[1][f])) *same = PETSC_FALSE;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, same, 1, MPIU_BOOL, MPI_LAND, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* MatCreateGraph() of gpustream matrices against AIJ's, to the bit: a matrix neither symmetric nor known to be (its
   graph symmetrized on the union of the patterns), one known to be symmetric, full 3x3 blocks (collapsed, also by
   a strength index where PETSc's MatCreateGraph() takes one), sparse 3x3 blocks (AIJ's slower path), with and without symmetrizing and
   scaling, and with a filter */
static PetscErrorCode GraphCases(PetscRandom rnd)
{
  Mat A[2], S[2], M[2], P[2], B[2];
  struct {
    const char *what;
    Mat        *X;
    PetscBool   sym, scale;
    PetscReal   filter;
    PetscInt    nidx;
  } cases[] = {
      {"a matrix not symmetric, symmetrized and scaled", A, PETSC_TRUE, PETSC_TRUE, -1.0, 0},
      {"a matrix not symmetric, symmetrized", A, PETSC_TRUE, PETSC_FALSE, -1.0, 0},
      {"a matrix not symmetric, scaled", A, PETSC_FALSE, PETSC_TRUE, -1.0, 0},
      {"a matrix not symmetric, filtered", A, PETSC_TRUE, PETSC_TRUE, 0.05, 0},
      {"a matrix known to be symmetric, symmetrized and scaled", S, PETSC_TRUE, PETSC_TRUE, -1.0, 0},
      {"full 3x3 blocks, symmetrized and scaled", M, PETSC_TRUE, PETSC_TRUE, -1.0, 0},
      {"full 3x3 blocks, scaled", M, PETSC_FALSE, PETSC_TRUE, -1.0, 0},
      {"full 3x3 blocks, not symmetrized or scaled", M, PETSC_FALSE, PETSC_FALSE, -1.0, 0},
      {"full 3x3 blocks by a strength index where PETSc takes one, symmetrized and scaled", M, PETSC_TRUE, PETSC_TRUE, -1.0, 2},
      {"sparse 3x3 blocks, symmetrized and scaled", B, PETSC_TRUE, PETSC_TRUE, -1.0, 0},
  };
  PetscInt idx[2] = {0, 2};

  PetscFunctionBeginUser;
  PetscCall(Pair(40, rnd, &A[0], &A[1]));
  PetscCall(PairBS(39, 3, rnd, &B[0], &B[1]));
  PetscCall(BlockPair(12, PETSC_TRUE, rnd, M, P));
  for (int k = 0; k < 2; k++) { /* S = A + A^T */
    Mat T;
    PetscCall(MatTranspose(A[k], MAT_INITIAL_MATRIX, &T));
    PetscCall(MatDuplicate(A[k], MAT_COPY_VALUES, &S[k]));
    PetscCall(MatAXPY(S[k], 1.0, T, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatSetOption(S[k], MAT_SYMMETRIC, PETSC_TRUE));
    PetscCall(MatDestroy(&T));
  }
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    Mat       G[2];
    PetscBool same;
    for (int k = 0; k < 2; k++) {
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
      PetscCall(MatCreateGraph(cases[c].X[k], cases[c].sym, cases[c].scale, cases[c].filter, cases[c].nidx, cases[c].nidx ? idx : NULL, &G[k]));
#else
      PetscCall(MatCreateGraph(cases[c].X[k], cases[c].sym, cases[c].scale, cases[c].filter, &G[k]));
#endif
    }
    PetscCall(SameGraph(G, &same));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatCreateGraph() of %s: %s\n", cases[c].what, same ? "AIJ's graph to the bit" : "NOT AIJ'S GRAPH"));
    for (int k = 0; k < 2; k++) PetscCall(MatDestroy(&G[k]));
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&A[k]));
    PetscCall(MatDestroy(&S[k]));
    PetscCall(MatDestroy(&M[k]));
    PetscCall(MatDestroy(&P[k]));
    PetscCall(MatDestroy(&B[k]));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(Transposes(rnd));
  PetscCall(ToIS(rnd));
  PetscCall(Products(PETSC_FALSE, rnd));
  PetscCall(Products(PETSC_TRUE, rnd));
  PetscCall(BlockProducts(rnd));
  PetscCall(RectProducts(rnd));
  PetscCall(GraphSquare(rnd));
  PetscCall(GraphCases(rnd));
  for (PetscInt dof = 2; dof <= 3; dof++) {
    PetscCall(Galerkin(dof, KSPCG, rnd));
    PetscCall(Galerkin(dof, KSPGMRES, rnd));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -malloc_debug -malloc_dump

   # the products on the device, the block PtAP among them (not left to the host as one that does not fit)
   test:
      suffix: device_products
      args: -info :mat
      filter: grep -E "numeric phase|symbolic phase|of block|Graph on host threads" | sed -E -e "s/^\[[0-9]+\] //" -e "s/<mat[^>]*>/<mat>/" -e "s/: [0-9]+ x [0-9]+, [0-9]+ entries//" | sort | uniq -c

   # the products' host work on 3 threads (row ranges that split the block rows)
   test:
      suffix: host_threads
      args: -gpustream_host_threads 3 -malloc_dump
      output_file: output/mataij.out

   # the products' numeric phases on the host, as on several processes (on one process they run on the device)
   test:
      suffix: host_products
      args: -gpustream_device_products false -malloc_dump

   # on several processes A B and P^T A P are the plugin's too (their numeric phases on the device where A is resident)
   test:
      suffix: device_products_2
      nsize: 2
      args: -info :mat:~self
      filter: grep -a -o -E "(AB|PtAP) (symbolic|numeric) phase (of gpustream matrices )?on several processes(, on the device|, from A's host arrays)?" | sort | uniq -c

   # the transposes' new-pattern and symbolic cases are AIJ's on one process only
   test:
      suffix: 2
      nsize: 2
      args: -malloc_dump

   test:
      suffix: 3
      nsize: 3
      args: -malloc_dump
      output_file: output/mataij_2.out

   test:
      suffix: 4
      nsize: 4
      args: -malloc_dump
      output_file: output/mataij_2.out

   # the transposes' products back to their owners through MPI messages (else the shared path on one node)
   test:
      suffix: mpi_3
      nsize: 3
      args: -malloc_dump -mat_gpustream_halo_shared false
      output_file: output/mataij_2.out

TEST*/
