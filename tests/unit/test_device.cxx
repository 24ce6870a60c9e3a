/* The Kokkos layer: errors of Kokkos as PETSc errors */
#include "unit.hpp"

namespace unit
{
/* A View larger than any memory (2^58 bytes) */
PetscErrorCode AllocateHuge()
{
  PetscFunctionBegin;
  GSCallKokkos(gpustream::DView<PetscScalar> v("unit::huge", (size_t)1 << 55));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ThrowText(const char *what)
{
  PetscFunctionBegin;
  GSCallKokkos(throw std::runtime_error(what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A failed allocation is PETSC_ERR_MEM (with the hint of GS_OOM_MESSAGE) in every Kokkos' wording; another Kokkos error PETSC_ERR_LIB */
void TestAllocationFailure()
{
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(AllocateHuge() == PETSC_ERR_MEM, "a View larger than memory is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos failed to allocate memory for label \"x\".  Allocation using MemorySpace named \"Cuda\" failed with the following error:  Allocation of size 16 MiB failed") == PETSC_ERR_MEM, "Kokkos 3 to 4.3's wording is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: Host memory space failed to allocate 16 MiB (label=\"x\").") == PETSC_ERR_MEM, "Kokkos 4.4 and later's wording (host) is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: Cuda memory space failed to allocate 2 GiB (label=\"x\").") == PETSC_ERR_MEM, "Kokkos 4.4 and later's wording (CUDA) is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: the execution space is not initialized") == PETSC_ERR_LIB, "another Kokkos error is PETSC_ERR_LIB");
  PetscPopErrorHandler();
}
} // namespace unit
