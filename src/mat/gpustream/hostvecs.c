/* The host vectors MatCreateVecs() gives on a gpustream matrix, in pinned memory (-mat_gpustream_pinned_vecs): the
   solvers and MatMult() move their arrays to and from the device by DMA at the pinned rate, where a pageable array
   first goes through the staging copies (src/device/staging.kokkos.cxx). The array belongs to a container composed
   on the vector, which VecDestroy() destroys after the vector's own storage. Duplicates are ordinary pageable
   vectors: page-locked memory is scarce, and a KSP's work vectors (duplicates) need none for the fused solvers. */
#include "gpustreamimpl.h"
#include <petsc/private/vecimpl.h>

static const char GSPinnedName[] = "GPUStreamPinnedArray";

/* the container's destroy function (GSContainerSetDestroy()) */
static PetscErrorCode PinnedArrayDestroy(void *ctx)
{
  PetscFunctionBegin;
  PetscCall(GSPinnedFree(GSContainerPointer(ctx)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecDuplicate_Pinned(Vec, Vec *);

/* A vector like like (VECSEQ or VECMPI, its layout) whose array is pinned and zeroed */
static PetscErrorCode VecCreatePinned_Private(Vec like, Vec *v)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)like);
  PetscLayout    map  = like->map;
  PetscScalar   *array;
  PetscBool      mpi;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)like, VECMPI, &mpi));
  PetscCall(GSPinnedMalloc((size_t)map->n * sizeof(PetscScalar), (void **)&array));
  PetscCall(PetscArrayzero(array, map->n));
  if (mpi)
    ierr = VecCreateMPIWithArray(comm, map->bs, map->n, map->N, array, v);
  else
    ierr = VecCreateSeqWithArray(comm, map->bs, map->n, array, v);
  if (ierr) PetscCall(GSPinnedFree(array));
  PetscCall(ierr);
  ierr = GSObjectComposePointer((PetscObject)*v, GSPinnedName, array, PinnedArrayDestroy); /* the vector holds it */
  if (ierr) PetscCall(VecDestroy(v));                                                      /* the array went with the failure */
  PetscCall(ierr);
  (*v)->ops->duplicate = VecDuplicate_Pinned;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* As VecDuplicate_Seq() and VecDuplicate_MPI(): the layout, the composed objects (but v's pinned array) and functions,
   the operations; the array PETSc's own */
static PetscErrorCode VecDuplicate_Pinned(Vec v, Vec *w)
{
  VecType type;

  PetscFunctionBegin;
  PetscCall(VecGetType(v, &type));
  PetscCall(VecCreate(PetscObjectComm((PetscObject)v), w));
  PetscCall(PetscLayoutReference(v->map, &(*w)->map));
  PetscCall(VecSetType(*w, type));
  PetscCall(PetscObjectListDuplicate(((PetscObject)v)->olist, &((PetscObject)*w)->olist));
  PetscCall(PetscObjectCompose((PetscObject)*w, GSPinnedName, NULL));
  PetscCall(PetscFunctionListDuplicate(((PetscObject)v)->qlist, &((PetscObject)*w)->qlist));
  (*w)->ops[0]             = v->ops[0];
  (*w)->stash.ignorenegidx = v->stash.ignorenegidx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecPin(Vec *v)
{
  PetscBool std;
  Vec       w;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*v, &std, VECSEQ, VECMPI, ""));
  if (!std) PetscFunctionReturn(PETSC_SUCCESS); /* device vectors, or a type of the user's */
  PetscCall(VecCreatePinned_Private(*v, &w));
  PetscCall(VecDestroy(v));
  *v = w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecIsPinned(Vec v, PetscBool *pinned)
{
  PetscObject array;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)v, GSPinnedName, &array));
  *pinned = array ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
