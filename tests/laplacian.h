/* The 2D 5-point Laplacian the vector tests solve (tests/devicevec.c, tests/hostvecs.c) */
#pragma once

#include <petscmat.h>

/* On an m x m grid, the diagonal diag7 instead of 4 on every seventh row (a matrix without the symmetries of the
   grid); fromoptions: MatSetFromOptions() after the type is set, so that the type's options apply */
static PetscErrorCode Laplacian2D(MatType type, PetscInt m, PetscScalar diag7, PetscBool fromoptions, Mat *A)
{
  PetscInt rstart, rend, n = m * m;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  if (fromoptions) PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt    i = row % m, j = row / m, cols[4] = {row - 1, row + 1, row - m, row + m};
    const PetscBool   in[4] = {i > 0, i<m - 1, j> 0, j < m - 1};
    const PetscScalar diag = row % 7 ? 4.0 : diag7, off = -1.0;
    PetscCall(MatSetValues(*A, 1, &row, 1, &row, &diag, INSERT_VALUES));
    for (int k = 0; k < 4; k++)
      if (in[k]) PetscCall(MatSetValues(*A, 1, &row, 1, &cols[k], &off, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}
