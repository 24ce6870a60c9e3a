/* Newer PETSc dropped the graph from the arguments of PCGAMG's prolongator, which MATGPUSTREAM wraps for the classical
   direct interpolation (src/mat/gpustream/aijreaders.c) */
#include <petsc/private/pcgamgimpl.h>

static PetscErrorCode Prolongator(PC pc, Mat A, PetscCoarsenData *agg, Mat *P)
{
  return 0;
}

int main(void)
{
  struct _PCGAMGOps o;
  o.prolongator = Prolongator;
  return o.prolongator == NULL;
}
