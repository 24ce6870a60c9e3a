/* PETSc 3.21 added the injection indices to MatCreateGraph(), which MATGPUSTREAM wraps */
#include <petscmat.h>
PETSC_EXTERN PetscErrorCode MatCreateGraph(Mat, PetscBool, PetscBool, PetscReal, PetscInt, PetscInt[], Mat *);

int main(void)
{
  return 0;
}
