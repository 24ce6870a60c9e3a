static char help[] = "Poisson's equation on the unit square or cube (5- or 7-point stencil) solved with a gpustream\n\
matrix and pipelined CG with fused kernels.\n\
  -m <n>, -n <n>, -p <n> : grid points in x, y (and z with -dim 3)\n\
  -dim <2,3>             : dimension\n\
  -coef_jump <c>         : coefficient c instead of 1 in the half x > 1/2 (variable coefficient)\n\n";

/* The main example of PETSc GPUStream. It links the plugin and registers its types with
   PetscGPUStreamInitializePackage(); programs that do not link it load it with -dll_append instead.
   The matrix type defaults to gpustream and the KSP to pipecgfused; both can be changed from the options
   database, which the tests use to compare with -mat_type aij -ksp_type cg on the same problem. */
#include <petscgpustream.h>

int main(int argc, char **argv)
{
  Mat       A;
  Vec       x, b, u;
  KSP       ksp;
  PetscInt  m = 32, n = 32, p = 1, dim = 2, Istart, Iend, its;
  PetscReal jump = 1.0, err, unorm;
  PetscBool typeset;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, not %" PetscInt_FMT, dim);
  if (dim == 3) {
    p = n;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-p", &p, NULL));
  }
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-coef_jump", &jump, NULL));

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, m * n * p, m * n * p));
  /* gpustream unless -mat_type says otherwise, the type set by MatSetFromOptions() so that -help lists its options:
     MatSetType() first would print the group "Matrix (Mat) options" (AIJ's -mat_seqaij_type), and -help prints a
     group of a given title and prefix once, so it would skip MatSetFromOptions()' group and the type's options */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_type", &typeset));
  if (!typeset) PetscCall(PetscOptionsSetValue(NULL, "-mat_type", MATGPUSTREAM));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSeqAIJSetPreallocation(A, 2 * dim + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 2 * dim + 1, NULL, 2 * dim, NULL));
  PetscCall(MatGetOwnershipRange(A, &Istart, &Iend));
  for (PetscInt row = Istart; row < Iend; row++) {
    const PetscInt i = row % m, j = (row / m) % n, k = row / (m * n);
    /* face coefficients: jump where both cells lie in x > 1/2, so the operator stays symmetric */
    PetscScalar    diag     = 0;
    const PetscInt nb[6][2] = {{i - 1, i > 0}, {i + 1, i < m - 1}, {j - 1, j > 0}, {j + 1, j < n - 1}, {k - 1, k > 0}, {k + 1, k < p - 1}};
    for (PetscInt d = 0; d < 2 * dim; d++) {
      PetscInt    ii = i, jj = j, kk = k, col;
      PetscScalar c;
      if (d < 2)
        ii = nb[d][0];
      else if (d < 4)
        jj = nb[d][0];
      else
        kk = nb[d][0];
      c = (2 * i >= m && 2 * ii >= m) ? jump : 1.0;
      diag += c; /* Dirichlet neighbours outside the grid still count in the diagonal */
      if (!nb[d][1]) continue;
      col = ii + m * (jj + n * kk);
      c   = -c;
      PetscCall(MatSetValues(A, 1, &row, 1, &col, &c, INSERT_VALUES));
    }
    PetscCall(MatSetValues(A, 1, &row, 1, &row, &diag, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));

  /* b = A u for a known u, so the error of the solution is measurable */
  PetscCall(MatCreateVecs(A, &u, &b));
  PetscCall(VecDuplicate(u, &x));
  PetscCall(VecSet(u, 1.0));
  PetscCall(MatMult(A, u, b));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPIPECGFUSED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));

  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(VecNorm(u, NORM_2, &unorm));
  PetscCall(VecAXPY(x, -1.0, u));
  PetscCall(VecNorm(x, NORM_2, &err));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Relative error %s 1e-5, iterations %" PetscInt_FMT "\n", err / unorm < 1e-5 ? "<" : ">=", its));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 2d
      args: -ksp_converged_reason -ksp_monitor -pc_type none
      output_file: output/ex1_2d.out

   test:
      suffix: 2d_cg_aij
      args: -ksp_converged_reason -ksp_monitor -mat_type aij -ksp_type cg -pc_type none
      output_file: output/ex1_2d.out

   test:
      suffix: 2d_jacobi
      args: -ksp_converged_reason -pc_type jacobi -coef_jump 1e3 -m 40 -n 24
      output_file: output/ex1_2d_jacobi.out

   test:
      suffix: 2d_jacobi_cg_aij
      args: -ksp_converged_reason -pc_type jacobi -coef_jump 1e3 -m 40 -n 24 -mat_type aij -ksp_type cg
      output_file: output/ex1_2d_jacobi.out

   test:
      suffix: 3d
      args: -dim 3 -m 12 -n 10 -p 9 -ksp_converged_reason -pc_type jacobi -ksp_view -mat_view ::ascii_info
      filter: grep -v "Kokkos\|resident on\|device budget\|SpMV kernel\|true residual norm at\|last solve: [0-9]* host-device" | sed -E -e "s/reduction buffer [0-9.e+-]+ KB/reduction buffer/" -e "s/, in pinned host memory [(]-mat_gpustream_pinned_vecs[)]//" -e "s/MatCreateVecs[(][)] gives [a-z]+ vectors [(]-mat_gpustream_vec_type auto[)](; device arrays are read and written in place)?/MatCreateVecs() gives the vectors of this PETSc (-mat_gpustream_vec_type auto)/"

   test:
      suffix: 3d_cg_aij
      args: -dim 3 -m 12 -n 10 -p 9 -ksp_converged_reason -pc_type jacobi -mat_type aij -ksp_type cg
      filter: grep -v "Kokkos"

   test:
      suffix: bcgsf
      args: -dim 3 -m 12 -n 10 -p 9 -ksp_type pipebcgsf -pc_type jacobi -ksp_converged_reason -ksp_view
      filter: grep "converged\|per iteration\|SpMV:\|Relative"

   # the SpMV kernel choice, shown by -mat_view ::ascii_info: a warp per row on a device; host backends run one lane
   # per row whatever it is, and the view says so
   test:
      suffix: kernel_option
      args: -m 8 -n 8 -mat_view ::ascii_info -mat_gpustream_kernel warp
      filter: grep -o "SpMV kernel [a-z ]* per row (-mat_gpustream_kernel warp[^)]*)" | sed -E -e "s/SpMV kernel warp per row \(-mat_gpustream_kernel warp\)/a warp per row on a device, one lane per row said on a host backend/" -e "s/SpMV kernel
thread per row \(-mat_gpustream_kernel warp: one lane per row on the host backend [A-Za-z]+\)/a warp per row on a device, one lane per row said on a host backend/" | sort -u

   test:
      suffix: kernel_option_bad
      args: -m 8 -n 8 -mat_gpustream_kernel bogus
      error: 1
      filter: grep -o "mat_gpustream_kernel bogus: give one of auto, thread, warp" | sort -u

   test:
      suffix: residual_gap
      args: -m 64 -n 64 -coef_jump 1e6 -pc_type jacobi -ksp_norm_type unpreconditioned -ksp_rtol 1e-15 -ksp_converged_reason -ksp_pipecgfused_residual_gap_factor 1.5
      filter: grep -c "times the recursive one at convergence; -ksp_pipecgfused_replace_every N keeps them together"

   # the device copy is made once, at the end of the assembly: the solve's products find it up to date
   test:
      suffix: sync_once
      args: -m 8 -n 8 -log_view
      filter: awk '$1 == "GPUSMatSync" {print $1, $2}'

   # -ksp_view gives the true residual at convergence against the recursive one in words: "equal to" where the ratio
   # prints as 1, else a plain number of times (not PETSc's "1. times")
   test:
      suffix: gap_wording
      args: -dim 3 -m 12 -n 10 -p 9 -pc_type jacobi -ksp_view
      filter: grep "true residual norm at convergence" | sed -E "s/at convergence [0-9.e+-]+, (equal to|[0-9]+(\.[0-9]+)?(e[+-][0-9]+)? times) the recursive one$/at convergence N, equal to or N times the recursive one/"

   # -help lists the options of the matrix type
   test:
      suffix: help
      args: -m 8 -n 8 -help
      filter: grep -o -e "-mat_gpustream_kernel:\? <now auto : formerly auto>" | sed "s/: </ </" | sort -u

   # an incomplete factorization of the whole matrix needs one process, as for AIJ (block Jacobi and ASM factor
   # blocks); LU takes the package AIJ takes on several processes (tests/aijcode.c)
   test:
      suffix: ilu_several_processes
      nsize: 2
      args: -pc_type ilu
      error: 1
      filter: grep -o "factors a gpustream matrix on one process only" | sort -u

TEST*/
