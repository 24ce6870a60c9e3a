/* Helpers of the device code that builds CSR data from PETSc's host patterns (the factors', the products') */
#pragma once

#include <vector>
#include "kokkosimpl.hpp"

namespace gpustream
{
/* The transpose of the m x n CSR (row, col) on the host: its CSR (n rows, columns ascending) and, for each of its
   entries, the entry of the original it is */
inline void HostTranspose(PetscInt m, PetscInt n, const PetscInt *row, const PetscInt *col, std::vector<PetscInt> &trow, std::vector<PetscInt> &tcol, std::vector<PetscInt> &tmap)
{
  std::vector<PetscInt> next(n + 1, 0);
  trow.assign(n + 1, 0);
  tcol.resize(row[m]);
  tmap.resize(row[m]);
  for (PetscInt k = 0; k < row[m]; k++) trow[col[k] + 1]++;
  for (PetscInt i = 0; i < n; i++) trow[i + 1] += trow[i];
  std::copy(trow.begin(), trow.end(), next.begin());
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt k = row[i]; k < row[i + 1]; k++) {
      const PetscInt p = next[col[k]]++;
      tcol[p]          = i;
      tmap[p]          = k;
    }
}

inline void HostTranspose(PetscInt m, PetscInt n, const std::vector<PetscInt> &row, const std::vector<PetscInt> &col, std::vector<PetscInt> &trow, std::vector<PetscInt> &tcol, std::vector<PetscInt> &tmap)
{
  HostTranspose(m, n, row.data(), col.data(), trow, tcol, tmap);
}

/* d: a new device copy of the n host values h */
template <class T> inline void Upload(DView<T> &d, const char *label, const T *h, size_t n)
{
  d = DView<T>(Kokkos::ViewAllocateWithoutInitializing(label), n);
  SyncCopy(d, HostUnmanaged<const T>(h, n));
}

template <class T> inline void Upload(DView<T> &d, const char *label, const std::vector<T> &h)
{
  Upload(d, label, h.data(), h.size());
}

/* a host copy of the device values d */
template <class T> inline std::vector<T> Download(const DView<T> &d)
{
  std::vector<T> h(d.extent(0));
  SyncCopy(HostUnmanaged<T>(h.data(), h.size()), d);
  return h;
}

/* n values in the execution space's memory as a view, where a Kokkos-Kernels call wants lvalues of the exact view
   types */
inline DView<PetscScalar> Wrap(const PetscScalar *a, size_t n)
{
  return DView<PetscScalar>(const_cast<PetscScalar *>(a), n);
}

} // namespace gpustream
