/* The out-of-core streaming engine (after the communication hiding for SpMV over PCIe of 000_e3022f7eb214e8df.txt,
   with the resident prefix and the automatic choice of the number of subdivisions the paper leaves to future work).

   Rows are cut into subdivisions of about equal bytes (row pointer, column indices and values of their rows). The
   leading subdivisions stay in device memory while the budget allows; the others live in pinned host memory and
   are copied, each product, into a ring of device buffers. Copies run on their own execution-space instance and
   SpMVs on another; on CUDA, events order them (buffer ready: its SpMV may start; buffer free: the next copy into
   it may start), so the copy of subdivision k+1 runs during the SpMV of subdivision k, and the resident SpMV runs
   during the first copy. On host backends the instances are the same and copies are plain host copies, which
   keeps the bookkeeping testable on a CPU. Each subdivision's SpMV is the row loop of every SpMV kernel
   (ForEachRowProduct) on a row pointer rebased to the subdivision, so a streamed product is bitwise equal to the
   resident one. */
#include <algorithm>
#include <vector>

#include "devicemat.hpp"
#include "streamimpl.h"

using namespace gpustream;

const char *const GSStreamModes[] = {"auto", "resident", "stream", "GSStreamMode", "GS_STREAM_", nullptr};

template <class T> using PinnedView      = Kokkos::View<T *, PinnedSpace>;
template <class T> using PinnedUnmanaged = Kokkos::View<T *, PinnedSpace, Kokkos::MemoryUnmanaged>;

namespace
{
struct Buffer {
  DView<PetscInt>    rowptr, colidx;
  DView<PetscScalar> val;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t ready = nullptr, free = nullptr;
#endif
};

/* Per-subdivision overhead the model charges (copy set-up and kernel launch), seconds */
constexpr double Latency()
{
  return OnDevice() ? 2e-5 : 1e-6;
}
} // namespace

struct _n_GSStreamPlan {
  PetscInt              m = 0, n = 0, nsub = 0, nres = 0, buffers = 2;
  bool                  overlap = true, automatic = false;
  std::vector<PetscInt> cut, nzcut; /* rows and entries before each subdivision, nsub + 1 each */
  PetscLogDouble        budget = 0, copyrate = 0, computerate = 0, modeltime = 0;
  /* the resident subdivisions, as one CSR of the leading rows */
  CSR                rcsr;
  DView<PetscInt>    rrowptr, rcolidx;
  DView<PetscScalar> rval;
  /* the streamed subdivisions in pinned host memory; subdivision k's row pointer (rebased to 0) starts at
     prowoff[k], its entries at nzcut[k] - nzcut[nres] */
  std::vector<PetscInt>        prowoff;
  PinnedView<PetscInt>         prowptr, owncolidx;
  PinnedView<PetscScalar>      ownval;
  PinnedUnmanaged<PetscInt>    pcolidx; /* ownval and owncolidx, or the caller's arrays (inplace) */
  PinnedUnmanaged<PetscScalar> pval;
  bool                         inplace   = false;
  bool                         lockedidx = false, lockedval = false; /* in place: the caller's arrays are page-locked */
  std::vector<Buffer>          buf;
  LaunchShape                  shape;            /* the whole matrix's, for every subdivision, with the resident rows' tiles */
  std::vector<Tiles>           tiles;            /* of each streamed subdivision (built by the same rule) */
  DView<PetscScalar>           x, y, z, X, Y, G; /* staging of host vectors and blocks, ghost rows of X */
  Exec                         copy, compute;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t scopy = nullptr, scompute = nullptr;
#endif
};

/* A CSR whose kernels run with the shape s (its lanes decide how ForEachRowProduct sums a row) */
template <class R, class C, class V> static CSR MakeCSR(PetscInt m, PetscInt n, const LaunchShape &s, const R &rowptr, const C &colidx, const V &val)
{
  CSR A;
  A.m      = m;
  A.n      = n;
  A.lanes  = s.vlen;
  A.rowptr = rowptr;
  A.colidx = colidx;
  A.val    = val;
  return A;
}

static inline PetscLogDouble RowsBytes(const PetscInt ia[], PetscInt r0, PetscInt r1)
{
  return GSStreamCSRBytes(r1 - r0, ia[r1] - ia[r0]);
}

PetscLogDouble GSStreamCSRBytes(PetscInt m, PetscInt nnz)
{
  return (PetscLogDouble)(m + 1) * sizeof(PetscInt) + (PetscLogDouble)nnz * (sizeof(PetscInt) + sizeof(PetscScalar));
}

PetscLogDouble GSStreamVecBytes(PetscInt m, PetscInt n)
{
  return (PetscLogDouble)(n + 2 * m) * sizeof(PetscScalar);
}

PetscErrorCode GSStreamDefaultBudget(PetscLogDouble *budget)
{
  PetscFunctionBegin;
  PetscCall(GSKokkosInitialize());
  *budget = PETSC_MAX_REAL;
#if defined(KOKKOS_ENABLE_CUDA)
  {
    size_t free = 0, total = 0;
    PetscCheck(cudaMemGetInfo(&free, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    /* the reserve leaves room for the solver's vectors, Kokkos' scratch and other libraries */
    const double reserve = PetscMax(512.0 * 1048576.0, 0.05 * (double)total);
    *budget              = PetscMax(0.0, (double)free - reserve);
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Pinned host-to-device and device-to-device copy rates, measured once per process on 64 MiB. The model takes an
   SpMV to read its CSR at half the device copy rate (the copy counts read and write; an SpMV also gathers x). */
static PetscErrorCode MeasureRates(PetscLogDouble *copyrate, PetscLogDouble *computerate)
{
  static PetscLogDouble crate = 0, krate = 0;

  PetscFunctionBegin;
  if (crate == 0) {
    const size_t n = 8 << 20;
    GSCallKokkos({
      PinnedView<PetscScalar> h(Kokkos::ViewAllocateWithoutInitializing("GPUStream::rate_h"), n);
      DView<PetscScalar>      d(Kokkos::ViewAllocateWithoutInitializing("GPUStream::rate_d"), n), e(Kokkos::ViewAllocateWithoutInitializing("GPUStream::rate_e"), n);
      SyncCopy(h, 1.0);
      double tc = 1e30, tk = 1e30;
      for (int i = 0; i < 3; i++) {
        Kokkos::Timer timer;
        SyncCopy(d, h);
        FenceAll();
        tc = std::min(tc, timer.seconds());
        timer.reset();
        SyncCopy(e, d);
        FenceAll();
        tk = std::min(tk, timer.seconds());
      }
      crate = n * sizeof(PetscScalar) / std::max(tc, 1e-9);
      krate = n * sizeof(PetscScalar) / std::max(tk, 1e-9); /* 2 n words moved at 2 n / t: half is n / t */
    });
  }
  *copyrate    = crate;
  *computerate = krate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{
/* A candidate plan: the cut into nsub subdivisions balanced by bytes, and how many lead resident */
struct Cut {
  PetscInt              nsub = 0, nres = 0;
  std::vector<PetscInt> cut;
  bool                  fits = false;
};

/* Cuts rows [0, m) into nsub (<= m) parts of about equal bytes, each at least one row: boundary k is the first row
   whose prefix reaches k/nsub of the total, kept so that every part keeps a row */
void CutRows(PetscInt m, const PetscInt ia[], PetscInt nsub, std::vector<PetscInt> &cut)
{
  const PetscLogDouble total = RowsBytes(ia, 0, m);
  cut.assign(nsub + 1, 0);
  cut[nsub] = m;
  for (PetscInt k = 1; k < nsub; k++) {
    const PetscLogDouble target = total * k / nsub;
    PetscInt             lo = cut[k - 1] + 1, hi = m - (nsub - k); /* the boundary lies in [lo, hi] */
    while (lo < hi) {
      const PetscInt mid = lo + (hi - lo) / 2;
      if (RowsBytes(ia, 0, mid) >= target)
        hi = mid;
      else
        lo = mid + 1;
    }
    cut[k] = lo;
  }
}

/* The most leading subdivisions that fit the budget next to the buffers for the rest and the vectors */
Cut MakeCut(PetscInt m, const PetscInt ia[], PetscInt nsub, PetscInt buffers, PetscLogDouble budget, PetscLogDouble vecbytes)
{
  Cut c;
  c.nsub = nsub;
  CutRows(m, ia, nsub, c.cut);
  /* a buffer holds the most rows and the most entries of any streamed subdivision */
  std::vector<PetscInt> maxrows(nsub + 1, 0), maxnz(nsub + 1, 0);
  for (PetscInt k = nsub - 1; k >= 0; k--) {
    maxrows[k] = std::max(maxrows[k + 1], c.cut[k + 1] - c.cut[k]);
    maxnz[k]   = std::max(maxnz[k + 1], ia[c.cut[k + 1]] - ia[c.cut[k]]);
  }
  for (PetscInt r = nsub; r >= 0; r--) {
    const PetscLogDouble buf  = r < nsub ? GSStreamCSRBytes(maxrows[r], maxnz[r]) : 0;
    const PetscLogDouble need = (r ? RowsBytes(ia, 0, c.cut[r]) : 0) + buffers * buf + vecbytes;
    if (need <= budget) {
      c.nres = r;
      c.fits = true;
      break;
    }
  }
  return c;
}

/* Modelled time of one product: the resident SpMV, then the pipeline of the streamed ones (copy j starts when copy
   j-1 is done and buffer j mod B is free; SpMV j starts when copy j is done and SpMV j-1 finished) */
double ModelTime(const Cut &c, PetscInt m, const PetscInt ia[], PetscInt buffers, bool overlap, double crate, double krate)
{
  const double        L = Latency();
  std::vector<double> kend(c.nsub, 0);
  double              t = c.nres ? RowsBytes(ia, 0, c.cut[c.nres]) / krate + L : 0, cend = 0;
  for (PetscInt j = c.nres; j < c.nsub; j++) {
    const double b  = RowsBytes(ia, c.cut[j], c.cut[j + 1]);
    const double tc = b / crate + L, tk = b / krate + L;
    if (!overlap) {
      t += tc + tk;
      continue;
    }
    const double cstart = std::max(cend, j - buffers >= c.nres ? kend[j - buffers] : 0.0);
    cend                = cstart + tc;
    kend[j]             = std::max(cend, t) + tk;
    t                   = kend[j];
  }
  return t;
}
} // namespace

static PetscErrorCode TooSmall(PetscInt m, const PetscInt ia[], PetscInt nsub, PetscInt buffers, PetscLogDouble budget, PetscLogDouble vecbytes, const char pre[])
{
  PetscLogDouble maxrow = 0;
  PetscInt       row    = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < m; i++)
    if (RowsBytes(ia, i, i + 1) > maxrow) {
      maxrow = RowsBytes(ia, i, i + 1);
      row    = i;
    }
  if (nsub)
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
            "Device budget %g bytes (-%smat_gpustream_max_device_bytes) is too small for %" PetscInt_FMT " subdivisions: %" PetscInt_FMT
            " buffers of the largest subdivision and %g bytes of vectors do not fit; use a larger -%smat_gpustream_max_device_bytes or more -%smat_gpustream_subdivisions",
            budget, pre, nsub, buffers, vecbytes, pre, pre);
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
          "Device budget %g bytes (-%smat_gpustream_max_device_bytes) is too small: even with one row per subdivision, %" PetscInt_FMT " buffers of row %" PetscInt_FMT
          " (%g bytes) and %g bytes of vectors do not fit; use a larger -%smat_gpustream_max_device_bytes",
          budget, pre, buffers, row, maxrow, vecbytes, pre);
}

/* The number of subdivisions: the one given, else the one of least modelled time among those that fit (all counts
   up to 512, or m) */
static PetscErrorCode ChoosePlan(PetscInt m, const PetscInt ia[], const GSStreamOptions *o, PetscLogDouble budget, PetscLogDouble vecbytes, double crate, double krate, Cut *best, double *besttime)
{
  const char *pre = o->prefix ? o->prefix : "";

  PetscFunctionBegin;
  *besttime = 0;
  if (!m) {
    *best = MakeCut(0, ia, 0, o->buffers, budget, vecbytes);
    PetscCheck(best->fits, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Device budget %g bytes (-%smat_gpustream_max_device_bytes) is too small for the %g bytes of vectors", budget, pre, vecbytes);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (o->subdivisions > 0) {
    PetscCallCXX(*best = MakeCut(m, ia, PetscMin(o->subdivisions, m), o->buffers, budget, vecbytes));
    if (!best->fits) PetscCall(TooSmall(m, ia, best->nsub, o->buffers, budget, vecbytes, pre));
    *besttime = ModelTime(*best, m, ia, o->buffers, o->overlap, crate, krate);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  best->fits = false;
  for (PetscInt nsub = 1; nsub <= PetscMin(m, 512); nsub++) {
    Cut c;
    PetscCallCXX(c = MakeCut(m, ia, nsub, o->buffers, budget, vecbytes));
    if (!c.fits) continue;
    const double t = ModelTime(c, m, ia, o->buffers, o->overlap, crate, krate);
    if (!best->fits || t < *besttime) {
      PetscCallCXX(*best = c);
      *besttime = t;
    }
  }
  if (!best->fits && m > 512) { /* very small budgets: one row per subdivision is the last resort */
    PetscCallCXX(*best = MakeCut(m, ia, m, o->buffers, budget, vecbytes));
    if (best->fits) *besttime = ModelTime(*best, m, ia, o->buffers, o->overlap, crate, krate);
  }
  if (!best->fits) PetscCall(TooSmall(m, ia, 0, o->buffers, budget, vecbytes, pre));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values of the resident rows to the device, of the streamed rows to pinned memory */
static PetscErrorCode LoadValues(GSStreamPlan P, const PetscScalar a[])
{
  const PetscInt nzres = P->nzcut[P->nres], nz = P->nzcut[P->nsub];

  PetscFunctionBegin;
  GSCallKokkos({
    if (nzres) SyncCopy(P->rval, HostUnmanaged<const PetscScalar>(a, nzres));
    if (nz > nzres && !P->inplace) SyncCopy(P->ownval, HostUnmanaged<const PetscScalar>(a + nzres, nz - nzres));
  });
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)nzres * sizeof(PetscScalar)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanCreate(PetscInt m, PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const GSStreamOptions *o, GSStreamPlan *plan)
{
  GSStreamPlan   P;
  PetscLogDouble budget = o->budget, vecbytes = GSStreamVecBytes(m, n), crate, krate;
  Cut            c;
  double         t;

  PetscFunctionBegin;
  PetscCheck(o->buffers >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_buffers %" PetscInt_FMT " must be at least 2", o->prefix ? o->prefix : "", o->buffers);
  PetscCall(GSKokkosInitialize());
  if (budget < 0) PetscCall(GSStreamDefaultBudget(&budget));
  PetscCall(MeasureRates(&crate, &krate));
  PetscCall(ChoosePlan(m, ia, o, budget, vecbytes, crate, krate, &c, &t));

  PetscCallCXX(P = new _n_GSStreamPlan);
  P->m           = m;
  P->n           = n;
  P->nsub        = c.nsub;
  P->nres        = c.nres;
  P->buffers     = o->buffers;
  P->overlap     = o->overlap ? true : false;
  P->automatic   = o->subdivisions <= 0;
  P->budget      = budget;
  P->copyrate    = crate;
  P->computerate = krate;
  P->modeltime   = t;
  P->cut         = c.cut;
  P->nzcut.resize(c.nsub + 1);
  for (PetscInt k = 0; k <= c.nsub; k++) P->nzcut[k] = ia[c.cut[k]];
  const PetscInt rrows = c.cut[c.nres], nzres = P->nzcut[c.nres];
  PetscInt       maxrows = 0, maxnz = 0, prows = 0;
  P->prowoff.assign(c.nsub + 1, 0);
  for (PetscInt k = c.nres; k < c.nsub; k++) {
    P->prowoff[k] = prows;
    prows += c.cut[k + 1] - c.cut[k] + 1;
    maxrows = PetscMax(maxrows, c.cut[k + 1] - c.cut[k]);
    maxnz   = PetscMax(maxnz, P->nzcut[k + 1] - P->nzcut[k]);
  }
  P->prowoff[c.nsub]  = prows;
  P->inplace          = o->inplace ? true : false;
  const PetscInt pnz  = P->nzcut[c.nsub] - nzres;
  PetscErrorCode ierr = PETSC_SUCCESS;
  try {
    /* the resident rows: one CSR */
    P->rrowptr = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_rowptr"), rrows + 1);
    P->rcolidx = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_colidx"), nzres);
    P->rval    = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_val"), nzres);
    SyncCopy(P->rrowptr, HostUnmanaged<const PetscInt>(ia, rrows + 1));
    SyncCopy(P->rcolidx, HostUnmanaged<const PetscInt>(ja, nzres));
    /* the whole matrix's launch shape for every subdivision: the same lanes per row, so the same sums as resident */
    P->shape = SpMVShape(m, ia[m], o->kernel);
    P->rcsr  = MakeCSR(rrows, n, P->shape, P->rrowptr, P->rcolidx, P->rval);
    /* the streamed rows: pinned copies, row pointers rebased per subdivision */
    P->prowptr = PinnedView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::pinned_rowptr"), prows);
    if (P->inplace) {
      P->pcolidx = PinnedUnmanaged<PetscInt>(const_cast<PetscInt *>(ja) + nzres, pnz);
      P->pval    = PinnedUnmanaged<PetscScalar>(const_cast<PetscScalar *>(a) + nzres, pnz);
    } else {
      P->owncolidx = PinnedView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::pinned_colidx"), pnz);
      P->ownval    = PinnedView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::pinned_val"), pnz);
      P->pcolidx   = P->owncolidx;
      P->pval      = P->ownval;
      std::copy(ja + nzres, ja + nzres + pnz, P->owncolidx.data());
    }
    for (PetscInt k = c.nres; k < c.nsub; k++)
      for (PetscInt i = c.cut[k]; i <= c.cut[k + 1]; i++) P->prowptr(P->prowoff[k] + i - c.cut[k]) = ia[i] - ia[c.cut[k]];
    if (c.nres < c.nsub) {
      P->buf.resize(o->buffers);
      for (auto &b : P->buf) {
        b.rowptr = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::buffer_rowptr"), maxrows + 1);
        b.colidx = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::buffer_colidx"), maxnz);
        b.val    = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::buffer_val"), maxnz);
      }
    }
    P->x = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_x"), n);
    P->y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_y"), m);
  } catch (const std::bad_alloc &e) {
    ierr = PETSC_ERR_MEM;
  } catch (const std::exception &e) {
    ierr = PETSC_ERR_LIB;
  }
  if (ierr) delete P;
  PetscCheck(ierr != PETSC_ERR_MEM, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of device or pinned host memory while setting up the streamed matrix (budget %g bytes): lower -%smat_gpustream_max_device_bytes", budget, o->prefix ? o->prefix : "");
  PetscCheck(!ierr, PETSC_COMM_SELF, PETSC_ERR_LIB, "Kokkos failed while setting up the streamed matrix");
#if defined(KOKKOS_ENABLE_CUDA)
  PetscCheck(cudaStreamCreateWithFlags(&P->scopy, cudaStreamNonBlocking) == cudaSuccess && cudaStreamCreateWithFlags(&P->scompute, cudaStreamNonBlocking) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaStreamCreate failed");
  for (auto &b : P->buf) PetscCheck(cudaEventCreateWithFlags(&b.ready, cudaEventDisableTiming) == cudaSuccess && cudaEventCreateWithFlags(&b.free, cudaEventDisableTiming) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventCreate failed");
  GSCallKokkos({
    P->copy    = Kokkos::Cuda(P->scopy);
    P->compute = Kokkos::Cuda(P->scompute);
  });
  if (P->inplace && pnz) { /* page-lock the caller's arrays where they are, for asynchronous copies */
    P->lockedidx = cudaHostRegister(P->pcolidx.data(), pnz * sizeof(PetscInt), cudaHostRegisterDefault) == cudaSuccess;
    P->lockedval = P->lockedidx && cudaHostRegister(P->pval.data(), pnz * sizeof(PetscScalar), cudaHostRegisterDefault) == cudaSuccess;
    if (!P->lockedval) {
      PetscCall(GSStreamPlanDestroy(&P));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaHostRegister failed on the caller's CSR arrays");
    }
  }
#endif
  { /* tiles by the whole matrix's rule, so that every row is summed as in the resident product */
    const int cap = TileCap(m, ia, o->tile);
    ierr          = MakeTiles(rrows, ia, cap, &P->shape.tiles);
    PetscCallCXX(P->tiles.resize(c.nsub - c.nres));
    for (PetscInt k = c.nres; k < c.nsub && !ierr; k++) ierr = MakeTiles(c.cut[k + 1] - c.cut[k], ia + c.cut[k], cap, &P->tiles[k - c.nres]);
    if (ierr) PetscCall(GSStreamPlanDestroy(&P));
    PetscCall(ierr);
  }
  PetscCall(LoadValues(P, a));
  PetscCall(PetscLogCpuToGpu(GSStreamCSRBytes(rrows, nzres) - (PetscLogDouble)nzres * sizeof(PetscScalar)));
  *plan = P;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanSetValues(GSStreamPlan P, const PetscScalar a[])
{
  PetscFunctionBegin;
  PetscCall(LoadValues(P, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanSetOverlap(GSStreamPlan P, PetscBool overlap)
{
  PetscFunctionBegin;
  P->overlap = overlap ? true : false;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanDestroy(GSStreamPlan *P)
{
  PetscFunctionBegin;
  if (!*P) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos({
    Fence((*P)->copy);
    Fence((*P)->compute);
#if defined(KOKKOS_ENABLE_CUDA)
    (*P)->copy    = Exec();
    (*P)->compute = Exec();
    for (auto &b : (*P)->buf) {
      cudaEventDestroy(b.ready);
      cudaEventDestroy(b.free);
    }
    cudaStreamDestroy((*P)->scopy);
    cudaStreamDestroy((*P)->scompute);
    if ((*P)->lockedidx) cudaHostUnregister((*P)->pcolidx.data()); /* only what was registered: nothing when all is resident */
    if ((*P)->lockedval) cudaHostUnregister((*P)->pval.data());
#endif
    delete *P;
  });
  *P = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanGetInfo(GSStreamPlan P, GSStreamInfo *info)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  info->m              = P->m;
  info->nsub           = P->nsub;
  info->nresident      = P->nres;
  info->buffers        = P->buf.empty() ? 0 : P->buffers;
  info->nrows_resident = P->cut.empty() ? 0 : P->cut[P->nres];
  info->overlap        = P->overlap ? PETSC_TRUE : PETSC_FALSE;
  info->automatic      = P->automatic ? PETSC_TRUE : PETSC_FALSE;
  info->budget         = P->budget;
  info->csrbytes       = GSStreamCSRBytes(P->m, P->nzcut.empty() ? 0 : P->nzcut[P->nsub]);
  info->vecbytes       = GSStreamVecBytes(P->m, P->n);
  info->minbytes       = P->nsub ? PETSC_MAX_REAL : 0;
  for (PetscInt k = 0; k < P->nsub; k++) {
    const PetscLogDouble b = GSStreamCSRBytes(P->cut[k + 1] - P->cut[k], P->nzcut[k + 1] - P->nzcut[k]);
    info->minbytes         = PetscMin(info->minbytes, b);
    info->maxbytes         = PetscMax(info->maxbytes, b);
    if (k < P->nres)
      info->residentbytes += b;
    else
      info->streambytes += b;
  }
  if (!P->buf.empty()) info->bufferbytes = (PetscLogDouble)(P->buf[0].rowptr.span() + P->buf[0].colidx.span()) * sizeof(PetscInt) + (PetscLogDouble)P->buf[0].val.span() * sizeof(PetscScalar);
  info->copyrate    = P->copyrate;
  info->computerate = P->computerate;
  info->modeltime   = P->modeltime;
  info->tilecap     = P->shape.tiles.cap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs kernel(csr, shape, first row) on every subdivision in order: the resident ones at once, the streamed ones
   as their copies arrive. Returns when every kernel is done. */
template <class Kernel> static PetscErrorCode ForEachSubdivision(GSStreamPlan P, const Kernel &kernel)
{
  PetscLogDouble t0, t1;

  LaunchShape s = P->shape;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  GSCallKokkos(if (P->cut[P->nres]) kernel(P->rcsr, s, 0));
  if (P->nres < P->nsub) PetscCall(PetscLogEventBegin(GPUS_StreamCopy, 0, 0, 0, 0));
  for (PetscInt k = P->nres; k < P->nsub; k++) {
    const PetscInt j = k - P->nres, rows = P->cut[k + 1] - P->cut[k], nz = P->nzcut[k + 1] - P->nzcut[k], nzoff = P->nzcut[k] - P->nzcut[P->nres];
    Buffer        &b  = P->buf[j % P->buffers];
    const auto     rr = std::make_pair((size_t)0, (size_t)rows + 1), zz = std::make_pair((size_t)0, (size_t)nz);
    const auto     pr = std::make_pair((size_t)P->prowoff[k], (size_t)P->prowoff[k] + rows + 1), pz = std::make_pair((size_t)nzoff, (size_t)nzoff + nz);
    const CSR      A    = MakeCSR(rows, P->n, P->shape, Kokkos::subview(b.rowptr, rr), Kokkos::subview(b.colidx, zz), Kokkos::subview(b.val, zz));
    PetscErrorCode ierr = PETSC_SUCCESS;
#if defined(KOKKOS_ENABLE_CUDA)
    if (P->overlap && j >= P->buffers) ierr = cudaStreamWaitEvent(P->scopy, b.free, 0) == cudaSuccess ? PETSC_SUCCESS : PETSC_ERR_LIB;
#endif
    PetscCheck(!ierr, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaStreamWaitEvent failed");
    GSCallKokkos({
      Kokkos::deep_copy(P->copy, Kokkos::subview(b.rowptr, rr), Kokkos::subview(P->prowptr, pr));
      Kokkos::deep_copy(P->copy, Kokkos::subview(b.colidx, zz), Kokkos::subview(P->pcolidx, pz));
      Kokkos::deep_copy(P->copy, Kokkos::subview(b.val, zz), Kokkos::subview(P->pval, pz));
    });
    PetscCall(PetscLogCpuToGpu(GSStreamCSRBytes(rows, nz)));
#if defined(KOKKOS_ENABLE_CUDA)
    if (P->overlap) {
      ierr = (cudaEventRecord(b.ready, P->scopy) == cudaSuccess && cudaStreamWaitEvent(P->scompute, b.ready, 0) == cudaSuccess) ? PETSC_SUCCESS : PETSC_ERR_LIB;
      PetscCheck(!ierr, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventRecord failed");
    } else
#endif
      GSCallKokkos(Fence(P->copy)); /* without events (or overlap) the SpMV waits for its copy here */
    s.tiles = P->tiles[j];
    GSCallKokkos(kernel(A, s, P->cut[k]));
    if (P->overlap) {
#if defined(KOKKOS_ENABLE_CUDA)
      PetscCheck(cudaEventRecord(b.free, P->scompute) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventRecord failed");
#endif
    } else
      GSCallKokkos(Fence(P->compute));
  }
  GSCallKokkos(Fence(P->compute));
  /* the device ran from t0 to now (every copy and kernel is done): its time, which PETSc's default-stream timer
     would not see on our streams */
  PetscCall(PetscTime(&t1));
  PetscCall(PetscLogGpuTimeAdd(t1 - t0));
  if (P->nres < P->nsub) PetscCall(PetscLogEventEnd(GPUS_StreamCopy, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) from and to P's device vectors, whose x (and z) hold the input */
static PetscErrorCode PlanMult(GSStreamPlan P, GSDeviceMat B, GSHalo H, bool add)
{
  PetscInt gathers;

  PetscFunctionBegin;
  if (H) PetscCall(HaloBegin(H, P->x, &gathers));
  {
    const DView<PetscScalar> &dx = P->x, &dy = P->y, &dz = P->z;
    const Exec               &exec = P->compute;
    if (add)
      PetscCall(ForEachSubdivision(P, [&](const CSR &A, const LaunchShape &s, PetscInt off) { SpMVOn<true>(exec, A, s, off, dx, dz, dy); }));
    else
      PetscCall(ForEachSubdivision(P, [&](const CSR &A, const LaunchShape &s, PetscInt off) { SpMVOn<false>(exec, A, s, off, dx, dz, dy); }));
  }
  if (H) {
    PetscCall(HaloEnd(H));
    GSCallKokkos(SpMV<true>(B->csr, B->shape, HaloGhosts(H), P->y, P->y));
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(P->nzcut[P->nsub] + (B ? B->val.extent(0) : 0)) - (add ? 0 : P->m)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void EnsureZ(GSStreamPlan P)
{
  if (P->z.extent(0) != (size_t)P->m) P->z = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_z"), P->m);
}

PetscErrorCode GSStreamPlanMult(GSStreamPlan P, GSDeviceMat B, GSHalo H, const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  const PetscInt m = P->m, n = P->n;

  PetscFunctionBegin;
  GSCallKokkos({
    if (z) EnsureZ(P);
  });
  PetscCall(HostToDevice(P->x.data(), x, n));
  if (z) PetscCall(HostToDevice(P->z.data(), z, m));
  GSCallKokkos(Fence()); /* the subdivisions run on the plan's own streams */
  PetscCall(PlanMult(P, B, H, z != nullptr));
  PetscCall(DeviceToHost(y, P->y.data(), m));
  if (OnDevice()) {
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)((n + (z ? m : 0)) * sizeof(PetscScalar))));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(m * sizeof(PetscScalar))));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The subdivisions run on the plan's own streams: the input is copied into P's vectors on the default one, which the
   caller ordered after the vectors' producer, and finished before they start */
PetscErrorCode GSStreamPlanMultInPlace(GSStreamPlan P, GSDeviceMat B, GSHalo H, const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  const PetscInt m = P->m, n = P->n;

  PetscFunctionBegin;
  GSCallKokkos({
    if (z) EnsureZ(P);
    Kokkos::deep_copy(Exec(), P->x, DView<PetscScalar>(const_cast<PetscScalar *>(x), n));
    if (z) Kokkos::deep_copy(Exec(), P->z, DView<PetscScalar>(const_cast<PetscScalar *>(z), m));
    Fence();
  });
  PetscCall(PlanMult(P, B, H, z != nullptr));
  GSCallKokkos(Kokkos::deep_copy(Exec(), DView<PetscScalar>(y, m), P->y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSStreamPlanMultBlockDevice(GSStreamPlan P, PetscInt k, const PetscScalar X[], PetscInt ldx, PetscScalar Y[], PetscInt ldy)
{
  PetscFunctionBegin;
  PetscCheck(ldx >= P->n && ldy >= P->m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Leading dimensions %" PetscInt_FMT " and %" PetscInt_FMT " must be at least %" PetscInt_FMT " and %" PetscInt_FMT, ldx, ldy, P->n, P->m);
  if (k <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(FenceAll()); /* X may come from work still running on another instance */
  {
    const Exec &exec = P->compute;
    PetscCall(ForEachSubdivision(P, [&](const CSR &A, const LaunchShape &s, PetscInt off) { SpMMBlock(exec, A, off, k, X, ldx, Y, ldy); }));
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)P->nzcut[P->nsub] * k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stages host blocks X (n x k) and Y (m x k) through device blocks of leading dimensions n and m; on several ranks
   the off-diagonal block B (resident) multiplies the ghost rows of X that the halo H brings */
PetscErrorCode GSStreamPlanMultBlock(GSStreamPlan P, GSDeviceMat B, GSHalo H, PetscInt k, const PetscScalar X[], PetscInt ldx, PetscScalar Y[], PetscInt ldy)
{
  const PetscInt m = P->m, n = P->n;

  PetscFunctionBegin;
  PetscCheck(ldx >= n && ldy >= m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Leading dimensions %" PetscInt_FMT " and %" PetscInt_FMT " must be at least %" PetscInt_FMT " and %" PetscInt_FMT, ldx, ldy, n, m);
  if (k <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos({
    if (P->X.extent(0) < (size_t)n * k) P->X = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_X"), (size_t)n * k);
    if (P->Y.extent(0) < (size_t)m * k) P->Y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::stream_Y"), (size_t)m * k);
    for (PetscInt c = 0; c < k; c++) SyncCopy(Kokkos::subview(P->X, std::make_pair((size_t)(c * n), (size_t)((c + 1) * n))), HostUnmanaged<const PetscScalar>(X + c * ldx, n));
  });
  PetscCall(GSStreamPlanMultBlockDevice(P, k, P->X.data(), n, P->Y.data(), m));
  if (H) {
    PetscCall(HaloBlock(H, k, P->X, n, P->G));
    GSCallKokkos(SpMMBlock<true>(Exec(), B->csr, 0, k, P->G.data(), B->csr.n, P->Y.data(), m));
    PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)B->val.extent(0) * k));
  }
  GSCallKokkos({
    for (PetscInt c = 0; c < k; c++) SyncCopy(HostUnmanaged<PetscScalar>(Y + c * ldy, m), Kokkos::subview(P->Y, std::make_pair((size_t)(c * m), (size_t)((c + 1) * m))));
  });
  if (OnDevice()) {
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)(n * k * sizeof(PetscScalar))));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(m * k * sizeof(PetscScalar))));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
