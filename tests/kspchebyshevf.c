static char help[] = "Tests KSPCHEBYSHEVF against PETSc's KSPCHEBYSHEV: as a solver (each way its steps run, each norm, zero and\n\
nonzero initial guesses, given bounds, PCNONE, PCJACOBI, PCSOR) and as the level smoother of PCGAMG under CG and\n\
pipecgfused (a first set-up and one after new values), on gpustream and AIJ operators; bad options.\n\
  -v : print the iteration counts and differences\n\
  -bad <eigenvalues|steps|fuse|esteig|none> : one solve with that bad option, whose error ends it (none: no bad option)\n\n";

#include <petscgpustream.h>

static PetscBool verbose = PETSC_FALSE;

/* The 3D Laplacian (7 points) on an m^3 grid, SPD as the matrix knows */
static PetscErrorCode Lap3(MatType type, PetscInt m, Mat *A)
{
  PetscInt rstart, rend, n = m * m * m;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 6, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt ijk[3] = {row % m, (row / m) % m, row / (m * m)}, stride[3] = {1, m, m * m};
    PetscScalar    diag = 6.0, off = -1.0;
    PetscCall(MatSetValues(*A, 1, &row, 1, &row, &diag, INSERT_VALUES));
    for (int d = 0; d < 3; d++)
      for (int side = -1; side <= 1; side += 2) {
        const PetscInt nb = ijk[d] + side, col = row + side * stride[d];
        if (nb >= 0 && nb < m) PetscCall(MatSetValues(*A, 1, &row, 1, &col, &off, INSERT_VALUES));
      }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt           its, nh;
  KSPConvergedReason reason;
  PetscReal          hist[1001];
  Vec                x;
} Run;

/* One solve of type (a Krylov method, or a solver whose smoothers are smoother) from the initial guess x0 (NULL:
   zero) */
static PetscErrorCode Solve(KSPType type, const char *smoother, Mat A, PCType pc, KSPNormType norm, PetscInt maxit, PetscReal rtol, const PetscReal *eig, Vec b, Vec x0, Run *run)
{
  KSP ksp;
  PC  p;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &run->x));
  if (x0) PetscCall(VecCopy(x0, run->x));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &p));
  PetscCall(PCSetType(p, pc));
  if (smoother) {
    PetscCall(PetscOptionsSetValue(NULL, "-mg_levels_ksp_type", smoother));
    PetscCall(PetscOptionsSetValue(NULL, "-pc_gamg_use_sa_esteig", "0")); /* GAMG hands its estimate to KSPCHEBYSHEV alone */
  } else {
    PetscCall(KSPSetNormType(ksp, norm));
    if (eig) PetscCall(KSPChebyshevSetEigenvalues(ksp, eig[1], eig[0]));
  }
  PetscCall(KSPSetInitialGuessNonzero(ksp, x0 ? PETSC_TRUE : PETSC_FALSE));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, maxit));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetResidualHistory(ksp, run->hist, 1001, PETSC_TRUE));
  PetscCall(KSPSolve(ksp, b, run->x));
  if (smoother) { /* new values of the operator: GAMG's set-up again, each smoother's estimate again */
    PetscCall(MatScale(A, 2.0));
    PetscCall(VecScale(b, 2.0));
    PetscCall(VecSet(run->x, 0.0));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSolve(ksp, b, run->x));
    PetscCall(MatScale(A, 0.5));
    PetscCall(VecScale(b, 0.5));
    PetscCall(PetscOptionsClearValue(NULL, "-mg_levels_ksp_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_gamg_use_sa_esteig"));
  }
  PetscCall(KSPGetIterationNumber(ksp, &run->its));
  PetscCall(KSPGetConvergedReason(ksp, &run->reason));
  PetscCall(KSPGetResidualHistory(ksp, NULL, &run->nh));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* Passes when both runs stop for the same reason after the same iterations, with residual histories and solutions
   equal to tol (relative to the first norm and to |x|) */
static PetscErrorCode Agree(const char *what, Run *ref, Run *run, PetscReal tol)
{
  PetscReal worst = 0, dx, nx;
  PetscBool ok;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < PetscMin(ref->nh, run->nh); i++) worst = PetscMax(worst, PetscAbsReal(ref->hist[i] - run->hist[i]) / PetscMax(ref->hist[0], 1e-300));
  PetscCall(VecNorm(ref->x, NORM_2, &nx));
  PetscCall(VecAXPY(run->x, -1.0, ref->x));
  PetscCall(VecNorm(run->x, NORM_2, &dx));
  ok = (PetscBool)(ref->reason == run->reason && ref->its == run->its && ref->nh == run->nh && worst <= tol && dx <= tol * PetscMax(nx, 1e-300));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterations %" PetscInt_FMT " and %" PetscInt_FMT ", histories differ by %g, x by %g of %g\n", ref->its, run->its, (double)worst, (double)dx, (double)nx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s, %s\n", what, ok ? "same as chebyshev" : "DIFFER", KSPConvergedReasons[run->reason]));
  PetscCall(VecDestroy(&ref->x));
  PetscCall(VecDestroy(&run->x));
  PetscFunctionReturn(0);
}

/* chebyshevf with each way of running its steps against chebyshev, same options */
static PetscErrorCode CompareSolver(const char *name, Mat A, PCType pc, KSPNormType norm, PetscInt maxit, PetscReal rtol, const PetscReal *eig, Vec b, Vec x0)
{
  const char *fuses[] = {"none", "update", "spmv"};
  Run         ref, run;
  char        what[256];

  PetscFunctionBeginUser;
  for (int f = 0; f < 3; f++) {
    PetscCall(Solve(KSPCHEBYSHEV, NULL, A, pc, norm, maxit, rtol, eig, b, x0, &ref));
    PetscCall(PetscOptionsSetValue(NULL, "-ksp_chebyshevf_fuse", fuses[f]));
    PetscCall(Solve(KSPCHEBYSHEVF, NULL, A, pc, norm, maxit, rtol, eig, b, x0, &run));
    PetscCall(PetscOptionsClearValue(NULL, "-ksp_chebyshevf_fuse"));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s pc=%s norm=%s%s%s, steps %s", name, pc, KSPNormTypes[norm], x0 ? ", nonzero guess" : "", eig ? ", given bounds" : "", fuses[f]));
    PetscCall(Agree(what, &ref, &run, 1e-9));
  }
  PetscFunctionReturn(0);
}

/* CG and pipecgfused with GAMG, chebyshevf smoothers against chebyshev ones, a set-up after new values included */
static PetscErrorCode CompareGAMG(const char *name, Mat A, Vec b)
{
  const KSPType outer[] = {KSPCG, KSPPIPECGFUSED};
  Run           ref, run;
  char          what[256];

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(Solve(outer[k], KSPCHEBYSHEV, A, PCGAMG, KSP_NORM_DEFAULT, 200, 1e-8, NULL, b, NULL, &ref));
    PetscCall(Solve(outer[k], KSPCHEBYSHEVF, A, PCGAMG, KSP_NORM_DEFAULT, 200, 1e-8, NULL, b, NULL, &run));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s + gamg, chebyshevf smoothers, second set-up", name, outer[k]));
    PetscCall(Agree(what, &ref, &run, 1e-6));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const MatType types[2] = {MATGPUSTREAM, MATAIJ};
  char          bad[32]  = "";
  PetscRandom   rnd;
  PetscBool     isbad;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &verbose, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-bad", bad, sizeof(bad), &isbad));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  if (isbad) { /* the option's error ends the program */
    const char *opt = NULL, *val = NULL;
    Mat         A;
    Vec         b, x;
    KSP         ksp;
    if (!strcmp(bad, "none"))
      opt = NULL;
    else if (!strcmp(bad, "eigenvalues"))
      opt = "-ksp_chebyshevf_eigenvalues", val = "2,1";
    else if (!strcmp(bad, "steps"))
      opt = "-ksp_chebyshevf_esteig_steps", val = "0";
    else if (!strcmp(bad, "fuse"))
      opt = "-ksp_chebyshevf_fuse", val = "fast";
    else
      opt = "-ksp_chebyshevf_esteig", val = "1,2,3";
    if (opt) PetscCall(PetscOptionsSetValue(NULL, opt, val));
    PetscCall(Lap3(MATGPUSTREAM, 4, &A));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCHEBYSHEVF));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSolve(ksp, b, x));
    if (opt) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s accepted\n", opt, val));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  } else {
    for (int t = 0; t < 2; t++) {
      const PetscReal eig[2] = {0.3, 2.2};
      Mat             A;
      Vec             b, x0;
      char            name[64];
      PetscCall(Lap3(types[t], 9, &A));
      PetscCall(MatCreateVecs(A, &x0, &b));
      PetscCall(VecSetRandom(b, rnd));
      PetscCall(VecSetRandom(x0, rnd));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s 3D Laplacian", types[t]));
      PetscCall(CompareSolver(name, A, PCJACOBI, KSP_NORM_PRECONDITIONED, 400, 1e-3, NULL, b, NULL));
      PetscCall(CompareSolver(name, A, PCJACOBI, KSP_NORM_UNPRECONDITIONED, 400, 1e-3, NULL, b, x0));
      PetscCall(CompareSolver(name, A, PCJACOBI, KSP_NORM_NONE, 7, 1e-3, NULL, b, x0));
      PetscCall(CompareSolver(name, A, PCJACOBI, KSP_NORM_NONE, 2, 1e-3, NULL, b, NULL));
      PetscCall(CompareSolver(name, A, PCNONE, KSP_NORM_UNPRECONDITIONED, 30, 1e-3, NULL, b, NULL));
      PetscCall(CompareSolver(name, A, PCSOR, KSP_NORM_PRECONDITIONED, 30, 1e-3, NULL, b, NULL));
      PetscCall(MatScale(A, 1.0 / 6.0)); /* the bounds of D^{-1} A lie in (0, 2) */
      PetscCall(CompareSolver(name, A, PCNONE, KSP_NORM_PRECONDITIONED, 30, 1e-3, eig, b, x0));
      PetscCall(MatScale(A, 6.0));
      PetscCall(CompareGAMG(name, A, b));
      PetscCall(VecDestroy(&x0));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: cmp
      args: -malloc_dump

   test:
      suffix: cmp_2
      nsize: 2

   test:
      suffix: view
      args: -bad none -pc_type jacobi -ksp_chebyshevf_esteig 0,0.1,0,1.1 -ksp_view
      filter: grep -E "type: chebyshevf|estimated using|steps:|right-hand side for|accepted" | sed -e "s/written on the device/written by a kernel/"

   test:
      suffix: bad_eigenvalues
      args: -bad eigenvalues
      error: 1
      filter: grep -o "ksp_chebyshevf_eigenvalues: min .*"

   test:
      suffix: bad_steps
      args: -bad steps
      error: 1
      filter: grep -o "ksp_chebyshevf_esteig_steps must be positive, not 0"

   test:
      suffix: bad_fuse
      args: -bad fuse
      error: 1
      filter: grep -o "ksp_chebyshevf_fuse.*" | head -1

   test:
      suffix: bad_esteig
      args: -bad esteig
      error: 1
      filter: grep -o "ksp_chebyshevf_esteig: give 0, 2 or 4 values, not 3"

TEST*/
