/* The host vectors MatCreateVecs() gives on a gpustream matrix, in pinned memory (-mat_gpustream_pinned_vecs): the
   solvers and MatMult() move their arrays to and from the device by DMA at the pinned rate, where a pageable array
   first goes through the staging copies (src/device/staging.kokkos.cxx). The array belongs to a container composed
   on the vector, which VecDestroy() destroys after the vector's own storage; duplicates are pinned alike. */
#include "gpustreamimpl.h"
#include <petsc/private/vecimpl.h>

static const char GSPinnedName[] = "GPUStreamPinnedArray";

#if PETSC_VERSION_GE(3, 23, 0)
/* given the address of the container's pointer (PetscCtxDestroyFn, whose argument's declared type varies) */
static PetscErrorCode PinnedArrayDestroy(void *ctx)
{
  void **p = (void **)ctx;

  PetscFunctionBegin;
  PetscCall(GSPinnedFree(*p));
  *p = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
static PetscErrorCode PinnedArrayDestroy(void *p)
{
  PetscFunctionBegin;
  PetscCall(GSPinnedFree(p));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

static PetscErrorCode VecDuplicate_Pinned(Vec, Vec *);

/* A vector like like (VECSEQ or VECMPI, its layout) whose array is pinned and zeroed; a duplicate of like where dup
   is true (as VecDuplicate_Seq() and VecDuplicate_MPI(): the composed objects and functions, the operations) */
static PetscErrorCode VecCreatePinned_Private(Vec like, PetscBool dup, Vec *v)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)like);
  PetscLayout    map  = like->map;
  PetscScalar   *array;
  PetscContainer c;
  PetscBool      mpi;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)like, VECMPI, &mpi));
  PetscCall(GSPinnedMalloc((size_t)map->n * sizeof(PetscScalar), (void **)&array));
  PetscCall(PetscArrayzero(array, map->n));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, array));
#if PETSC_VERSION_GE(3, 23, 0)
  PetscCall(PetscContainerSetCtxDestroy(c, (PetscCtxDestroyFn *)PinnedArrayDestroy));
#else
  PetscCall(PetscContainerSetUserDestroy(c, PinnedArrayDestroy));
#endif
  if (mpi)
    ierr = VecCreateMPIWithArray(comm, map->bs, map->n, map->N, array, v);
  else
    ierr = VecCreateSeqWithArray(comm, map->bs, map->n, array, v);
  if (ierr) PetscCall(PetscContainerDestroy(&c)); /* frees the array */
  PetscCall(ierr);
  if (dup) {
    PetscCall(PetscObjectListDuplicate(((PetscObject)like)->olist, &((PetscObject)*v)->olist));
    PetscCall(PetscFunctionListDuplicate(((PetscObject)like)->qlist, &((PetscObject)*v)->qlist));
    (*v)->ops[0]             = like->ops[0];
    (*v)->stash.ignorenegidx = like->stash.ignorenegidx;
  }
  PetscCall(PetscObjectCompose((PetscObject)*v, GSPinnedName, (PetscObject)c)); /* in place of like's */
  PetscCall(PetscContainerDestroy(&c));                                         /* the vector holds it now */
  (*v)->ops->duplicate = VecDuplicate_Pinned;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecDuplicate_Pinned(Vec v, Vec *w)
{
  PetscFunctionBegin;
  PetscCall(VecCreatePinned_Private(v, PETSC_TRUE, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecPin(Vec *v)
{
  PetscBool std;
  Vec       w;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*v, &std, VECSEQ, VECMPI, ""));
  if (!std) PetscFunctionReturn(PETSC_SUCCESS); /* device vectors, or a type of the user's */
  PetscCall(VecCreatePinned_Private(*v, PETSC_FALSE, &w));
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
