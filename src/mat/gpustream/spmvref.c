/* Serial reference twin of the device SpMV kernels, used by the unit tests */
#include "../../sys/gpustreamimpl.h"

void GSSpMV_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  for (PetscInt i = 0; i < m; i++) {
    PetscScalar sum = 0;
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) sum += a[k] * x[ja[k]];
    y[i] = z ? z[i] + sum : sum;
  }
}
