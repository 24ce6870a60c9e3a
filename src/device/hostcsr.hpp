/* Helpers of the device code that builds CSR data from PETSc's host patterns (the factors', the products') */
#pragma once

#include <algorithm>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
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

/* An allocator whose elements start uninitialized (resize() writes nothing): for large arrays that their writers fill
   on several threads, so that each page is touched once, by the thread that writes it */
template <class T> struct NoInitAllocator : std::allocator<T> {
  template <class U> struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U> NoInitAllocator(const NoInitAllocator<U> &) noexcept {}
  template <class U> void construct(U *p) noexcept
  {
    ::new ((void *)p) U;
  }
  template <class U, class... Args> void construct(U *p, Args &&...args)
  {
    ::new ((void *)p) U(std::forward<Args>(args)...);
  }
};

template <class T> using HostArray = std::vector<T, NoInitAllocator<T>>;

/* The transpose of the m x n CSR (row, col) on the host: its CSR (n rows, columns ascending) and, for each of its
   entries, the entry of the original it is. On nt threads: where a count of the columns for each thread is small
   next to the entries, each takes a range of the original's rows and writes its entries of each column after the
   earlier ranges'; else each takes a range of the transpose's rows and reads all of the original for them. */
template <class V> inline void HostTranspose(PetscInt m, PetscInt n, const PetscInt *row, const PetscInt *col, V &trow, V &tcol, V &tmap, int nt = 1)
{
  const PetscInt nnz = row[m];

  trow.resize(n + 1);
  tcol.resize(nnz);
  tmap.resize(nnz);
  trow[0] = 0;
  nt      = (int)std::max<PetscInt>(1, std::min<PetscInt>(nt, std::min<PetscInt>(std::max(m, n) / 256, nnz / 4096)));
  if (nt > 1 && (size_t)nt * n <= (size_t)nnz) {
    std::vector<std::vector<PetscInt>> next(nt); /* next[t][c]: thread t's next place in column c, from the column's start */
    ParallelRows(m, nt, [&](int t, PetscInt i0, PetscInt i1) {
      next[t].assign(n, 0);
      for (PetscInt k = row[i0]; k < row[i1]; k++) next[t][col[k]]++;
    });
    ParallelRows(n, nt, [&](int, PetscInt c0, PetscInt c1) {
      for (PetscInt c = c0; c < c1; c++) {
        PetscInt s = 0;
        for (int t = 0; t < nt; t++) std::swap(s, next[t][c]), s += next[t][c];
        trow[c + 1] = s;
      }
    });
    for (PetscInt c = 0; c < n; c++) trow[c + 1] += trow[c];
    ParallelRows(m, nt, [&](int t, PetscInt i0, PetscInt i1) {
      std::vector<PetscInt> &at = next[t];
      for (PetscInt i = i0; i < i1; i++)
        for (PetscInt k = row[i]; k < row[i + 1]; k++) {
          const PetscInt p = trow[col[k]] + at[col[k]]++;
          tcol[p]          = i;
          tmap[p]          = k;
        }
    });
    return;
  }
  std::fill(trow.begin(), trow.end(), 0);
  ParallelRows(n, nt, [&](int, PetscInt c0, PetscInt c1) {
    for (PetscInt k = 0; k < nnz; k++)
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

template <class V> inline void HostTranspose(PetscInt m, PetscInt n, const V &row, const V &col, V &trow, V &tcol, V &tmap, int nt = 1)
{
  HostTranspose(m, n, row.data(), col.data(), trow, tcol, tmap, nt);
}

/* Before a device-to-host copy overwrites all of the n host values h: their pages faulted in on nt threads (the
   copy otherwise faults them one by one, on one thread, where h is fresh memory such as calloc()'s) */
template <class T> inline void PrefaultForCopy(T *h, size_t n, int nt)
{
  const size_t page = 4096, bytes = n * sizeof(T);
  if (bytes < ((size_t)8 << 20) || nt < 2) return;
  char *c = reinterpret_cast<char *>(h);
  ParallelRows((PetscInt)(bytes / page), nt, [&](int, PetscInt p0, PetscInt p1) {
    for (PetscInt p = p0; p < p1; p++) c[(size_t)p * page] = 0;
  });
}

/* d: a new device copy of the n host values h */
template <class T> inline void Upload(DView<T> &d, const char *label, const T *h, size_t n)
{
  d = DView<T>(Kokkos::ViewAllocateWithoutInitializing(label), n);
  SyncCopy(d, HostUnmanaged<const T>(h, n));
}

template <class T, class A> inline void Upload(DView<T> &d, const char *label, const std::vector<T, A> &h)
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
