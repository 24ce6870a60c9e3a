/* Newer PETSc asks the matrix for its ordering (MPIAIJ's orders the diagonal block); PETSc 3.18 picks the diagonal
   block by the exact type name MATMPIAIJ, which MATGPUSTREAM's orderings handle (src/mat/gpustream/aijreaders.c) */
#include <petsc/private/matimpl.h>

int main(void)
{
  struct _MatOps o;
  o.getordering = NULL;
  return o.getordering != NULL;
}
