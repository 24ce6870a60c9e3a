/* Newer PETSc made PetscOptionItems a pointer type, which changes the signature of XXXSetFromOptions_ implementations
   (petscsys.h first: PETSc's headers expect it before petscoptions.h) */
#include <petscsys.h>
#include <petscoptions.h>
int main(void)
{
  PetscOptionItems o = NULL;
  (void)o;
  return 0;
}
