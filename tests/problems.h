/* The nonsymmetric test problems of the BiCGStab and GMRES tests (tests/kspbcgsf.c, tests/kspsgmresf.c), and what
   both check of a solver before set-up */
#pragma once

#include <petscksp.h>
#include <petscgpustream.h>

/* -Laplace(u) + Pe (1,1,1).grad(u) on an m^3 grid of the unit cube, centred differences, scaled by h^2 */
static PetscErrorCode ConvDiff(MatType type, PetscInt m, PetscReal pe, Mat *A)
{
  const PetscReal c = pe / (2.0 * (m + 1)); /* Pe h / 2 */
  PetscInt        rstart, rend, n = m * m * m;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  if (!strcmp(type, MATGPUSTREAM)) PetscCall(MatSetFromOptions(*A)); /* the halo's -mat_gpustream_halo_shared, -mat_gpustream_device_mpi */
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 6, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt ijk[3] = {row % m, (row / m) % m, row / (m * m)}, stride[3] = {1, m, m * m};
    PetscScalar    diag = 6.0;
    PetscCall(MatSetValues(*A, 1, &row, 1, &row, &diag, INSERT_VALUES));
    for (int d = 0; d < 3; d++) {
      for (int side = -1; side <= 1; side += 2) {
        const PetscInt    nb = ijk[d] + side, col = row + side * stride[d];
        const PetscScalar v = -1.0 + side * c;
        if (nb >= 0 && nb < m) PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, INSERT_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Three unknowns per node of an m x m grid: a nonsymmetric 3 x 3 block on the diagonal, -I to the 4 neighbours */
static PetscErrorCode Block3(MatType type, PetscInt m, Mat *A)
{
  const PetscScalar blk[9] = {5, 1, 0, -1, 5, 1, 0.5, -1, 5};
  PetscInt          rstart, rend, n = 3 * m * m;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetBlockSize(*A, 3));
  PetscCall(MatSetType(*A, type));
  if (!strcmp(type, MATGPUSTREAM)) PetscCall(MatSetFromOptions(*A)); /* the halo's -mat_gpustream_halo_shared, -mat_gpustream_device_mpi */
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 7, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt node = row / 3, c = row % 3, i = node % m, j = node / m, ni[4] = {i - 1, i + 1, i, i}, nj[4] = {j, j, j - 1, j + 1};
    for (PetscInt k = 0; k < 3; k++) {
      const PetscInt col = 3 * node + k;
      PetscCall(MatSetValues(*A, 1, &row, 1, &col, &blk[3 * c + k], INSERT_VALUES));
    }
    for (int d = 0; d < 4; d++) {
      if (ni[d] < 0 || ni[d] >= m || nj[d] < 0 || nj[d] >= m) continue;
      const PetscInt    col = 3 * (ni[d] + m * nj[d]) + c;
      const PetscScalar v   = -1.0;
      PetscCall(MatSetValues(*A, 1, &row, 1, &col, &v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Problem k (0, 1, 2) of the comparison loops: convection-diffusion on an m^3 grid with Pe 1 and Pe 100, then
   3-dof blocks on a 16 x 16 grid; what names it */
static PetscErrorCode NonsymmetricProblem(MatType type, int k, PetscInt m, Mat *A, char what[], size_t len)
{
  PetscFunctionBeginUser;
  switch (k) {
  case 0:
  case 1:
    PetscCall(ConvDiff(type, m, k ? 100.0 : 1.0, A));
    PetscCall(PetscSNPrintf(what, len, "%s convection-diffusion Pe %d", type, k ? 100 : 1));
    break;
  default:
    PetscCall(Block3(type, 16, A));
    PetscCall(PetscSNPrintf(what, len, "%s 3-dof blocks", type));
  }
  PetscFunctionReturn(0);
}

/* -ksp_view of a KSP of the given type before it is set up (its preconditioner side must already be the right) */
static PetscErrorCode ViewBeforeSetUp(KSPType type)
{
  KSP ksp;
  Mat A;

  PetscFunctionBeginUser;
  PetscCall(ConvDiff(MATGPUSTREAM, 4, 1.0, &A));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPView(ksp, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}
