static char help[] = "Tests the streaming engine of MATGPUSTREAM: streamed MatMult and MatMultAdd bitwise equal to resident ones and\n\
equal to AIJ to rounding, for several plans (uneven subdivisions, one row per subdivision, a resident prefix, overlap off,\n\
three buffers, the automatic count), empty rows and a matrix with no rows; values and patterns changed after assembly;\n\
MatMatMult with 1, 4 and 16 columns against AIJ; pipecgfused, pipebcgsf and sgmresf on a streamed matrix against resident;\n\
bad options and budgets. On several processes the rows are split unevenly and the diagonal blocks stream.\n\
  -check_tiles <n> : check that the resident matrix and every plan report tiles of up to n entries\n";

#include <stdio.h>
#include <string.h>
#include <petscgpustream.h>
#include "vecdiff.h"

/* The same random values into the gpustream matrices S[0..ns) and the AIJ matrix B: rows of 0 to maxlen entries
   (some empty), the diagonal on odd rows */
static PetscErrorCode FillRandom(PetscInt ns, Mat S[], Mat B, PetscInt maxlen, PetscRandom rnd)
{
  PetscInt rstart, rend, m;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(B, &m, NULL));
  for (PetscInt s = 0; s <= ns; s++) {
    Mat A = s < ns ? S[s] : B;
    PetscCall(MatXAIJSetPreallocation(A, 1, NULL, NULL, NULL, NULL));
    PetscCall(MatSeqAIJSetPreallocation(A, maxlen + 1, NULL));
    PetscCall(MatMPIAIJSetPreallocation(A, maxlen + 1, NULL, maxlen, NULL));
  }
  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscReal   r;
    PetscInt    len, cols[64];
    PetscScalar v[64];
    PetscCall(PetscRandomGetValueReal(rnd, &r)); /* in [-1, 1) */
    len = PetscMin(maxlen, (PetscInt)((r + 1) / 2 * (maxlen + 1)));
    for (PetscInt k = 0; k < len; k++) {
      PetscCall(PetscRandomGetValueReal(rnd, &r));
      cols[k] = PetscMin(m - 1, (PetscInt)((r + 1) / 2 * m));
      PetscCall(PetscRandomGetValue(rnd, &v[k]));
    }
    if (i % 2) {
      cols[len] = i;
      PetscCall(PetscRandomGetValue(rnd, &v[len++]));
    }
    for (PetscInt s = 0; s <= ns; s++) PetscCall(MatSetValues(s < ns ? S[s] : B, 1, &i, len, cols, v, ADD_VALUES));
  }
  for (PetscInt s = 0; s <= ns; s++) {
    PetscCall(MatAssemblyBegin(s < ns ? S[s] : B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(s < ns ? S[s] : B, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* MatMult, MatMultAdd and MatMultAdd with z == y of S (streamed) against R (resident: bitwise) and B (AIJ: rounding) */
static PetscErrorCode CompareMult(const char *what, Mat S, Mat R, Mat B, PetscRandom rnd)
{
  Vec       x, z, ys, yr, yb;
  PetscBool eq[3];
  PetscReal d[3];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, &yb));
  PetscCall(VecDuplicate(yb, &ys));
  PetscCall(VecDuplicate(yb, &yr));
  PetscCall(VecDuplicate(yb, &z));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(MatMult(S, x, ys));
  PetscCall(MatMult(R, x, yr));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecEqual(ys, yr, &eq[0]));
  PetscCall(VecRelDiff(ys, yb, &d[0]));
  PetscCall(MatMultAdd(S, x, z, ys));
  PetscCall(MatMultAdd(R, x, z, yr));
  PetscCall(MatMultAdd(B, x, z, yb));
  PetscCall(VecEqual(ys, yr, &eq[1]));
  PetscCall(VecRelDiff(ys, yb, &d[1]));
  PetscCall(MatMultAdd(S, x, ys, ys));
  PetscCall(MatMultAdd(R, x, yr, yr));
  PetscCall(MatMultAdd(B, x, yb, yb));
  PetscCall(VecEqual(ys, yr, &eq[2]));
  PetscCall(VecRelDiff(ys, yb, &d[2]));
  if (eq[0] && eq[1] && eq[2] && d[0] < 1e-14 && d[1] < 1e-14 && d[2] < 1e-14)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: MatMult, MatMultAdd bitwise equal to resident, equal to AIJ\n", what));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: FAILED: bitwise %d %d %d, AIJ differences %g %g %g\n", what, eq[0], eq[1], eq[2], (double)d[0], (double)d[1], (double)d[2]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ys));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* C = A X for k random columns: S (streamed) bitwise equal to R (resident), both equal to B (AIJ) to rounding;
   then again reusing C after new values in X */
static PetscErrorCode CompareMatMult(Mat S, Mat R, Mat B, PetscInt k, PetscRandom rnd)
{
  Mat       X, Cs, Cr, Cb;
  PetscReal d[2], nb;
  PetscBool eq[2];
  PetscInt  n, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(B, NULL, &n));
  PetscCall(MatGetSize(B, NULL, &N));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, n, PETSC_DECIDE, N, k, NULL, &X));
  for (int pass = 0; pass < 2; pass++) {
    MatReuse reuse = pass ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX;
    PetscCall(MatSetRandom(X, rnd));
    PetscCall(MatMatMult(S, X, reuse, PETSC_DEFAULT, &Cs));
    PetscCall(MatMatMult(R, X, reuse, PETSC_DEFAULT, &Cr));
    PetscCall(MatMatMult(B, X, reuse, PETSC_DEFAULT, &Cb));
    PetscCall(MatEqual(Cs, Cr, &eq[pass]));
    PetscCall(MatNorm(Cb, NORM_INFINITY, &nb));
    PetscCall(MatAXPY(Cb, -1.0, Cs, SAME_NONZERO_PATTERN));
    PetscCall(MatNorm(Cb, NORM_INFINITY, &d[pass]));
    d[pass] /= PetscMax(nb, 1.0);
  }
  if (eq[0] && eq[1] && d[0] < 1e-14 && d[1] < 1e-14)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatMatMult k = %" PetscInt_FMT ", initial and reuse: streamed bitwise equal to resident, equal to AIJ\n", k));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatMatMult k = %" PetscInt_FMT ": FAILED: bitwise %d %d, AIJ differences %g %g\n", k, eq[0], eq[1], (double)d[0], (double)d[1]));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Cs));
  PetscCall(MatDestroy(&Cr));
  PetscCall(MatDestroy(&Cb));
  PetscFunctionReturn(0);
}

/* Whether -mat_view ::ascii_info of A (as the first process prints it) contains the text given */
static PetscErrorCode ViewHas(Mat A, const char *what, PetscBool *has)
{
  PetscViewer v;
  FILE       *f;
  char        text[16384];
  PetscMPIInt rank, found;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(text, sizeof(text)));
  f = fmemopen(text, sizeof(text) - 1, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_SYS, "fmemopen() failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PetscObjectComm((PetscObject)A), f, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  fclose(f);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  found = (PetscMPIInt)(!rank && strstr(text, what));
  PetscCallMPI(MPI_Bcast(&found, 1, MPI_INT, 0, PetscObjectComm((PetscObject)A)));
  *has = found ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -check_tiles n: the resident matrix R and every plan S[] report tiles of up to n entries in -mat_view ::ascii_info */
static PetscErrorCode CheckTiles(PetscInt tile, Mat R, PetscInt ns, Mat S[], const char *names[])
{
  char      what[64], missing[256] = "";
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(what, sizeof(what), "tiles of up to %" PetscInt_FMT " entries", tile));
  PetscCall(ViewHas(R, what, &has));
  if (!has) PetscCall(PetscStrlcat(missing, " resident", sizeof(missing)));
  for (PetscInt p = 0; p < ns; p++) {
    PetscCall(ViewHas(S[p], what, &has));
    if (has) continue;
    PetscCall(PetscStrlcat(missing, " ", sizeof(missing)));
    PetscCall(PetscStrlcat(missing, names[p], sizeof(missing)));
  }
  if (missing[0])
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  NO %s in:%s\n", what, missing));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s in the resident matrix and in every plan\n", what));
  PetscFunctionReturn(0);
}

/* A gpustream matrix reading the options prefix given: the plan under test */
static PetscErrorCode CreateGPUStream(PetscInt mloc, const char *prefix, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, mloc, mloc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetOptionsPrefix(*A, prefix));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  PetscCall(MatSetFromOptions(*A));
  PetscFunctionReturn(0);
}

/* Local rows: uneven, and with more than two processes the first owns none */
static PetscInt LocalRows(PetscInt m)
{
  const PetscMPIInt skip = PetscGlobalSize > 2, np = PetscGlobalSize - skip;
  return PetscGlobalRank < skip ? 0 : m / np + (PetscGlobalRank == PetscGlobalSize - 1 ? m % np : 0);
}

/* The plans of one size. Budgets are in bytes of this size's CSR and vectors, so every plan below streams. */
static PetscErrorCode TestSize(PetscInt m, PetscInt maxlen, PetscBool view, PetscInt tile, PetscRandom rnd)
{
  const char *plans[][2] = {
      {"uneven", "-s_mat_gpustream_mode stream -s_mat_gpustream_subdivisions 3 -s_mat_gpustream_max_device_bytes %g"},
      {"one row each", "-s_mat_gpustream_mode stream -s_mat_gpustream_subdivisions %d -s_mat_gpustream_max_device_bytes %g"},
      {"resident part", "-s_mat_gpustream_mode stream -s_mat_gpustream_subdivisions 8 -s_mat_gpustream_max_device_bytes %g"},
      {"overlap off", "-s_mat_gpustream_subdivisions 5 -s_mat_gpustream_overlap 0 -s_mat_gpustream_max_device_bytes %g"},
      {"3 buffers", "-s_mat_gpustream_mode stream -s_mat_gpustream_buffers 3 -s_mat_gpustream_subdivisions 6 -s_mat_gpustream_max_device_bytes %g"},
      {"automatic", "-s_mat_gpustream_max_device_bytes %g"},
  };
  PetscInt       mloc = LocalRows(m), nnz, rstart, rend;
  PetscLogDouble csr, vec, budget;
  MatInfo        info;
  Mat            S[6], R, B;

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "m = %" PetscInt_FMT ", up to %" PetscInt_FMT " entries per row\n", m, maxlen));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, mloc, mloc, m, m));
  PetscCall(MatSetType(B, MATAIJ));
  PetscCall(CreateGPUStream(mloc, "r_", &R));
  PetscCall(FillRandom(1, &R, B, maxlen, rnd));
  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  { /* budgets from this process' diagonal block */
    Mat         Ad = B;
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size > 1) PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, NULL, NULL));
    PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
  }
  nnz = (PetscInt)info.nz_used;
  csr = (PetscLogDouble)(mloc + 1) * sizeof(PetscInt) + (PetscLogDouble)nnz * (sizeof(PetscInt) + sizeof(PetscScalar));
  vec = (PetscLogDouble)(3 * mloc) * sizeof(PetscScalar);
  /* below the CSR (auto mode streams) but room for 3 buffers of the longest possible row (tiny matrices then stay
     resident) */
  budget = vec + PetscMax(0.9 * csr, 3.0 * (2 * sizeof(PetscInt) + (maxlen + 1) * (sizeof(PetscInt) + sizeof(PetscScalar))));
  for (int p = 0; p < 6; p++) {
    char opts[512];
    if (p == 1)
      PetscCall(PetscSNPrintf(opts, sizeof(opts), plans[p][1], (int)PetscMax(mloc, 1), budget));
    else
      PetscCall(PetscSNPrintf(opts, sizeof(opts), plans[p][1], budget));
    PetscCall(PetscOptionsInsertString(NULL, opts));
    PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &S[p]));
    PetscCall(MatSetOptionsPrefix(S[p], "s_"));
    PetscCall(MatSetFromOptions(S[p]));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_mode"));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_subdivisions"));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_max_device_bytes"));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_overlap"));
    PetscCall(PetscOptionsClearValue(NULL, "-s_mat_gpustream_buffers"));
  }
  for (int p = 0; p < 6; p++) {
    PetscCall(CompareMult(plans[p][0], S[p], R, B, rnd));
    if (view && p < 5) {
      PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
      PetscCall(MatView(S[p], PETSC_VIEWER_STDOUT_WORLD));
      PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
    }
  }
  if (tile > 0) {
    const char *names[6];
    for (int p = 0; p < 6; p++) names[p] = plans[p][0];
    PetscCall(CheckTiles(tile, R, 6, S, names));
  }

  if (view) { /* a duplicate keeps the options: the same plan */
    Mat D;
    PetscCall(MatDuplicate(S[2], MAT_COPY_VALUES, &D));
    PetscCall(CompareMult("MatDuplicate", D, R, B, rnd));
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(D, PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(MatDestroy(&D));
  }

  /* new values, same pattern: the pinned copy and the resident prefix follow */
  for (int p = 0; p < 6; p++) PetscCall(MatScale(S[p], -2.0));
  PetscCall(MatScale(R, -2.0));
  PetscCall(MatScale(B, -2.0));
  PetscCall(CompareMult("after MatScale", S[2], R, B, rnd));
  PetscCall(MatSetOption(S[0], MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (rend > rstart) { /* one entry replaced by MatSetValues, then assembled */
    PetscInt        ncols, row = rstart + (rend - rstart) / 2, col;
    const PetscInt *cols;
    PetscScalar     v = 7.5;
    PetscCall(MatGetRow(B, row, &ncols, &cols, NULL));
    col = ncols ? cols[0] : row;
    PetscCall(MatRestoreRow(B, row, &ncols, &cols, NULL));
    PetscCall(MatSetValues(S[0], 1, &row, 1, &col, &v, INSERT_VALUES));
    PetscCall(MatSetValues(R, 1, &row, 1, &col, &v, INSERT_VALUES));
    PetscCall(MatSetValues(B, 1, &row, 1, &col, &v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(S[0], MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(S[0], MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(CompareMult("new values", S[0], R, B, rnd));
  if (rend > rstart) { /* a new nonzero: a new pattern, a new plan */
    PetscInt    row = rstart, col = (rstart + 1) % m;
    PetscScalar v = 1.25;
    PetscCall(MatSetValues(S[0], 1, &row, 1, &col, &v, ADD_VALUES));
    PetscCall(MatSetValues(R, 1, &row, 1, &col, &v, ADD_VALUES));
    PetscCall(MatSetValues(B, 1, &row, 1, &col, &v, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(S[0], MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(S[0], MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(CompareMult("new nonzero", S[0], R, B, rnd));

  for (PetscInt k = 1; k <= 16; k *= 4) PetscCall(CompareMatMult(S[0], R, B, k, rnd));
  for (int p = 0; p < 6; p++) PetscCall(MatDestroy(&S[p]));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* 2D Laplacian on an n x n grid, streamed or resident: pipecgfused, pipebcgsf and sgmresf give the same iterations */
static PetscErrorCode TestSolvers(PetscInt n)
{
  const char *types[] = {KSPPIPECGFUSED, KSPPIPEBCGSF, KSPSGMRESF};
  PetscInt    its[2][3];
  PetscReal   rnorm[2][3];
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int s = 0; s < 2; s++) {
    Mat      A;
    Vec      x, b;
    PetscInt rstart, rend;
    PetscCall(CreateGPUStream(PETSC_DECIDE, "a_", &A));
    PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n));
    PetscCall(MatSetUp(A));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++) {
      const PetscInt r = i / n, c = i % n;
      PetscCall(MatSetValue(A, i, i, 4.0, INSERT_VALUES));
      if (r > 0) PetscCall(MatSetValue(A, i, i - n, -1.0, INSERT_VALUES));
      if (r < n - 1) PetscCall(MatSetValue(A, i, i + n, -1.0, INSERT_VALUES));
      if (c > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
      if (c < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    if (s) { /* a budget (on each process) that holds half the CSR and the vectors: options given after assembly */
      char    opts[256];
      MatInfo info;
      PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
      PetscCall(PetscSNPrintf(opts, sizeof(opts), "-a_mat_gpustream_mode stream -a_mat_gpustream_subdivisions 8 -a_mat_gpustream_max_device_bytes %g",
                              (double)(3 * (rend - rstart) * sizeof(PetscScalar) + 0.5 * (info.nz_used * (sizeof(PetscInt) + sizeof(PetscScalar)) + (rend - rstart) * sizeof(PetscInt)))));
      PetscCall(PetscOptionsInsertString(NULL, opts));
      PetscCall(MatSetFromOptions(A));
    }
    PetscCall(PetscOptionsClearValue(NULL, "-a_mat_gpustream_mode"));
    PetscCall(PetscOptionsClearValue(NULL, "-a_mat_gpustream_subdivisions"));
    PetscCall(PetscOptionsClearValue(NULL, "-a_mat_gpustream_max_device_bytes"));
    PetscCall(MatCreateVecs(A, &x, &b));
    for (int t = 0; t < 3; t++) {
      KSP ksp;
      PC  pc;
      PetscCall(VecSet(b, 1.0));
      PetscCall(VecSet(x, 0.0));
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPSetType(ksp, types[t]));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCJACOBI));
      PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPGetIterationNumber(ksp, &its[s][t]));
      PetscCall(KSPGetResidualNorm(ksp, &rnorm[s][t]));
      PetscCall(KSPDestroy(&ksp));
    }
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  for (int t = 0; t < 3; t++) {
    /* on several processes a resident pipebcgsf sums its SpMVs' rows in two kernels (interior, off-diagonal), a
       streamed one in one pass: BiCGStab carries that rounding to 5e-5 of the final residual */
    const PetscReal tol = (size > 1 && t == 1) ? 1e-3 : 1e-6;
    if (its[0][t] == its[1][t] && PetscAbsReal(rnorm[0][t] - rnorm[1][t]) <= tol * rnorm[0][t])
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: streamed and resident take the same %s iterations\n", types[t], its[0][t] > 10 ? "(more than 10)" : "(few)"));
    else
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: FAILED: resident %" PetscInt_FMT " iterations (%g), streamed %" PetscInt_FMT " (%g)\n", types[t], its[0][t], (double)rnorm[0][t], its[1][t], (double)rnorm[1][t]));
  }
  PetscFunctionReturn(0);
}

/* Bad options and budgets (each stops the program with its error) */
static PetscErrorCode BadInput(void)
{
  Mat A;
  Vec x, y;

  PetscFunctionBeginUser;
  PetscCall(CreateGPUStream(10, "", &A));
  PetscCall(MatSetUp(A));
  for (PetscInt i = 10 * PetscGlobalRank; i < 10 * (PetscGlobalRank + 1); i++) PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;
  PetscBool   view = PETSC_FALSE, bad = PETSC_FALSE, solvers = PETSC_FALSE;
  PetscInt    tile = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bad", &bad, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-solvers", &solvers, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-check_tiles", &tile, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  if (bad)
    PetscCall(BadInput());
  else if (solvers)
    PetscCall(TestSolvers(20));
  else if (view)
    PetscCall(TestSize(50, 6, PETSC_TRUE, tile, rnd));
  else {
    PetscCall(TestSize(0, 3, PETSC_FALSE, tile, rnd));
    PetscCall(TestSize(1, 3, PETSC_FALSE, tile, rnd));
    PetscCall(TestSize(17, 4, PETSC_FALSE, tile, rnd));
    PetscCall(TestSize(1000, 30, PETSC_FALSE, tile, rnd));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: ops

   test:
      suffix: ops_2
      nsize: 2
      output_file: output/matstream_ops.out

   test:
      suffix: ops_3
      nsize: 3
      output_file: output/matstream_ops.out

   test:
      suffix: ops_4
      nsize: 4
      output_file: output/matstream_ops.out

   # tiles of 4 entries, rows longer than that in pieces: streamed still bitwise equal to resident (the resident
   # matrix reads the prefix r_, the plans s_; -check_tiles checks that every one of them reports the tiles)
   test:
      suffix: ops_tiles
      args: -r_mat_gpustream_tile_size 4 -s_mat_gpustream_tile_size 4 -check_tiles 4

   test:
      suffix: ops_tiles_2
      nsize: 2
      args: -r_mat_gpustream_tile_size 4 -s_mat_gpustream_tile_size 4 -check_tiles 4
      output_file: output/matstream_ops_tiles.out

   test:
      suffix: view
      args: -view
      filter: grep -v "model:" | sed -E -e "s/on [A-Za-z]+:/on DEVICE:/" -e "s/, in pinned host memory [(]-mat_gpustream_pinned_vecs[)]//" -e "s/MatCreateVecs[(][)] gives [a-z]+ vectors [(]-mat_gpustream_vec_type auto[)](; device arrays are read and written in place)?/MatCreateVecs() gives the vectors of this PETSc (-mat_gpustream_vec_type auto)/"

   # the halo's line depends on the backend and the MPI: the tests below check it with the choice given
   test:
      suffix: view_2
      nsize: 2
      args: -view
      filter: grep -v "model:\|halo messages\|halo values" | sed -E -e "s/on [A-Za-z]+:/on DEVICE:/" -e "s/, in pinned host memory [(]-mat_gpustream_pinned_vecs[)]//" -e "s/MatCreateVecs[(][)] gives [a-z]+ vectors [(]-mat_gpustream_vec_type auto[)](; device arrays are read and written in place)?/MatCreateVecs() gives the vectors of this PETSc (-mat_gpustream_vec_type auto)/"

   test:
      suffix: view_staged_2
      nsize: 2
      args: -view -s_mat_gpustream_halo_shared false -s_mat_gpustream_device_mpi false
      filter: grep -o "halo messages.*" | sort -u

   test:
      suffix: view_device_2
      nsize: 2
      args: -view -s_mat_gpustream_halo_shared false -s_mat_gpustream_device_mpi true
      filter: grep -o "halo messages.*" | sort -u

   test:
      suffix: view_shared_2
      nsize: 2
      args: -view -s_mat_gpustream_halo_shared true
      filter: grep -o "halo values.*" | sed -E "s/through (CUDA IPC, device to device|an MPI shared-memory window)/through SHARED MEMORY/" | sort -u

   # auto: the shared path on one node (under MPS where the processes share a GPU; without it, MPI: scripts/gpu-run.sh
   # runs this test once before it starts MPS and expects that)
   test:
      suffix: view_auto_2
      nsize: 2
      args: -view
      filter: grep -o "halo .*" | sed -E "s/through (CUDA IPC, device to device|an MPI shared-memory window)/through SHARED MEMORY/" | sort -u

   # MatMult, MatMultAdd and MatMatMult, resident and streamed, with each choice against MPIAIJ
   test:
      suffix: ops_staged_2
      nsize: 2
      args: -r_mat_gpustream_halo_shared false -s_mat_gpustream_halo_shared false -r_mat_gpustream_device_mpi false -s_mat_gpustream_device_mpi false
      output_file: output/matstream_ops.out

   test:
      suffix: ops_staged_4
      nsize: 4
      args: -r_mat_gpustream_halo_shared false -s_mat_gpustream_halo_shared false -r_mat_gpustream_device_mpi false -s_mat_gpustream_device_mpi false
      output_file: output/matstream_ops.out

   test:
      suffix: ops_device_3
      nsize: 3
      args: -r_mat_gpustream_halo_shared false -s_mat_gpustream_halo_shared false -r_mat_gpustream_device_mpi true -s_mat_gpustream_device_mpi true
      output_file: output/matstream_ops.out

   test:
      suffix: ops_shared_3
      nsize: 3
      args: -r_mat_gpustream_halo_shared true -s_mat_gpustream_halo_shared true
      output_file: output/matstream_ops.out

   test:
      suffix: solvers
      args: -solvers

   test:
      suffix: solvers_2
      nsize: 2
      args: -solvers
      output_file: output/matstream_solvers.out

   test:
      suffix: budget_too_small
      args: -bad -mat_gpustream_mode stream -mat_gpustream_max_device_bytes 250
      error: 1
      filter: grep -o "is too small: even with one row per subdivision, 2 buffers of row 0 (20. bytes) and 240. bytes of vectors do not fit; use a larger -mat_gpustream_max_device_bytes" | sort -u

   test:
      suffix: subdivisions_too_few
      args: -bad -mat_gpustream_mode stream -mat_gpustream_max_device_bytes 300 -mat_gpustream_subdivisions 2
      error: 1
      filter: grep -o "is too small for 2 subdivisions.*use a larger -mat_gpustream_max_device_bytes or more -mat_gpustream_subdivisions" | sort -u

   test:
      suffix: resident_over_budget
      args: -bad -mat_gpustream_mode resident -mat_gpustream_max_device_bytes 300
      error: 1
      filter: grep -o "mat_gpustream_mode resident: the matrix needs 404. bytes" | sort -u

   test:
      suffix: bad_budget
      args: -bad -mat_gpustream_max_device_bytes -5
      error: 1
      filter: grep -o "mat_gpustream_max_device_bytes -5. must be positive" | sort -u

   test:
      suffix: bad_buffers
      args: -bad -mat_gpustream_buffers 1
      error: 1
      filter: grep -o "mat_gpustream_buffers 1 must be at least 2" | sort -u

   test:
      suffix: bad_subdivisions
      args: -bad -mat_gpustream_subdivisions 0
      error: 1
      filter: grep -o "mat_gpustream_subdivisions 0 must be at least 1" | sort -u

   test:
      suffix: bad_mode
      args: -bad -mat_gpustream_mode sometimes
      error: 1
      filter: grep -o "mat_gpustream_mode sometimes: give one of auto, resident, stream" | sort -u

TEST*/
