/* Kokkos lifetime for the plugin: PETSc does not initialize Kokkos, so the plugin does, once, on first use. */
#include "kokkosimpl.hpp"

static PetscBool gs_kokkos_ours = PETSC_FALSE; /* we initialized it, so we finalize it */

static PetscErrorCode PetscGPUStreamKokkosFinalize(void)
{
  PetscFunctionBegin;
  if (gs_kokkos_ours && Kokkos::is_initialized()) GSCallKokkos(Kokkos::finalize());
  gs_kokkos_ours = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscGPUStreamKokkosInitialize(void)
{
  PetscFunctionBegin;
  if (Kokkos::is_initialized()) PetscFunctionReturn(PETSC_SUCCESS);
  {
    char  arg0[] = "petscgpustream";
    char *argv[] = {arg0, nullptr};
    int   argc   = 1;
    GSCallKokkos(Kokkos::initialize(argc, argv));
  }
  gs_kokkos_ours = PETSC_TRUE;
  PetscCall(PetscRegisterFinalize(PetscGPUStreamKokkosFinalize));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *PetscGPUStreamExecutionSpace(void)
{
  return gpustream::Exec::name();
}
