/* The numeric phase of sparse products of sequential gpustream matrices on the device (C = A P, C = P^T A P): the
   operands' device values in, the result's device values out, in the pattern AIJ's symbolic phase made on the host.
   Each product X = L R is one row loop into a pattern known beforehand (RowProducts()): C's for C = A P and for the
   second product of P^T (A P), A P's own (made here on the host, once) for the first. No hash tables, no result to
   compress or scatter: a set-up after new values is a few launches. */
#include "kokkosimpl.hpp"
#include <algorithm>
#include <memory>
#include "hostcsr.hpp"

using namespace gpustream;

/* The pattern of a CSR matrix on the device, its columns ascending in each row where it is a product's result */
struct Pattern {
  DView<PetscInt> row, col;
  PetscInt        m = 0;
};

struct _n_GSDeviceProduct {
  bool               galerkin = false; /* P^T A P, else A P */
  Pattern            a, p, c;          /* the operands' and the result's (their values are the matrices' device ones) */
  Pattern            pt, ap;           /* P^T, its values gathered from P's through ptmap; A P */
  DView<PetscInt>    ptmap;
  DView<PetscScalar> ptval, apval;
};

static void UploadPattern(Pattern &x, const char *label, PetscInt m, const PetscInt *row, const PetscInt *col)
{
  x.m = m;
  Upload(x.row, label, row, m + 1);
  Upload(x.col, label, col, row[m]);
}

/* The pattern of X = L R on the host (L: m rows, R: n columns), columns ascending in each row. Block matrices (GAMG's
   levels) repeat patterns: a row of L with the previous row's columns has its row of X, and an entry of L whose row of
   R repeats the previous entry's row adds nothing, so both are skipped. A row of X whose columns span a range not much
   wider than their count is read off the marks in order, a wider one sorted. */
static void HostProductPattern(PetscInt m, PetscInt n, const PetscInt *lr, const PetscInt *lc, PetscInt rm, const PetscInt *rr, const PetscInt *rc, std::vector<PetscInt> &xr, std::vector<PetscInt> &xc)
{
  std::vector<PetscInt> last(n, -1);      /* the row that last met each column */
  std::vector<char>     again(rm + 1, 0); /* again[j]: R's row j has row j-1's columns */
  for (PetscInt j = 1; j < rm; j++) again[j] = rr[j + 1] - rr[j] == rr[j] - rr[j - 1] && std::equal(rc + rr[j], rc + rr[j + 1], rc + rr[j - 1]);
  xr.assign(m + 1, 0);
  xc.clear();
  for (PetscInt i = 0; i < m; i++) {
    const size_t start = xc.size();
    if (i > 0 && lr[i + 1] - lr[i] == lr[i] - lr[i - 1] && std::equal(lc + lr[i], lc + lr[i + 1], lc + lr[i - 1])) {
      const size_t prev = (size_t)xr[i - 1];
      for (size_t q = prev; q < start; q++) xc.push_back(xc[q]);
      xr[i + 1] = (PetscInt)xc.size();
      continue;
    }
    PetscInt lo = n, hi = -1;
    for (PetscInt k = lr[i]; k < lr[i + 1]; k++) {
      const PetscInt j = lc[k];
      if (k > lr[i] && j == lc[k - 1] + 1 && again[j]) continue;
      for (PetscInt e = rr[j]; e < rr[j + 1]; e++) {
        const PetscInt c = rc[e];
        if (last[c] != i) {
          last[c] = i;
          xc.push_back(c);
          lo = PetscMin(lo, c);
          hi = PetscMax(hi, c);
        }
      }
    }
    const size_t count = xc.size() - start;
    if (count > 1 && (size_t)(hi - lo + 1) <= 16 * count) {
      size_t q = start;
      for (PetscInt c = lo; c <= hi; c++)
        if (last[c] == i) xc[q++] = c;
    } else
      std::sort(xc.begin() + start, xc.end());
    xr[i + 1] = (PetscInt)xc.size();
  }
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
   sums: plain adds, in one order on every run. With count, the products X's pattern has no place for are counted
   into miss (the result is then incomplete). */
static void RowProducts(const Pattern &l, const DView<PetscScalar> &lv, const Pattern &r, const DView<PetscScalar> &rv, const Pattern &x, const DView<PetscScalar> &xv, int lanes, const Kokkos::View<PetscInt, Mem> *miss)
{
  const int                   ts = OnDevice() ? std::max(1, 128 / lanes) : 1;
  const PetscInt              m = l.m, league = (m + ts - 1) / ts;
  const DView<PetscInt>       lr = l.row, lc = l.col, rr = r.row, rc = r.col, xr = x.row, xc = x.col;
  const bool                  count = miss != nullptr;
  Kokkos::View<PetscInt, Mem> nmiss;

  if (count) nmiss = *miss;
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
              PetscInt       lo = x0, hi = x1;
              while (lo < hi) { /* the first place whose column is not below col */
                const PetscInt mid = lo + (hi - lo) / 2;
                if (xc(mid) < col)
                  lo = mid + 1;
                else
                  hi = mid;
              }
              if (lo < x1 && xc(lo) == col)
                xv(lo) += a * rv(e);
              else if (count)
                Kokkos::atomic_add(&nmiss(), (PetscInt)1);
            });
          }
        });
      });
}

/* C's values (into c) from the device values a and p of A and P; with count, how many products had no place in C */
static PetscInt Numeric(GSDeviceProduct P, const PetscScalar *a, PetscCount na, const PetscScalar *p, PetscCount np, PetscScalar *c, bool count)
{
  const DView<PetscScalar>    av = Wrap(a, (size_t)na), pv = Wrap(p, (size_t)np), cv = Wrap(c, P->c.col.extent(0));
  Kokkos::View<PetscInt, Mem> miss;

  if (count) {
    miss = Kokkos::View<PetscInt, Mem>("GPUStream::product_misses");
  }
  if (P->galerkin) {
    const DView<PetscInt>    map = P->ptmap;
    const DView<PetscScalar> t   = P->ptval;
    RowProducts(P->a, av, P->p, pv, P->ap, P->apval, Lanes(P->p, (PetscInt)np), count ? &miss : nullptr);
    Kokkos::parallel_for(
        "GPUStream::ProductTranspose", RangePol(0, (PetscInt)t.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { t(k) = pv(map(k)); });
    RowProducts(P->pt, t, P->ap, P->apval, P->c, cv, Lanes(P->ap, (PetscInt)P->apval.extent(0)), count ? &miss : nullptr);
  } else
    RowProducts(P->a, av, P->p, pv, P->c, cv, Lanes(P->p, (PetscInt)np), count ? &miss : nullptr);
  if (!count) return 0;
  PetscInt h = 0;
  SyncCopy(Kokkos::View<PetscInt, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&h), miss);
  return h;
}

PetscErrorCode GSDeviceProductCreate(PetscBool ptap, PetscInt am, PetscInt an, const PetscInt ai[], const PetscInt aj[], const PetscScalar a[], PetscInt pn, const PetscInt pi[], const PetscInt pj[], const PetscScalar p[], PetscInt cm,
                                     const PetscInt ci[], const PetscInt cj[], PetscScalar c[], GSDeviceProduct *out, PetscBool *fits)
{
  std::unique_ptr<_n_GSDeviceProduct> P; /* freed on an exception */
  PetscInt                            misses = 0;

  PetscFunctionBegin;
  *out  = nullptr;
  *fits = PETSC_FALSE;
  GSCallKokkos({
    P.reset(new _n_GSDeviceProduct);
    P->galerkin = ptap;
    UploadPattern(P->a, "GPUStream::product_a", am, ai, aj);
    UploadPattern(P->p, "GPUStream::product_p", an, pi, pj);
    UploadPattern(P->c, "GPUStream::product_c", cm, ci, cj);
    if (ptap) {
      std::vector<PetscInt> r, col, map;
      HostProductPattern(am, pn, ai, aj, an, pi, pj, r, col);
      UploadPattern(P->ap, "GPUStream::product_ap", am, r.data(), col.data());
      P->apval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_apval"), col.size());
      HostTranspose(an, pn, std::vector<PetscInt>(pi, pi + an + 1), std::vector<PetscInt>(pj, pj + pi[an]), r, col, map);
      UploadPattern(P->pt, "GPUStream::product_pt", pn, r.data(), col.data());
      Upload(P->ptmap, "GPUStream::product_ptmap", map);
      P->ptval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_ptval"), col.size());
    }
    misses = Numeric(P.get(), a, ai[am], p, pi[an], c, true);
  });
  if (misses) PetscFunctionReturn(PETSC_SUCCESS); /* C's pattern lacks some of the product's entries: not one AIJ made for it */
  *out  = P.release();
  *fits = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductNumeric(GSDeviceProduct P, const PetscScalar a[], PetscCount na, const PetscScalar p[], PetscCount np, PetscScalar c[])
{
  PetscFunctionBegin;
  PetscCheck((PetscCount)P->a.col.extent(0) == na && (PetscCount)P->p.col.extent(0) == np, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A device product's operands changed their patterns");
  GSCallKokkos(Numeric(P, a, na, p, np, c, false));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductDestroy(GSDeviceProduct *P)
{
  PetscFunctionBegin;
  GSCallKokkos(delete *P);
  *P = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}
