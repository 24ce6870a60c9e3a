/* The 2D 5-point Laplacian on an m x m grid, row by row into a preallocated (gpustream or AIJ) matrix: bench_poisson's
   and bench_matmult's operator */
#pragma once

#include <petscmat.h>

static inline PetscErrorCode Poisson2DAssemble(Mat A, PetscInt m)
{
  PetscInt Istart, Iend;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJSetPreallocation(A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(A, &Istart, &Iend));
  for (PetscInt row = Istart; row < Iend; row++) {
    const PetscInt i = row % m, j = row / m;
    PetscInt       cols[5], k     = 0;
    PetscScalar    v[5];
    if (j > 0) cols[k] = row - m, v[k++] = -1.0;
    if (i > 0) cols[k] = row - 1, v[k++] = -1.0;
    cols[k] = row, v[k++] = 4.0;
    if (i < m - 1) cols[k] = row + 1, v[k++] = -1.0;
    if (j < m - 1) cols[k] = row + m, v[k++] = -1.0;
    PetscCall(MatSetValues(A, 1, &row, k, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0); /* PETSC_SUCCESS came with PETSc 3.19 */
}
