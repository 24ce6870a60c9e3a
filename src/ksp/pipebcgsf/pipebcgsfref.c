/* Serial reference twins of the fused kernels of KSPPIPEBCGSF: the plain loops the unit tests compare with */
#include "pipebcgsfimpl.h"
#include "../common/pcblocks.h"

/* y = A D x, with D the inverse diagonal blocks or the identity */
void PBFSpMV_Ref(PetscInt m, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], PetscInt bs, const PetscScalar dinv[], const PetscScalar x[], PetscScalar y[])
{
  for (PetscInt i = 0; i < m; i++) {
    PetscScalar sum = 0;
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) sum += a[k] * GSBlockApply_Ref(bs, dinv, x, ja[k]);
    y[i] = sum;
  }
}

void PBFUpdateS_Ref(PetscInt n, PetscScalar alpha, const PetscScalar r[], const PetscScalar v[], PetscScalar s[], PetscScalar *ss)
{
  *ss = 0;
  for (PetscInt i = 0; i < n; i++) {
    s[i] = r[i] - alpha * v[i];
    *ss += s[i] * s[i];
  }
}

/* x += alpha M^{-1} p + omega M^{-1} s (M^{-1}: ph and sh given, else D or the identity); r = s - omega t;
   p = r + beta (p - omega v); <r, r0*> */
void PBFUpdate_Ref(PetscInt n, PetscInt bs, PetscScalar alpha, PetscScalar omega, PetscScalar beta, const PetscScalar dinv[], const PetscScalar ph[], const PetscScalar sh[], PetscScalar x[], PetscScalar r[], PetscScalar p[], const PetscScalar v[],
                   const PetscScalar s[], const PetscScalar t[], const PetscScalar r0[], PetscScalar *rr0)
{
  *rr0 = 0;
  for (PetscInt i = 0; i < n; i++) { /* x first: it needs the old p of the whole block */
    if (ph)
      x[i] += alpha * ph[i] + omega * sh[i];
    else {
      const PetscInt o = i - i % bs;
      PetscScalar    u = 0;
      for (PetscInt k = 0; k < (dinv ? bs : 1); k++) {
        const PetscInt j = dinv ? o + k : i;
        u += (dinv ? dinv[i * bs + k] : 1) * (alpha * p[j] + omega * s[j]);
      }
      x[i] += u;
    }
  }
  for (PetscInt i = 0; i < n; i++) {
    r[i] = s[i] - omega * t[i];
    p[i] = r[i] + beta * (p[i] - omega * v[i]);
    *rr0 += r[i] * r0[i];
  }
}
