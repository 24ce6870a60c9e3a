/* KSPSetUp() of the fused solvers: the device work first (device memory is the scarcer), then PETSc's work vectors */
#pragma once

#include <petsc/private/kspimpl.h>
#include "../../sys/gpustreamimpl.h"

/* A solver's device allocations for the operators Amat, Pmat of local size n (its Allocate_Private) */
typedef PetscErrorCode (*GSWorkAllocate)(KSP, Mat, Mat, PetscInt, GSDeviceMat *, GSDeviceMat *, GSHalo *);

/* allocate for the operators once they are set, then nwork PETSc work vectors at the first set-up. Called again when
   the operators change (ksp->setupnewmatrix): the work then follows the new operator. */
PETSC_INTERN PetscErrorCode GSKSPSetUp(KSP, GSWorkAllocate, PetscInt);

/* r = b - A x on the host vectors x, b, r; with a zero initial guess x is set to 0 and r = b */
PETSC_INTERN PetscErrorCode GSKSPHostResidual(KSP, Mat, Vec, Vec, Vec);
