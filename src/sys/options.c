/* Option values checked before PETSc reads them, so that every bad value is an error naming its option, and an error
   raised inside an options block leaves nothing allocated (PETSc frees the block's strings only in PetscOptionsEnd) */
#include <petsc/private/petscimpl.h>
#include "gpustreamimpl.h"

const char *GSPrefix(PetscObject obj)
{
  return obj && obj->prefix ? obj->prefix : "";
}

PetscErrorCode GSOptionsAbandon(GSOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  if (PetscOptionsObject) PetscCall(PetscOptionsEnd_Private(PetscOptionsObject));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's reading of the value, its error (not printed) as *ok = false */
static PetscErrorCode Readable(const char value[], GSOptionKind kind, PetscBool *ok)
{
  PetscErrorCode ierr;
  PetscBool      b;
  PetscInt       i;
  PetscReal      r;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = kind == GS_OPTION_BOOL ? PetscOptionsStringToBool(value, &b) : kind == GS_OPTION_INT ? PetscOptionsStringToInt(value, &i) : PetscOptionsStringToReal(value, &r);
  PetscCall(PetscPopErrorHandler());
  *ok = (PetscBool)!ierr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSOptionsCheckValue(GSOptionItems PetscOptionsObject, PetscObject obj, const char name[], GSOptionKind kind, const char *const list[], PetscInt n)
{
  PetscOptions options = obj ? obj->options : NULL;
  const char  *prefix  = obj ? obj->prefix : NULL;
  MPI_Comm     comm    = obj ? PetscObjectComm(obj) : PETSC_COMM_SELF;
  char         value[256], full[256], choices[256] = "";
  PetscBool    set, ok = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(options, prefix, name, value, sizeof(value), &set));
  if (!set) PetscFunctionReturn(PETSC_SUCCESS);
  if (kind == GS_OPTION_LIST) {
    PetscInt  idx;
    PetscEnum e;
    if (n >= 0)
      PetscCall(PetscEListFind(n, list, value, &idx, &ok));
    else
      PetscCall(PetscEnumFind(list, value, &e, &ok));
  } else
    PetscCall(Readable(value, kind, &ok));
  if (ok) PetscFunctionReturn(PETSC_SUCCESS);
  if (kind == GS_OPTION_LIST)
    for (PetscInt i = 0; n >= 0 ? i < n : list[i + 2] != NULL; i++) { /* an enum's list ends with its type, prefix and NULL */
      PetscCall(PetscStrlcat(choices, i ? ", " : "", sizeof(choices)));
      PetscCall(PetscStrlcat(choices, list[i], sizeof(choices)));
    }
  PetscCall(PetscSNPrintf(full, sizeof(full), "-%s%s", prefix ? prefix : "", name + 1));
  PetscCall(GSOptionsAbandon(PetscOptionsObject));
  switch (kind) {
  case GS_OPTION_BOOL:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: give true or false", full, value);
  case GS_OPTION_INT:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: give an integer", full, value);
  case GS_OPTION_REAL:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: give a number", full, value);
  default:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: give one of %s", full, value, choices);
  }
}
