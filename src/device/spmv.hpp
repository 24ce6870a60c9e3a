/* The SpMV kernels on a device CSR: launch shapes, the tiled kernel (rows staged in team scratch), the direct ones
   (a thread, or a thread's vector lanes, per row) and the block product of k columns in one pass. */
#pragma once

#include "csr.hpp"

namespace gpustream
{
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

/* The default shape for m rows and nnz entries: a thread per row for short rows, a warp per row for long ones, lanes
   per block row by their blocks for block size bs > 1 */
LaunchShape SpMVShape(PetscInt m, PetscInt nnz, GSSpMVKernel kernel = GS_KERNEL_AUTO, int bs = 1);

/* Entries a thread loads before it stores any, and teams of the tiled kernel per multiprocessor (its launch bounds:
   unbounded, the kernel took 128 registers, two teams of 256 threads a multiprocessor, too few loads in flight), with
   and without rows of more than 32 entries summed by warps. Chosen among B = 3..8 and E = 2, 4, 8 on an H200
   (bench/bench_spmv's tile sweeps) */
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
   for a short row was slower) and, when the tiles have longer rows (Long), a warp each for those (the warps' code
   slowed the short rows' kernel with spilled registers: its own instance); then the rows
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
} // namespace gpustream
