/* A gpustream matrix on the device (GSDeviceMat): its CSR (csr.hpp), the SpMV kernels (spmv.hpp) and the halo
   exchange (halo.hpp), and the products of a distributed matrix that the solvers' kernels share. */
#pragma once

#include "kokkosimpl.hpp"
#include "csr.hpp"
#include "spmv.hpp"
#include "halo.hpp"

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
   per row (the same sums as SpMV<true>, which reads and writes all of y: measured slower for MatMult on two H200s;
   docs/design-measurements.md) */
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
