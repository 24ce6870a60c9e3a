/* The base of the fused solvers' device work (work.h, work.hpp): its vectors from and to host arrays and PETSc
   vectors (through the vector-access layer), D^{-1} of a fused Jacobi, and the counts. */
#include "work.hpp"

using namespace gpustream;

/* The view of work vector v, or an error for an id the solver does not have */
static PetscErrorCode WorkVector(GSWork W, PetscInt v, DView<PetscScalar> *d)
{
  PetscFunctionBegin;
  PetscCheck(W->Has(v), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s has no work vector %" PetscInt_FMT, W->name.c_str(), v);
  GSCallKokkos(*d = W->Vector(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkSetVec(GSWork W, PetscInt v, const PetscScalar a[])
{
  DView<PetscScalar> d;

  PetscFunctionBegin;
  PetscCall(WorkVector(W, v, &d));
  PetscCall(CopyIn(d, a, PETSC_FALSE, &W->copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkGetVec(GSWork W, PetscInt v, PetscScalar a[])
{
  DView<PetscScalar> d;

  PetscFunctionBegin;
  PetscCall(WorkVector(W, v, &d));
  PetscCall(CopyOut(d, a, PETSC_FALSE, &W->copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkGetCounts(GSWork W, PetscInt *launches, PetscInt *transfers, PetscInt *copies)
{
  PetscFunctionBegin;
  *launches  = W->launches;
  *transfers = W->transfers;
  *copies    = W->copies;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkSetBlocks(GSWork W, PetscInt bs, const PetscScalar blocks[])
{
  PetscFunctionBegin;
  PetscCheck(W->pc == GS_PC_PBJACOBI || (W->pc == GS_PC_JACOBI && bs == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Inverse diagonal blocks of size %" PetscInt_FMT " are for point-block Jacobi work", bs);
  PetscCall(LoadInverseBlocks(W->dinv, W->Label(bs > 1 ? "dinvblocks" : "dinv").c_str(), W->n, bs, W->maxbs, blocks, &W->copies));
  W->bs = (int)bs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Work vector v from (in) or to the array of a vector or dense matrix o, which get and restore give and take back */
template <class Obj, class Get, class Restore> static PetscErrorCode Transfer(GSWork W, PetscInt v, Obj o, bool in, Get get, Restore restore)
{
  DView<PetscScalar> d;
  GSVecArray         a;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(WorkVector(W, v, &d));
  PetscCall(get(o, in ? GS_ACCESS_READ : GS_ACCESS_WRITE, &a));
  ierr = in ? CopyIn(d, a.array, a.device, &W->copies) : CopyOut(d, a.array, a.device, &W->copies);
  PetscCall(restore(o, &a)); /* also after a failed copy: the vector is not left locked */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkLoad(GSWork W, PetscInt v, Vec x)
{
  PetscFunctionBegin;
  PetscCall(Transfer(W, v, x, true, GSVecGetArray, GSVecRestoreArray));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkStore(GSWork W, PetscInt v, Vec x)
{
  PetscFunctionBegin;
  PetscCall(Transfer(W, v, x, false, GSVecGetArray, GSVecRestoreArray));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkTransferDense(GSWork W, PetscInt v, Mat M, PetscBool load)
{
  PetscFunctionBegin;
  PetscCall(Transfer(W, v, M, load, GSMatDenseGetArray, GSMatDenseRestoreArray));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkZero(GSWork W, PetscInt v)
{
  DView<PetscScalar> d;

  PetscFunctionBegin;
  PetscCall(WorkVector(W, v, &d));
  PetscCall(CopyIn(d, NULL, PETSC_TRUE, &W->copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkCopy(GSWork W, PetscInt dst, PetscInt src)
{
  PetscFunctionBegin;
  GSCallKokkos(Kokkos::deep_copy(Exec(), W->Vector(dst), W->Vector(src)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSWorkNorm(GSWork W, PetscInt v, MPI_Comm comm, PetscReal *nrm)
{
  DView<PetscScalar> d;
  PetscScalar        s = 0;

  PetscFunctionBegin;
  PetscCall(WorkVector(W, v, &d));
  /* the team sums of the fused kernels, in a fixed order (Kokkos 3's parallel_reduce shows racecheck hazards) */
  GSCallKokkos({
    if (W->npartials.extent(0) != (size_t)W->lu) {
      W->npartials  = DView<PetscScalar>(W->Label("npartials"), W->lu);
      W->hnpartials = Kokkos::View<PetscScalar *, PinnedSpace>(W->Label("hnpartials"), W->lu);
    }
    IndexSums<1>(
        *W, "GPUStream::Norm", (PetscInt)d.extent(0), W->npartials.data(), KOKKOS_LAMBDA(const PetscInt i, PetscScalar(&acc)[1]) { acc[0] += d(i) * PetscConj(d(i)); });
    SyncCopy(W->hnpartials, W->npartials);
  });
  for (int i = 0; i < W->lu; i++) s += W->hnpartials(i);
  W->launches++;
  W->transfers++;
  PetscReal r = PetscRealPart(s);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPIU_REAL, MPIU_SUM, comm));
  *nrm = PetscSqrtReal(r);
  PetscFunctionReturn(PETSC_SUCCESS);
}
