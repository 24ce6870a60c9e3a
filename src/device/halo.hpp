/* The device side of the halo exchange of a matrix distributed by rows (halo.kokkos.cxx) */
#pragma once

#include "kokkosimpl.hpp"

namespace gpustream
{
/* Halo exchange of a distributed matrix: Begin gathers the entries of x that other ranks need into a contiguous
   device buffer (index list kept on the device), copies it to pinned host memory and starts the messages; End
   waits and copies the ghost values to the device. Between the two the caller runs the diagonal-block SpMV.
   Begin reports the kernels it launched. scale, if not empty: the entries sent are scale(i) x(i), a solver's right
   Jacobi applied by the owner of the rows, which holds their D^{-1}. */
PetscErrorCode            HaloBegin(GSHalo, const DView<PetscScalar> &, PetscInt *, const DView<PetscScalar> &scale = DView<PetscScalar>());
PetscErrorCode            HaloEnd(GSHalo);
const DView<PetscScalar> &HaloGhosts(GSHalo);
/* The reverse exchange, for products with the transpose: each rank's ghost values (HaloGhosts(), filled by the
   caller) go back to their owners, which add them into y at the entries they came from */
PetscErrorCode HaloReverseAdd(GSHalo, const DView<PetscScalar> &y);
/* The ghost values of the k columns of the device block X (leading dimension n) into G (leading dimension: the
   number of ghosts), one exchange per column; G is resized as needed */
PetscErrorCode HaloBlock(GSHalo, PetscInt, const DView<PetscScalar> &, PetscInt, DView<PetscScalar> &);
} // namespace gpustream
