/* Serial reference twins of the fused kernels of KSPSGMRESF: the plain loops the unit tests compare with. V is the
   column-major basis with leading dimension n. */
#include <math.h>
#include "sgmresfimpl.h"

/* Row i of M^{-1} z: the identity (dinv NULL) or row i of its diagonal block's inverse */
static PetscScalar Precond(const PetscScalar dinv[], PetscInt bs, const PetscScalar z[], PetscInt i)
{
  PetscScalar s = 0;

  if (!dinv) return z[i];
  for (PetscInt c = 0; c < bs; c++) s += dinv[i * bs + c] * z[i - i % bs + c];
  return s;
}

/* V(:,k) = scale A M^{-1} V(:,k-1); sums[0] = <w,w>, sums[j] = <v_j,w>, 1 <= j < k */
void SGFSpMVDot_Ref(PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar dinv[], PetscInt bs, PetscInt k, PetscScalar scale, PetscScalar V[], PetscScalar sums[])
{
  const PetscScalar *z = V + (k - 1) * n;
  PetscScalar       *w = V + k * n;

  for (PetscInt i = 0; i < n; i++) {
    PetscScalar sum = 0;
    for (PetscInt q = ia[i]; q < ia[i + 1]; q++) sum += a[q] * Precond(dinv, bs, z, ja[q]);
    w[i] = scale * sum;
  }
  for (PetscInt j = 0; j < k; j++) {
    sums[j] = 0;
    for (PetscInt i = 0; i < n; i++) sums[j] += (j ? V[j * n + i] : w[i]) * w[i];
  }
}

/* w' = V(:,k) - sum_{1<=j<k} h[j] v_j; sums[0] = <w',w'> and, when refining, sums[j] = <v_j,w'> */
void SGFOrthogonalize_Ref(PetscInt n, PetscInt k, const PetscScalar h[], PetscBool refine, PetscScalar V[], PetscScalar sums[])
{
  PetscScalar *w = V + k * n;

  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 1; j < k; j++) w[i] -= h[j] * V[j * n + i];
  for (PetscInt j = 0; j < (refine ? k : 1); j++) {
    sums[j] = 0;
    for (PetscInt i = 0; i < n; i++) sums[j] += (j ? V[j * n + i] : w[i]) * w[i];
  }
}

/* rkk = sqrt(sums[0] - sum_j sums[j]^2) (the R2 terms when refining); V(:,k) = (w' - sum_j sums[j] v_j) / rkk (0 when
   rkk is 0); xi = <V(:,0), v_k> */
void SGFNormalize_Ref(PetscInt n, PetscInt k, PetscBool refine, const PetscScalar sums[], PetscScalar V[], PetscScalar *rkk, PetscScalar *xi)
{
  PetscScalar *w = V + k * n, nrm2 = sums[0];

  if (refine)
    for (PetscInt j = 1; j < k; j++) nrm2 -= sums[j] * sums[j];
  *rkk = nrm2 > 0 ? sqrt(nrm2) : 0;
  *xi  = 0;
  for (PetscInt i = 0; i < n; i++) {
    if (refine)
      for (PetscInt j = 1; j < k; j++) w[i] -= sums[j] * V[j * n + i];
    w[i] = *rkk > 0 ? w[i] / *rkk : 0;
    *xi += V[i] * w[i];
  }
}

/* r = b - A x; rr = <r,r> */
void SGFResidual_Ref(PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar x[], const PetscScalar b[], PetscScalar r[], PetscScalar *rr)
{
  *rr = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar sum = 0;
    for (PetscInt q = ia[i]; q < ia[i + 1]; q++) sum += a[q] * x[ja[q]];
    r[i] = b[i] - sum;
    *rr += r[i] * r[i];
  }
}

/* x += M^{-1} sum_{j<kk} c_j V(:,j); u: room for n scalars */
void SGFUpdateSolution_Ref(PetscInt n, PetscInt kk, const PetscScalar c[], const PetscScalar dinv[], PetscInt bs, const PetscScalar V[], PetscScalar x[], PetscScalar u[])
{
  for (PetscInt i = 0; i < n; i++) {
    u[i] = 0;
    for (PetscInt j = 0; j < kk; j++) u[i] += c[j] * V[j * n + i];
  }
  for (PetscInt i = 0; i < n; i++) x[i] += Precond(dinv, bs, u, i);
}
