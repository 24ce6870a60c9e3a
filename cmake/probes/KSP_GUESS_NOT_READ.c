/* Newer PETSc lets a KSP type that never reads a zero initial guess skip KSPSolve()'s VecSet() of x */
#include <petsc/private/kspimpl.h>

int main(void)
{
  struct _p_KSP ksp;
  ksp.guess_not_read = PETSC_TRUE;
  return ksp.guess_not_read ? 0 : 1;
}
