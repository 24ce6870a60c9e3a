/* The device CSR of a gpustream matrix and the row loop every SpMV kernel shares, so that the plain SpMV and the
   SpMVs fused into Krylov kernels sum each row in the same order (bit-identical products). */
#pragma once

#include "../../sys/kokkosimpl.hpp"

namespace gpustream
{
struct CSR {
  PetscInt                 m = 0, n = 0;
  int                      lanes = 1; /* the vector lanes per row kernels are launched with (LaunchShape::vlen) */
  DView<const PetscInt>    rowptr, colidx;
  DView<const PetscScalar> val;
};

/* How SpMV kernels are launched on this matrix: vector lanes per row, threads (rows) per team, teams */
struct LaunchShape {
  int vlen = 1, team = 1, league = 1;
};

/* s with at most FusedTeams() teams: the shape of the solvers' fused SpMV kernels */
inline LaunchShape FusedShape(LaunchShape s)
{
  s.league = std::min(s.league, FusedTeams(s.team * s.vlen));
  return s;
}

/* The default shape for m rows and nnz entries: a thread per row for short rows, a warp per row for long ones */
LaunchShape SpMVShape(PetscInt m, PetscInt nnz, GSSpMVKernel kernel = GS_KERNEL_AUTO);

/* (A x)_row by one thread, in the row's order: the sum every one-lane kernel forms, so that they agree bitwise */
template <class XView> KOKKOS_INLINE_FUNCTION PetscScalar RowSum(const CSR &A, const XView &x, const PetscInt row)
{
  PetscScalar sum = 0;
  for (PetscInt j = A.rowptr(row); j < A.rowptr(row + 1); j++) sum += A.val(j) * x(A.colidx(j));
  return sum;
}

/* (A x)_row, summed by this thread's vector lanes (every lane gets the sum) */
template <class XView> KOKKOS_INLINE_FUNCTION PetscScalar RowProduct(const Member &t, const CSR &A, const XView &x, const PetscInt row)
{
  if (A.lanes == 1) return RowSum(A, x, row); /* the vector reduction cost 25% on the 5-point matrix (H200) */
  const PetscInt beg = A.rowptr(row), len = A.rowptr(row + 1) - beg;
  PetscScalar    sum = 0;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(t, len), [&](const PetscInt j, PetscScalar &s) { s += A.val(beg + j) * x(A.colidx(beg + j)); }, sum);
  return sum;
}

/* Calls f(row, (A x)_row) for the rows this thread owns; f runs on every vector lane of the thread, and all
   lanes hold the same sum. Rows go to teams in a grid-stride loop so a fixed number of teams covers any size. */
template <class XView, class F> KOKKOS_INLINE_FUNCTION void ForEachRowProduct(const Member &t, const CSR &A, const XView &x, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size();
  for (PetscInt row = (PetscInt)t.league_rank() * t.team_size() + t.team_rank(); row < A.m; row += stride) f(row, RowProduct(t, A, x, row));
}

/* ForEachRowProduct by blocks of bs <= MaxBS consecutive rows: f(block, y) with y[i] = (A x)_{block bs + i}, each row
   summed as ForEachRowProduct sums it */
template <int MaxBS, class XView, class F> KOKKOS_INLINE_FUNCTION void ForEachBlockRowProduct(const Member &t, const CSR &A, const XView &x, const int bs, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), nb = A.m / bs;
  for (PetscInt b = (PetscInt)t.league_rank() * t.team_size() + t.team_rank(); b < nb; b += stride) {
    PetscScalar y[MaxBS];
    for (int i = 0; i < bs; i++) y[i] = RowProduct(t, A, x, b * bs + i);
    f(b, y);
  }
}

/* y = A x (+ z); z may be y itself. A thread per row runs without teams, one row per thread: on an H200 the 5-point
   SpMV ran at 3.7 TB/s so against 2.0 with teams in a grid-stride loop (docs/data/spmv-h200-2026-11-21b-ours.csv) */
template <bool Add, class XView> void SpMV(const CSR &A, const LaunchShape &s, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  if (s.vlen == 1) {
    Kokkos::parallel_for(
        Add ? "GPUStream::SpMVAddRows" : "GPUStream::SpMVRows", RangePol(0, A.m), KOKKOS_LAMBDA(const PetscInt row) {
          const PetscScalar sum = RowSum(A, x, row);
          y(row)                = Add ? z(row) + sum : sum;
        });
    return;
  }
  TeamFor(
      Add ? "GPUStream::SpMVAdd" : "GPUStream::SpMV", TeamPol(s.league, s.team, s.vlen),
      KOKKOS_LAMBDA(const Member &t) { ForEachRowProduct(t, A, x, [&](const PetscInt row, const PetscScalar sum) { OneLane(t, [&]() { y(row) = Add ? z(row) + sum : sum; }); }); });
}

/* Y(off + row, c0 + q) = (A X)(row, c0 + q) (+ Y when Add) for q < KB: one pass over the row, KB sums in registers */
template <int KB, bool Add> KOKKOS_INLINE_FUNCTION void RowBlock(const CSR &A, PetscInt row, PetscInt off, PetscInt c0, const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy)
{
  const PetscInt beg = A.rowptr(row), end = A.rowptr(row + 1);
  PetscScalar    sum[KB];
  for (int q = 0; q < KB; q++) sum[q] = 0;
  for (PetscInt j = beg; j < end; j++) {
    const PetscScalar  a  = A.val(j);
    const PetscScalar *xc = X + A.colidx(j) + c0 * ldx;
    for (int q = 0; q < KB; q++) sum[q] += a * xc[q * ldx];
  }
  for (int q = 0; q < KB; q++) Y[off + row + (c0 + q) * ldy] = Add ? Y[off + row + (c0 + q) * ldy] + sum[q] : sum[q];
}

/* Y(off + row, c) = (A X)(row, c) (+ Y when Add) for the k columns of X (column-major, leading dimensions ldx and
   ldy), on the instance exec. A thread per row, without teams (as SpMV at one lane), reads its row once per 8
   columns (then 4, 2, 1 for the rest), summing each column in the row's order. Used by MatMatMult and by the
   streaming engine, where each subdivision serves all k columns while it is on the device. */
template <bool Add = false> void SpMMBlock(const Exec &exec, const CSR &A, PetscInt off, PetscInt k, const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy)
{
  Kokkos::parallel_for(
      "GPUStream::SpMMBlock", RangePol(exec, 0, A.m), KOKKOS_LAMBDA(const PetscInt row) {
        PetscInt c0 = 0;
        for (; c0 + 8 <= k; c0 += 8) RowBlock<8, Add>(A, row, off, c0, X, ldx, Y, ldy);
        if (c0 + 4 <= k) {
          RowBlock<4, Add>(A, row, off, c0, X, ldx, Y, ldy);
          c0 += 4;
        }
        if (c0 + 2 <= k) {
          RowBlock<2, Add>(A, row, off, c0, X, ldx, Y, ldy);
          c0 += 2;
        }
        if (c0 < k) RowBlock<1, Add>(A, row, off, c0, X, ldx, Y, ldy);
      });
}

/* Halo exchange of a distributed matrix: Begin gathers the entries of x that other ranks need into a contiguous
   device buffer (index list kept on the device), copies it to pinned host memory and starts the messages; End
   waits and copies the ghost values to the device. Between the two the caller runs the diagonal-block SpMV.
   Begin reports the kernels it launched. */
PetscErrorCode            HaloBegin(GSHalo, const DView<PetscScalar> &, PetscInt *);
PetscErrorCode            HaloEnd(GSHalo);
const DView<PetscScalar> &HaloGhosts(GSHalo);
/* The ghost values of the k columns of the device block X (leading dimension n) into G (leading dimension: the
   number of ghosts), one exchange per column; G is resized as needed */
PetscErrorCode HaloBlock(GSHalo, PetscInt, const DView<PetscScalar> &, PetscInt, DView<PetscScalar> &);
} // namespace gpustream

struct _n_GSDeviceMat {
  gpustream::CSR                csr;
  gpustream::DView<PetscInt>    rowptr, colidx;
  gpustream::DView<PetscScalar> val;
  gpustream::DView<PetscInt>    nzrows;  /* the rows with entries, if asked for (off-diagonal blocks) */
  gpustream::DView<PetscScalar> x, y, z; /* staging for MatMult on host vectors, allocated on first use */
  gpustream::LaunchShape        shape;
};

namespace gpustream
{
/* y = A x (+ z when z is given; z may be y) on one process; on several, with A the diagonal block, y += B g after the
   halo exchange of x into g, which travels while A multiplies. Adds the kernels it launched to *launches if given. */
inline PetscErrorCode DeviceSpMV(GSDeviceMat A, GSDeviceMat B, GSHalo H, const DView<PetscScalar> &x, const DView<PetscScalar> *z, const DView<PetscScalar> &y, PetscInt *launches)
{
  PetscInt gathers = 0;

  PetscFunctionBegin;
  if (H) PetscCall(HaloBegin(H, x, &gathers));
  if (z)
    GSCallKokkos(SpMV<true>(A->csr, A->shape, x, *z, y));
  else
    GSCallKokkos(SpMV<false>(A->csr, A->shape, x, y, y));
  if (H) {
    PetscCall(HaloEnd(H));
    GSCallKokkos(SpMV<true>(B->csr, B->shape, HaloGhosts(H), y, y));
  }
  if (launches) *launches += gathers + 1 + (H ? 1 : 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace gpustream
