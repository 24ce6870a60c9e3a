/* Serial reference twins of the fused kernels of KSPPIPECGFUSED: the plain loops the unit tests compare with */
#include "pipecgfusedimpl.h"

void PCGFUpdate_Ref(PetscInt n, PetscScalar alpha, PetscScalar beta, KSPNormType normtype, const PetscScalar dinv[], PetscScalar x[], PetscScalar r[], PetscScalar p[], const PetscScalar w[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    x[i] += alpha * p[i];
    r[i] -= alpha * w[i];
    const PetscScalar z = dinv ? dinv[i] * r[i] : r[i];
    p[i]                = z + beta * p[i];
    sums[0] += r[i] * z;
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += z * z;
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}

void PCGFUpdateX_Ref(PetscInt n, PetscScalar alpha, const PetscScalar p[], PetscScalar x[])
{
  for (PetscInt i = 0; i < n; i++) x[i] += alpha * p[i];
}

void PCGFSums_Ref(PetscInt n, KSPNormType normtype, const PetscScalar dinv[], const PetscScalar r[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    const PetscScalar z = dinv ? dinv[i] * r[i] : r[i];
    sums[0] += r[i] * z;
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += z * z;
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}

void PCGFSpMVDot_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscScalar dinv[], const PetscScalar p[], PetscScalar w[], PetscScalar sums[2])
{
  GSSpMV_Ref(m, ia, ja, a, p, NULL, w);
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < m; i++) {
    sums[0] += p[i] * w[i];
    sums[1] += w[i] * (dinv ? dinv[i] : 1) * w[i];
  }
}

/* Update with a PC applied on the host: z follows its recurrence with q = M^{-1} w */
void PCGFUpdateApply_Ref(PetscInt n, PetscScalar alpha, PetscScalar beta, KSPNormType normtype, PetscScalar x[], PetscScalar r[], PetscScalar z[], PetscScalar p[], const PetscScalar w[], const PetscScalar q[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    x[i] += alpha * p[i];
    r[i] -= alpha * w[i];
    z[i] -= alpha * q[i];
    p[i] = z[i] + beta * p[i];
    sums[0] += r[i] * z[i];
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += z[i] * z[i];
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}

/* <p,w> and <w, M w> with M given as the diagonal dinv, or as the vector q = M w when dinv is NULL, or the identity */
void PCGFDot_Ref(PetscInt n, const PetscScalar dinv[], const PetscScalar q[], const PetscScalar p[], const PetscScalar w[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    sums[0] += p[i] * w[i];
    sums[1] += w[i] * (dinv ? dinv[i] * w[i] : (q ? q[i] : w[i]));
  }
}
