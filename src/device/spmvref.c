/* Serial reference twins of the device SpMV kernels, used by the unit tests */
#include "gpustreamimpl.h"

void GSSpMV_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  for (PetscInt i = 0; i < m; i++) {
    PetscScalar sum = z ? z[i] : 0; /* from z, as the one-lane kernels */
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) sum += a[k] * x[ja[k]];
    y[i] = sum;
  }
}

void GSSpMMBlock_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], PetscInt k, const PetscScalar X[], PetscInt ldx, PetscScalar Y[], PetscInt ldy)
{
  for (PetscInt c = 0; c < k; c++) GSSpMV_Ref(m, ia, ja, a, X + c * ldx, NULL, Y + c * ldy);
}
