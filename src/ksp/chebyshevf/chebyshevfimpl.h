/* The declared kernels of KSPCHEBYSHEVF (chebyshevf.kokkos.cxx on the default Kokkos execution space, their serial
   twins in chebyshevfref.c for the tests). One Chebyshev step of the first kind on n rows, with D^{-1} the inverse
   diagonal of a fused Jacobi (the identity without a preconditioner):
     r = b - A x          (A the device matrix of one process, in the same kernel; or r = b - ax with ax = A x
                           computed before; or r = b when x is NULL, a zero initial guess)
     z = D^{-1} r
     y = c1 y + c2 x + c3 z
   and the squared norm of r or of z (ChebFNorm) summed over the local rows. y is written in place: it may be the
   iterate before x (each row reads only its own y), never x itself when A is given (x is gathered). */
#pragma once

#include "../../sys/gpustreamimpl.h"

#if defined(PETSC_USE_COMPLEX)
#  error "PETSc GPUStream supports real scalars only"
#endif

PETSC_INTERN PetscLogEvent CHEBF_Step; /* a step's kernel */

typedef enum { CHEBF_NORM_NONE, CHEBF_NORM_R, CHEBF_NORM_Z } ChebFNorm;

/* The step above; arrays in the execution space's memory. y NULL: no update (a residual norm alone); c1 = 0: y is not
   read; d NULL: the identity; *sum the local squared norm unless norm is CHEBF_NORM_NONE (the host then waits for
   the kernel). With A given, x has A's columns (one process); ax is ignored. */
PETSC_INTERN PetscErrorCode ChebFStep(PetscInt, GSDeviceMat, const PetscScalar[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar, PetscScalar, PetscScalar, ChebFNorm, PetscReal *);
/* Its serial twin, with A as host CSR (ia, ja, a; NULL ia: ax given, or none) */
PETSC_INTERN PetscErrorCode ChebFStep_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscScalar[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar, PetscScalar, PetscScalar,
                                          ChebFNorm, PetscReal *);

/* v[i] = PETSc's noisy right-hand side for the eigenvalue estimate (KSPSetNoisy_Private()'s hash of the global index
   istart + i), written in the execution space's memory */
PETSC_INTERN PetscErrorCode ChebFNoisy(PetscInt, PetscInt, PetscScalar[]);
PETSC_INTERN PetscScalar    ChebFNoisy_Ref(PetscInt);
