static char help[] = "Tests MATGPUSTREAM against MATAIJ holding the same random matrix: MatMult, MatMultAdd, MatGetDiagonal,\n\
MatDuplicate, MatConvert both ways (initial, in place, reuse), value and pattern changes after assembly, MatView;\n\
with -more_ops the transposed products, norms, MatGetInfo, shifts, diagonal scaling and setting, MatAXPY, MatCopy,\n\
MatZeroRows(Columns), MatZeroEntries and a binary MatView/MatLoad round trip.\n\
On several processes the rows are split unevenly, and with more than two the first process owns none.\n";

#include <petscgpustream.h>
#include "vecdiff.h"
#include <petsc/private/matimpl.h>

/* Final assembly of the matrix under test and of its AIJ twin */
static PetscErrorCode AssembleBoth(Mat A, Mat B)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Same random values into A and B: rows of 0 to maxlen entries anywhere in the matrix (some rows empty), plus the
   diagonal on odd rows */
static PetscErrorCode FillRandom(Mat A, Mat B, PetscInt m, PetscInt maxlen, PetscRandom rnd)
{
  PetscInt *dnnz, *onnz, rstart, rend, mloc;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &mloc, NULL));
  PetscCall(PetscMalloc2(mloc + 1, &dnnz, mloc + 1, &onnz));
  for (PetscInt i = 0; i < mloc; i++) {
    dnnz[i] = PetscMin(mloc, maxlen + 1);
    onnz[i] = PetscMin(m - mloc, maxlen);
  }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnnz, onnz, NULL, NULL));
  PetscCall(MatXAIJSetPreallocation(B, 1, dnnz, onnz, NULL, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscReal   r;
    PetscInt    len;
    PetscScalar v;
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    len = (PetscInt)(r * (maxlen + 1));
    for (PetscInt k = 0; k < len; k++) {
      PetscInt j;
      PetscCall(PetscRandomGetValueReal(rnd, &r));
      j = PetscMin(m - 1, (PetscInt)(r * m));
      PetscCall(PetscRandomGetValue(rnd, &v));
      PetscCall(MatSetValues(A, 1, &i, 1, &j, &v, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &i, 1, &j, &v, ADD_VALUES));
    }
    if (i % 2) {
      PetscCall(PetscRandomGetValue(rnd, &v));
      PetscCall(MatSetValues(A, 1, &i, 1, &i, &v, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &i, 1, &i, &v, ADD_VALUES));
    }
  }
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(AssembleBoth(A, B));
  PetscFunctionReturn(0);
}

/* A (under test) against B (AIJ) on random vectors; prints one line saying what agreed */
static PetscErrorCode Compare(const char *what, MatType type, const char *label, Mat A, Mat B, PetscRandom rnd)
{
  Vec       x, z, ya, yb;
  PetscReal d[4];
  PetscBool same;
  MatType   atype;

  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &atype));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, type, &same));
  PetscCall(MatCreateVecs(B, &x, &yb));
  PetscCall(VecDuplicate(yb, &ya));
  PetscCall(VecDuplicate(yb, &z));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecRelDiff(ya, yb, &d[0]));
  PetscCall(MatMultAdd(A, x, z, ya));
  PetscCall(MatMultAdd(B, x, z, yb));
  PetscCall(VecRelDiff(ya, yb, &d[1]));
  PetscCall(MatMultAdd(A, x, ya, ya)); /* z == y */
  PetscCall(MatMultAdd(B, x, yb, yb));
  PetscCall(VecRelDiff(ya, yb, &d[2]));
  PetscCall(MatGetDiagonal(A, ya));
  PetscCall(MatGetDiagonal(B, yb));
  PetscCall(VecRelDiff(ya, yb, &d[3]));
  if (same && d[0] < 1e-14 && d[1] < 1e-14 && d[2] < 1e-14 && d[3] == 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s, MatMult, MatMultAdd, MatGetDiagonal agree with AIJ\n", what, label));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: FAILED: type %s (expected %s), differences %g %g %g %g\n", what, atype, type, (double)d[0], (double)d[1], (double)d[2], (double)d[3]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestSize(PetscInt m, PetscInt maxlen, PetscRandom rnd)
{
  Mat         A, B, C;
  char        what[64];
  PetscInt    row, col = -1, newcol = 0, mloc, rstart, rend;
  PetscReal   nrm;
  Vec         x, y;
  PetscMPIInt size, rank;
  MatType     aij;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  aij = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  { /* uneven rows: with more than two processes the first owns none, the last takes the remainder */
    const PetscMPIInt skip = size > 2, np = size - skip;
    mloc = (rank < skip) ? 0 : m / np + (rank == size - 1 ? m % np : 0);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "m = %" PetscInt_FMT ", up to %" PetscInt_FMT " entries per row\n", m, maxlen));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, mloc, mloc, m, m));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatSetFromOptions(A)); /* -mat_gpustream_device_mpi */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, mloc, mloc, m, m));
  PetscCall(MatSetType(B, MATAIJ));
  PetscCall(FillRandom(A, B, m, maxlen, rnd));
  PetscCall(Compare("  assembled", MATGPUSTREAM, "gpustream", A, B, rnd));

  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(Compare("  MatScale", MATGPUSTREAM, "gpustream", A, B, rnd));

  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  for (row = rstart; row < rend; row++) { /* a local row with an entry (col) and a column outside the pattern (newcol) */
    PetscInt        ncols;
    const PetscInt *cols;
    PetscCall(MatGetRow(B, row, &ncols, &cols, NULL));
    col = ncols ? cols[0] : -1;
    for (newcol = 0; newcol < m && ncols; newcol++) {
      PetscBool found = PETSC_FALSE;
      for (PetscInt k = 0; k < ncols; k++) found = (PetscBool)(found || cols[k] == newcol);
      if (!found) break;
    }
    PetscCall(MatRestoreRow(B, row, &ncols, &cols, NULL));
    if (col >= 0 && newcol < m) break;
  }
  if (m > 1) { /* every process assembles; those that found a row change it */
    PetscScalar v = 2.5;
    if (row < rend) {
      PetscCall(MatSetValues(A, 1, &row, 1, &col, &v, INSERT_VALUES));
      PetscCall(MatSetValues(B, 1, &row, 1, &col, &v, INSERT_VALUES));
    }
    PetscCall(AssembleBoth(A, B));
    PetscCall(Compare("  new values", MATGPUSTREAM, "gpustream", A, B, rnd));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    if (row < rend) {
      PetscCall(MatSetValues(A, 1, &row, 1, &newcol, &v, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &row, 1, &newcol, &v, ADD_VALUES));
    }
    PetscCall(AssembleBoth(A, B));
    PetscCall(Compare("  new nonzero", MATGPUSTREAM, "gpustream", A, B, rnd));
  }

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(Compare("  MatDuplicate copy values", MATGPUSTREAM, "gpustream", C, B, rnd));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &C));
  PetscCall(MatCreateVecs(C, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(C, x, y));
  PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatDuplicate without values: |C 1| = %g\n", (double)nrm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&C));

  PetscCall(MatConvert(A, aij, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert to seqaij or mpiaij", aij, "aij", C, B, rnd));
  PetscCall(MatDestroy(&C));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert to aij", aij, "aij", C, B, rnd));
  PetscCall(MatConvert(C, MATGPUSTREAM, MAT_INPLACE_MATRIX, &C));
  PetscCall(Compare("  MatConvert in place from aij", MATGPUSTREAM, "gpustream", C, B, rnd));
  PetscCall(MatConvert(C, aij, MAT_INPLACE_MATRIX, &C));
  PetscCall(Compare("  MatConvert in place to aij", aij, "aij", C, B, rnd));
  PetscCall(MatDestroy(&C));
  PetscCall(MatConvert(B, MATGPUSTREAM, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert from aij", MATGPUSTREAM, "gpustream", C, B, rnd));
  PetscCall(MatScale(B, -0.5));
  PetscCall(MatConvert(B, MATGPUSTREAM, MAT_REUSE_MATRIX, &C));
  PetscCall(Compare("  MatConvert reuse", MATGPUSTREAM, "gpustream", C, B, rnd));
  PetscCall(MatDestroy(&C));

  PetscCall(PetscSNPrintf(what, sizeof(what), "  after conversions"));
  PetscCall(MatScale(A, -0.5));
  PetscCall(Compare(what, MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* Relative difference of two numbers, 0 when both are 0 */
static PetscReal RelDiff(PetscReal a, PetscReal b)
{
  return a == b ? 0 : PetscAbsReal(a - b) / PetscMax(PetscAbsReal(a), PetscAbsReal(b));
}

/* Prints whether the transposed products of A and B agree */
static PetscErrorCode CompareTranspose(const char *what, Mat A, Mat B, PetscRandom rnd)
{
  Vec       x, z, ya, yb;
  PetscReal d[2];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &ya, &x));
  PetscCall(VecDuplicate(ya, &yb));
  PetscCall(VecDuplicate(ya, &z));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(MatMultTranspose(A, x, ya));
  PetscCall(MatMultTranspose(B, x, yb));
  PetscCall(VecRelDiff(ya, yb, &d[0]));
  PetscCall(MatMultTransposeAdd(A, x, z, ya));
  PetscCall(MatMultTransposeAdd(B, x, z, yb));
  PetscCall(VecRelDiff(ya, yb, &d[1]));
  if (d[0] < 1e-14 && d[1] < 1e-14)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: MatMultTranspose, MatMultTransposeAdd agree with AIJ\n", what));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: FAILED: differences %g %g\n", what, (double)d[0], (double)d[1]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* The rest of the operations, each on A (gpustream) and B (AIJ), then compared: transposed products,
   norms, MatGetInfo, MatShift, MatDiagonalScale, MatDiagonalSet, MatAXPY, MatCopy, MatZeroRows, MatZeroRowsColumns,
   MatZeroEntries, and a binary MatView/MatLoad round trip into a gpustream matrix */
static PetscErrorCode TestMoreOps(PetscInt m, PetscInt maxlen, PetscRandom rnd)
{
  Mat         A, B, CA, CB;
  Vec         l, r, xa, xb, ba, bb;
  PetscInt    rstart, rend, nz = 0, rows[3], mloc = PETSC_DECIDE;
  PetscReal   na, nb, d[2];
  NormType    types[3] = {NORM_1, NORM_FROBENIUS, NORM_INFINITY};
  MatInfo     ia, ib;
  PetscMPIInt size, rank;
  PetscViewer v;
  char        file[64];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "m = %" PetscInt_FMT ", up to %" PetscInt_FMT " entries per row\n", m, maxlen));
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &mloc, &m));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, mloc, mloc, m, m));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, mloc, mloc, m, m));
  PetscCall(MatSetType(B, MATAIJ));
  PetscCall(FillRandom(A, B, m, maxlen, rnd));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* MatDiagonalSet may add diagonal entries */
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(CompareTranspose("  transposed", A, B, rnd));
  for (int k = 0; k < 3; k++) {
    PetscCall(MatNorm(A, types[k], &na));
    PetscCall(MatNorm(B, types[k], &nb));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatNorm %s: %s\n", NormTypes[types[k]], RelDiff(na, nb) < 1e-14 ? "agrees with AIJ" : "FAILED"));
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ia));
  PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &ib));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatGetInfo: nonzeros %s\n", ia.nz_used == ib.nz_used ? "agree with AIJ" : "FAILED"));

  PetscCall(MatShift(A, 1.5));
  PetscCall(MatShift(B, 1.5));
  PetscCall(Compare("  MatShift", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatCreateVecs(B, &r, &l));
  PetscCall(VecSetRandom(l, rnd));
  PetscCall(VecSetRandom(r, rnd));
  PetscCall(MatDiagonalScale(A, l, r));
  PetscCall(MatDiagonalScale(B, l, r));
  PetscCall(Compare("  MatDiagonalScale", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatDiagonalSet(A, l, ADD_VALUES));
  PetscCall(MatDiagonalSet(B, l, ADD_VALUES));
  PetscCall(Compare("  MatDiagonalSet add", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatDiagonalSet(A, r, INSERT_VALUES));
  PetscCall(MatDiagonalSet(B, r, INSERT_VALUES));
  PetscCall(Compare("  MatDiagonalSet insert", MATGPUSTREAM, "gpustream", A, B, rnd));

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &CA));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &CB));
  PetscCall(MatAXPY(A, -2.0, CA, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, -2.0, CB, SAME_NONZERO_PATTERN));
  PetscCall(Compare("  MatAXPY", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatCopy(A, CA, SAME_NONZERO_PATTERN));
  PetscCall(Compare("  MatCopy", MATGPUSTREAM, "gpustream", CA, B, rnd));
  PetscCall(MatDestroy(&CA));
  PetscCall(MatDestroy(&CB));

  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend && nz < 3; i += 5) rows[nz++] = i; /* a few local rows, none on some processes */
  PetscCall(MatCreateVecs(B, &xa, &ba));
  PetscCall(VecDuplicate(xa, &xb));
  PetscCall(VecDuplicate(ba, &bb));
  PetscCall(VecSetRandom(xa, rnd));
  PetscCall(VecCopy(xa, xb));
  PetscCall(VecSetRandom(ba, rnd));
  PetscCall(VecCopy(ba, bb));
  PetscCall(MatZeroRows(A, nz, rows, 2.0, xa, ba));
  PetscCall(MatZeroRows(B, nz, rows, 2.0, xb, bb));
  PetscCall(VecRelDiff(ba, bb, &d[0]));
  PetscCall(Compare("  MatZeroRows", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(MatZeroRowsColumns(A, nz, rows, 3.0, xa, ba));
  PetscCall(MatZeroRowsColumns(B, nz, rows, 3.0, xb, bb));
  PetscCall(VecRelDiff(ba, bb, &d[1]));
  PetscCall(Compare("  MatZeroRowsColumns", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  right-hand sides of MatZeroRows, MatZeroRowsColumns: %s\n", d[0] < 1e-14 && d[1] < 1e-14 ? "agree with AIJ" : "FAILED"));

  PetscCall(PetscSNPrintf(file, sizeof(file), "matgpustream-%d-%" PetscInt_FMT ".bin", (int)size, m));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &CA));
  PetscCall(MatSetType(CA, MATGPUSTREAM));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &v));
  PetscCall(MatLoad(CA, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(Compare("  MatView binary, MatLoad", MATGPUSTREAM, "gpustream", CA, B, rnd));
  PetscCall(MatDestroy(&CA));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (!rank) {
    (void)remove(file);
    PetscCall(PetscStrlcat(file, ".info", sizeof(file)));
    (void)remove(file);
  }

  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(B));
  PetscCall(Compare("  MatZeroEntries", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xb));
  PetscCall(VecDestroy(&ba));
  PetscCall(VecDestroy(&bb));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* A matrix of bs x bs blocks (MatSetValuesBlocked(): up to 6 random blocks a block row and the diagonal one), against
   AIJ: the device storage takes block column indices (unless the options say otherwise), and follows new values, a
   shift, and an entry that breaks the block pattern (then CSR). On several processes the block rows are split
   unevenly; with more than two the first process owns none. broken: one entry outside the blocks from the start. */
static PetscErrorCode TestBlocks(PetscInt nb, PetscInt bs, PetscBool broken, PetscRandom rnd)
{
  Mat               A, B;
  PetscInt          mloc, rstart, rend;
  PetscMPIInt       size, rank;
  PetscViewer       sv;
  PetscScalar      *v;
  const PetscScalar two = 2.0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  {
    const PetscMPIInt skip = size > 2, np = size - skip;
    mloc = bs * ((rank < skip) ? 0 : nb / np + (rank == size - 1 ? nb % np : 0));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " block rows of %" PetscInt_FMT " x %" PetscInt_FMT " blocks\n", nb, bs, bs));
  PetscCall(PetscMalloc1(bs * bs, &v));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(A, mloc, mloc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetSizes(B, mloc, mloc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetBlockSize(A, bs));
  PetscCall(MatSetBlockSize(B, bs));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSetType(B, MATAIJ));
  PetscCall(MatXAIJSetPreallocation(A, bs, NULL, NULL, NULL, NULL));
  PetscCall(MatXAIJSetPreallocation(B, bs, NULL, NULL, NULL, NULL));
  PetscCall(MatSeqAIJSetPreallocation(A, 7 * bs + 1, NULL));
  PetscCall(MatSeqAIJSetPreallocation(B, 7 * bs + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 7 * bs + 1, NULL, 6 * bs + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(B, 7 * bs + 1, NULL, 6 * bs + 1, NULL));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt br = rstart / bs; br < rend / bs; br++) {
    PetscReal r;
    PetscCall(PetscRandomGetValueReal(rnd, &r));
    for (PetscInt k = 0, len = 1 + (PetscInt)(PetscAbsReal(r) * 6); k < len; k++) {
      PetscInt bc = br;
      if (k) {
        PetscCall(PetscRandomGetValueReal(rnd, &r));
        bc = PetscMin(nb - 1, (PetscInt)(PetscAbsReal(r) * nb));
      }
      for (PetscInt q = 0; q < bs * bs; q++) PetscCall(PetscRandomGetValue(rnd, &v[q]));
      PetscCall(MatSetValuesBlocked(A, 1, &br, 1, &bc, v, ADD_VALUES));
      PetscCall(MatSetValuesBlocked(B, 1, &br, 1, &bc, v, ADD_VALUES));
    }
  }
  if (broken && rend > rstart) { /* an entry of its own, outside any block */
    const PetscInt c = (rstart + bs) % (bs * nb);
    PetscCall(MatSetValues(A, 1, &rstart, 1, &c, &two, ADD_VALUES));
    PetscCall(MatSetValues(B, 1, &rstart, 1, &c, &two, ADD_VALUES));
  }
  PetscCall(AssembleBoth(A, B));
  PetscCall(Compare("  assembled", MATGPUSTREAM, "gpustream", A, B, rnd));
  PetscCall(PetscViewerASCIIGetStdout(PETSC_COMM_WORLD, &sv));
  PetscCall(PetscViewerPushFormat(sv, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, sv));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(MatShift(A, 1.5));
  PetscCall(MatShift(B, 1.5));
  PetscCall(Compare("  MatScale and MatShift", MATGPUSTREAM, "gpustream", A, B, rnd));
  if (rend > rstart) { /* an entry in a block of the diagonal block not yet there: the pattern changes to CSR's */
    PetscInt        ncols, c = rstart;
    const PetscInt *cols;
    PetscBool       found = PETSC_TRUE;
    PetscCall(MatGetRow(B, rstart, &ncols, &cols, NULL));
    for (c = rstart; c < rend && found; c += found ? bs : 0) {
      found = PETSC_FALSE;
      for (PetscInt k = 0; k < ncols; k++) found = (PetscBool)(found || cols[k] == c);
    }
    PetscCall(MatRestoreRow(B, rstart, &ncols, &cols, NULL));
    if (!found) {
      PetscCall(MatSetValues(A, 1, &rstart, 1, &c, &two, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &rstart, 1, &c, &two, ADD_VALUES));
    }
  }
  PetscCall(AssembleBoth(A, B));
  PetscCall(Compare("  an entry outside the blocks", MATGPUSTREAM, "gpustream", A, B, rnd));
  if (size == 1) PetscCall(MatView(A, sv)); /* elsewhere the first process may own no row to break */
  PetscCall(PetscViewerPopFormat(sv));
  PetscCall(PetscFree(v));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* Bad input on a gpustream matrix gets the error AIJ gives (each case stops the program with it) */
static PetscErrorCode BadInput(const char *which)
{
  Mat       A;
  Vec       x, y;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, 10, 10, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(PetscStrcmp(which, "block_size", &flg));
  if (flg) PetscCall(MatSetBlockSize(A, 3)); /* 10 rows per process */
  PetscCall(MatXAIJSetPreallocation(A, 1, NULL, NULL, NULL, NULL));
  PetscCall(MatSeqAIJSetPreallocation(A, 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 1, NULL, 0, NULL));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(PetscStrcmp(which, "unassembled", &flg));
  if (flg) PetscCall(MatMult(A, x, y));
  for (PetscInt i = 10 * PetscGlobalRank; i < 10 * (PetscGlobalRank + 1); i++) PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscStrcmp(which, "new_nonzero", &flg));
  if (flg) PetscCall(MatSetValue(A, 10 * PetscGlobalRank, 10 * PetscGlobalRank + 1, 1.0, INSERT_VALUES));
  PetscCall(PetscStrcmp(which, "out_of_range", &flg)); /* column N: PETSc checks it in debug builds only */
  if (flg) PetscCall(MatSetValue(A, 10 * PetscGlobalRank, A->cmap->N, 1.0, ADD_VALUES));
  PetscCall(PetscStrcmp(which, "out_of_range_row", &flg));
  if (flg) PetscCall(MatSetValue(A, A->rmap->N, 0, 1.0, ADD_VALUES));
  PetscCall(PetscStrcmp(which, "sizes", &flg));
  if (flg) {
    Vec z;
    PetscCall(VecCreateMPI(PETSC_COMM_WORLD, 9, PETSC_DETERMINE, &z));
    PetscCall(MatMult(A, z, y));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;
  Mat         A;
  PetscBool   view = PETSC_FALSE, broken = PETSC_FALSE, moreops = PETSC_FALSE;
  PetscInt    bs      = 0;
  char        bad[32] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", bad, sizeof(bad), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-blocks", &bs, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-broken", &broken, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-more_ops", &moreops, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  if (bad[0])
    PetscCall(BadInput(bad));
  else if (bs) {
    PetscCall(TestBlocks(1, bs, broken, rnd));
    PetscCall(TestBlocks(40, bs, broken, rnd));
  } else if (view) { /* a small matrix viewed as users see it */
    PetscCall(MatCreateGPUStream(PETSC_COMM_WORLD, 3, 3, 2, NULL, &A));
    for (PetscInt i = 0; i < 3; i++) {
      PetscScalar v[2] = {2.0, -1.0};
      PetscInt    c[2] = {i, (i + 1) % 3};
      PetscCall(MatSetValues(A, 1, &i, 2, c, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(MatDestroy(&A));
  } else if (moreops) {
    PetscCall(TestMoreOps(1, 3, rnd));
    PetscCall(TestMoreOps(40, 5, rnd));
    PetscCall(TestMoreOps(1000, 30, rnd));
  } else {
    PetscCall(TestSize(0, 3, rnd));
    PetscCall(TestSize(1, 3, rnd));
    PetscCall(TestSize(17, 4, rnd));
    PetscCall(TestSize(1000, 30, rnd));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: ops

   test:
      suffix: more_ops
      args: -more_ops

   test:
      suffix: more_ops_2
      nsize: 2
      args: -more_ops

   test:
      suffix: more_ops_3
      nsize: 3
      args: -more_ops

   test:
      suffix: more_ops_4
      nsize: 4
      args: -more_ops

   test:
      suffix: view
      args: -view
      filter: sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/SpMV kernel .+/SpMV kernel SHAPE/" -e "s/device budget .+/device budget BUDGET/" -e "s/gives [a-z]+ vectors .+/gives VECTYPE vectors/" -e "s/[(][+] [0-9.e+-]+ MB staging/(+ X MB staging/"

   test:
      suffix: view_from_options
      args: -view -mat_view ::ascii_info -malloc_debug -malloc_dump
      filter: sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/SpMV kernel .+/SpMV kernel SHAPE/" -e "s/device budget .+/device budget BUDGET/" -e "s/gives [a-z]+ vectors .+/gives VECTYPE vectors/" -e "s/[(][+] [0-9.e+-]+ MB staging/(+ X MB staging/"

   test:
      suffix: unassembled
      args: -case unassembled
      error: 1
      filter: grep -o "Not for unassembled matrix" | sort -u

   test:
      suffix: new_nonzero
      args: -case new_nonzero
      error: 1
      filter: grep -o "New nonzero at (0,1) caused a malloc" | sort -u

   test:
      suffix: out_of_range
      args: -case out_of_range
      error: 1
      filter: grep -o "Column too large: col 10 max 9" | sort -u

   test:
      suffix: out_of_range_2
      nsize: 2
      args: -case out_of_range
      error: 1
      filter: grep -o "Column too large: col 20 max 19" | sort -u

   test:
      suffix: out_of_range_row_2
      nsize: 2
      args: -case out_of_range_row
      error: 1
      filter: grep -o "Row too large: row 20 max 19" | sort -u

   test:
      suffix: sizes
      nsize: 2
      args: -case sizes
      error: 1
      filter: grep -o "Nonconforming object sizes" | sort -u

   test:
      suffix: block_size
      args: -case block_size
      error: 1
      filter: grep -o "Local size 10 not compatible with block size 3" | sort -u

   test:
      suffix: ops_2
      nsize: 2
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_3
      nsize: 3
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_4
      nsize: 4
      output_file: output/matgpustream_ops.out

   # the halo's values written into the neighbours' buffers, its messages staged through pinned host buffers, and
   # between the Kokkos views themselves
   test:
      suffix: ops_shared_2
      nsize: 2
      args: -mat_gpustream_halo_shared true
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_shared_4
      nsize: 4
      args: -mat_gpustream_halo_shared true
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_staged_2
      nsize: 2
      args: -mat_gpustream_halo_shared false -mat_gpustream_device_mpi false
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_staged_4
      nsize: 4
      args: -mat_gpustream_halo_shared false -mat_gpustream_device_mpi false
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_device_3
      nsize: 3
      args: -mat_gpustream_halo_shared false -mat_gpustream_device_mpi true
      output_file: output/matgpustream_ops.out

   # MatMult by tiles of 3 and 5 entries: rows longer than a tile are summed in pieces (diagonal and off-diagonal blocks)
   test:
      suffix: ops_tiles
      args: -mat_gpustream_tile_size 3
      output_file: output/matgpustream_ops.out

   test:
      suffix: ops_tiles_3
      nsize: 3
      args: -mat_gpustream_tile_size 5
      output_file: output/matgpustream_ops.out

   test:
      suffix: bad_tile_size
      args: -mat_gpustream_tile_size 4096
      error: 1
      filter: grep -o "tile_size 4096 must be in 0..2048" | sort -u

   # block column indices (3 and 6 unknowns per node), CSR once an entry breaks the blocks, and the format options
   test:
      suffix: blocks_3
      args: -blocks 3 -malloc_dump
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: blocks_6
      args: -blocks 6
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: blocks_6_2
      nsize: 2
      args: -blocks 6
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: blocks_6_4
      nsize: 4
      args: -blocks 6
      output_file: output/matgpustream_blocks_6_2.out
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: blocks_csr
      args: -blocks 3 -mat_gpustream_format csr
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: blocks_broken
      args: -blocks 3 -broken
      filter: grep -E "block rows|agree|FAILED|resident on" | sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/ [0-9.e+-]+ MB in device memory.+//"

   test:
      suffix: bad_format_pattern
      args: -blocks 3 -broken -mat_gpustream_format block
      error: 1
      filter: grep -o "format block: local row 0 is not made of full 3 x 3 blocks" | sort -u

   test:
      suffix: bad_format_block_size
      args: -mat_gpustream_format block
      error: 1
      filter: grep -o "format block needs equal row and column block sizes of 2 to 6" | sort -u

   test:
      suffix: bad_format_tiles
      args: -blocks 3 -mat_gpustream_format block -mat_gpustream_tile_size 8
      error: 1
      filter: grep -o "format block has no tiles" | sort -u

   test:
      suffix: bad_format
      args: -mat_gpustream_format bcsr
      error: 1
      filter: grep -o "mat_gpustream_format bcsr: give one of auto, csr, block" | sort -u

   test:
      suffix: bad_kernel
      args: -mat_gpustream_kernel diagonal
      error: 1
      filter: grep -o "mat_gpustream_kernel diagonal: give one of auto, thread, warp" | sort -u

   test:
      suffix: bad_device_mpi
      args: -mat_gpustream_device_mpi maybe
      error: 1
      filter: grep -o "mat_gpustream_device_mpi maybe: give one of auto, false, true" | sort -u

   test:
      suffix: bad_dependent_launch
      args: -gpustream_dependent_launch maybe
      error: 1
      filter: grep -o "gpustream_dependent_launch maybe: give true or false" | sort -u

   test:
      suffix: bad_staging_threads
      args: -gpustream_staging_threads -1
      error: 1
      filter: grep -o "gpustream_staging_threads -1 must be in 0..256" | sort -u

TEST*/
