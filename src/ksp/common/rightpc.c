#include "rightpc.h"

PetscErrorCode GSRightPCCreate(KSP ksp)
{
  PetscFunctionBegin;
  if (ksp->pc_side_set == PC_SIDE_DEFAULT) ksp->pc_side = PC_RIGHT; /* KSPSetType() restores pc_side_set for the next type */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's own check in KSPSetUp() ("KSP ... does not support preconditioner side LEFT") names neither the side the
   solver has nor what to do; this one does, when the options are read */
PetscErrorCode GSRightPCSetFromOptions(KSP ksp, GSOptionItems PetscOptionsObject, const char name[], const char twin[])
{
  const char *pre = GSPrefix((PetscObject)ksp);

  PetscFunctionBegin;
  GSOptionsCheck(PetscOptionsObject, ksp->pc_side_set == PC_SIDE_DEFAULT || ksp->pc_side_set == PC_RIGHT, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
                 "%s preconditions from the right only, not from the %s (-%sksp_pc_side %s or KSPSetPCSide()): leave the side out or give right, or use %s for %s preconditioning", name, ksp->pc_side_set == PC_LEFT ? "left" : "two sides", pre,
                 ksp->pc_side_set == PC_LEFT ? "left" : "symmetric", twin, ksp->pc_side_set == PC_LEFT ? "left" : "symmetric");
  GSOptionsCheck(PetscOptionsObject, ksp->normtype_set != KSP_NORM_PRECONDITIONED && ksp->normtype_set != KSP_NORM_NATURAL, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
                 "%s preconditions from the right only: it tests the unpreconditioned residual norm (or none), not the %s one (-%sksp_norm_type or KSPSetNormType()); use %s for it", name,
                 ksp->normtype_set == KSP_NORM_NATURAL ? "natural" : "preconditioned", pre, twin);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSRightPCView(KSP ksp, PetscViewer viewer, const char twin[])
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  right preconditioning only: %s preconditions from the left by default, so its iterates and residual norms differ\n", twin));
  PetscFunctionReturn(PETSC_SUCCESS);
}
