/* What the Mat tests compare vectors with */
#pragma once

#include <petscvec.h>

/* max |a - b| over max(1, max |b|) */
static PetscErrorCode VecRelDiff(Vec a, Vec b, PetscReal *d)
{
  Vec       t;
  PetscReal nb;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(a, &t));
  PetscCall(VecWAXPY(t, -1.0, a, b));
  PetscCall(VecNorm(t, NORM_INFINITY, d));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  *d /= PetscMax(nb, 1.0);
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}
