#include "setup.h"

PetscErrorCode GSKSPSetUp(KSP ksp, GSWorkAllocate allocate, PetscInt nwork)
{
  Mat         Amat, Pmat;
  GSDeviceMat dA, dB;
  GSHalo      halo;
  PetscBool   set;
  PetscInt    n;

  PetscFunctionBegin;
  PetscCall(KSPGetOperatorsSet(ksp, &set, NULL));
  if (set) {
    PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
    PetscCall(MatGetLocalSize(Amat, NULL, &n));
    PetscCall((*allocate)(ksp, Amat, Pmat, n, &dA, &dB, &halo));
  }
  if (ksp->setupstage == KSP_SETUP_NEW) PetscCall(KSPSetWorkVecs(ksp, nwork));
  PetscFunctionReturn(PETSC_SUCCESS);
}
