/* Sparse products of sequential gpustream matrices (C = A B, A^T B, P^T A P): the symbolic phase on the host, from
   the operands' host patterns, and the numeric phase on the device (or its twin on host threads: on a host backend,
   for a streamed operand or result). Each product X =
   L R is one row loop into X's pattern, known from the symbolic phase (RowProducts()): C's, and for P^T (A P) first A
   P's; a transposed operand is a pattern with a map into the operand's values. No hash tables, no result to compress
   or scatter: a numeric phase is a few launches. */
#include "kokkosimpl.hpp"
#include <algorithm>
#include <memory>
#include <utility>
#include "hostcsr.hpp"

using namespace gpustream;

/* A CSR pattern on the host, columns ascending in each row where it is a product's result */
struct HostPattern {
  PetscInt            m = 0;
  HostArray<PetscInt> row{0}, col;
};

/* The same on the device */
struct Pattern {
  DView<PetscInt> row, col;
  PetscInt        m = 0;
};

struct _n_GSDeviceProduct {
  GSProductType       type;
  PetscInt            am = 0, bm = 0, bn = 0; /* the operands' rows, B's columns (those of C and A P) */
  PetscCount          annz = 0, bnnz = 0;
  HostPattern         ht, hx, hc;       /* the transposed operand (A^T, P^T), A P, C */
  HostArray<PetscInt> htmap;            /* the entry of the transposed operand each entry of ht is */
  bool                deferred = false; /* ht and htmap are due at the first numeric phase (a symmetric A^T's) */
  bool                uploaded = false;
  Pattern             a, b, t, x, c; /* on the device, made at the first numeric phase there */
  DView<PetscInt>     tmap;
  DView<PetscScalar>  tval, xval;
};

static void UploadPattern(Pattern &x, const char *label, PetscInt m, const PetscInt *row, const PetscInt *col)
{
  x.m = m;
  Upload(x.row, label, row, m + 1);
  Upload(x.col, label, col, row[m]);
}

static void UploadPattern(Pattern &x, const char *label, const HostPattern &h)
{
  UploadPattern(x, label, h.m, h.row.data(), h.col.data());
}

/* Threads for a row loop of X = L R on m rows (of at most nt): by the work, about L's entries times R's mean row
   length (rm rows, rnnz entries), so that a coarse level's few long rows get several too */
static int WorkThreads(int nt, PetscInt m, PetscCount lnnz, PetscInt rm, PetscCount rnnz)
{
  return (int)std::max<double>(1, std::min<double>({(double)nt, (double)m, (double)lnnz * ((double)rnnz / (double)std::max<PetscInt>(rm, 1)) / 32768}));
}

/* The pattern of X = L R on the host (L: m rows, R: n columns), columns ascending in each row, on nt threads (a range
   of rows each), in two passes: the rows' counts, then their columns in place. Block matrices (GAMG's levels) repeat
   patterns: a row of L with the previous row's columns has its row of X, and an entry of L whose row of R repeats the
   previous entry's row adds nothing, so both are skipped. A row of X whose columns span a range not much wider than
   their count is read off the marks in order, a wider one sorted. */
static void HostProductPattern(PetscInt m, PetscInt n, const PetscInt *lr, const PetscInt *lc, PetscInt rm, const PetscInt *rr, const PetscInt *rc, HostPattern &x, int nt)
{
  std::vector<char>                  again(rm + 1, 0); /* again[j]: R's row j has row j-1's columns */
  std::vector<std::vector<PetscInt>> last(nt);         /* each thread's: the row that last met each column */
  std::vector<PetscInt>              base(nt + 1, 0);  /* where each thread's rows start in x.col */
  HostArray<PetscInt>               &xr = x.row, &xc = x.col;

  nt = WorkThreads(nt, m, lr[m], rm, rr[rm]);
  /* row i of (r, c) has row i-1's columns (the first columns compared first: most rows differ there) */
  const auto same = [](const PetscInt *r, const PetscInt *c, PetscInt i) { return r[i + 1] - r[i] == r[i] - r[i - 1] && (r[i] == r[i + 1] || (c[r[i]] == c[r[i - 1]] && std::equal(c + r[i], c + r[i + 1], c + r[i - 1]))); };
  ParallelRows(rm, nt, [&](int, PetscInt j0, PetscInt j1) {
    for (PetscInt j = std::max<PetscInt>(j0, 1); j < j1; j++) again[j] = same(rr, rc, j);
  });
  const auto repeats = [&](PetscInt i, PetscInt i0) { return i > i0 && same(lr, lc, i); };
  /* each column of row i of X once, to put(), marked i in last */
  const auto visit = [&](PetscInt i, std::vector<PetscInt> &mark, auto &&put) {
    for (PetscInt k = lr[i]; k < lr[i + 1]; k++) {
      const PetscInt j = lc[k];
      if (k > lr[i] && j == lc[k - 1] + 1 && again[j]) continue;
      for (PetscInt e = rr[j]; e < rr[j + 1]; e++)
        if (mark[rc[e]] != i) {
          mark[rc[e]] = i;
          put(rc[e]);
        }
    }
  };
  x.m = m;
  xr.resize(m + 1);
  xr[0] = 0;
  /* xr[i + 1]: row i's count */
  ParallelRows(m, nt, [&](int t, PetscInt i0, PetscInt i1) {
    last[t].assign(n, -1);
    PetscInt total = 0;
    for (PetscInt i = i0; i < i1; i++) {
      PetscInt count = 0;
      if (repeats(i, i0))
        count = xr[i];
      else
        visit(i, last[t], [&](PetscInt) { count++; });
      xr[i + 1] = count;
      total += count;
    }
    base[t + 1] = total;
  });
  for (int t = 0; t < nt; t++) base[t + 1] += base[t];
  xc.resize((size_t)base[nt]);
  /* the columns, and xr[i + 1]: row i's end */
  ParallelRows(m, nt, [&](int t, PetscInt i0, PetscInt i1) {
    std::vector<PetscInt> &mark = last[t];
    PetscInt               s = base[t], prev = s;
    std::fill(mark.begin(), mark.end(), -1);
    for (PetscInt i = i0; i < i1; i++) {
      const PetscInt count = xr[i + 1];
      PetscInt      *row   = xc.data() + s;
      if (repeats(i, i0))
        std::copy(xc.data() + prev, xc.data() + prev + count, row);
      else {
        PetscInt q = 0, lo = n, hi = -1;
        visit(i, mark, [&](PetscInt c) {
          row[q++] = c;
          lo       = PetscMin(lo, c);
          hi       = PetscMax(hi, c);
        });
        if (count > 1 && hi - lo + 1 <= 16 * count) {
          q = 0;
          for (PetscInt c = lo; c <= hi; c++)
            if (mark[c] == i) row[q++] = c;
        } else if (count <= 32) { /* sorted runs, one an entry of L's: insertion beats std::sort at this length */
          for (PetscInt a = 1; a < count; a++) {
            const PetscInt c = row[a];
            PetscInt       b = a;
            for (; b > 0 && row[b - 1] > c; b--) row[b] = row[b - 1];
            row[b] = c;
          }
        } else
          std::sort(row, row + count);
      }
      prev = s;
      s += count;
      xr[i + 1] = s;
    }
  });
}

/* Vector lanes for a row loop whose lanes take the rows of R: the power of two at or above R's mean row length, at
   most a warp; one on host backends */
static int Lanes(const Pattern &r, PetscInt nnz)
{
  if (!OnDevice() || r.m == 0) return 1;
  const double mean = (double)nnz / (double)r.m;
  int          vl   = 1;
  while (vl < 32 && vl < mean) vl *= 2;
  return vl;
}

/* xv = L R in X's pattern (columns ascending in each row). One team thread a row of L, walking the row's entries in
   order; the vector lanes take the row of R each entry picks, whose columns are distinct, so that no two lanes meet
   one place at once, and Kokkos' vector loop ends with a warp barrier, so that the next entry's lanes see those
   sums: plain adds, in one order on every run. X's pattern holds every product (the symbolic phase made it). */
static void RowProducts(const Pattern &l, const DView<PetscScalar> &lv, const Pattern &r, const DView<PetscScalar> &rv, const Pattern &x, const DView<PetscScalar> &xv, int lanes)
{
  const int             ts = OnDevice() ? std::max(1, 128 / lanes) : 1;
  const PetscInt        m = l.m, league = (m + ts - 1) / ts;
  const DView<PetscInt> lr = l.row, lc = l.col, rr = r.row, rc = r.col, xr = x.row, xc = x.col;

  Kokkos::deep_copy(Exec(), xv, 0.0);
  if (m == 0) return;
  Kokkos::parallel_for(
      "GPUStream::RowProducts", TeamPol(league, ts, lanes), KOKKOS_LAMBDA(const Member &t) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, ts), [&](const int q) {
          const PetscInt i = t.league_rank() * (PetscInt)ts + q;
          if (i >= m) return;
          const PetscInt x0 = xr(i), x1 = xr(i + 1);
          for (PetscInt k = lr(i); k < lr(i + 1); k++) {
            const PetscInt    j = lc(k);
            const PetscScalar a = lv(k);
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, rr(j), rr(j + 1)), [&](const PetscInt e) {
              const PetscInt col = rc(e);
              PetscInt       lo = x0, hi = x1 - 1;
              while (lo < hi) { /* the first place whose column is not below col */
                const PetscInt mid = lo + (hi - lo) / 2;
                if (xc(mid) < col)
                  lo = mid + 1;
                else
                  hi = mid;
              }
              xv(lo) += a * rv(e);
            });
          }
        });
      });
}

/* The twin of RowProducts() on the host, xv = L R in X's pattern (n columns), on nt threads (a range of rows each):
   the sums in RowProducts()' order, each entry's place in X's row from a map of the row's columns */
static void HostRowProducts(PetscInt m, PetscInt n, const PetscInt *lr, const PetscInt *lc, const PetscScalar *lv, PetscInt rm, const PetscInt *rr, const PetscInt *rc, const PetscScalar *rv, const PetscInt *xr, const PetscInt *xc, PetscScalar *xv,
                            int nt)
{
  nt = WorkThreads(nt, m, lr[m], rm, rr[rm]);
  ParallelRows(m, nt, [&](int, PetscInt i0, PetscInt i1) {
    std::vector<PetscInt> place(n);
    for (PetscInt i = i0; i < i1; i++) {
      for (PetscInt q = xr[i]; q < xr[i + 1]; q++) {
        place[xc[q]] = q;
        xv[q]        = 0.0;
      }
      for (PetscInt k = lr[i]; k < lr[i + 1]; k++) {
        const PetscInt    j = lc[k];
        const PetscScalar a = lv[k];
        for (PetscInt e = rr[j]; e < rr[j + 1]; e++) xv[place[rc[e]]] += a * rv[e];
      }
    }
  });
}

PetscErrorCode GSDeviceProductSymbolic(GSProductType type, PetscInt am, PetscInt an, const PetscInt ai[], const PetscInt aj[], PetscInt bn, const PetscInt bi[], const PetscInt bj[], PetscBool symmetric, PetscInt threads, GSDeviceProduct *out)
{
  std::unique_ptr<_n_GSDeviceProduct> P; /* freed on an exception */
  const int                           nt = (int)std::max<PetscInt>(1, std::min<PetscInt>(threads, 1024));

  PetscFunctionBegin;
  *out = nullptr;
  GSCallKokkos({
    P.reset(new _n_GSDeviceProduct);
    P->type = type;
    P->am   = am;
    P->annz = ai[am];
    P->bm   = type == GS_PRODUCT_AtB ? am : an;
    P->bnnz = bi[P->bm];
    P->bn   = bn;
    switch (type) {
    case GS_PRODUCT_AB: /* A: am x an, B: an x bn */
      HostProductPattern(am, bn, ai, aj, an, bi, bj, P->hc, nt);
      break;
    case GS_PRODUCT_AtB: /* A: am x an, B: am x bn; C = A^T B is an x bn */
      P->ht.m = an;
      if (symmetric && am == an) {
        P->deferred = true;
        HostProductPattern(an, bn, ai, aj, am, bi, bj, P->hc, nt);
      } else {
        HostTranspose(am, an, ai, aj, P->ht.row, P->ht.col, P->htmap, nt);
        HostProductPattern(an, bn, P->ht.row.data(), P->ht.col.data(), am, bi, bj, P->hc, nt);
      }
      break;
    case GS_PRODUCT_PtAP: /* A: am x an (am <= an), P: an x bn; A P is am x bn, C = P(0:am,:)^T (A P) bn x bn */
      HostProductPattern(am, bn, ai, aj, an, bi, bj, P->hx, nt);
      P->ht.m = bn;
      HostTranspose(am, bn, bi, bj, P->ht.row, P->ht.col, P->htmap, nt);
      HostProductPattern(bn, bn, P->ht.row.data(), P->ht.col.data(), am, P->hx.row.data(), P->hx.col.data(), P->hc, nt);
      break;
    }
  });
  *out = P.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductGetPattern(GSDeviceProduct P, PetscInt *m, const PetscInt *ci[], const PetscInt *cj[])
{
  PetscFunctionBegin;
  *m  = P->hc.m;
  *ci = P->hc.row.data();
  *cj = P->hc.col.data();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductKeepPattern(GSDeviceProduct P, GSDeviceProduct from)
{
  PetscFunctionBegin;
  std::swap(P->hc, from->hc);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A^T's pattern and map, where the symbolic phase left them to the first numeric phase */
static void MakeDeferredTranspose(GSDeviceProduct P, const PetscInt ai[], const PetscInt aj[])
{
  if (!P->deferred) return;
  HostTranspose(P->am, P->ht.m, ai, aj, P->ht.row, P->ht.col, P->htmap, (int)GSHostThreads());
  P->deferred = false;
}

#define GSCheckOperands(P, ai, bi) PetscCheck((ai)[(P)->am] == (P)->annz && (bi)[(P)->bm] == (P)->bnnz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The operands of a sparse product changed their nonzero patterns after its symbolic phase")

/* The patterns on the device, once; the operands' from their host patterns (ai, aj, bi, bj) */
static void UploadProduct(GSDeviceProduct P, const PetscInt ai[], const PetscInt aj[], const PetscInt bi[], const PetscInt bj[])
{
  if (P->uploaded) return;
  UploadPattern(P->a, "GPUStream::product_a", P->am, ai, aj);
  UploadPattern(P->b, "GPUStream::product_b", P->bm, bi, bj);
  UploadPattern(P->c, "GPUStream::product_c", P->hc);
  if (P->type != GS_PRODUCT_AB) {
    UploadPattern(P->t, "GPUStream::product_t", P->ht);
    Upload(P->tmap, "GPUStream::product_tmap", P->htmap);
    P->tval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_tval"), P->htmap.size());
  }
  if (P->type == GS_PRODUCT_PtAP) {
    UploadPattern(P->x, "GPUStream::product_ap", P->hx);
    P->xval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_apval"), P->hx.col.size());
  }
  P->uploaded = true;
}

/* t = v(map): a transposed operand's values */
static void Gather(const DView<PetscScalar> &t, const DView<PetscScalar> &v, const DView<PetscInt> &map)
{
  Kokkos::parallel_for(
      "GPUStream::ProductTranspose", RangePol(0, (PetscInt)t.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { t(k) = v(map(k)); });
}

PetscErrorCode GSDeviceProductNumeric(GSDeviceProduct P, const PetscInt ai[], const PetscInt aj[], const PetscScalar a[], const PetscInt bi[], const PetscInt bj[], const PetscScalar b[], PetscScalar c[])
{
  PetscFunctionBegin;
  if (!OnDevice()) {              /* a host backend's values are host arrays: the twin, without device copies of the patterns */
    GSCallKokkos(Exec().fence()); /* kernels that wrote a or b */
    PetscCall(GSDeviceProductNumericHost(P, ai, aj, a, bi, bj, b, c));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  GSCheckOperands(P, ai, bi);
  GSCallKokkos({
    MakeDeferredTranspose(P, ai, aj);
    UploadProduct(P, ai, aj, bi, bj);
    const DView<PetscScalar> av = Wrap(a, (size_t)P->annz), bv = Wrap(b, (size_t)P->bnnz), cv = Wrap(c, P->hc.col.size());
    switch (P->type) {
    case GS_PRODUCT_AB:
      RowProducts(P->a, av, P->b, bv, P->c, cv, Lanes(P->b, (PetscInt)P->bnnz));
      break;
    case GS_PRODUCT_AtB:
      Gather(P->tval, av, P->tmap);
      RowProducts(P->t, P->tval, P->b, bv, P->c, cv, Lanes(P->b, (PetscInt)P->bnnz));
      break;
    case GS_PRODUCT_PtAP:
      RowProducts(P->a, av, P->b, bv, P->x, P->xval, Lanes(P->b, (PetscInt)P->bnnz));
      Gather(P->tval, bv, P->tmap);
      RowProducts(P->t, P->tval, P->x, P->xval, P->c, cv, Lanes(P->x, (PetscInt)P->xval.extent(0)));
      break;
    }
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductNumericHost(GSDeviceProduct P, const PetscInt ai[], const PetscInt aj[], const PetscScalar a[], const PetscInt bi[], const PetscInt bj[], const PetscScalar b[], PetscScalar c[])
{
  PetscFunctionBegin;
  GSCheckOperands(P, ai, bi);
  GSCallKokkos({
    MakeDeferredTranspose(P, ai, aj);
    std::vector<PetscScalar> t(P->htmap.size()), x(P->hx.col.size());
    for (size_t k = 0; k < t.size(); k++) t[k] = (P->type == GS_PRODUCT_AtB ? a : b)[P->htmap[k]];
    const HostPattern &hc = P->hc, &hx = P->hx, &ht = P->ht;
    switch (P->type) {
    case GS_PRODUCT_AB:
      HostRowProducts(P->am, P->bn, ai, aj, a, P->bm, bi, bj, b, hc.row.data(), hc.col.data(), c, (int)GSHostThreads());
      break;
    case GS_PRODUCT_AtB:
      HostRowProducts(ht.m, P->bn, ht.row.data(), ht.col.data(), t.data(), P->bm, bi, bj, b, hc.row.data(), hc.col.data(), c, (int)GSHostThreads());
      break;
    case GS_PRODUCT_PtAP:
      HostRowProducts(P->am, P->bn, ai, aj, a, P->bm, bi, bj, b, hx.row.data(), hx.col.data(), x.data(), (int)GSHostThreads());
      HostRowProducts(ht.m, P->bn, ht.row.data(), ht.col.data(), t.data(), hx.m, hx.row.data(), hx.col.data(), x.data(), hc.row.data(), hc.col.data(), c, (int)GSHostThreads());
      break;
    }
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductDestroy(GSDeviceProduct *P)
{
  PetscFunctionBegin;
  GSCallKokkos(delete *P);
  *P = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A product of distributed matrices from a process's pieces: A's local rows as one matrix [A_d A_o] (the diagonal
   block's columns, then n + each ghost column's index), and P's rows for those columns [P_local; P_ghosts] in a compact
   numbering of P's columns; the product is then one of sequential matrices (P^T A P with P_local's transpose) */
struct _n_GSDistProduct {
  std::unique_ptr<_n_GSDeviceProduct> prod;
  PetscInt                            m = 0, an = 0; /* A's local rows; its columns here, P's rows (n + ghosts) */
  PetscCount                          nd = 0, no = 0;
  HostArray<PetscInt>                 ai, aj, pi, pj;
  HostArray<PetscCount>               amap; /* each entry of [A_d A_o]: its index in A_d's values, or nd + its index in A_o's */
  DView<PetscCount>                   damap;
  DView<PetscScalar>                  aval, pval, cval;
};

PetscErrorCode GSDistProductCreate(GSProductType type, PetscInt m, PetscInt n, const PetscInt di[], const PetscInt dj[], PetscInt ng, const PetscInt oi[], const PetscInt oj[], PetscInt pn, const PetscInt pi[], const PetscInt pj[], PetscInt threads,
                                   GSDistProduct *out)
{
  std::unique_ptr<_n_GSDistProduct> D;
  GSDeviceProduct                   prod = nullptr;
  const PetscInt                   *ci, *cj;
  PetscInt                          cm;

  PetscFunctionBegin;
  *out = nullptr;
  PetscCheck(type == GS_PRODUCT_AB || (type == GS_PRODUCT_PtAP && m == n), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Not a product of distributed matrices");
  GSCallKokkos({
    D.reset(new _n_GSDistProduct);
    D->m  = m;
    D->an = n + ng;
    D->nd = di[m];
    D->no = ng && oi ? oi[m] : 0;
    D->ai.resize(m + 1);
    D->aj.resize(D->nd + D->no);
    D->amap.resize(D->nd + D->no);
    D->ai[0]     = 0;
    PetscCount e = 0;
    for (PetscInt i = 0; i < m; i++) {
      for (PetscInt k = di[i]; k < di[i + 1]; k++, e++) {
        D->aj[e]   = dj[k];
        D->amap[e] = k;
      }
      if (D->no)
        for (PetscInt k = oi[i]; k < oi[i + 1]; k++, e++) {
          D->aj[e]   = n + oj[k];
          D->amap[e] = D->nd + k;
        }
      D->ai[i + 1] = (PetscInt)e;
    }
    D->pi.assign(pi, pi + D->an + 1);
    D->pj.assign(pj, pj + pi[D->an]);
  });
  PetscCall(GSDeviceProductSymbolic(type, m, D->an, D->ai.data(), D->aj.data(), pn, D->pi.data(), D->pj.data(), PETSC_FALSE, threads, &prod));
  D->prod.reset(prod);
  PetscCall(GSDeviceProductGetPattern(prod, &cm, &ci, &cj));
  GSCallKokkos({
    Upload(D->damap, "GPUStream::dist_amap", D->amap);
    D->aval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::dist_a"), D->amap.size());
    D->pval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::dist_p"), D->pj.size()); /* SetP() writes them */
    D->cval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::dist_c"), (size_t)ci[cm]);
  });
  *out = D.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDistProductGetPattern(GSDistProduct D, PetscInt *m, const PetscInt *ci[], const PetscInt *cj[])
{
  PetscFunctionBegin;
  PetscCall(GSDeviceProductGetPattern(D->prod.get(), m, ci, cj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDistProductSetP(GSDistProduct D, const PetscScalar v[])
{
  PetscFunctionBegin;
  GSCallKokkos(SyncCopy(D->pval, HostUnmanaged<const PetscScalar>(v, D->pval.extent(0))));
  if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(D->pval.extent(0) * sizeof(PetscScalar))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDistProductNumeric(GSDistProduct D, const PetscScalar ad[], const PetscScalar ao[], PetscBool device, const PetscScalar **c)
{
  const PetscCount nd = D->nd, ne = (PetscCount)D->amap.size();

  PetscFunctionBegin;
  GSCallKokkos({
    if (device) {
      const DView<PetscCount>  map = D->damap;
      const DView<PetscScalar> av  = D->aval;
      Kokkos::parallel_for(
          "GPUStream::DistGather", RangePol(0, ne), KOKKOS_LAMBDA(const PetscCount e) {
            const PetscCount k = map(e);
            av(e)              = k < nd ? ad[k] : ao[k - nd];
          });
    } else {
      HostArray<PetscScalar> h(ne);
      for (PetscCount e = 0; e < ne; e++) h[e] = D->amap[e] < nd ? ad[D->amap[e]] : ao[D->amap[e] - nd];
      SyncCopy(D->aval, HostUnmanaged<const PetscScalar>(h.data(), h.size()));
    }
  });
  if (!device && OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(ne * sizeof(PetscScalar))));
  PetscCall(GSDeviceProductNumeric(D->prod.get(), D->ai.data(), D->aj.data(), D->aval.data(), D->pi.data(), D->pj.data(), D->pval.data(), D->cval.data()));
  *c = D->cval.data();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDistProductGetValues(GSDistProduct D, PetscScalar h[])
{
  PetscFunctionBegin;
  GSCallKokkos(SyncCopy(HostUnmanaged<PetscScalar>(h, D->cval.extent(0)), D->cval));
  if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(D->cval.extent(0) * sizeof(PetscScalar))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDistProductDestroy(GSDistProduct *D)
{
  PetscFunctionBegin;
  GSCallKokkos(delete *D);
  *D = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}
