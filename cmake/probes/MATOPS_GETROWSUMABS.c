/* Newer PETSc has MatGetRowSumAbs() as an operation of the matrix (AIJ's reads the host arrays), which MATGPUSTREAM
   wraps */
#include <petsc/private/matimpl.h>

int main(void)
{
  struct _MatOps o;
  o.getrowsumabs = NULL;
  return o.getrowsumabs != NULL;
}
