static char help[] = "Time per Krylov iteration on the 2D 5-point Laplacian (as PETSc's ex2), at a fixed iteration count.\n\
A plain PETSc program: the plugin's types come in through -dll_append, so the same binary times PETSc's own solvers.\n\
  -n <rows>     : about this many unknowns (a square grid)\n\
  -its <30>     : iterations per solve (the tolerance is set out of reach)\n\
  -reps <7>     : timed solves after one untimed warm-up solve; the median is reported\n\
  -nrhs <1>     : right-hand sides solved together by KSPMatSolve (the ksp column then reads <type>_k<nrhs>)\n\
Prints one CSV line: ksp,pc,mat,nprocs,n,nnz,its,us_per_it_solve,us_per_it_loop,vec (vec: the type of b and x, from\n\
MatCreateVecs())\n\
(loop: the plugin's iteration event, -loop_event <PCGFIterations>, i.e. without the copies of b and x at the ends of\n\
a solve; -1 if absent)\n\n";

#include <petscksp.h>

#include "poisson2d.h"

static int CmpDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  Mat           A;
  Vec           x, b;
  KSP           ksp;
  PC            pc;
  PetscInt      n = 10000, m, its = 30, reps = 7, nrhs = 1, done;
  Mat           B = NULL, X = NULL;
  PetscLogEvent loop = -1;
  PetscMPIInt   size;
  double        tsolve[64], tloop[64];
  MatInfo       info;
  KSPType       ktype;
  PCType        ptype;
  MatType       mtype;
  VecType       vtype;
  PetscReal     nreal = 1e4;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-n", &nreal, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-its", &its, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nrhs", &nrhs, NULL));
  PetscCheck(nrhs > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-nrhs must be positive");
  PetscCheck(reps > 0 && reps <= 64, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be in 1..64");
  m = (PetscInt)(PetscSqrtReal(nreal) + 0.5);
  n = m * m;

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetFromOptions(A));
  PetscCall(Poisson2DAssemble(A, m));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  if (nrhs > 1) { /* columns of ones, each scaled differently */
    PetscInt nloc;
    PetscCall(VecGetLocalSize(b, &nloc));
    PetscCall(MatCreateDense(PETSC_COMM_WORLD, nloc, PETSC_DECIDE, n, nrhs, NULL, &B));
    PetscCall(MatCreateDense(PETSC_COMM_WORLD, nloc, PETSC_DECIDE, n, nrhs, NULL, &X));
    for (PetscInt j = 0; j < nrhs; j++) {
      Vec c;
      PetscCall(MatDenseGetColumnVecWrite(B, j, &c));
      PetscCall(VecSet(c, 1.0 + j));
      PetscCall(MatDenseRestoreColumnVecWrite(B, j, &c));
    }
  }

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetTolerances(ksp, 1e-300, 1e-300, PETSC_DEFAULT, its));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  { /* the plugin's iteration-loop event (registered only when the plugin is loaded), by -loop_event */
    char name[64] = "PCGFIterations";
    PetscCall(PetscOptionsGetString(NULL, NULL, "-loop_event", name, sizeof(name), NULL));
    PetscCall(PetscLogEventGetId(name, &loop));
  }
  if (B)
    PetscCall(KSPMatSolve(ksp, B, X)); /* warm-up: first-launch costs stay out */
  else
    PetscCall(KSPSolve(ksp, b, x));
  for (PetscInt r = 0; r < reps; r++) {
    PetscLogDouble     t0, t1;
    PetscEventPerfInfo e0, e1;
    if (loop >= 0) PetscCall(PetscLogEventGetPerfInfo(0, loop, &e0));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    if (B)
      PetscCall(KSPMatSolve(ksp, B, X));
    else
      PetscCall(KSPSolve(ksp, b, x));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPGetIterationNumber(ksp, &done));
    tsolve[r] = 1e6 * (t1 - t0) / (double)done;
    tloop[r]  = -1;
    if (loop >= 0) {
      PetscCall(PetscLogEventGetPerfInfo(0, loop, &e1));
      tloop[r] = 1e6 * (e1.time - e0.time) / (double)done;
    }
  }
  qsort(tsolve, reps, sizeof(double), CmpDouble);
  qsort(tloop, reps, sizeof(double), CmpDouble);
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(PCGetType(pc, &ptype));
  PetscCall(MatGetType(A, &mtype));
  PetscCall(VecGetType(b, &vtype));
  if (nrhs > 1)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s_k%" PetscInt_FMT, ktype, nrhs));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s", ktype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",%s,%s,%d,%" PetscInt_FMT ",%.0f,%" PetscInt_FMT ",%.2f,%.2f,%s\n", ptype, mtype, (int)size, n, (double)info.nz_used, done, tsolve[reps / 2], tloop[reps / 2], vtype));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&X));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
