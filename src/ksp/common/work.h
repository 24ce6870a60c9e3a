/* The device work of the three fused solvers (C interface; work.hpp for the kernels, work.kokkos.cxx): the
   preconditioner as their kernels see it, and the base every solver's work shares: its vectors, numbered by the
   solver's own ids, the inverse diagonal (blocks) of a fused Jacobi, and the counts -ksp_view reports. */
#pragma once

#include "../../sys/gpustreamimpl.h"

/* The preconditioner as the kernels see it: none, Jacobi (D^{-1} on the device, fused), point-block Jacobi (the
   inverse diagonal blocks on the device, fused), or applied on the host (any PC) */
typedef enum { GS_PC_NONE, GS_PC_JACOBI, GS_PC_PBJACOBI, GS_PC_APPLY } GSKSPPC;

/* A solver's device work (opaque to C), through its base; each solver's work type gives its base (PCGFWorkBase(), ...) */
typedef struct _n_GSWork *GSWork;

/* Work vector v from a host array (a NULL array zeroes it) and back, counted in the copies */
PETSC_INTERN PetscErrorCode GSWorkSetVec(GSWork, PetscInt, const PetscScalar[]);
PETSC_INTERN PetscErrorCode GSWorkGetVec(GSWork, PetscInt, PetscScalar[]);
/* Kernel launches, device-to-host transfers and vector copies so far */
PETSC_INTERN PetscErrorCode GSWorkGetCounts(GSWork, PetscInt *, PetscInt *, PetscInt *);
/* D^{-1} of a fused (point-block) Jacobi: the n / bs inverse diagonal blocks, each bs x bs row-major (bs = 1: Jacobi's
   inverse diagonal); bs must divide n and be at most the largest block the work's kernels take */
PETSC_INTERN PetscErrorCode GSWorkSetBlocks(GSWork, PetscInt, const PetscScalar[]);

/* GSWorkLoad() copies a PETSc vector into the work vector the solver numbers v, GSWorkStore() the work vector into
   the PETSc vector; on the device for device arrays, else between host and device (counted in the copies) */
PETSC_INTERN PetscErrorCode GSWorkLoad(GSWork, PetscInt, Vec);
PETSC_INTERN PetscErrorCode GSWorkStore(GSWork, PetscInt, Vec);
/* The same for the block of a dense matrix's local rows, column-major without padding (MATDENSECUDA in place): load
PETSC_TRUE, from the matrix into work vector v; PETSC_FALSE, from v into the matrix */
PETSC_INTERN PetscErrorCode GSWorkTransferDense(GSWork, PetscInt, Mat, PetscBool);
/* Work vectors on the device alone: v = 0 and dst = src (queued), and the 2-norm of v over comm */
PETSC_INTERN PetscErrorCode GSWorkZero(GSWork, PetscInt);
PETSC_INTERN PetscErrorCode GSWorkCopy(GSWork, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode GSWorkNorm(GSWork, PetscInt, MPI_Comm, PetscReal *);
