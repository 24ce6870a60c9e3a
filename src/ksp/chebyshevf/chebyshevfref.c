/* Serial twins of KSPCHEBYSHEVF's kernels (chebyshevfimpl.h), for the tests */
#include "chebyshevfimpl.h"

PetscErrorCode ChebFStep_Ref(PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar ax[], const PetscScalar b[], const PetscScalar d[], const PetscScalar x[], PetscScalar y[], PetscScalar c1, PetscScalar c2,
                             PetscScalar c3, ChebFNorm norm, PetscReal *sum)
{
  PetscReal s = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar p = 0, r, z;
    if (ia && x)
      for (PetscInt k = ia[i]; k < ia[i + 1]; k++) p += a[k] * x[ja[k]];
    else if (ax)
      p = ax[i];
    r = b[i] - p;
    z = d ? d[i] * r : r;
    if (y) y[i] = (c1 != 0 ? c1 * y[i] : 0) + (x ? c2 * x[i] : 0) + c3 * z;
    s += norm == CHEBF_NORM_R ? r * r : (norm == CHEBF_NORM_Z ? z * z : 0);
  }
  if (sum) *sum = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscScalar ChebFNoisy_Ref(PetscInt xx)
{
  unsigned int x = (unsigned int)xx;
  x              = ((x >> 16) ^ x) * 0x45d9f3b;
  x              = ((x >> 16) ^ x) * 0x45d9f3b;
  x              = ((x >> 16) ^ x);
  return (PetscScalar)(((PetscInt64)x - 2147483648) * 5.e-10);
}
