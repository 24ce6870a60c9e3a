/* Device side of MATGPUSTREAM: CSR arrays in Kokkos views and the SpMV kernels. */
#include "devicemat.hpp"

using namespace gpustream;

LaunchShape gpustream::SpMVShape(PetscInt m, PetscInt nnz)
{
  LaunchShape s;
  if (!OnDevice()) return s;
  /* lanes per row: the power of two nearest below the mean row length, up to a warp */
  const double avg = m > 0 ? (double)nnz / (double)m : 1.0;
  while (s.vlen < 32 && 2 * s.vlen <= avg) s.vlen *= 2;
  s.team               = TeamThreads() / s.vlen;
  const PetscInt teams = (m + s.team - 1) / s.team;
  s.league             = (int)PetscMax(1, PetscMin(teams, (PetscInt)MaxTeams(TeamThreads())));
  return s;
}

PetscErrorCode GSDeviceMatCreate(PetscInt m, PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], GSDeviceMat *dA)
{
  GSDeviceMat A;

  PetscFunctionBegin;
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCallCXX(A = new _n_GSDeviceMat);
  const PetscInt nnz = ia[m];
  GSCallKokkos({
    A->rowptr = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::rowptr"), m + 1);
    A->colidx = DView<PetscInt>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::colidx"), nnz);
    A->val    = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::val"), nnz);
    Kokkos::deep_copy(A->rowptr, HostUnmanaged<const PetscInt>(ia, m + 1));
    Kokkos::deep_copy(A->colidx, HostUnmanaged<const PetscInt>(ja, nnz));
    Kokkos::deep_copy(A->val, HostUnmanaged<const PetscScalar>(a, nnz));
  });
  A->csr.m      = m;
  A->csr.n      = n;
  A->csr.rowptr = A->rowptr;
  A->csr.colidx = A->colidx;
  A->csr.val    = A->val;
  A->shape      = SpMVShape(m, nnz);
  *dA           = A;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceMatSetValues(GSDeviceMat A, const PetscScalar a[])
{
  PetscFunctionBegin;
  GSCallKokkos(Kokkos::deep_copy(A->val, HostUnmanaged<const PetscScalar>(a, A->val.extent(0))));
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

PetscErrorCode GSDeviceMatGetMemory(GSDeviceMat A, PetscLogDouble *matbytes, PetscLogDouble *stagebytes)
{
  PetscFunctionBegin;
  *matbytes   = (PetscLogDouble)(A->rowptr.span() * sizeof(PetscInt) + A->colidx.span() * sizeof(PetscInt) + A->val.span() * sizeof(PetscScalar));
  *stagebytes = (PetscLogDouble)((A->x.span() + A->y.span() + A->z.span()) * sizeof(PetscScalar));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <bool Add> static void SpMV(const CSR &A, const LaunchShape &s, const DView<PetscScalar> &x, const DView<PetscScalar> &z, const DView<PetscScalar> &y)
{
  Kokkos::parallel_for(
      Add ? "GPUStream::SpMVAdd" : "GPUStream::SpMV", TeamPol(s.league, s.team, s.vlen),
      KOKKOS_LAMBDA(const Member &t) { ForEachRowProduct(t, A, x, [&](const PetscInt row, const PetscScalar sum) { Kokkos::single(Kokkos::PerThread(t), [&]() { y(row) = Add ? z(row) + sum : sum; }); }); });
}

/* y = A x (+ z) with host arrays: staged through device buffers, for MatMult on ordinary PETSc vectors */
PetscErrorCode GSDeviceMatMult(GSDeviceMat A, const PetscScalar x[], const PetscScalar z[], PetscScalar y[])
{
  const PetscInt m = A->csr.m, n = A->csr.n;

  PetscFunctionBegin;
  GSCallKokkos({
    if (A->x.extent(0) != (size_t)n) A->x = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::x"), n);
    if (A->y.extent(0) != (size_t)m) A->y = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::y"), m);
    if (z && A->z.extent(0) != (size_t)m) A->z = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::z"), m);
    Kokkos::deep_copy(A->x, HostUnmanaged<const PetscScalar>(x, n));
    if (z) {
      Kokkos::deep_copy(A->z, HostUnmanaged<const PetscScalar>(z, m));
      SpMV<true>(A->csr, A->shape, A->x, A->z, A->y);
    } else
      SpMV<false>(A->csr, A->shape, A->x, A->z, A->y);
    Kokkos::deep_copy(HostUnmanaged<PetscScalar>(y, m), A->y);
  });
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)A->val.extent(0) - (z ? 0 : m)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
