/* Newer PETSc has MatEliminateZeros() as an operation of the matrix (AIJ's drops entries on the host), which
   MATGPUSTREAM wraps */
#include <petsc/private/matimpl.h>

int main(void)
{
  struct _MatOps o;
  o.eliminatezeros = NULL;
  return o.eliminatezeros != NULL;
}
