/* Newer PETSc (3.25 has it) returns PetscErrorMessage()'s specific message as const char *; C only warns about the
   mismatch, so the check compiles this with -Werror=incompatible-pointer-types (the fault tests read the message) */
#include <petscsys.h>
int main(void)
{
  const char *s = NULL;
  return (int)PetscErrorMessage(PETSC_ERR_MEM, NULL, &s);
}
