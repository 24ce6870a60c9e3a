static char help[] = "Tests KSPPIPEBCGSF against PETSc's KSPBCGS (right preconditioning) and KSPPIPEBCGS on nonsymmetric\n\
problems: convection-diffusion on the unit cube with centred differences at Peclet 1 and 100, a 3-dof block problem;\n\
PCNONE, PCJACOBI, PCSOR, PCPBJACOBI; gpustream and AIJ operators; breakdown, NaN and zero right-hand sides.\n\
  -v : print the iteration counts\n\
  -host_pcs : only ILU, LU, GAMG, block Jacobi and ASM on a gpustream operator against BCGS on AIJ\n\
  -ahead : only device scalars against the default loop (one process)\n\
  -view_before_setup : only the view of a pipebcgsf KSP not yet set up\n\n";

#include <math.h>
#include <petscgpustream.h>
#include "problems.h"

static PetscBool verbose = PETSC_FALSE;
static PetscReal slack   = 0.1; /* -its_slack: the allowed relative difference in iterations */

static PetscErrorCode Solve(KSPType type, Mat A, PCType pc, Vec b, PetscInt *its, KSPConvergedReason *reason, PetscReal *res)
{
  KSP       ksp;
  PC        p;
  Vec       x, r;
  PetscReal nb;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &p));
  PetscCall(PCSetType(p, pc));
  PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, res));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *res = nb > 0 ? *res / nb : *res;
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

/* Passes when pipebcgsf on A stops for the same reason as BCGS on Aref (A itself, or A as AIJ), within max(2, slack) of
   the iterations of BCGS or of PETSc's PIPEBCGS (on non-normal problems such as Pe 100 rounding moves BiCGStab's counts
   by that much: 109, 128 and 120 on 2 processes), with a true relative residual below restol when it converged (the
   tolerance is 1e-8). */
static PetscErrorCode CompareRef(const char *what, Mat A, Mat Aref, PCType pc, Vec b, PetscReal restol)
{
  const KSPType      types[3] = {KSPBCGS, KSPPIPEBCGS, KSPPIPEBCGSF};
  PetscInt           its[3];
  KSPConvergedReason reason[3];
  PetscReal          res[3];
  PetscBool          ok;
  char               tail[64] = "";

  PetscFunctionBeginUser;
  for (int t = 0; t < 3; t++) PetscCall(Solve(types[t], t < 2 ? Aref : A, pc, b, &its[t], &reason[t], &res[t]));
  ok = (PetscBool)(reason[0] == reason[2] && (PetscAbsInt(its[0] - its[2]) <= PetscMax(2, slack * its[0]) || PetscAbsInt(its[1] - its[2]) <= PetscMax(2, slack * its[1])) && (reason[2] < 0 || res[2] < restol));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterations: bcgs %" PetscInt_FMT ", pipebcgs %" PetscInt_FMT ", pipebcgsf %" PetscInt_FMT "; true residual %g\n", its[0], its[1], its[2], (double)res[2]));
  if (reason[2] > 0) PetscCall(PetscSNPrintf(tail, sizeof(tail), res[2] < restol ? ", true residual < %g" : ", TRUE RESIDUAL TOO LARGE, not < %g", (double)restol));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s pc=%s: %s, bcgs %s, pipebcgsf %s%s\n", what, pc, ok ? "agree" : "DIFFER", KSPConvergedReasons[reason[0]], KSPConvergedReasons[reason[2]], tail));
  PetscFunctionReturn(0);
}

static PetscErrorCode Compare(const char *what, Mat A, PCType pc, Vec b)
{
  PetscFunctionBeginUser;
  PetscCall(CompareRef(what, A, A, pc, b, 1e-6));
  PetscFunctionReturn(0);
}

/* PCs that need an AIJ matrix (factorizations, GAMG; block Jacobi and ASM factor their blocks with ILU), applied on
   the host: pipebcgsf on the gpustream operator against BCGS on the same problem as AIJ. The whole-matrix
   factorizations on one process only. */
static PetscErrorCode CompareHostPCs(PetscRandom rnd)
{
  const PCType hostpcs[] = {PCILU, PCLU, PCGAMG, PCBJACOBI, PCASM};
  PetscMPIInt  size;
  Mat          A, Aij;
  Vec          b;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int k = 0; k < 2; k++) {
    PetscCall(ConvDiff(MATGPUSTREAM, 14, k ? 100.0 : 1.0, &A));
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aij));
    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(VecSetRandom(b, rnd));
    for (int p = 0; p < 5; p++) /* GAMG's smoothers need a nearly symmetric operator: both diverge at Pe 100 */
      if ((size == 1 || p >= 2) && !(k && p == 2)) PetscCall(CompareRef(k ? "Pe 100 gpustream against aij" : "Pe 1 gpustream against aij", A, Aij, hostpcs[p], b, 1e-8));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&Aij));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char *what, Mat A, Vec b)
{
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          res;

  PetscFunctionBeginUser;
  PetscCall(Solve(KSPPIPEBCGSF, A, PCNONE, b, &its, &reason, &res));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: pipebcgsf %s in %" PetscInt_FMT "\n", what, KSPConvergedReasons[reason], its));
  PetscFunctionReturn(0);
}

/* Device scalars (the host reading each iteration's sums while the next SpMVs run), with four kernels an iteration and
   with s formed inside the second SpMV (three), each against the default loop: the same reason, iterations within
   one, residual histories equal to 1e-4 of the first norm, the same x to 1e-6 (when finite) */
static PetscErrorCode Ahead(const char *what, Mat A, PCType pc, Vec b, PetscInt maxit)
{
  Vec                x[3];
  PetscReal          hist[3][2001], nx[3];
  PetscInt           its[3], nh[3];
  KSPConvergedReason reason[3];
  const char        *same[2];

  PetscFunctionBeginUser;
  for (int a = 0; a < 3; a++) {
    KSP ksp;
    PC  p;
    PetscCall(VecDuplicate(b, &x[a]));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPPIPEBCGSF));
    PetscCall(KSPGetPC(ksp, &p));
    PetscCall(PCSetType(p, pc));
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, maxit));
    PetscCall(PetscOptionsSetValue(NULL, "-ksp_pipebcgsf_device_scalars", a ? "1" : "0"));
    PetscCall(PetscOptionsSetValue(NULL, "-ksp_pipebcgsf_s_in_spmv", a == 2 ? "1" : "0"));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetResidualHistory(ksp, hist[a], 2001, PETSC_TRUE));
    PetscCall(KSPSolve(ksp, b, x[a]));
    PetscCall(KSPGetIterationNumber(ksp, &its[a]));
    PetscCall(KSPGetConvergedReason(ksp, &reason[a]));
    PetscCall(KSPGetResidualHistory(ksp, NULL, &nh[a]));
    PetscCall(VecNorm(x[a], NORM_2, &nx[a]));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-ksp_pipebcgsf_device_scalars"));
  PetscCall(PetscOptionsClearValue(NULL, "-ksp_pipebcgsf_s_in_spmv"));
  /* on a device the last team sums the partials in another order than the host, so omega and beta differ in the last
     bits and BiCGStab's iterates drift apart (6.7e-6 of the first norm after 31 iterations at Pe 1 on an H200, x
     still within 6e-13); the test may then stop one iteration apart */
  for (int a = 1; a < 3; a++) {
    PetscReal worst = 0, dx;
    for (PetscInt i = 0; i < PetscMin(nh[0], nh[a]); i++) worst = PetscMax(worst, PetscAbsReal(hist[0][i] - hist[a][i]) / PetscMax(hist[0][0], 1e-300));
    PetscCall(VecAXPY(x[a], -1.0, x[0]));
    PetscCall(VecNorm(x[a], NORM_2, &dx));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterations %" PetscInt_FMT " and %" PetscInt_FMT ", histories differ by %g, x by %g, |x| %g\n", its[0], its[a], (double)worst, (double)dx, (double)nx[0]));
    same[a - 1] = PetscAbsInt(its[0] - its[a]) <= 1 && reason[0] == reason[a] && worst < 1e-4 && (PetscIsInfOrNanReal(nx[0]) ? PetscIsInfOrNanReal(nx[a]) : dx <= 1e-6 * nx[0]) ? "same as the default loop" : "DIFFER";
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device scalars, %s pc=%s: four kernels %s, three %s, %s\n", what, pc, same[0], same[1], KSPConvergedReasons[reason[2]]));
  PetscCall(VecDestroy(&x[0]));
  PetscCall(VecDestroy(&x[1]));
  PetscCall(VecDestroy(&x[2]));
  PetscFunctionReturn(0);
}

static PetscErrorCode AheadCases(PetscRandom rnd)
{
  Mat A;
  Vec b;

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(ConvDiff(MATGPUSTREAM, 12, k ? 10.0 : 1.0, &A));
    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(VecSetRandom(b, rnd));
    PetscCall(Ahead(k ? "Pe 10" : "Pe 1", A, PCNONE, b, 2000));
    PetscCall(Ahead(k ? "Pe 10" : "Pe 1", A, PCJACOBI, b, 2000));
    PetscCall(Ahead(k ? "Pe 10, 7 iterations at most" : "Pe 1, 1 iteration at most", A, PCJACOBI, b, k ? 7 : 1));
    PetscCall(VecSet(b, 0.0));
    if (!k) PetscCall(Ahead("zero right-hand side", A, PCNONE, b, 2000));
    PetscCall(VecSetValue(b, 3, NAN, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(b));
    PetscCall(VecAssemblyEnd(b));
    if (k) PetscCall(Ahead("NaN in the right-hand side", A, PCNONE, b, 2000));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const MatType types[2] = {MATGPUSTREAM, MATAIJ};
  const PCType  pcs[4]   = {PCNONE, PCJACOBI, PCSOR, PCPBJACOBI};
  PetscRandom   rnd;
  Mat           A;
  Vec           b;
  PetscBool     hostpcs = PETSC_FALSE, ahead = PETSC_FALSE, viewpre = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &verbose, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-its_slack", &slack, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-host_pcs", &hostpcs, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-ahead", &ahead, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view_before_setup", &viewpre, NULL));
  if (hostpcs || ahead || viewpre) {
    if (hostpcs) PetscCall(CompareHostPCs(rnd));
    if (ahead) PetscCall(AheadCases(rnd));
    if (viewpre) PetscCall(ViewBeforeSetUp(KSPPIPEBCGSF));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(PetscFinalize());
    return 0;
  }
  for (int t = 0; t < 2; t++) {
    for (int k = 0; k < 3; k++) {
      char what[64];

      PetscCall(NonsymmetricProblem(types[t], k, 14, &A, what, sizeof(what)));
      PetscCall(MatCreateVecs(A, NULL, &b));
      PetscCall(VecSetRandom(b, rnd));
      for (int p = 0; p < 4; p++) /* SOR makes Pe 100 diverge for every solver; point blocks only where there are blocks */
        if (!(k == 1 && p == 2) && !(k < 2 && p == 3)) PetscCall(Compare(what, A, pcs[p], b));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&A));
    }
  }
  /* zero and NaN right-hand sides */
  PetscCall(ConvDiff(MATGPUSTREAM, 6, 10.0, &A));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(VecSet(b, 0.0));
  PetscCall(Report("zero right-hand side", A, b));
  PetscCall(VecSetValue(b, 3, NAN, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  PetscCall(Report("NaN in the right-hand side", A, b));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  { /* a permutation with b = e_0: <A p, r0*> = <e_1, e_0> = 0 at once */
    PetscInt rstart, rend;
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 8, 8));
    PetscCall(MatSetType(A, MATGPUSTREAM));
    PetscCall(MatSeqAIJSetPreallocation(A, 1, NULL));
    PetscCall(MatMPIAIJSetPreallocation(A, 1, NULL, 1, NULL));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++) PetscCall(MatSetValue(A, i, i ^ 1, 1.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(VecSet(b, 0.0));
    PetscCall(VecSetValue(b, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(b));
    PetscCall(VecAssemblyEnd(b));
    PetscCall(Report("breakdown <Ap,r0*> = 0", A, b));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: cmp
      args: -malloc_dump

   # replacement perturbs BiCGStab's recurrences: at Pe 100 every 40 iterations moves the counts by up to 12% (H200),
   # every 10 by up to 30%; replacement is for accuracy, so it gets 20% here
   # device scalars (the host one step behind) give the default loop's iterations, histories and solution
   test:
      suffix: ahead
      args: -ahead

   test:
      suffix: cmp_replace
      args: -ksp_pipebcgsf_replace_every 40 -its_slack 0.2

   # right preconditioning, said before the KSP is set up as after a solve, with the difference from KSPBCGS
   test:
      suffix: right_view
      args: -view_before_setup
      filter: awk '/type: pipebcgsf/ {f = 1} f && /preconditioning$/ {print; f = 0} /right preconditioning only/ {print}' | LC_ALL=C sort -u
      output_file: output/kspbcgsf_right_view.out

   test:
      suffix: right_view_solve
      args: -ksp_view
      filter: awk '/type: pipebcgsf/ {f = 1} f && /preconditioning$/ {print; f = 0} /right preconditioning only/ {print}' | LC_ALL=C sort -u
      output_file: output/kspbcgsf_right_view.out

   # the one-process gpustream solves take the fused point-block kernels
   test:
      suffix: pbjacobi_view
      args: -ksp_view
      filter: grep -o "point-block jacobi fused into the kernels" | sort -u

   test:
      suffix: bad_s_in_spmv
      args: -ksp_pipebcgsf_s_in_spmv sometimes
      error: 1
      filter: grep -o "ksp_pipebcgsf_s_in_spmv sometimes: give true or false" | sort -u

   test:
      suffix: bad_replace_every
      args: -ksp_pipebcgsf_replace_every -3
      error: 1
      filter: grep -o "ksp_pipebcgsf_replace_every must be 0 (never) or positive, not -3" | sort -u

   # several processes: gpustream SpMVs fused with their sums on the device around the halo exchange (PCNONE,
   # PCJACOBI); an SpMV is the gather of the values to send, the interior kernel and the off-diagonal one, so an
   # iteration is 8 launches with UpdateS and the Update
   test:
      suffix: halo_view_2
      nsize: 2
      args: -ksp_view
      filter: grep -A1 "the halo exchange overlapping" | grep -o "SpMV: [^;]*\|per iteration: [0-9.]* kernel launch\(es\)\?" | LC_ALL=C sort -u

   test:
      suffix: cmp_2
      nsize: 2
      output_file: output/kspbcgsf_cmp.out

   test:
      suffix: cmp_3
      nsize: 3
      output_file: output/kspbcgsf_cmp.out

   test:
      suffix: cmp_4
      nsize: 4
      output_file: output/kspbcgsf_cmp.out

   # each path of the halo forced: values written into the neighbours' buffers, MPI messages
   test:
      suffix: cmp_shared_3
      nsize: 3
      args: -mat_gpustream_halo_shared true
      output_file: output/kspbcgsf_cmp.out

   test:
      suffix: cmp_mpi_3
      nsize: 3
      args: -mat_gpustream_halo_shared false
      output_file: output/kspbcgsf_cmp.out

   # PCs that need an AIJ matrix (ILU, LU on one process; GAMG, block Jacobi and ASM with ILU blocks), applied on
   # the host to the gpustream operator, against the PETSc solver on AIJ
   test:
      suffix: host_pcs
      args: -host_pcs -malloc_dump

   test:
      suffix: host_pcs_2
      nsize: 2
      args: -host_pcs
      output_file: output/kspbcgsf_host_pcs_np.out

   test:
      suffix: host_pcs_4
      nsize: 4
      args: -host_pcs
      output_file: output/kspbcgsf_host_pcs_np.out

TEST*/
