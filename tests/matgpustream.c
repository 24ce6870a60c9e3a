static char help[] = "Tests MATGPUSTREAM against MATSEQAIJ holding the same random matrix: MatMult, MatMultAdd, MatGetDiagonal,\n\
MatDuplicate, MatConvert both ways (initial, in place, reuse), value and pattern changes after assembly, MatView.\n";

#include <petscgpustream.h>

/* Same random values into A and B: rows of 0 to maxlen entries (some rows empty), plus the diagonal on odd rows */
static PetscErrorCode FillRandom(Mat A, Mat B, PetscInt m, PetscInt maxlen, PetscRandom rnd)
{
  PetscInt *nnz;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m + 1, &nnz));
  for (PetscInt i = 0; i < m; i++) nnz[i] = PetscMin(m, maxlen + 1);
  PetscCall(MatXAIJSetPreallocation(A, 1, nnz, NULL, NULL, NULL));
  PetscCall(MatSeqAIJSetPreallocation(B, 0, nnz));
  for (PetscInt i = 0; i < m; i++) {
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
  PetscCall(PetscFree(nnz));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode Diff(Vec a, Vec b, PetscReal *d)
{
  Vec       t;
  PetscReal nb;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(a, &t));
  PetscCall(VecWAXPY(t, -1.0, a, b));
  PetscCall(VecNorm(t, NORM_INFINITY, d));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  *d /= PetscMax(nb, 1.0);
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* A (under test) against B (AIJ) on random vectors; prints one line saying what agreed */
static PetscErrorCode Compare(const char *what, MatType type, Mat A, Mat B, PetscRandom rnd)
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
  PetscCall(Diff(ya, yb, &d[0]));
  PetscCall(MatMultAdd(A, x, z, ya));
  PetscCall(MatMultAdd(B, x, z, yb));
  PetscCall(Diff(ya, yb, &d[1]));
  PetscCall(MatMultAdd(A, x, ya, ya)); /* z == y */
  PetscCall(MatMultAdd(B, x, yb, yb));
  PetscCall(Diff(ya, yb, &d[2]));
  PetscCall(MatGetDiagonal(A, ya));
  PetscCall(MatGetDiagonal(B, yb));
  PetscCall(Diff(ya, yb, &d[3]));
  if (same && d[0] < 1e-14 && d[1] < 1e-14 && d[2] < 1e-14 && d[3] == 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s, MatMult, MatMultAdd, MatGetDiagonal agree with AIJ\n", what, type));
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
  Mat       A, B, C;
  char      what[64];
  PetscInt  row, col = -1, newcol = 0;
  PetscReal nrm;
  Vec       x, y;

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "m = %" PetscInt_FMT ", up to %" PetscInt_FMT " entries per row\n", m, maxlen));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, m, m, m, m));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, m, m, m, m));
  PetscCall(MatSetType(B, MATSEQAIJ));
  PetscCall(FillRandom(A, B, m, maxlen, rnd));
  PetscCall(Compare("  assembled", MATGPUSTREAM, A, B, rnd));

  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(Compare("  MatScale", MATGPUSTREAM, A, B, rnd));

  for (row = 0; row < m; row++) { /* a row with an entry (col) and a column outside the pattern (newcol) */
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
  if (row < m) {
    PetscScalar v = 2.5;
    PetscCall(MatSetValues(A, 1, &row, 1, &col, &v, INSERT_VALUES));
    PetscCall(MatSetValues(B, 1, &row, 1, &col, &v, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(Compare("  new values", MATGPUSTREAM, A, B, rnd));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetValues(A, 1, &row, 1, &newcol, &v, ADD_VALUES));
    PetscCall(MatSetValues(B, 1, &row, 1, &newcol, &v, ADD_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(Compare("  new nonzero", MATGPUSTREAM, A, B, rnd));
  }

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(Compare("  MatDuplicate copy values", MATGPUSTREAM, C, B, rnd));
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

  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert to seqaij", MATSEQAIJ, C, B, rnd));
  PetscCall(MatDestroy(&C));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert to aij", MATSEQAIJ, C, B, rnd));
  PetscCall(MatConvert(C, MATGPUSTREAM, MAT_INPLACE_MATRIX, &C));
  PetscCall(Compare("  MatConvert in place from seqaij", MATGPUSTREAM, C, B, rnd));
  PetscCall(MatConvert(C, MATSEQAIJ, MAT_INPLACE_MATRIX, &C));
  PetscCall(Compare("  MatConvert in place to seqaij", MATSEQAIJ, C, B, rnd));
  PetscCall(MatDestroy(&C));
  PetscCall(MatConvert(B, MATGPUSTREAM, MAT_INITIAL_MATRIX, &C));
  PetscCall(Compare("  MatConvert from seqaij", MATGPUSTREAM, C, B, rnd));
  PetscCall(MatScale(B, -0.5));
  PetscCall(MatConvert(B, MATGPUSTREAM, MAT_REUSE_MATRIX, &C));
  PetscCall(Compare("  MatConvert reuse", MATGPUSTREAM, C, B, rnd));
  PetscCall(MatDestroy(&C));

  PetscCall(PetscSNPrintf(what, sizeof(what), "  after conversions"));
  PetscCall(MatScale(A, -0.5));
  PetscCall(Compare(what, MATGPUSTREAM, A, B, rnd));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;
  Mat         A;
  PetscBool   view = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  if (view) { /* a small matrix viewed as users see it */
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
      suffix: view
      args: -view
      filter: sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/SpMV kernel .+/SpMV kernel SHAPE/"

   test:
      suffix: view_from_options
      args: -view -mat_view ::ascii_info -malloc_debug -malloc_dump
      filter: sed -E -e "s/resident on [A-Za-z]+/resident on DEVICE/" -e "s/SpMV kernel .+/SpMV kernel SHAPE/"

   test:
      suffix: two_processes
      nsize: 2
      error: 1
      filter: grep -o "MATGPUSTREAM runs on one MPI process for now, not 2" | sort -u

TEST*/
