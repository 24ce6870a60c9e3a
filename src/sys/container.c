/* Pointers composed on PETSc objects in containers, across the PETSc versions' container destroy interfaces */
#include "gpustreamimpl.h"

PetscErrorCode GSObjectComposePointer(PetscObject obj, const char name[], void *ptr, PetscErrorCode (*destroy)(void *))
{
  PetscContainer c = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  ierr = PetscContainerCreate(PETSC_COMM_SELF, &c);
  if (!ierr) ierr = PetscContainerSetPointer(c, ptr);
  if (!ierr) ierr = GSContainerSetDestroy(c, destroy);
  if (ierr) { /* ptr is not the container's yet */
#if PETSC_VERSION_GE(3, 23, 0)
    PetscCall((*destroy)(&ptr));
#else
    PetscCall((*destroy)(ptr));
#endif
    PetscCall(PetscContainerDestroy(&c));
    PetscCall(ierr);
  }
  ierr = PetscObjectCompose(obj, name, (PetscObject)c);
  PetscCall(PetscContainerDestroy(&c)); /* obj holds it, or it goes with ptr */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
