/* The fused solvers that precondition from the right only (KSPPIPEBCGSF, KSPSGMRESF): right preconditioning from the
   start (so -ksp_view says so before the first solve as after it), a clear error for a side or a norm they do not
   have, and a line of -ksp_view naming the difference from their PETSc twins, which precondition from the left by
   default. */
#pragma once

#include <petsc/private/kspimpl.h>
#include "../../sys/gpustreamimpl.h"

/* In KSPCreate_XXX(): the right side, unless the user chose one (KSPSetUp() then refuses any other) */
PETSC_INTERN PetscErrorCode GSRightPCCreate(KSP);
/* In KSPSetFromOptions_XXX() (options block): PETSC_ERR_SUP for a left or symmetric side or a preconditioned or
   natural norm, set by option or before; name: the solver's, twin: the PETSc solver to use instead */
PETSC_INTERN PetscErrorCode GSRightPCSetFromOptions(KSP, GSOptionItems, const char[], const char[]);
/* In KSPView_XXX() (ASCII) */
PETSC_INTERN PetscErrorCode GSRightPCView(KSP, PetscViewer, const char[]);
