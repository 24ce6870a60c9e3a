static char help[] = "Time to solution with a preconditioner on the 3D 7-point Laplacian (Dirichlet boundary, as PETSc's ex45\n\
without its unsymmetric boundary rows), to a relative tolerance in the unpreconditioned norm.\n\
A plain PETSc program: the plugin's types come in through -dll_append, so the same binary times PETSc's own solvers.\n\
  -n <1e6>      : about this many unknowns (a cube)\n\
  -rtol <1e-8>  : relative tolerance\n\
  -reps <5>     : timed solves after the first; before each the operator's values change (scaled), so the PC is set up\n\
                  again (numeric factorization, Galerkin products) inside KSPSolve; the median is reported\n\
Prints one CSV line: ksp,pc,mat,n,nnz,its,first_ms,setup_ms,solve_ms,total_ms,relres,vec (first: the first KSPSolve,\n\
symbolic set-up included; setup: PCSetUp in a timed solve; total: a timed KSPSolve, set-up included; relres: the true\n\
relative residual of the last solve)\n\n";

#include <petscksp.h>

static int CmpDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The 7-point Laplacian on an m^3 grid (the Dirichlet unknowns eliminated), row by row */
static PetscErrorCode Laplacian3D(Mat A, PetscInt m)
{
  PetscInt Istart, Iend;

  PetscFunctionBeginUser;
  PetscCall(MatSeqAIJSetPreallocation(A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 7, NULL, 3, NULL));
  PetscCall(MatGetOwnershipRange(A, &Istart, &Iend));
  for (PetscInt row = Istart; row < Iend; row++) {
    const PetscInt i = row % m, j = (row / m) % m, k = row / (m * m);
    PetscInt       cols[7], c = 0;
    PetscScalar    v[7];
    if (k > 0) cols[c] = row - m * m, v[c++] = -1.0;
    if (j > 0) cols[c] = row - m, v[c++] = -1.0;
    if (i > 0) cols[c] = row - 1, v[c++] = -1.0;
    cols[c] = row, v[c++] = 6.0;
    if (i < m - 1) cols[c] = row + 1, v[c++] = -1.0;
    if (j < m - 1) cols[c] = row + m, v[c++] = -1.0;
    if (k < m - 1) cols[c] = row + m * m, v[c++] = -1.0;
    PetscCall(MatSetValues(A, 1, &row, c, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat           A;
  Vec           x, b, r;
  KSP           ksp;
  PC            pc;
  PetscInt      m, n, reps = 5, its = 0;
  PetscReal     nreal = 1e6, rtol = 1e-8, rn, bn;
  double        tsetup[64], ttotal[64], first;
  MatInfo       info;
  KSPType       ktype;
  PCType        ptype;
  MatType       mtype;
  VecType       vtype;
  PetscLogEvent setup;
  PetscLogStage timed;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-n", &nreal, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCheck(reps > 0 && reps <= 64, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be in 1..64");
  m = (PetscInt)(PetscCbrtReal(nreal) + 0.5);
  n = m * m * m;

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetFromOptions(A));
  PetscCall(Laplacian3D(A, m));
  PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(VecNorm(b, NORM_2, &bn));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, rtol, 1e-300, PETSC_DEFAULT, 100000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscLogEventGetId("PCSetUp", &setup));
  PetscCall(PetscLogStageRegister("Timed solves", &timed)); /* -log_view: the set-ups after new values apart */
  {
    PetscLogDouble t0, t1;
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    first = 1e3 * (t1 - t0);
  }
  PetscCall(PetscLogStagePush(timed));
  for (PetscInt k = 0; k < reps; k++) {
    PetscLogDouble     t0, t1;
    PetscEventPerfInfo e0, e1;
    PetscCall(MatScale(A, k % 2 ? 0.5 : 2.0)); /* new values, same pattern: the PC is set up again */
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(PetscLogEventGetPerfInfo(timed, setup, &e0));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    PetscCall(PetscLogEventGetPerfInfo(timed, setup, &e1));
    ttotal[k] = 1e3 * (t1 - t0);
    tsetup[k] = 1e3 * (e1.time - e0.time);
  }
  PetscCall(PetscLogStagePop());
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  qsort(ttotal, reps, sizeof(double), CmpDouble);
  qsort(tsetup, reps, sizeof(double), CmpDouble);
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(PCGetType(pc, &ptype));
  PetscCall(MatGetType(A, &mtype));
  PetscCall(VecGetType(b, &vtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s,%s,%s,%" PetscInt_FMT ",%.0f,%" PetscInt_FMT ",%.3f,%.3f,%.3f,%.3f,%.3e,%s\n", ktype, ptype, mtype, n, (double)info.nz_used, its, first, tsetup[reps / 2], ttotal[reps / 2] - tsetup[reps / 2],
                        ttotal[reps / 2], (double)(rn / bn), vtype));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
