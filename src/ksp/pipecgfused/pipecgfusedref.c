/* Serial reference twins of the fused kernels of KSPPIPECGFUSED: the plain loops the unit tests compare with */
#include "pipecgfusedimpl.h"
#include "../common/pcblocks.h"

void PCGFUpdate_Ref(PetscInt n, PetscInt bs, PetscScalar alpha, PetscScalar beta, KSPNormType normtype, const PetscScalar dinv[], PetscScalar x[], PetscScalar r[], PetscScalar p[], const PetscScalar w[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    x[i] += alpha * p[i];
    r[i] -= alpha * w[i];
  }
  for (PetscInt i = 0; i < n; i++) { /* z needs the whole new block of r */
    const PetscScalar z = GSBlockApply_Ref(bs, dinv, r, i);
    p[i]                = z + beta * p[i];
    sums[0] += r[i] * z;
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += z * z;
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}

void PCGFUpdateNorms_Ref(PetscInt n, PetscScalar alpha, const PetscScalar x[], const PetscScalar r[], const PetscScalar p[], const PetscScalar w[], PetscScalar norms[4])
{
  norms[0] = norms[1] = norms[2] = norms[3] = 0;
  for (PetscInt i = 0; i < n; i++) {
    const PetscScalar ri = r[i] - alpha * w[i];
    norms[0] += x[i] * x[i];
    norms[1] += p[i] * p[i];
    norms[2] += w[i] * w[i];
    norms[3] += ri * ri;
  }
}

void PCGFUpdateX_Ref(PetscInt n, PetscScalar alpha, const PetscScalar p[], PetscScalar x[])
{
  for (PetscInt i = 0; i < n; i++) x[i] += alpha * p[i];
}

void PCGFSums_Ref(PetscInt n, PetscInt bs, KSPNormType normtype, const PetscScalar dinv[], const PetscScalar r[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    const PetscScalar z = GSBlockApply_Ref(bs, dinv, r, i);
    sums[0] += r[i] * z;
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += z * z;
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}

void PCGFSpMVDot_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], PetscInt bs, const PetscScalar dinv[], const PetscScalar p[], PetscScalar w[], PetscScalar sums[2])
{
  GSSpMV_Ref(m, ia, ja, a, p, NULL, w);
  PCGFDot_Ref(m, bs, dinv, NULL, p, w, sums);
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

/* <p,w> and <w, M w> with M given as the inverse diagonal blocks dinv, or as the vector q = M w when dinv is NULL, or
   the identity */
void PCGFDot_Ref(PetscInt n, PetscInt bs, const PetscScalar dinv[], const PetscScalar q[], const PetscScalar p[], const PetscScalar w[], PetscScalar sums[2])
{
  sums[0] = sums[1] = 0;
  for (PetscInt i = 0; i < n; i++) {
    sums[0] += p[i] * w[i];
    sums[1] += w[i] * (dinv ? GSBlockApply_Ref(bs, dinv, w, i) : (q ? q[i] : w[i]));
  }
}

/* Ghysels and Vanroose's update (see pipecgfusedimpl.h), x r u w m n z q p s in that order of arguments */
void PCGFOverlapUpdate_Ref(PetscInt n, PetscScalar alpha, PetscScalar beta, KSPNormType normtype, const PetscScalar dinv[], PetscBool apply, PetscScalar x[], PetscScalar r[], PetscScalar u[], PetscScalar w[], PetscScalar m[], const PetscScalar nv[],
                           PetscScalar z[], PetscScalar q[], PetscScalar p[], PetscScalar s[], PetscScalar sums[3])
{
  sums[0] = sums[1] = sums[2] = 0;
  for (PetscInt i = 0; i < n; i++) {
    z[i] = nv[i] + beta * z[i];
    q[i] = m[i] + beta * q[i];
    p[i] = u[i] + beta * p[i];
    s[i] = w[i] + beta * s[i];
    x[i] += alpha * p[i];
    u[i] -= alpha * q[i];
    w[i] -= alpha * z[i];
    r[i] -= alpha * s[i];
    if (!apply) m[i] = dinv ? dinv[i] * w[i] : w[i];
    sums[0] += r[i] * u[i];
    sums[2] += w[i] * u[i];
    if (normtype == KSP_NORM_PRECONDITIONED)
      sums[1] += u[i] * u[i];
    else if (normtype == KSP_NORM_UNPRECONDITIONED)
      sums[1] += r[i] * r[i];
  }
}
