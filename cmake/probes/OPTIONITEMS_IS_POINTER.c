/* Newer PETSc made PetscOptionItems a pointer type, which changes the signature of XXXSetFromOptions_ implementations */
#include <petscoptions.h>
int main(void)
{
  PetscOptionItems o = NULL;
  (void)o;
  return 0;
}
