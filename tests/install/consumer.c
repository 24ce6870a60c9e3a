/* A program built against the installed plugin, once with its CMake package and once with pkg-config */
#include <petscgpustream.h>
int main(int argc, char **argv)
{
  Mat A;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(MatCreateGPUStream(PETSC_COMM_SELF, 4, 4, 1, NULL, &A));
  for (PetscInt i = 0; i < 4; i++) PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatView(A, NULL));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
