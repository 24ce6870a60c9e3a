/* The kernels of KSPCHEBYSHEVF on the default Kokkos execution space (see chebyshevfimpl.h). A step is one kernel: with
   the device matrix the rows' products, the residual, the Jacobi scaling and the update of the iterate in one pass;
   without it the same pass after the product (or none, from b alone). */
#include "devicemat.hpp"
#include "chebyshevfimpl.h"

using namespace gpustream;

namespace
{
/* The step of a row once (A x)_row is known; norm: the row's share of the squared norm */
struct StepRow {
  DView<PetscScalar>               b, d, x, y;
  PetscScalar                      c1, c2, c3;
  ChebFNorm                        norm;
  KOKKOS_INLINE_FUNCTION PetscReal operator()(const PetscInt row, const PetscScalar ax) const
  {
    const PetscScalar r = b(row) - ax, z = d.extent(0) ? d(row) * r : r;
    if (y.extent(0)) y(row) = (c1 != PetscScalar(0) ? c1 * y(row) : PetscScalar(0)) + (x.extent(0) ? c2 * x(row) : PetscScalar(0)) + c3 * z;
    return norm == CHEBF_NORM_R ? PetscRealPart(r * r) : (norm == CHEBF_NORM_Z ? PetscRealPart(z * z) : PetscReal(0));
  }
};

/* The step fused with the product of one process's device matrix, no norm: in MatMult's shape (a thread per row
   without lanes, else lanes per row and its league); with no reduction there is no reason to bound the teams as the
   solvers' fused league (FusedShape()) does, which left the step slower than its MatMult */
template <bool Blk> void FusedStep(const GSDeviceMat A, const DView<PetscScalar> &x, const StepRow &f)
{
  const CSR         csr = A->csr;
  const LaunchShape s   = A->shape;
  if (s.vlen == 1 && s.tiles.cap == 0) {
    Kokkos::parallel_for(
        "GPUStream::ChebFStepSpMVRows", RangePol(0, csr.m), KOKKOS_LAMBDA(const PetscInt row) { (void)f(row, RowSum<Blk>(csr, x, row)); });
    return;
  }
  TeamFor(
      "GPUStream::ChebFStepSpMV", TeamPol(Exec(), s.league, s.team, s.vlen), KOKKOS_LAMBDA(const Member &t) { ForEachRowProduct<Blk>(t, csr, x, [&](const PetscInt row, const PetscScalar ax) { OneLane(t, [&]() { (void)f(row, ax); }); }); });
}

KOKKOS_INLINE_FUNCTION PetscScalar NoisyHash(PetscInt xx)
{
  unsigned int x = (unsigned int)xx;
  x              = ((x >> 16) ^ x) * 0x45d9f3b;
  x              = ((x >> 16) ^ x) * 0x45d9f3b;
  x              = ((x >> 16) ^ x);
  return (PetscScalar)(((PetscInt64)x - 2147483648) * 5.e-10);
}
} // namespace

PetscErrorCode ChebFStep(PetscInt n, GSDeviceMat A, const PetscScalar ax[], const PetscScalar b[], const PetscScalar d[], const PetscScalar x[], PetscScalar y[], PetscScalar c1, PetscScalar c2, PetscScalar c3, ChebFNorm norm, PetscReal *sum)
{
  PetscFunctionBegin;
  PetscCheck(!A || x, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "A step with the product needs x");
  PetscCheck(!A || (A->csr.m == n && A->csr.n == n), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "The device matrix has %" PetscInt_FMT " x %" PetscInt_FMT " entries, the step %" PetscInt_FMT " rows", A ? A->csr.m : 0, A ? A->csr.n : 0, n);
  PetscCheck(!A || norm == CHEBF_NORM_NONE, PETSC_COMM_SELF, PETSC_ERR_SUP, "A step with the product forms no norm");
  PetscCheck(!A || y != x, PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "A step with the product cannot write the x it gathers");
  if (sum) *sum = 0;
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos({
    const auto               V   = [n](const PetscScalar *p) { return p ? DView<PetscScalar>(const_cast<PetscScalar *>(p), n) : DView<PetscScalar>(); };
    const DView<PetscScalar> dax = V(ax), dx = V(x);
    const StepRow            f = {V(b), V(d), dx, V(y), c1, c2, c3, norm};
    if (A)
      ByStorage(A->csr, [&](auto blk) { FusedStep<decltype(blk)::value>(A, dx, f); });
    else if (norm == CHEBF_NORM_NONE)
      Kokkos::parallel_for(
          "GPUStream::ChebFStep", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { (void)f(i, dax.extent(0) ? dax(i) : PetscScalar(0)); });
    else {
      const Kokkos::View<PetscReal, Mem>               s("GPUStream::ChebFStep::sum");
      const Kokkos::View<PetscReal, Kokkos::HostSpace> h("GPUStream::ChebFStep::sum_host");
      Kokkos::parallel_reduce(/* into device memory: a host value would wait in Kokkos' fence */
                              "GPUStream::ChebFStepNorm", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i, PetscReal &acc) { acc += f(i, dax.extent(0) ? dax(i) : PetscScalar(0)); }, s);
      SyncCopy(h, s);
      *sum = h();
    }
  });
  PetscCall(PetscLogFlops((A ? 2.0 * (PetscLogDouble)A->val.extent(0) : 0) + 7.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ChebFNoisy(PetscInt n, PetscInt istart, PetscScalar v[])
{
  PetscFunctionBegin;
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos({
    const DView<PetscScalar> dv(v, n);
    Kokkos::parallel_for(
        "GPUStream::ChebFNoisy", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { dv(i) = NoisyHash(istart + i); });
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}
