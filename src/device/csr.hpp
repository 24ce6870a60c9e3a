/* The device CSR (plain, or block column indices) and the row loops every kernel that multiplies by it shares, so
   that the plain SpMV and the SpMVs fused into Krylov kernels sum each row in the same order (bit-identical
   products). */
#pragma once

#include "kokkosimpl.hpp"

#include <type_traits>

namespace gpustream
{
/* a b rounded on its own, never fused with the sum it goes into: the SpMV kernels add products that the tiled kernel
   forms as it stages them, so that both give the same bits */
KOKKOS_FORCEINLINE_FUNCTION PetscScalar Mul(const PetscScalar a, const PetscScalar b)
{
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/* bs > 1: block column indices. The pattern is made of full bs x bs blocks at block-aligned columns, the bs rows of
   a block row alike: rowptr holds the m / bs + 1 block-row pointers (in blocks), colidx one block column a block, and
   val the entries in AIJ's order (row by row, columns ascending). The integers shrink from 4 bytes an entry to
   4 / bs^2, and the kernels read each block column and each gathered x once for the bs rows. */
struct CSR {
  PetscInt                 m = 0, n = 0;
  int                      lanes = 1; /* the vector lanes per row kernels are launched with (LaunchShape::vlen) */
  int                      bs    = 1;
  DView<const PetscInt>    rowptr, colidx;
  DView<const PetscScalar> val;
};

/* The largest block size of block column indices: the sums of a block row stay in registers */
constexpr int MaxBlockBS = GS_MAX_FORMAT_BS;

/* y[i] = (A x)(br bs + i) for the bs rows of block row br of block storage. The thread's vector lanes take the blocks
   l, l + V, ... (coalesced: the lanes read a row's values contiguously), each loading the block's column and x once
   for the bs rows and summing its entries of each row in order; the lanes' sums meet in a butterfly, so every lane
   holds the same bits. With one lane a row is summed in its order, as RowSum() sums it. */
template <class XView> KOKKOS_INLINE_FUNCTION void BlockRowProduct(const Member &t, const CSR &A, const XView &x, const PetscInt br, PetscScalar (&y)[MaxBlockBS])
{
  const int      bs = A.bs;
  const PetscInt b0 = A.rowptr(br), nk = A.rowptr(br + 1) - b0, e0 = b0 * bs * bs, len = nk * bs;
  int            lane = 0, V = 1;
#if defined(__CUDA_ARCH__)
  (void)t;
  lane = threadIdx.x;
  V    = blockDim.x;
#else
  (void)t;
#endif
#pragma unroll
  for (int i = 0; i < MaxBlockBS; i++) y[i] = 0;
  for (PetscInt q = lane; q < nk; q += V) {
    const PetscInt c0 = A.colidx(b0 + q) * bs;
    PetscScalar    xc[MaxBlockBS];
#pragma unroll
    for (int c = 0; c < MaxBlockBS; c++)
      if (c < bs) xc[c] = x(c0 + c);
#pragma unroll
    for (int i = 0; i < MaxBlockBS; i++)
      if (i < bs) {
        const PetscInt e = e0 + i * len + q * bs;
#pragma unroll
        for (int c = 0; c < MaxBlockBS; c++)
          if (c < bs) y[i] += Mul(A.val(e + c), xc[c]);
      }
  }
#if defined(__CUDA_ARCH__)
  if (V > 1) { /* the V lanes of this thread: a segment of its warp */
    const unsigned mask = V == 32 ? 0xffffffffu : ((1u << V) - 1) << (threadIdx.y % (32 / V) * V);
#  pragma unroll
    for (int i = 0; i < MaxBlockBS; i++)
      if (i < bs)
        for (int o = V / 2; o > 0; o /= 2) y[i] += __shfl_xor_sync(mask, y[i], o, V);
  }
#endif
}

/* The tree in which V vector lanes' sums a(l) meet in Kokkos' vector reduction or in a butterfly (pairs l, l + V/2
   first, then l, l + V/4, ...): lane 0 ends with the tree of the even lanes plus that of the odd ones, recursively,
   so a thread alone forms the same bits (additions commute) */
template <int B, int S, int N> struct LaneTree {
  template <class A> KOKKOS_FORCEINLINE_FUNCTION static PetscScalar Sum(const A &a)
  {
    return LaneTree<B, 2 * S, N / 2>::Sum(a) + LaneTree<B + S, 2 * S, N / 2>::Sum(a);
  }
};
template <int B, int S> struct LaneTree<B, S, 1> {
  template <class A> KOKKOS_FORCEINLINE_FUNCTION static PetscScalar Sum(const A &a)
  {
    return a(B);
  }
};

/* The sum of V vector lanes' sums lane(l) as their reduction forms it, by one thread: the same bits */
template <int V, class Lane> KOKKOS_FORCEINLINE_FUNCTION PetscScalar LaneOrderSum(const Lane &lane)
{
  return LaneTree<0, 1, V>::Sum(lane);
}

/* Kernels that multiply by A are compiled once per storage, Blk: block column indices (A.bs > 1). In one kernel the
   block rows' sums in registers took occupancy from the CSR rows: their warp kernel measured much slower on an H200
   (docs/design-measurements.md).
   ByStorage(A, f) calls f(std::integral_constant<bool, Blk>()) for A's storage. */
template <class F> void ByStorage(const CSR &A, const F &f)
{
  if (A.bs > 1)
    f(std::true_type());
  else
    f(std::false_type());
}

/* A row of block storage: its block row's first block b0 and number of blocks nk, and the index j of its first value */
KOKKOS_INLINE_FUNCTION void BlockRowOf(const CSR &A, const PetscInt row, PetscInt *b0, PetscInt *nk, PetscInt *j)
{
  const PetscInt br = row / A.bs;
  *b0               = A.rowptr(br);
  *nk               = A.rowptr(br + 1) - *b0;
  *j                = (*b0 * A.bs + (row - br * A.bs) * *nk) * A.bs;
}

/* A row's entries as a sequence in column order, both storages: the index of the first in val (the others follow it)
   and their count; RowEntryColumn(): the column of the k-th */
struct RowSpan {
  PetscInt j0, len, b0;
};

KOKKOS_INLINE_FUNCTION RowSpan RowEntries(const CSR &A, const PetscInt row)
{
  if (A.bs == 1) return RowSpan{A.rowptr(row), A.rowptr(row + 1) - A.rowptr(row), 0};
  PetscInt b0, nk, j;
  BlockRowOf(A, row, &b0, &nk, &j);
  return RowSpan{j, nk * A.bs, b0};
}

KOKKOS_INLINE_FUNCTION PetscInt RowEntryColumn(const CSR &A, const RowSpan &r, const PetscInt k)
{
  return A.bs == 1 ? A.colidx(r.j0 + k) : A.colidx(r.b0 + k / A.bs) * A.bs + k % A.bs;
}

/* init + (A x)_row by one thread, in the row's order: the sum every one-lane kernel forms, so that they agree bitwise.
   Added to init one product at a time, as AIJ's MatMultAdd() and the off-diagonal block of MPIAIJ's MatMult() add
   them to y (the same bits as AIJ's where its rows are not summed by inodes, whose kernels add products in pairs) */
template <bool Blk, class XView> KOKKOS_INLINE_FUNCTION PetscScalar RowSum(const CSR &A, const XView &x, const PetscInt row, const PetscScalar init = 0)
{
  PetscScalar sum = init;
  if (!Blk) {
    for (PetscInt j = A.rowptr(row); j < A.rowptr(row + 1); j++) sum += Mul(A.val(j), x(A.colidx(j)));
    return sum;
  }
  PetscInt b0, nk, j;
  BlockRowOf(A, row, &b0, &nk, &j);
  for (PetscInt k = 0; k < nk; k++) {
    const PetscInt c0 = A.colidx(b0 + k) * A.bs;
    for (int c = 0; c < A.bs; c++, j++) sum += Mul(A.val(j), x(c0 + c));
  }
  return sum;
}

/* (A x)_row, summed by this thread's vector lanes (every lane gets the sum); on block storage, the row's share of its
   block row's product */
template <bool Blk, class XView> KOKKOS_INLINE_FUNCTION PetscScalar RowProduct(const Member &t, const CSR &A, const XView &x, const PetscInt row)
{
  if (Blk) {
    PetscScalar y[MaxBlockBS], v = 0;
    BlockRowProduct(t, A, x, row / A.bs, y);
#pragma unroll
    for (int i = 0; i < MaxBlockBS; i++)
      if (i == row % A.bs) v = y[i];
    return v;
  }
  if (A.lanes == 1) return RowSum<false>(A, x, row); /* the vector reduction measured slower on the 5-point matrix */
  const PetscInt beg = A.rowptr(row), len = A.rowptr(row + 1) - beg;
  PetscScalar    sum = 0;
  /* Kokkos' reduction of the lanes' sums: the tree of LaneOrderSum (a butterfly of our own measured slower on the
     27-point matrices, H200) */
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(t, len), [&](const PetscInt j, PetscScalar &s) { s += Mul(LoadOnce(A.val(beg + j)), x(LoadOnce(A.colidx(beg + j)))); }, sum);
  return sum;
}

/* f(j, col) for the entries of a row: j its index in val, col its column (both storages, in the row's order) */
template <class F> KOKKOS_INLINE_FUNCTION void ForRowEntries(const CSR &A, const PetscInt row, const F &f)
{
  if (A.bs == 1) {
    for (PetscInt j = A.rowptr(row); j < A.rowptr(row + 1); j++) f(j, A.colidx(j));
    return;
  }
  PetscInt b0, nk, j;
  BlockRowOf(A, row, &b0, &nk, &j);
  for (PetscInt k = 0; k < nk; k++) {
    const PetscInt c0 = A.colidx(b0 + k) * A.bs;
    for (int c = 0; c < A.bs; c++, j++) f(j, c0 + c);
  }
}

/* Calls f(row, (A x)_row) for the rows this thread owns; f runs on every vector lane of the thread, and all
   lanes hold the same sum. Rows (block rows on block storage) go to teams in a grid-stride loop so a fixed number of
   teams covers any size. */
template <bool Blk, bool Rev = false, class XView, class F> KOKKOS_INLINE_FUNCTION void ForEachRowProduct(const Member &t, const CSR &A, const XView &x, const F &f)
{
  /* Rev: this thread's rows last first, as ForEachIndex<true> */
  ForEachIndex<Rev>(t, Blk ? A.m / A.bs : A.m, [&](const PetscInt row) {
    if (!Blk) {
      f(row, RowProduct<false>(t, A, x, row));
      return;
    }
    PetscScalar y[MaxBlockBS];
    BlockRowProduct(t, A, x, row, y);
    for (int i = 0; i < A.bs; i++) { /* y[i] by selects: an index into y would put it in local memory */
      PetscScalar yi = y[0];
#pragma unroll
      for (int k = 1; k < MaxBlockBS; k++)
        if (k == i) yi = y[k];
      f(row * A.bs + i, yi);
    }
  });
}

/* Calls f(row) for the rows ForEachRowProduct<Blk> gives this thread, in its order: a later loop of the same kernel
   over what the products wrote then reads this thread's own stores (with block rows, not ForEachIndex's rows) */
template <bool Blk, class F> KOKKOS_INLINE_FUNCTION void ForEachOwnedRow(const Member &t, const CSR &A, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), first = (PetscInt)t.league_rank() * t.team_size() + t.team_rank();
  if (!Blk) {
    for (PetscInt row = first; row < A.m; row += stride) f(row);
    return;
  }
  for (PetscInt br = first; br < A.m / A.bs; br += stride)
    for (int i = 0; i < A.bs; i++) f(br * A.bs + i);
}

/* ForEachRowProduct by blocks of bs <= MaxBS consecutive rows: f(block, y) with y[i] = (A x)_{block bs + i}, each row
   summed as ForEachRowProduct sums it */
template <int MaxBS, bool Blk, class XView, class F> KOKKOS_INLINE_FUNCTION void ForEachBlockRowProduct(const Member &t, const CSR &A, const XView &x, const int bs, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), nb = A.m / bs;
  for (PetscInt b = (PetscInt)t.league_rank() * t.team_size() + t.team_rank(); b < nb; b += stride) {
    PetscScalar y[MaxBS];
    if (Blk && A.bs == bs) { /* the storage's blocks are these blocks */
      PetscScalar yb[MaxBlockBS];
      BlockRowProduct(t, A, x, b, yb);
#pragma unroll
      for (int i = 0; i < MaxBlockBS && i < MaxBS; i++) y[i] = yb[i];
    } else
      for (int i = 0; i < bs; i++) y[i] = RowProduct<Blk>(t, A, x, b * bs + i);
    f(b, y);
  }
}
} // namespace gpustream
