/* The true-residual check the fused solvers run once at convergence: its options, its result, its reports under
   -ksp_view and -ksp_converged_reason. Shared by KSPPIPECGFUSED and KSPPIPEBCGSF. */
#pragma once

#include <petsc/private/kspimpl.h>
#include "../../sys/gpustreamimpl.h"

typedef struct {
  PetscBool check;      /* compute the true residual at convergence */
  PetscReal factor;     /* report a true norm this many times the recursive one */
  PetscReal truenorm;   /* of the last convergence, -1 when not checked */
  PetscReal stalled;    /* the true norm at which the last solve stopped short of the tolerance (attainable accuracy), else -1 */
  char      prefix[32]; /* of the options: "pipecgfused" gives -ksp_pipecgfused_check_true_residual, ... */
} GSResidualGap;

PETSC_INTERN PetscErrorCode GSResidualGapInit(GSResidualGap *, const char[]);
PETSC_INTERN PetscErrorCode GSResidualGapSetFromOptions(GSResidualGap *, KSP, GSOptionItems);
PETSC_INTERN PetscReal      GSResidualGapRatio(const GSResidualGap *, PetscReal);
PETSC_INTERN PetscErrorCode GSResidualGapView(const GSResidualGap *, KSP, PetscViewer);
PETSC_INTERN PetscErrorCode GSResidualGapReasonView(KSP, void *);
PETSC_INTERN PetscErrorCode GSResidualGapReasonViewRemove(KSP, const GSResidualGap *);
