/* What the tests agree on across processes (aijcode.c, hostvecs.c, kspgpustream.c) */
#pragma once

#include <petscsys.h>

/* *b becomes whether it holds on every process of PETSC_COMM_WORLD (an int reduction: PetscBool's MPI type changed
   with PETSc 3.24) */
static PetscErrorCode AllTrue(PetscBool *b)
{
  PetscMPIInt v = *b ? 1 : 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
  *b = v ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}
