/* Device side of MATGPUSTREAM: CSR arrays in Kokkos views and the SpMV kernels. */
#include <algorithm>
#include <vector>

#include "devicemat.hpp"
#include "hostcsr.hpp"

using namespace gpustream;

/* Block rows times their lanes at least this many threads, so that a few block rows still fill the device */
constexpr PetscInt BlockLaneThreads = 1 << 17;

/* Rows shorter than 12 entries on average: a thread per row (MatMult: one row per thread; the fused solver kernels:
   256 threads per team, 8 teams per multiprocessor; 2, 4 and 8 vector lanes per row ran slower). Longer rows: a warp
   (32 vector lanes) per row, 8 rows per team, faster on the 27-point matrices than a thread or 4-16 lanes per row.
   kernel forces either. Block rows (bs > 1) under auto: a power of two of lanes each, more than an eighth of their
   blocks (each lane sums whole blocks; a warp per block row left most lanes idle on 27 blocks) and enough for the
   block rows to fill BlockLaneThreads threads (GAMG's coarse levels have few block rows, many blocks each). */
LaunchShape gpustream::SpMVShape(PetscInt m, PetscInt nnz, GSSpMVKernel kernel, int bs)
{
  LaunchShape s;
  if (!OnDevice()) return s;
  int blanes = 0;
  if (kernel == GS_KERNEL_AUTO && bs > 1 && m >= bs) {
    const PetscInt blocks = nnz / ((PetscInt)bs * m), brows = m / bs; /* blocks a block row, on average */
    blanes = 1;
    while (blanes < 32 && (8 * blanes <= blocks || brows * blanes < BlockLaneThreads)) blanes *= 2;
  }
  if (kernel == GS_KERNEL_AUTO) kernel = (m > 0 && nnz >= 12 * m) ? GS_KERNEL_WARP : GS_KERNEL_THREAD;
  const int threads    = TeamThreads();
  s.vlen               = blanes ? blanes : kernel == GS_KERNEL_WARP ? 32 : 1;
  s.team               = threads / s.vlen;
  const PetscInt teams = (m + s.team - 1) / s.team;
  s.league             = (int)PetscMax(1, PetscMin(teams, (PetscInt)MaxTeams(threads)));
  return s;
}

/* On a device, tiles of 1024 entries where a row is longer than 2048 (power-law rows), and of 2048 where rows
   average 12 entries or more (a warp's lanes each) and none is longer than 32 (the 27-point matrix with one unknown
   a node): there tiles measured much faster than a warp per row on an H200; with longer even rows a warp per row
   stays faster (docs/design-measurements.md) */
int gpustream::TileCap(PetscInt m, const PetscInt ia[], PetscInt option)
{
  PetscInt maxlen = 0;
  if (option >= 0) return (int)option;
  if (!OnDevice() || m == 0) return 0;
  for (PetscInt r = 0; r < m; r++) maxlen = PetscMax(maxlen, ia[r + 1] - ia[r]);
  if (maxlen > MaxTileCap) return 1024;
  return ia[m] - ia[0] >= 12 * m && maxlen <= 32 ? 2048 : 0;
}

PetscErrorCode gpustream::MakeTiles(PetscInt m, const PetscInt ia[], int cap, Tiles *tiles)
{
  std::vector<PetscInt> row, ent, first, pieces;
  Tiles                 T;

  PetscFunctionBegin;
  PetscCheck(cap >= 0 && cap <= MaxTileCap, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_tile_size %d must be in 0..%d", cap, MaxTileCap);
  T.cap = cap;
  if (cap > 0) {
    PetscCallCXX({
      for (PetscInt r = 0; r < m;) {
        const PetscInt r0 = r, len = ia[r + 1] - ia[r];
        if (len > cap) { /* pieces of cap entries */
          const PetscInt f = (PetscInt)row.size();
          for (PetscInt c = 0; c * cap < len; c++) pieces.push_back((PetscInt)row.size()), row.push_back(r), ent.push_back(ia[r] - ia[0] + c * cap), first.push_back(f);
          r++;
          continue;
        }
        row.push_back(r0), ent.push_back(ia[r0] - ia[0]), first.push_back(-1);
        for (; r < m && r - r0 < MaxTileRows && ia[r + 1] - ia[r0] <= cap; r++) T.maxlen = PetscMax(T.maxlen, ia[r + 1] - ia[r]);
      }
      row.push_back(m), ent.push_back(ia[m] - ia[0]);
    });
    T.n  = (PetscInt)first.size();
    T.np = (PetscInt)pieces.size();
    GSCallKokkos({
      DView<PetscInt> drow(Kokkos::ViewAllocateWithoutInitializing("GPUStream::tile_row"), row.size()), dent(Kokkos::ViewAllocateWithoutInitializing("GPUStream::tile_ent"), ent.size()),
          dfirst(Kokkos::ViewAllocateWithoutInitializing("GPUStream::tile_first"), first.size()), dpieces(Kokkos::ViewAllocateWithoutInitializing("GPUStream::tile_pieces"), pieces.size());
      SyncCopy(drow, HostUnmanaged<const PetscInt>(row.data(), row.size()));
      SyncCopy(dent, HostUnmanaged<const PetscInt>(ent.data(), ent.size()));
      SyncCopy(dfirst, HostUnmanaged<const PetscInt>(first.data(), first.size()));
      SyncCopy(dpieces, HostUnmanaged<const PetscInt>(pieces.data(), pieces.size()));
      T.pieces = dpieces;
      T.row    = drow;
      T.ent    = dent;
      T.first  = dfirst;
      T.part   = DView<PetscScalar>("GPUStream::tile_part", first.size());
      T.count  = DView<unsigned>("GPUStream::tile_count", first.size());
    });
  }
  *tiles = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt GSBlockPatternRow(PetscInt m, PetscInt n, const PetscInt ia[], const PetscInt ja[], PetscInt bs)
{
  if (bs < 1 || m % bs || n % bs) return 0;
  for (PetscInt r0 = 0; r0 < m; r0 += bs) {
    const PetscInt len = ia[r0 + 1] - ia[r0], *c0 = ja + ia[r0];
    if (len % bs) return r0;
    for (PetscInt j = 0; j < len; j++)
      if (c0[j] != c0[j - j % bs] + j % bs || c0[j - j % bs] % bs) return r0;
    for (PetscInt r = r0 + 1; r < r0 + bs; r++)
      if (ia[r + 1] - ia[r] != len || !std::equal(c0, c0 + len, ja + ia[r])) return r;
  }
  return -1;
}

/* rowlist: also keep the list of rows that have entries, so kernels can visit only those (an off-diagonal block's
   rows are mostly empty). bs > 1: block column indices (see CSR), no tiles. tile: as GSDeviceMatSetTileSize() takes
   it, applied here from the host row pointer (< 0: chosen) */
PetscErrorCode GSDeviceMatCreate(PetscInt m, PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], PetscBool rowlist, PetscInt bs, PetscInt tile, GSDeviceMat *dA)
{
  std::unique_ptr<_n_GSDeviceMat> A; /* freed, with the views made so far, if an allocation fails */
  std::vector<PetscInt>           bptr, bcol;

  PetscFunctionBegin;
  PetscCall(GSKokkosInitialize());
  PetscCallCXX(A.reset(new _n_GSDeviceMat));
  const PetscInt nnz = ia[m];
  PetscCheck(bs <= GS_MAX_FORMAT_BS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Block column indices take block sizes up to %d, not %" PetscInt_FMT, GS_MAX_FORMAT_BS, bs);
  PetscCheck(bs <= 1 || tile <= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-mat_gpustream_tile_size %" PetscInt_FMT " needs CSR storage: add -mat_gpustream_format csr", tile);
  if (bs > 1) {
    const PetscInt bad = GSBlockPatternRow(m, n, ia, ja, bs);
    PetscCheck(bad < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Row %" PetscInt_FMT " breaks the pattern of full %" PetscInt_FMT " x %" PetscInt_FMT " blocks that block column indices need", bad, bs, bs);
    PetscCallCXX({
      for (PetscInt r = 0; r <= m; r += bs) bptr.push_back(ia[r] / (bs * bs));
      for (PetscInt r = 0; r < m; r += bs)
        for (PetscInt j = ia[r]; j < ia[r + 1]; j += bs) bcol.push_back(ja[j] / bs);
    });
  }
  const PetscInt  nptr = bs > 1 ? (PetscInt)bptr.size() : m + 1, nidx = bs > 1 ? (PetscInt)bcol.size() : nnz;
  const PetscInt *ptr = bs > 1 ? bptr.data() : ia, *idx = bs > 1 ? bcol.data() : ja;
  GSCallKokkos({
    A->rowptr = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::rowptr"), nptr);
    A->colidx = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::colidx"), nidx);
    A->val    = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::val"), nnz);
    SyncCopy(A->rowptr, HostUnmanaged<const PetscInt>(ptr, nptr));
    SyncCopy(A->colidx, HostUnmanaged<const PetscInt>(idx, nidx));
    if (a) SyncCopy(A->val, HostUnmanaged<const PetscScalar>(a, nnz)); /* NULL: the caller sets them on the device */
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(nptr * sizeof(PetscInt) + nidx * sizeof(PetscInt) + (a ? nnz : 0) * sizeof(PetscScalar))));
    if (rowlist) {
      std::vector<PetscInt> rows;
      for (PetscInt i = 0; i < m; i++)
        if (ia[i + 1] > ia[i]) rows.push_back(i);
      A->nzrows  = DView<PetscInt>("GPUStream::nzrows", rows.size());
      A->rowlist = true;
      SyncCopy(A->nzrows, HostUnmanaged<const PetscInt>(rows.data(), rows.size()));
    }
  });
#if !defined(GS_DEVICE_VECTORS)
  if (!rowlist) { /* every vector is a host one here: GSDeviceMatMult() stages x and y through these */
    GSCallKokkos({
      A->x = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::x"), n);
      A->y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::y"), m);
    });
  }
#endif
  A->csr.m      = m;
  A->csr.n      = n;
  A->csr.bs     = bs > 1 ? (int)bs : 1;
  A->csr.rowptr = A->rowptr;
  A->csr.colidx = A->colidx;
  A->csr.val    = A->val;
  A->shape      = SpMVShape(m, nnz, GS_KERNEL_AUTO, A->csr.bs);
  A->csr.lanes  = A->shape.vlen;
  if (bs <= 1) PetscCall(MakeTiles(m, ia, TileCap(m, ia, tile), &A->shape.tiles));
  *dA = A.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatSetValues(GSDeviceMat A, const PetscScalar a[])
{
  PetscFunctionBegin;
  GSCallKokkos(SyncCopy(A->val, HostUnmanaged<const PetscScalar>(a, A->val.extent(0))));
  if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(A->val.extent(0) * sizeof(PetscScalar))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetValues(GSDeviceMat A, PetscScalar a[])
{
  PetscFunctionBegin;
  GSCallKokkos({
    if (OnDevice()) PrefaultForCopy(a, A->val.extent(0), (int)GSHostThreads());
    SyncCopy(HostUnmanaged<PetscScalar>(a, A->val.extent(0)), A->val);
  });
  if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(A->val.extent(0) * sizeof(PetscScalar))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetValuesArray(GSDeviceMat A, PetscScalar **a, PetscCount *n)
{
  PetscFunctionBegin;
  *a = A->val.data();
  if (n) *n = (PetscCount)A->val.extent(0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* queued on the execution space's stream, as the kernels that read dst */
PetscErrorCode GSDeviceMatCopyValues(GSDeviceMat dst, GSDeviceMat src)
{
  PetscFunctionBegin;
  PetscCheck(dst->val.extent(0) == src->val.extent(0), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Device matrices of %zu and %zu entries", (size_t)dst->val.extent(0), (size_t)src->val.extent(0));
  GSCallKokkos({
    CheckPending();
    Kokkos::deep_copy(Exec(), dst->val, src->val);
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetSizes(GSDeviceMat A, PetscInt *m, PetscInt *n, PetscCount *nnz)
{
  PetscFunctionBegin;
  if (m) *m = A->csr.m;
  if (n) *n = A->csr.n;
  if (nnz) *nnz = (PetscCount)A->val.extent(0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatScale(GSDeviceMat A, PetscScalar a)
{
  const DView<PetscScalar> v = A->val;

  PetscFunctionBegin;
  GSCallKokkos(Kokkos::parallel_for(
      "GPUStream::Scale", RangePol(0, (PetscInt)v.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { v(k) = a * v(k); }));
  PetscCall(PetscLogFlops((PetscLogDouble)v.extent(0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatZeroValues(GSDeviceMat A)
{
  PetscFunctionBegin;
  GSCallKokkos(Kokkos::deep_copy(Exec(), A->val, PetscScalar(0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatAXPY(GSDeviceMat Y, PetscScalar a, GSDeviceMat X)
{
  const DView<PetscScalar> y = Y->val, x = X->val;

  PetscFunctionBegin;
  PetscCheck(x.extent(0) == y.extent(0) && X->csr.m == Y->csr.m, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "MatAXPY with SAME_NONZERO_PATTERN: %zu and %zu nonzeros", (size_t)x.extent(0), (size_t)y.extent(0));
  GSCallKokkos(Kokkos::parallel_for(
      "GPUStream::AXPY", RangePol(0, (PetscInt)y.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { y(k) = y(k) + a * x(k); }));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)y.extent(0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The entries of X's row merged into Y's in column order: with add, y += a x at each (X's pattern within Y's); the
   entries of X without a place in Y */
KOKKOS_INLINE_FUNCTION PetscInt MergeRow(const CSR &y, const DView<PetscScalar> &yv, PetscScalar a, const CSR &x, const PetscInt row, bool add)
{
  const RowSpan xs = RowEntries(x, row), ys = RowEntries(y, row);
  PetscInt      q = 0, miss = 0, yc = ys.len ? RowEntryColumn(y, ys, 0) : 0;
  for (PetscInt k = 0; k < xs.len; k++) {
    const PetscInt c = RowEntryColumn(x, xs, k);
    while (q < ys.len && yc < c)
      if (++q < ys.len) yc = RowEntryColumn(y, ys, q);
    if (q < ys.len && yc == c) {
      if (add) yv(ys.j0 + q) += a * x.val(xs.j0 + k);
    } else
      miss++;
  }
  return miss;
}

PetscErrorCode GSDeviceMatAXPYSubset(GSDeviceMat Y, PetscScalar a, GSDeviceMat X, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCheck(X->csr.m == Y->csr.m && X->csr.n == Y->csr.n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "MatAXPY of a %" PetscInt_FMT " x %" PetscInt_FMT " matrix into a %" PetscInt_FMT " x %" PetscInt_FMT " one", X->csr.m, X->csr.n, Y->csr.m, Y->csr.n);
  GSCallKokkos({
    const CSR                                       y = Y->csr, x = X->csr;
    const DView<PetscScalar>                        yv = Y->val;
    const Kokkos::View<PetscInt, Mem>               missing("GPUStream::axpy_missing");
    const Kokkos::View<PetscInt, Kokkos::HostSpace> h("GPUStream::axpy_missing_host");
    Kokkos::parallel_reduce(
        "GPUStream::AXPYSubsetCheck", RangePol(0, y.m), KOKKOS_LAMBDA(const PetscInt row, PetscInt &miss) { miss += MergeRow(y, yv, a, x, row, false); }, missing);
    SyncCopy(h, missing);
    if (h() == 0) {
      Kokkos::parallel_for(
          "GPUStream::AXPYSubset", RangePol(0, y.m), KOKKOS_LAMBDA(const PetscInt row) { MergeRow(y, yv, a, x, row, true); });
      *done = PETSC_TRUE;
    }
  });
  if (*done) PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)X->val.extent(0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The positions of the rows' diagonal entries (row = column, rows below the column count) in val */
static PetscErrorCode FindDiagonal(GSDeviceMat A)
{
  PetscFunctionBegin;
  if (A->diagknown) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos({
    const CSR      csr = A->csr;
    const PetscInt m   = csr.m;
    if (A->diag.extent(0) != (size_t)m) A->diag = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::diag"), m);
    const DView<PetscInt>                           d = A->diag;
    const Kokkos::View<PetscInt, Mem>               missing("GPUStream::nodiag");
    const Kokkos::View<PetscInt, Kokkos::HostSpace> h("GPUStream::nodiag_host");
    Kokkos::parallel_reduce(/* into device memory: a host value would wait in Kokkos' fence */
                            "GPUStream::FindDiagonal", RangePol(0, m),
                            KOKKOS_LAMBDA(const PetscInt row, PetscInt &miss) {
                              PetscInt pos = -1;
                              if (row < csr.n)
                                ForRowEntries(csr, row, [&](const PetscInt j, const PetscInt col) {
                                  if (col == row) pos = j;
                                });
                              d(row) = pos;
                              if (pos < 0) miss++;
                            },
                            missing);
    SyncCopy(h, missing);
    A->nodiag = h();
  });
  A->diagknown = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatHasDiagonal(GSDeviceMat A, PetscBool *all)
{
  PetscFunctionBegin;
  PetscCall(FindDiagonal(A));
  *all = (PetscBool)(A->nodiag == 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatShift(GSDeviceMat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(FindDiagonal(A));
  PetscCheck(A->nodiag == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " rows have no diagonal entry to shift", A->nodiag);
  {
    const DView<PetscInt>    d = A->diag;
    const DView<PetscScalar> v = A->val;
    GSCallKokkos(Kokkos::parallel_for(
        "GPUStream::Shift", RangePol(0, A->csr.m), KOKKOS_LAMBDA(const PetscInt row) { v(d(row)) += a; }));
  }
  PetscCall(PetscLogFlops((PetscLogDouble)A->csr.m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetDiagonal(GSDeviceMat A, PetscScalar y[], PetscBool device)
{
  const PetscInt m = A->csr.m;

  PetscFunctionBegin;
  PetscCall(FindDiagonal(A));
  GSCallKokkos({
    const DView<PetscInt>    d = A->diag;
    const DView<PetscScalar> v = A->val;
    DView<PetscScalar>       out;
    if (device)
      out = DView<PetscScalar>(y, m);
    else {
      if (A->y.extent(0) != (size_t)m) A->y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::y"), m);
      out = A->y;
    }
    Kokkos::parallel_for(
        "GPUStream::GetDiagonal", RangePol(0, m), KOKKOS_LAMBDA(const PetscInt row) { out(row) = d(row) >= 0 ? v(d(row)) : PetscScalar(0); });
    if (!device) SyncCopy(HostUnmanaged<PetscScalar>(y, m), out);
  });
  if (!device && OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(m * sizeof(PetscScalar))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A device copy of a host array of n scalars in *stage (kept for the next call), or the device array itself */
static PetscErrorCode DeviceInput(const PetscScalar a[], PetscBool device, PetscInt n, DView<PetscScalar> &stage, DView<PetscScalar> &d)
{
  PetscFunctionBegin;
  if (!a) {
    d = DView<PetscScalar>();
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (device) {
    d = DView<PetscScalar>(const_cast<PetscScalar *>(a), n);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  GSCallKokkos({
    if (stage.extent(0) != (size_t)n) stage = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::scale"), n);
    SyncCopy(stage, HostUnmanaged<const PetscScalar>(a, n));
  });
  if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(n * sizeof(PetscScalar))));
  d = stage;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v(j) = (v(j) l(row)) r(col) over the rows of A (an empty view: no scaling that side), as AIJ scales: left, then right */
static void ScaleRowsColumns(const CSR &A, const DView<PetscScalar> &v, const DView<PetscScalar> &l, const DView<PetscScalar> &r)
{
  const bool left = l.extent(0) > 0, right = r.extent(0) > 0;
  Kokkos::parallel_for(
      "GPUStream::DiagonalScale", RangePol(0, A.m), KOKKOS_LAMBDA(const PetscInt row) {
        ForRowEntries(A, row, [&](const PetscInt j, const PetscInt col) {
          PetscScalar a = v(j);
          if (left) a = a * l(row);
          if (right) a = a * r(col);
          v(j) = a;
        });
      });
}

PetscErrorCode GSDeviceMatDiagonalScale(GSDeviceMat A, GSDeviceMat B, GSHalo H, const PetscScalar l[], PetscBool ldevice, const PetscScalar r[], PetscBool rdevice)
{
  DView<PetscScalar> dl, dr, ls, rs;
  PetscInt           gathers;

  PetscFunctionBegin;
  PetscCall(DeviceInput(l, ldevice, A->csr.m, ls, dl));
  PetscCall(DeviceInput(r, rdevice, A->csr.n, rs, dr));
  if (H && r) PetscCall(HaloBegin(H, dr, &gathers)); /* the ghost values of r travel while A is scaled */
  GSCallKokkos(ScaleRowsColumns(A->csr, A->val, dl, dr));
  if (H) {
    if (r) PetscCall(HaloEnd(H));
    GSCallKokkos(ScaleRowsColumns(B->csr, B->val, dl, r ? HaloGhosts(H) : DView<PetscScalar>()));
  }
  PetscCall(PetscLogFlops((PetscLogDouble)((l ? 1 : 0) + (r ? 1 : 0)) * (PetscLogDouble)(A->val.extent(0) + (B ? B->val.extent(0) : 0))));
  GSCallKokkos(Fence()); /* the staged inputs go with this call */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatDestroy(GSDeviceMat *A)
{
  PetscFunctionBegin;
  if (!*A) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(delete *A);
  *A = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetLaunchShape(GSDeviceMat A, PetscInt *vlen, PetscInt *team, PetscInt *league)
{
  PetscFunctionBegin;
  *vlen   = A->shape.vlen;
  *team   = A->shape.team;
  *league = A->shape.league;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Lanes per row, rows per team and teams of the SpMV kernels, for experiments and benchmarks */
PetscErrorCode GSDeviceMatSetLaunchShape(GSDeviceMat A, PetscInt vlen, PetscInt team, PetscInt league)
{
  PetscFunctionBegin;
  PetscCheck(vlen > 0 && !(vlen & (vlen - 1)) && vlen <= 32 && (OnDevice() || vlen == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Vector length %" PetscInt_FMT " must be a power of two up to 32 (1 on host backends)", vlen);
  PetscCheck(team > 0 && team * vlen <= 1024 && (OnDevice() || team == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Team size %" PetscInt_FMT " times vector length must be in 1..1024 (1 on host backends)", team);
  PetscCheck(league > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "League size %" PetscInt_FMT " must be positive", league);
  A->shape.vlen   = (int)vlen;
  A->shape.team   = (int)team;
  A->shape.league = (int)league;
  A->csr.lanes    = (int)vlen;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The launch shape of a kernel choice (the tiles stay) */
PetscErrorCode GSDeviceMatSetKernel(GSDeviceMat A, GSSpMVKernel kernel)
{
  const Tiles T = A->shape.tiles;

  PetscFunctionBegin;
  A->shape       = SpMVShape(A->csr.m, (PetscInt)A->val.extent(0), kernel, A->csr.bs);
  A->shape.tiles = T;
  A->csr.lanes   = A->shape.vlen;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Entries a tile of MatMult's kernel stages (0: no tiles; < 0: chosen, as at creation) */
PetscErrorCode GSDeviceMatSetTileSize(GSDeviceMat A, PetscInt cap)
{
  std::vector<PetscInt> ia;

  PetscFunctionBegin;
  PetscCheck(A->csr.bs == 1 || cap <= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-mat_gpustream_tile_size %" PetscInt_FMT " needs CSR storage: add -mat_gpustream_format csr", cap);
  if (A->csr.bs > 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCXX(ia.resize(A->csr.m + 1));
  GSCallKokkos(SyncCopy(HostUnmanaged<PetscInt>(ia.data(), ia.size()), A->rowptr));
  PetscCall(MakeTiles(A->csr.m, ia.data(), TileCap(A->csr.m, ia.data(), cap), &A->shape.tiles));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetBlockSize(GSDeviceMat A, PetscInt *bs)
{
  PetscFunctionBegin;
  *bs = A->csr.bs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetTileSize(GSDeviceMat A, PetscInt *cap, PetscInt *ntiles)
{
  PetscFunctionBegin;
  *cap    = A->shape.tiles.cap;
  *ntiles = A->shape.tiles.n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatGetMemory(GSDeviceMat A, PetscLogDouble *matbytes, PetscLogDouble *stagebytes)
{
  PetscFunctionBegin;
  *matbytes   = (PetscLogDouble)((A->rowptr.span() + A->colidx.span() + A->diag.span()) * sizeof(PetscInt) + A->val.span() * sizeof(PetscScalar));
  *stagebytes = (PetscLogDouble)((A->x.span() + A->y.span() + A->z.span()) * sizeof(PetscScalar));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Host x (of n entries) and z (of m, where given) copied into S's staging buffers, and y's buffer (of m) made, for a
   product with host arrays */
static PetscErrorCode StageIn(GSDeviceMat S, PetscInt n, PetscInt m, const PetscScalar x[], const PetscScalar z[])
{
  PetscFunctionBegin;
  GSCallKokkos({
    if (S->x.extent(0) != (size_t)n) S->x = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::x"), n);
    if (S->y.extent(0) != (size_t)m) S->y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::y"), m);
    if (z && S->z.extent(0) != (size_t)m) S->z = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::z"), m);
  });
  PetscCall(HostToDevice(S->x.data(), x, n));
  if (z) PetscCall(HostToDevice(S->z.data(), z, m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) with host arrays: staged through device buffers, for MatMult on ordinary PETSc vectors. On several
   ranks A is the diagonal block, B the off-diagonal one (columns: the ghosts of H), and the halo exchange overlaps
   the diagonal-block SpMV. */
PetscErrorCode GSDeviceMatMult(GSDeviceMat A, GSDeviceMat B, GSHalo H, const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  const PetscInt m = A->csr.m, n = A->csr.n;

  PetscFunctionBegin;
  PetscCall(StageIn(A, n, m, x, z));
  PetscCall(DeviceSpMV(A, B, H, A->x, z ? &A->z : nullptr, A->y, nullptr));
  PetscCall(DeviceToHost(y, A->y.data(), m));
  if (OnDevice()) {
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)((n + (z ? m : 0)) * sizeof(PetscScalar))));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(m * sizeof(PetscScalar))));
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(A->val.extent(0) + (B ? B->val.extent(0) : 0)) - (z ? 0 : m)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatMultInPlace(GSDeviceMat A, GSDeviceMat B, GSHalo H, const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  const PetscInt m = A->csr.m, n = A->csr.n;

  PetscFunctionBegin;
  {
    const DView<PetscScalar> dx(const_cast<PetscScalar *>(x), n), dy(y, m), dz(const_cast<PetscScalar *>(z), z ? m : 0);
    PetscCall(DeviceSpMV(A, B, H, dx, z ? &dz : nullptr, dy, nullptr));
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(A->val.extent(0) + (B ? B->val.extent(0) : 0)) - (z ? 0 : m)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's transpose: its pattern made once on the host from A's (ia, ja: point rows, as A was made from; HostTranspose()
   keeps each column's entries in row order, so the sums of a product are in a fixed order), its values
   gathered from A's on the device when values is true or the transpose is new */
static PetscErrorCode TransposeUpdate(GSDeviceMat A, const PetscInt ia[], const PetscInt ja[], PetscBool values)
{
  const PetscInt m = A->csr.m, n = A->csr.n, nnz = (PetscInt)A->val.extent(0);

  PetscFunctionBegin;
  if (!A->tr) {
    HostArray<PetscInt> tptr, trow, perm;
    const int           nt = (int)std::max<PetscInt>(1, std::min<PetscInt>(GSHostThreads(), nnz / 65536));
    std::vector<char>   bad(nt, 0);
    PetscCheck(ia[m] == nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The host pattern has %" PetscInt_FMT " entries, the device matrix %" PetscInt_FMT, ia[m], nnz);
    PetscCallCXX(ParallelRows(nnz, nt, [&](int t, PetscInt k0, PetscInt k1) {
      for (PetscInt k = k0; k < k1; k++) bad[t] |= ja[k] < 0 || ja[k] >= n;
    }));
    PetscCheck(std::find(bad.begin(), bad.end(), 1) == bad.end(), PETSC_COMM_SELF, PETSC_ERR_PLIB, "A column index of the host pattern is out of range");
    PetscCallCXX(HostTranspose(m, n, ia, ja, tptr, trow, perm, (int)GSHostThreads()));
    PetscCall(GSDeviceMatCreate(n, m, tptr.data(), trow.data(), NULL, PETSC_FALSE, 1, -1, &A->tr));
    GSCallKokkos({
      A->trperm = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::trperm"), nnz);
      SyncCopy(A->trperm, HostUnmanaged<const PetscInt>(perm.data(), nnz));
    });
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(nnz * sizeof(PetscInt))));
    values = PETSC_TRUE;
  }
  if (values) {
    const DView<PetscScalar> tv = A->tr->val, v = A->val;
    const DView<PetscInt>    perm = A->trperm;
    GSCallKokkos(Kokkos::parallel_for(
        "GPUStream::TransposeValues", RangePol(0, nnz), KOKKOS_LAMBDA(const PetscInt p) { tv(p) = v(perm(p)); }));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatMultTranspose(GSDeviceMat A, const PetscInt ia[], const PetscInt ja[], GSDeviceMat B, const PetscInt ib[], const PetscInt jb[], GSHalo H, PetscBool values, const PetscScalar x[], const PetscScalar z[], PetscScalar y[],
                                        PetscBool device)
{
  const PetscInt     m = A->csr.m, n = A->csr.n;
  DView<PetscScalar> dx, dz, dy;

  PetscFunctionBegin;
  PetscCall(TransposeUpdate(A, ia, ja, values));
  if (B) PetscCall(TransposeUpdate(B, ib, jb, values));
  const GSDeviceMat At = A->tr;
  if (device) {
    dx = DView<PetscScalar>(const_cast<PetscScalar *>(x), m);
    dy = DView<PetscScalar>(y, n);
    if (z) dz = DView<PetscScalar>(const_cast<PetscScalar *>(z), n);
  } else { /* staged through the transpose's buffers, as GSDeviceMatMult() stages A's */
    PetscCall(StageIn(At, m, n, x, z));
    dx = At->x;
    dy = At->y;
    dz = At->z;
  }
  PetscCall(DeviceSpMV(At, nullptr, nullptr, dx, z ? &dz : nullptr, dy, nullptr));
  if (H) {
    const DView<PetscScalar> &w = HaloGhosts(H);
    if (B)
      PetscCall(DeviceSpMV(B->tr, nullptr, nullptr, dx, nullptr, w, nullptr));
    else
      GSCallKokkos(Kokkos::deep_copy(Exec(), w, PetscScalar(0)));
    PetscCall(HaloReverseAdd(H, dy));
  }
  if (!device) {
    PetscCall(DeviceToHost(y, dy.data(), n));
    if (OnDevice()) {
      PetscCall(PetscLogCpuToGpu((PetscLogDouble)((m + (z ? n : 0)) * sizeof(PetscScalar))));
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)(n * sizeof(PetscScalar))));
    }
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(A->val.extent(0) + (B ? B->val.extent(0) : 0)) - (z ? 0 : n)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y = A X for k columns with host arrays, staged through device blocks: MatMatMult with a dense matrix. On several
   ranks A is the diagonal block, B the off-diagonal one and H the halo, which brings the ghost rows of X. */
PetscErrorCode GSDeviceMatMultBlock(GSDeviceMat A, GSDeviceMat B, GSHalo H, PetscInt k, const PetscScalar X[], PetscInt ldx, PetscScalar Y[], PetscInt ldy)
{
  const PetscInt m = A->csr.m, n = A->csr.n;

  PetscFunctionBegin;
  PetscCheck(ldx >= n && ldy >= m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Leading dimensions %" PetscInt_FMT " and %" PetscInt_FMT " must be at least %" PetscInt_FMT " and %" PetscInt_FMT, ldx, ldy, n, m);
  if (k <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  {
    DView<PetscScalar> dX, dY, G;
    GSCallKokkos({
      dX = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::X"), n * k);
      dY = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::Y"), m * k);
      for (PetscInt c = 0; c < k; c++) SyncCopy(Kokkos::subview(dX, std::make_pair((size_t)(c * n), (size_t)((c + 1) * n))), HostUnmanaged<const PetscScalar>(X + c * ldx, n));
      SpMMBlock(Exec(), A->csr, 0, k, dX.data(), n, dY.data(), m);
    });
    if (H) {
      PetscCall(HaloBlock(H, k, dX, n, G));
      GSCallKokkos(SpMMBlock<true>(Exec(), B->csr, 0, k, G.data(), B->csr.n, dY.data(), m));
    }
    GSCallKokkos({
      for (PetscInt c = 0; c < k; c++) SyncCopy(HostUnmanaged<PetscScalar>(Y + c * ldy, m), Kokkos::subview(dY, std::make_pair((size_t)(c * m), (size_t)((c + 1) * m))));
    });
    if (OnDevice()) {
      PetscCall(PetscLogCpuToGpu((PetscLogDouble)(n * k * sizeof(PetscScalar))));
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)(m * k * sizeof(PetscScalar))));
    }
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(A->val.extent(0) + (B ? B->val.extent(0) : 0)) * k));
  PetscFunctionReturn(PETSC_SUCCESS);
}
