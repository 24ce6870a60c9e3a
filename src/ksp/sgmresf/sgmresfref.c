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

/* Delayed refinement, iteration k: sums[j-1] = <v_j, V(:,k)>, sums[k-1+j-1] = <v_j, V(:,k-1)>, 1 <= j < k */
void SGFPairDots_Ref(PetscInt n, PetscInt k, const PetscScalar V[], PetscScalar sums[])
{
  for (PetscInt j = 1; j < k; j++) {
    sums[j - 1] = sums[k - 1 + j - 1] = 0;
    for (PetscInt i = 0; i < n; i++) {
      sums[j - 1] += V[j * n + i] * V[k * n + i];
      sums[k - 1 + j - 1] += V[j * n + i] * V[(k - 1) * n + i];
    }
  }
}

/* From the pairs of iteration k (a = sums, b = sums + k - 1): b_{1..k-2} are the second pass of w'_{k-1}, rho =
   sqrt(b_{k-1} - |b_{1..k-2}|^2); R (leading dimension ld) gets R(j,k-1) += b_j, R(k-1,k-1) = rho and the first pass
   of R(:,k) = (g - d) / rho with g_j = a_j (j < k-1), g_{k-1} = (a_{k-1} - b.a) / rho, d = R(:,2:k-1) b. coef:
   SpMVDotDelayed's layout (a, b, 1/rho, g_{k-1}); rec: step k-1's record. */
void SGFCoefficients_Ref(PetscInt k, const PetscScalar sums[], PetscInt ld, PetscScalar R[], PetscScalar coef[], PetscScalar rec[])
{
  const PetscInt     nc = k - 1;
  const PetscScalar *a = sums, *b = sums + nc;
  PetscScalar        nrm2 = b[nc - 1], ba = 0, ww = b[nc - 1], rho, inv;

  for (PetscInt j = 1; j < nc; j++) {
    nrm2 -= b[j - 1] * b[j - 1];
    ba += b[j - 1] * a[j - 1];
    ww += R[j + nc * ld] * R[j + nc * ld];
    R[j + nc * ld] += b[j - 1];
  }
  rho             = nrm2 > 0 ? sqrt(nrm2) : 0;
  inv             = rho > 0 ? 1 / rho : 0;
  R[nc + nc * ld] = rho;
  for (PetscInt i = 0; i < 2 * nc; i++) coef[i] = sums[i];
  coef[2 * nc]     = inv;
  coef[2 * nc + 1] = (a[nc - 1] - ba) * inv;
  for (PetscInt i = 1; i <= nc; i++) {
    PetscScalar d = 0, g = i < nc ? a[i - 1] : coef[2 * nc + 1];
    for (PetscInt j = 1; j < nc; j++)
      if (i <= j + 1) d += R[i + (j + 1) * ld] * b[j - 1];
    R[i + k * ld] = (g - d) * inv;
  }
  rec[SGF_REC_RKK]     = rho;
  rec[SGF_REC_REFINED] = 1;
  rec[SGF_REC_WW]      = ww;
}

/* v_{k-1} = (V(:,k-1) - sum_{j<k-1} b_j v_j) / rho, V(:,k) = (V(:,k) - sum_{j<k} g_j v_j) / rho with coef from
   SGFCoefficients_Ref(); xi = <V(:,0), v_{k-1}> */
void SGFOrthogonalizeDelayed_Ref(PetscInt n, PetscInt k, const PetscScalar coef[], PetscScalar V[], PetscScalar *xi)
{
  const PetscInt nc = k - 1;

  for (PetscInt i = 0; i < n; i++) {
    PetscScalar v = V[nc * n + i], w = V[k * n + i];
    for (PetscInt j = 1; j < nc; j++) v -= coef[nc + j - 1] * V[j * n + i];
    v *= coef[2 * nc];
    V[nc * n + i] = v;
    for (PetscInt j = 1; j < nc; j++) w -= coef[j - 1] * V[j * n + i];
    V[k * n + i] = (w - coef[2 * nc + 1] * v) * coef[2 * nc];
  }
  *xi = 0;
  for (PetscInt i = 0; i < n; i++) *xi += V[i] * V[nc * n + i];
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
