/* The inverse diagonal, or inverse diagonal blocks, that the fused solvers take from PCJACOBI and PCPBJACOBI. Shared
   by KSPPIPECGFUSED, KSPPIPEBCGSF and KSPSGMRESF. */
#pragma once

#include <petscpc.h>
#include "../../sys/gpustreamimpl.h"

PETSC_INTERN PetscErrorCode GSPCGetInverseBlocks(PC, PetscInt, Vec, Vec, PetscScalar **);
