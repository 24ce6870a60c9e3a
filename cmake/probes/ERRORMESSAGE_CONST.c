/* Newer PETSc (3.25 has it) returns PetscErrorMessage()'s specific message as const char *; C only warns about the
   mismatch, so the check compiles this with -Werror=incompatible-pointer-types (the fault tests read the message).
   The function's address goes to a pointer of the newer type, with no call: the check compiles, links nothing. */
#include <petscsys.h>

PetscErrorCode (*gs_errormessage)(PetscErrorCode, const char *[], const char *[]) = PetscErrorMessage;

int main(void)
{
  return 0;
}
