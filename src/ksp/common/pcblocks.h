/* The inverse diagonal, or inverse diagonal blocks, that the fused solvers take from PCJACOBI and PCPBJACOBI. Shared
   by KSPPIPECGFUSED, KSPPIPEBCGSF and KSPSGMRESF. */
#pragma once

#include <petscpc.h>
#include "../../sys/gpustreamimpl.h"

PETSC_INTERN PetscErrorCode GSPCGetInverseBlocks(PC, PetscInt, Vec, Vec, PetscScalar **);
/* Serial twin of the kernels' block products: (D v)_i with D in n / bs row-major bs x bs blocks (D[i * bs + c]), or
   v_i when D is NULL */
PETSC_INTERN PetscScalar GSBlockApply_Ref(PetscInt, const PetscScalar[], const PetscScalar[], PetscInt);
