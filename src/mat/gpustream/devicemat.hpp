/* The device CSR of a gpustream matrix and the row loop every SpMV kernel shares, so that the plain SpMV and the
   SpMVs fused into Krylov kernels sum each row in the same order (bit-identical products). */
#pragma once

#include "../../sys/kokkosimpl.hpp"

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

/* Tiles of the tiled SpMV (CSR-adaptive, after Greathouse and Daga): tile i holds the rows [row(i), row(i+1)), at most
   MaxTileRows of them with at most cap entries in all, [ent(i), ent(i+1)), which its team stages in scratch memory
   (the products of values and gathered x, and the rows' pointers, every thread loading at once) before each row is
   summed from there; a
   row of more than cap entries is cut into pieces of cap entries, one tile each (first(i): the row's first tile; -1
   for other tiles), summed by the whole team, and the last of its teams adds the pieces in order. Tiles depend on
   the row pointer only, and need CSR storage (bs 1). */
struct Tiles {
  PetscInt              n = 0, np = 0;           /* tiles, and those that are pieces of long rows */
  int                   cap    = 0;              /* entries a tile stages; 0: no tiles (the direct kernels) */
  PetscInt              maxlen = 0;              /* the longest row of the tiles, pieces apart */
  DView<const PetscInt> row, ent, first, pieces; /* pieces: the tiles that are pieces, in order */
  DView<PetscScalar>    part;                    /* each piece's sum */
  DView<unsigned>       count;                   /* pieces of a row done, at its first tile */
};

/* How SpMV kernels are launched on this matrix: vector lanes per row, threads (rows) per team, teams; the tiles of
   MatMult's kernel (the fused solver kernels load directly) */
struct LaunchShape {
  int   vlen = 1, team = 1, league = 1;
  Tiles tiles;
};

/* Largest tile (GS_MAX_TILE_SIZE); at most one row a thread of a team of 256, whose row pointers (MaxTileRows + 1)
   each thread loads one of */
constexpr int MaxTileCap = GS_MAX_TILE_SIZE, MaxTileRows = 255;

/* The entries a tile stages for the m rows of the host row pointer ia: option >= 0 is taken as given (0: no tiles),
   < 0 (auto) chooses from the row lengths */
int TileCap(PetscInt m, const PetscInt ia[], PetscInt option);

/* The tiles of the m rows of the host row pointer ia (ia[0] need not be 0) */
PetscErrorCode MakeTiles(PetscInt m, const PetscInt ia[], int cap, Tiles *tiles);

/* s with at most FusedTeams() teams: the shape of the solvers' fused SpMV kernels */
inline LaunchShape FusedShape(LaunchShape s)
{
  s.league = std::min(s.league, FusedTeams(s.team * s.vlen));
  return s;
}

/* The default shape for m rows and nnz entries: a thread per row for short rows, a warp per row for long ones */
LaunchShape SpMVShape(PetscInt m, PetscInt nnz, GSSpMVKernel kernel = GS_KERNEL_AUTO);

/* Kernels that multiply by A are compiled once per storage, Blk: block column indices (A.bs > 1). In one kernel the
   block rows' sums in registers took occupancy from the CSR rows: their warp kernel 1.7-1.9x slower on an H200 (docs/performance.md).
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
  if (A.lanes == 1) return RowSum<false>(A, x, row); /* the vector reduction cost 25% on the 5-point matrix (H200) */
  const PetscInt beg = A.rowptr(row), len = A.rowptr(row + 1) - beg;
  PetscScalar    sum = 0;
  /* Kokkos' reduction of the lanes' sums: the tree of LaneOrderSum (a butterfly of our own took 1.3-1.4x the time on
     the 27-point matrices, H200) */
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

/* Entries a thread loads before it stores any, and teams of the tiled kernel per multiprocessor (its launch bounds:
   unbounded, the kernel took 128 registers, two teams of 256 threads a multiprocessor, too few loads in flight), with
   and without rows of more than 32 entries summed by warps. Chosen among B = 3..8 and E = 2, 4, 8 on an H200
   (docs/performance.md) */
constexpr int TileEPT = 4, TileTeamsPerSM = 5, TileLongTeamsPerSM = 4;

/* This thread's and lane's index among the team's threads and lanes, and their number */
KOKKOS_INLINE_FUNCTION void FlatIndex(const Member &t, int *tid, int *nth)
{
#if defined(__CUDA_ARCH__)
  (void)t;
  *tid = threadIdx.y * blockDim.x + threadIdx.x;
  *nth = blockDim.x * blockDim.y;
#else
  *tid = t.team_rank();
  *nth = t.team_size();
#endif
}

using IScratch = Kokkos::View<PetscInt *, Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

/* One batch of a thread's loads: c[u] = A.colidx(e0 + j), v[u] = A.val(e0 + j) for j = b + u nth + tid < ne */
template <int EPT> KOKKOS_INLINE_FUNCTION void LoadBatch(const CSR &A, PetscInt e0, PetscInt ne, PetscInt b, int nth, int tid, PetscInt (&c)[EPT], PetscScalar (&v)[EPT])
{
#pragma unroll
  for (int u = 0; u < EPT; u++) {
    const PetscInt j = b + u * nth + tid;
    if (j < ne) c[u] = LoadOnce(A.colidx(e0 + j)), v[u] = LoadOnce(A.val(e0 + j));
  }
}

/* sr(q) = A.rowptr(r0 + q) - e0 for q <= nr, sp(j) = A.val(e0 + j) x(A.colidx(e0 + j)) for j < ne, by every thread and
   lane of the team, consecutive threads taking consecutive j; each thread issues the loads of its row pointer and of
   up to EPT entries before it stores any (stores to scratch that the compiler cannot tell from the loads would
   otherwise make each load wait for the store before it) */
template <int EPT, class XView> KOKKOS_INLINE_FUNCTION void StageTile(const Member &t, const CSR &A, const XView &x, PetscInt r0, PetscInt nr, PetscInt e0, PetscInt ne, const IScratch &sr, const Scratch &sp)
{
  int tid, nth;
  FlatIndex(t, &tid, &nth);
  const bool     one = nr < nth; /* a row pointer per thread (device teams); else a loop (host teams of one) */
  const PetscInt rq  = one && tid <= nr ? A.rowptr(r0 + tid) : 0;
  for (PetscInt b = 0; b < ne; b += EPT * nth) {
    PetscInt    c[EPT];
    PetscScalar v[EPT], g[EPT];
    LoadBatch<EPT>(A, e0, ne, b, nth, tid, c, v);
#pragma unroll
    for (int u = 0; u < EPT; u++)
      if (b + u * nth + tid < ne) g[u] = x(c[u]);
#pragma unroll
    for (int u = 0; u < EPT; u++) {
      const PetscInt j = b + u * nth + tid;
      if (j < ne) sp(j) = Mul(v[u], g[u]);
    }
  }
  if (one) {
    if (tid <= nr) sr(tid) = rq - e0;
  } else
    for (PetscInt q = tid; q <= nr; q += nth) sr(q) = A.rowptr(r0 + q) - e0;
}

/* The tile's rows of more than 32 entries, summed from the staged products sp by whole warps in RowProduct's order
   (on host teams, of one lane, by one thread in the same order) */
template <bool Add, class YView> KOKKOS_INLINE_FUNCTION void LongTileRows(const Member &t, const IScratch &sr, const Scratch &sp, PetscInt nr, PetscInt y0, const YView &z, const YView &y)
{
#if defined(__CUDA_ARCH__)
  (void)t;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, lane = tid % 32, nw = blockDim.x * blockDim.y / 32;
  for (PetscInt q = tid / 32; q < nr; q += nw) {
    const PetscInt b = sr(q), len = sr(q + 1) - b;
    if (len <= 32) continue;
    PetscScalar sum = 0;
    for (PetscInt j = lane; j < len; j += 32) sum += sp(b + j);
    sum = WarpAllSum(sum);
    if (lane == 0) y(y0 + q) = Add ? z(y0 + q) + sum : sum;
  }
#else
  Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nr), [&](const PetscInt q) {
    const PetscInt b = sr(q), len = sr(q + 1) - b;
    if (len <= 32) return;
    const PetscScalar sum = LaneOrderSum<32>([&](const int l) {
      PetscScalar a = 0;
      for (PetscInt j = l; j < len; j += 32) a += sp(b + j);
      return a;
    });
    y(y0 + q)             = Add ? z(y0 + q) + sum : sum;
  });
#endif
}

/* y(off + row) = (A x)(row) (+ z(off + row)) by tiles (see Tiles) on the instance exec: the rows of the tiles, each
   summed from the staged products in the order of the direct kernels with L lanes (1 or 32), so that both give the
   same bits: a thread's loop, or with 32 lanes a thread each for the rows of up to 32 entries (LaneOrderSum: a warp
   for a short row took twice the time) and, when the tiles have longer rows (Long), a warp each for those (the warps'
   code cost the short rows' kernel a third of its speed in spilled registers: its own instance); then the rows
   longer than a tile in pieces by a second kernel (their own: within one kernel the pieces' code took registers
   from every tile) */
template <bool Add, int L, bool Long, int B = Long ? TileLongTeamsPerSM : TileTeamsPerSM, int EPT = TileEPT, class XView>
void TiledRows(const Exec &exec, const CSR &A, const LaunchShape &s, PetscInt off, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  const Tiles T   = s.tiles;
  const int   cap = T.cap;
  TeamFor(
      Add ? "GPUStream::TiledSpMVAdd" : "GPUStream::TiledSpMV", WavePol<B>(exec, T.n, TeamThreads(), 1).set_scratch_size(0, Kokkos::PerTeam(cap * sizeof(PetscScalar) + (MaxTileRows + 2) * sizeof(PetscInt) + 64)), KOKKOS_LAMBDA(const Member &t) {
        const PetscInt i = t.league_rank();
        if (T.first(i) >= 0) return; /* a piece */
        const PetscInt r0 = T.row(i), r1 = T.row(i + 1), e0 = T.ent(i), e1 = T.ent(i + 1);
        const Scratch  sp(t.team_scratch(0), cap);
        const IScratch sr(t.team_scratch(0), MaxTileRows + 2);
        StageTile<EPT>(t, A, x, r0, r1 - r0, e0, e1 - e0, sr, sp);
        t.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, r1 - r0), [&](const PetscInt q) {
          const PetscInt b = sr(q), len = sr(q + 1) - b;
          PetscScalar    sum = Add && L == 1 ? z(off + r0 + q) : 0; /* from z, as RowSum() */
          if (L == 1)
            for (PetscInt j = 0; j < len; j++) sum += sp(b + j);
          else if (len <= 32)
            sum = LaneOrderSum<32>([&](const int l) {
              PetscScalar a = 0;
              if (l < len) a += sp(b + l);
              return a;
            });
          else
            return;
          y(off + r0 + q) = Add && L != 1 ? z(off + r0 + q) + sum : sum;
        });
        if (Long) LongTileRows<Add>(t, sr, sp, r1 - r0, off + r0, z, y);
      });
  if (T.np == 0) return;
  TeamFor(
      Add ? "GPUStream::TiledPiecesAdd" : "GPUStream::TiledPieces", WavePol<B>(exec, T.np, TeamThreads(), 1).set_scratch_size(0, Kokkos::PerTeam(32 * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        const PetscInt i = T.pieces(t.league_rank()), r0 = T.row(i), f = T.first(i), beg = T.ent(i), len = T.ent(i + 1) - beg;
        const unsigned pieces = (unsigned)((A.rowptr(r0 + 1) - A.rowptr(r0) + cap - 1) / cap);
        PetscScalar    mine   = 0;
        int            tid, nth;
        FlatIndex(t, &tid, &nth);
        for (PetscInt b = 0; b < len; b += EPT * nth) { /* the loads of EPT entries first, as in StageTile */
          PetscInt    c[EPT];
          PetscScalar v[EPT];
          LoadBatch<EPT>(A, beg, len, b, nth, tid, c, v);
#pragma unroll
          for (int u = 0; u < EPT; u++)
            if (b + u * nth + tid < len) mine += v[u] * x(c[u]);
        }
        PetscScalar sum[1] = {mine}; /* a thread per row here (no lanes): TeamSumAllIn sums every thread's */
        TeamSumAllIn<1>(t, Scratch(t.team_scratch(0), 32), sum);
        OneThread(t, [&]() { T.part(i) = sum[0]; });
        if (!LastTeam(t, &T.count(f), pieces)) return;
        OneThread(t, [&]() {
          PetscScalar v = 0;
          for (unsigned c = 0; c < pieces; c++) v += LoadL2(T.part.data() + f + c);
          y(off + r0) = Add ? z(off + r0) + v : v;
          T.count(f)  = 0;
        });
      });
}

/* TiledRows for A's lanes and the tiles' longest row; B, BLong, EPT: launch bounds and loads a thread (bench_spmv's
   sweeps) */
template <bool Add, int B = TileTeamsPerSM, int BLong = TileLongTeamsPerSM, int EPT = TileEPT, class XView>
void TiledSpMV(const Exec &exec, const CSR &A, const LaunchShape &s, PetscInt off, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  if (s.tiles.n == 0) return;
  if (A.lanes == 1)
    TiledRows<Add, 1, false, B, EPT>(exec, A, s, off, x, z, y);
  else if (s.tiles.maxlen <= 32)
    TiledRows<Add, 32, false, B, EPT>(exec, A, s, off, x, z, y);
  else
    TiledRows<Add, 32, true, BLong, EPT>(exec, A, s, off, x, z, y);
}

/* SpMVOn without tiles, for one storage */
template <bool Add, bool Blk, class XView> void DirectSpMV(const Exec &exec, const CSR &A, const LaunchShape &s, PetscInt off, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  if (s.vlen == 1) {
    Kokkos::parallel_for(
        Add ? "GPUStream::SpMVAddRows" : "GPUStream::SpMVRows", RangePol(exec, 0, A.m), KOKKOS_LAMBDA(const PetscInt row) { y(off + row) = RowSum<Blk>(A, x, row, Add ? z(off + row) : PetscScalar(0)); });
    return;
  }
  TeamFor(
      Add ? "GPUStream::SpMVAdd" : "GPUStream::SpMV", TeamPol(exec, s.league, s.team, s.vlen),
      KOKKOS_LAMBDA(const Member &t) { ForEachRowProduct<Blk>(t, A, x, [&](const PetscInt row, const PetscScalar sum) { OneLane(t, [&]() { y(off + row) = Add ? z(off + row) + sum : sum; }); }); });
}

/* y(off + row) = (A x)(row) (+ z(off + row)) on the instance exec; z may be y itself. By tiles when the shape has
   them; else a thread per row runs without teams, one row per thread, which ran the 5-point SpMV much faster than
   teams in a grid-stride loop. MatMult's product (off 0) and each subdivision of a streamed one. */
template <bool Add, class XView> void SpMVOn(const Exec &exec, const CSR &A, const LaunchShape &s, PetscInt off, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  if (s.tiles.cap > 0) {
    TiledSpMV<Add>(exec, A, s, off, x, z, y);
    return;
  }
  ByStorage(A, [&](auto blk) { DirectSpMV<Add, decltype(blk)::value>(exec, A, s, off, x, z, y); });
}

/* y = A x (+ z) on the default instance */
template <bool Add, class XView> void SpMV(const CSR &A, const LaunchShape &s, const XView &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  SpMVOn<Add>(Exec(), A, s, 0, x, z, y);
}

/* Y(off + row, c0 + q) = (A X)(row, c0 + q) (+ Y when Add) for q < KB: one pass over the row, KB sums in registers */
template <int KB, bool Add, bool Blk> KOKKOS_INLINE_FUNCTION void RowBlock(const CSR &A, PetscInt row, PetscInt off, PetscInt c0, const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy)
{
  PetscScalar sum[KB];
  for (int q = 0; q < KB; q++) sum[q] = 0;
  if (!Blk)
    for (PetscInt j = A.rowptr(row); j < A.rowptr(row + 1); j++) {
      const PetscScalar  a  = A.val(j);
      const PetscScalar *xc = X + A.colidx(j) + c0 * ldx;
      for (int q = 0; q < KB; q++) sum[q] += Mul(a, xc[q * ldx]);
    }
  else { /* block storage: the row's entries in the same order */
    PetscInt b0, nk, j;
    BlockRowOf(A, row, &b0, &nk, &j);
    for (PetscInt k = 0; k < nk; k++)
      for (int c = 0; c < A.bs; c++, j++) {
        const PetscScalar  a  = A.val(j);
        const PetscScalar *xc = X + A.colidx(b0 + k) * A.bs + c + c0 * ldx;
        for (int q = 0; q < KB; q++) sum[q] += Mul(a, xc[q * ldx]);
      }
  }
  for (int q = 0; q < KB; q++) Y[off + row + (c0 + q) * ldy] = Add ? Y[off + row + (c0 + q) * ldy] + sum[q] : sum[q];
}

/* Y(off + row, c) = (A X)(row, c) (+ Y when Add) for the k columns of X (column-major, leading dimensions ldx and
   ldy), on the instance exec. A thread per row, without teams (as SpMV at one lane), reads its row once per 8
   columns (then 4, 2, 1 for the rest), summing each column in the row's order. Used by MatMatMult and by the
   streaming engine, where each subdivision serves all k columns while it is on the device. */
template <bool Add, bool Blk> void SpMMBlockOf(const Exec &exec, const CSR &A, PetscInt off, PetscInt k, const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy)
{
  Kokkos::parallel_for(
      "GPUStream::SpMMBlock", RangePol(exec, 0, A.m), KOKKOS_LAMBDA(const PetscInt row) {
        PetscInt c0 = 0;
        for (; c0 + 8 <= k; c0 += 8) RowBlock<8, Add, Blk>(A, row, off, c0, X, ldx, Y, ldy);
        if (c0 + 4 <= k) {
          RowBlock<4, Add, Blk>(A, row, off, c0, X, ldx, Y, ldy);
          c0 += 4;
        }
        if (c0 + 2 <= k) {
          RowBlock<2, Add, Blk>(A, row, off, c0, X, ldx, Y, ldy);
          c0 += 2;
        }
        if (c0 < k) RowBlock<1, Add, Blk>(A, row, off, c0, X, ldx, Y, ldy);
      });
}

template <bool Add = false> void SpMMBlock(const Exec &exec, const CSR &A, PetscInt off, PetscInt k, const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy)
{
  ByStorage(A, [&](auto blk) { SpMMBlockOf<Add, decltype(blk)::value>(exec, A, off, k, X, ldx, Y, ldy); });
}

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

struct _n_GSDeviceMat {
  gpustream::CSR                csr;
  gpustream::DView<PetscInt>    rowptr, colidx;
  gpustream::DView<PetscScalar> val;
  gpustream::DView<PetscInt>    nzrows; /* the rows with entries, if asked for (rowlist: off-diagonal blocks) */
  bool                          rowlist = false;
  gpustream::DView<PetscScalar> x, y, z; /* staging for MatMult on host vectors, allocated on first use */
  gpustream::LaunchShape        shape;
  gpustream::DView<PetscInt>    diag; /* where each row's diagonal entry is in val (-1: none), found on first use */
  bool                          diagknown = false;
  PetscInt                      nodiag    = 0;       /* rows without one */
  _n_GSDeviceMat               *tr        = nullptr; /* the transpose, for MatMultTranspose(), made on first use */
  gpustream::DView<PetscInt>    trperm;              /* where each of its values is in val */
  ~_n_GSDeviceMat()
  {
    delete tr;
  }
};

namespace gpustream
{
/* t = scale D x, D the inverse diagonal d or, when d is empty, the identity; t is (re)allocated to x's size. The input
   of a solver's SpMV with the halo exchange, where a fused kernel would have scaled x while gathering it. */
inline void ScaledInput(const char *label, const DView<PetscScalar> &d, PetscScalar scale, const DView<PetscScalar> &x, DView<PetscScalar> &t)
{
  if (t.extent(0) != x.extent(0)) t = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing(std::string(label) + "::in"), x.extent(0));
  const DView<PetscScalar> y      = t;
  const bool               jacobi = d.extent(0) > 0;
  Kokkos::parallel_for(
      label, RangePol(0, (PetscInt)x.extent(0)), KOKKOS_LAMBDA(const PetscInt i) { y(i) = (jacobi ? d(i) * scale : scale) * x(i); });
}

template <bool Blk> void OffDiagRows(const CSR &b, const DView<PetscInt> &rows, const DView<PetscScalar> &g, const DView<PetscScalar> &y)
{
  Kokkos::parallel_for(
      "GPUStream::OffDiagRows", RangePol(0, (PetscInt)rows.extent(0)), KOKKOS_LAMBDA(const PetscInt k) {
        const PetscInt row = rows(k);
        y(row)             = RowSum<Blk>(b, g, row, y(row));
      });
}

/* y += B g for the off-diagonal block B: over its rows with entries only, when it keeps their list and runs a thread
   per row (the same sums as SpMV<true>, which reads and writes all of y: MatMult of 1e7 rows on two H200s took 1.27x
   the time with it) */
inline void OffDiagSpMV(GSDeviceMat B, const DView<PetscScalar> &g, const DView<PetscScalar> &y)
{
  if (!B->rowlist || B->shape.vlen != 1 || B->shape.tiles.cap != 0)
    SpMV<true>(B->csr, B->shape, g, y, y);
  else if (B->csr.bs > 1)
    OffDiagRows<true>(B->csr, B->nzrows, g, y);
  else
    OffDiagRows<false>(B->csr, B->nzrows, g, y);
}

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
    GSCallKokkos(OffDiagSpMV(B, HaloGhosts(H), y));
  }
  if (launches) *launches += gathers + 1 + (H ? 1 : 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace gpustream
