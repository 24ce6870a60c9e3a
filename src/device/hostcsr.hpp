/* Helpers of the device code that builds CSR data from PETSc's host patterns (the factors', the products') */
#pragma once

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>
#include "kokkosimpl.hpp"

namespace gpustream
{
/* fn(t, r0, r1) on nt threads t, each a contiguous range [r0, r1) of the m rows (the caller's thread takes the last);
   an exception of any is thrown again here, after all have ended */
template <class F> inline void ParallelRows(PetscInt m, int nt, const F &fn)
{
  std::vector<std::thread>        threads;
  std::vector<std::exception_ptr> errors(nt);
  const auto                      range = [&](int t) {
    try {
      fn(t, m * t / nt, m * (t + 1) / nt);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  for (int t = 0; t < nt - 1; t++) {
    try {
      threads.emplace_back(range, t);
    } catch (...) { /* no thread to be had: this one does it */
      range(t);
    }
  }
  range(nt - 1);
  for (auto &th : threads) th.join();
  for (auto &e : errors)
    if (e) std::rethrow_exception(e);
}

/* The transpose of the m x n CSR (row, col) on the host: its CSR (n rows, columns ascending) and, for each of its
   entries, the entry of the original it is. On nt threads each takes a range of the transpose's rows and reads all
   of the original for them (reads are cheap next to the scattered writes, which stay in the thread's range). */
inline void HostTranspose(PetscInt m, PetscInt n, const PetscInt *row, const PetscInt *col, std::vector<PetscInt> &trow, std::vector<PetscInt> &tcol, std::vector<PetscInt> &tmap, int nt = 1)
{
  trow.assign(n + 1, 0);
  tcol.resize(row[m]);
  tmap.resize(row[m]);
  nt = (int)std::max<PetscInt>(1, std::min<PetscInt>(nt, std::min<PetscInt>(n / 256, row[m] / 4096)));
  ParallelRows(n, nt, [&](int, PetscInt c0, PetscInt c1) {
    for (PetscInt k = 0; k < row[m]; k++)
      if (col[k] >= c0 && col[k] < c1) trow[col[k] + 1]++;
  });
  for (PetscInt i = 0; i < n; i++) trow[i + 1] += trow[i];
  ParallelRows(n, nt, [&](int, PetscInt c0, PetscInt c1) {
    std::vector<PetscInt> next(trow.begin() + c0, trow.begin() + c1);
    for (PetscInt i = 0; i < m; i++)
      for (PetscInt k = row[i]; k < row[i + 1]; k++) {
        const PetscInt c = col[k];
        if (c < c0 || c >= c1) continue;
        const PetscInt p = next[c - c0]++;
        tcol[p]          = i;
        tmap[p]          = k;
      }
  });
}

inline void HostTranspose(PetscInt m, PetscInt n, const std::vector<PetscInt> &row, const std::vector<PetscInt> &col, std::vector<PetscInt> &trow, std::vector<PetscInt> &tcol, std::vector<PetscInt> &tmap, int nt = 1)
{
  HostTranspose(m, n, row.data(), col.data(), trow, tcol, tmap, nt);
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
