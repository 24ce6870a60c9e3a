/* The cantilever cube of the streaming paper (000_e3022f7eb214e8df.txt): hexahedral elements, n nodes per edge,
   dof (1, 3 or 6) unknowns per node, every node coupled with the 27 nodes of its neighbourhood (all their dofs). */
#pragma once

#include <petscmat.h>

#if !defined(PETSC_SUCCESS) /* PETSc < 3.19 returns plain 0 */
#  define PETSC_SUCCESS 0
#endif

#if defined(__cplusplus)
extern "C" {
#endif
/* Entries of global row `row`: columns (sorted) and values; returns their number (at most 27 dof) */
PetscInt CubeRow(PetscInt n, PetscInt dof, PetscInt row, PetscInt cols[], PetscScalar vals[]);
/* The CSR of rows [rstart, rend) (global column indices), allocated with PetscMalloc3 (free with PetscFree3) */
PetscErrorCode CubeCSR(PetscInt n, PetscInt dof, PetscInt rstart, PetscInt rend, PetscInt **ia, PetscInt **ja, PetscScalar **a);
/* The matrix of the given type (AIJ layout: seqaij, mpiaij, gpustream ...), rows split by PETSc, block size dof */
PetscErrorCode CubeCreate(MPI_Comm comm, PetscInt n, PetscInt dof, MatType type, Mat *A);
#if defined(__cplusplus)
}
#endif
