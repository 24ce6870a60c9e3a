/* The numeric phase of sparse products of sequential gpustream matrices on the device (C = A P, C = P^T A P), through
   Kokkos-Kernels' spgemm: the operands' device values in, the result's device values out, its pattern the one AIJ's
   symbolic phase made on the host. Compiled where the build found Kokkos-Kernels; without it, and with Kokkos-Kernels
   3 on a GPU, GSDeviceProductCreate() says the product does not fit and the numeric phase stays AIJ's, on the host. */
#include "kokkosimpl.hpp"

#if defined(GPUSTREAM_HAVE_KOKKOSKERNELS)
#  include <KokkosKernels_Handle.hpp>
#  include <KokkosSparse_spgemm.hpp>
#  include <memory>
#  include "hostcsr.hpp"

/* Kokkos-Kernels 4.6 moved spgemm out of the Experimental namespace (3.x does not define its version) */
#  if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40600
using KokkosSparse::spgemm_numeric;
using KokkosSparse::spgemm_symbolic;
#  else
using KokkosSparse::Experimental::spgemm_numeric;
using KokkosSparse::Experimental::spgemm_symbolic;
#  endif

using namespace gpustream;

using KKHandle = KokkosKernels::Experimental::KokkosKernelsHandle<PetscInt, PetscInt, PetscScalar, Exec, Mem, Mem>;

/* One spgemm X = L R: its handle, made at the symbolic phase, and X's CSR, whose entries each numeric phase writes */
struct SpGEMM {
  KKHandle           kh;
  PetscInt           m = 0, n = 0, k = 0; /* L is m x n, R n x k */
  DView<PetscInt>    row, col;
  DView<PetscScalar> val;
};

struct _n_GSDeviceProduct {
  bool               galerkin = false; /* P^T A P, else A P */
  PetscInt           cm = 0, cnnz = 0;
  DView<PetscInt>    arow, acol, prow, pcol; /* the operands' patterns (their values are their device copies') */
  DView<PetscInt>    ptrow, ptcol, ptmap;    /* P^T, its values gathered from P's through ptmap */
  DView<PetscScalar> ptval;
  DView<PetscInt>    crow, ccol; /* the result's pattern, where the product's entries go */
  SpGEMM             ap, pap;    /* A P, and P^T (A P) */
};

static void Symbolic(SpGEMM &x, PetscInt m, PetscInt n, PetscInt k, const DView<PetscInt> &lrow, const DView<PetscInt> &lcol, const DView<PetscInt> &rrow, const DView<PetscInt> &rcol)
{
  x.m = m;
  x.n = n;
  x.k = k;
  x.kh.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
  x.row = DView<PetscInt>("GPUStream::product_row", m + 1);
  spgemm_symbolic(&x.kh, m, n, k, lrow, lcol, false, rrow, rcol, false, x.row);
  const PetscInt nnz = (PetscInt)x.kh.get_spgemm_handle()->get_c_nnz();
  x.col              = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_col"), nnz);
  x.val              = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_val"), nnz);
}

static void Numeric(SpGEMM &x, const DView<PetscInt> &lrow, const DView<PetscInt> &lcol, const DView<PetscScalar> &lval, const DView<PetscInt> &rrow, const DView<PetscInt> &rcol, const DView<PetscScalar> &rval)
{
  spgemm_numeric(&x.kh, x.m, x.n, x.k, lrow, lcol, lval, false, rrow, rcol, rval, false, x.row, x.col, x.val);
}

/* The values of the last product into c (C's device values, in C's order): each entry of row i at its column's place
   in C's row i (columns ascending there; the product's own order within a row is the algorithm's), zero where the
   product has none. Returns how many of the product's entries C has no place for. */
static PetscInt Scatter(const GSDeviceProduct P, const DView<PetscScalar> &c)
{
  const SpGEMM            &x  = P->galerkin ? P->pap : P->ap;
  const DView<PetscInt>    xr = x.row, xc = x.col, cr = P->crow, cc = P->ccol;
  const DView<PetscScalar> xv     = x.val;
  PetscInt                 misses = 0;

  Kokkos::deep_copy(Exec(), c, 0.0);
  Kokkos::parallel_reduce(
      "GPUStream::ProductScatter", RangePol(0, P->cm),
      KOKKOS_LAMBDA(const PetscInt i, PetscInt &miss) {
        for (PetscInt k = xr(i); k < xr(i + 1); k++) {
          PetscInt lo = cr(i), hi = cr(i + 1);
          while (lo < hi) { /* the first place whose column is not below xc(k) */
            const PetscInt mid = lo + (hi - lo) / 2;
            if (cc(mid) < xc(k))
              lo = mid + 1;
            else
              hi = mid;
          }
          if (lo < cr(i + 1) && cc(lo) == xc(k))
            c(lo) = xv(k);
          else
            miss++;
        }
      },
      misses);
  return misses;
}

/* A P from the device values a and p of A and P */
static void ProductAP(GSDeviceProduct P, const PetscScalar *a, PetscCount na, const PetscScalar *p, PetscCount np)
{
  Numeric(P->ap, P->arow, P->acol, Wrap(a, (size_t)na), P->prow, P->pcol, Wrap(p, (size_t)np));
}

/* After ProductAP(): P^T (A P) where the product is one, then the values into c, C's device values; the misses of
   Scatter() */
static PetscInt Finish(GSDeviceProduct P, const PetscScalar *p, PetscCount np, PetscScalar *c)
{
  if (P->galerkin) {
    const DView<PetscInt>    map = P->ptmap;
    const DView<PetscScalar> t = P->ptval, pv = Wrap(p, (size_t)np);
    Kokkos::parallel_for(
        "GPUStream::ProductTranspose", RangePol(0, (PetscInt)t.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { t(k) = pv(map(k)); });
    Numeric(P->pap, P->ptrow, P->ptcol, P->ptval, P->ap.row, P->ap.col, P->ap.val);
  }
  return Scatter(P, Wrap(c, (size_t)P->cnnz));
}

PetscErrorCode GSDeviceProductCreate(PetscBool ptap, PetscInt am, PetscInt an, const PetscInt ai[], const PetscInt aj[], const PetscScalar a[], PetscInt pn, const PetscInt pi[], const PetscInt pj[], const PetscScalar p[], PetscInt cm,
                                     const PetscInt ci[], const PetscInt cj[], PetscScalar c[], GSDeviceProduct *out, PetscBool *fits)
{
  std::unique_ptr<_n_GSDeviceProduct> P; /* freed on an exception */
  PetscInt                            misses = 0;

  PetscFunctionBegin;
  *out  = nullptr;
  *fits = PETSC_FALSE;
#  if !defined(KOKKOSKERNELS_VERSION) || KOKKOSKERNELS_VERSION < 40000
  /* Kokkos-Kernels 3's numeric spgemm on a GPU reads through a null pointer in its hash accumulator on GAMG's
     products (compute-sanitizer; Kokkos-Kernels 4 is clean): AIJ's numeric phase there */
  if (OnDevice()) PetscFunctionReturn(PETSC_SUCCESS);
#  endif
  GSCallKokkos({
    P.reset(new _n_GSDeviceProduct);
    P->galerkin = ptap;
    P->cm       = cm;
    P->cnnz     = ci[cm];
    Upload(P->arow, "GPUStream::product_arow", ai, am + 1);
    Upload(P->acol, "GPUStream::product_acol", aj, ai[am]);
    Upload(P->prow, "GPUStream::product_prow", pi, an + 1);
    Upload(P->pcol, "GPUStream::product_pcol", pj, pi[an]);
    Upload(P->crow, "GPUStream::product_crow", ci, cm + 1);
    Upload(P->ccol, "GPUStream::product_ccol", cj, ci[cm]);
    Symbolic(P->ap, am, an, pn, P->arow, P->acol, P->prow, P->pcol);
    ProductAP(P.get(), a, ai[am], p, pi[an]); /* A P's column indices come with its numeric phase */
    if (ptap) {
      std::vector<PetscInt> trow, tcol, tmap;
      HostTranspose(an, pn, std::vector<PetscInt>(pi, pi + an + 1), std::vector<PetscInt>(pj, pj + pi[an]), trow, tcol, tmap);
      Upload(P->ptrow, "GPUStream::product_ptrow", trow);
      Upload(P->ptcol, "GPUStream::product_ptcol", tcol);
      Upload(P->ptmap, "GPUStream::product_ptmap", tmap);
      P->ptval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::product_ptval"), tcol.size());
      Symbolic(P->pap, pn, an, pn, P->ptrow, P->ptcol, P->ap.row, P->ap.col); /* reads A P's column indices */
    }
    misses = Finish(P.get(), p, pi[an], c);
  });
  if (misses) PetscFunctionReturn(PETSC_SUCCESS); /* C's pattern lacks some of the product's entries: not one AIJ made for it */
  *out  = P.release();
  *fits = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductNumeric(GSDeviceProduct P, const PetscScalar a[], PetscCount na, const PetscScalar p[], PetscCount np, PetscScalar c[])
{
  PetscInt misses = 0;

  PetscFunctionBegin;
  GSCallKokkos({
    ProductAP(P, a, na, p, np);
    misses = Finish(P, p, np, c);
  });
  PetscCheck(!misses, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " entries of a device product have no place in its result's pattern", misses);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductDestroy(GSDeviceProduct *P)
{
  PetscFunctionBegin;
  GSCallKokkos(delete *P);
  *P = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else

PetscErrorCode GSDeviceProductCreate(PetscBool, PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscInt[], const PetscInt[],
                                     PetscScalar[], GSDeviceProduct *out, PetscBool *fits)
{
  PetscFunctionBegin;
  *out  = nullptr;
  *fits = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceProductNumeric(GSDeviceProduct, const PetscScalar[], PetscCount, const PetscScalar[], PetscCount, PetscScalar[])
{
  PetscFunctionBegin;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Device products need Kokkos-Kernels");
}

PetscErrorCode GSDeviceProductDestroy(GSDeviceProduct *P)
{
  PetscFunctionBegin;
  *P = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
