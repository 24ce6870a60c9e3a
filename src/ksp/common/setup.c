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

PetscErrorCode GSKSPHostResidual(KSP ksp, Mat A, Vec X, Vec B, Vec R)
{
  PetscFunctionBegin;
  if (ksp->guess_zero) {
    PetscCall(VecSet(X, 0.0));
    PetscCall(VecCopy(B, R));
  } else {
    PetscCall(KSP_MatMult(ksp, A, X, R));
    PetscCall(VecAYPX(R, -1.0, B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
