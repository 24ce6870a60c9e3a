/* The vector-access layer (gpustreamimpl.h): the arrays of PETSc vectors and dense matrices where the plugin's
   kernels use them (the solvers' work vectors move through it: src/ksp/common/work.kokkos.cxx). */
#include "kokkosimpl.hpp"

#if defined(GS_DEVICE_VECTORS)
#  include <petscdevice_cuda.h>
#endif

using namespace gpustream;

#if defined(GS_DEVICE_VECTORS)
#  define GSCallCUDA(call, what)                                                                                                                                                                                                                         \
    do {                                                                                                                                                                                                                                                 \
      const cudaError_t _e = (call);                                                                                                                                                                                                                     \
      PetscCheck(_e == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s failed: %s (%s)", what, cudaGetErrorName(_e), cudaGetErrorString(_e));                                                                                                           \
    } while (0)

static cudaEvent_t gs_petsc_done = nullptr, gs_ours_done = nullptr;

static PetscErrorCode GSStreamEventsDestroy(void)
{
  PetscFunctionBegin;
  if (gs_petsc_done) (void)cudaEventDestroy(gs_petsc_done);
  if (gs_ours_done) (void)cudaEventDestroy(gs_ours_done);
  gs_petsc_done = gs_ours_done = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The work queued so far on stream `first` comes before what is queued next on `then`: a recorded event, no wait on
   the host. Nothing to do when both are one stream. */
static PetscErrorCode StreamOrder(cudaStream_t first, cudaStream_t then, cudaEvent_t *ev)
{
  PetscFunctionBegin;
  if (first == then) PetscFunctionReturn(PETSC_SUCCESS);
  if (!*ev) {
    if (!gs_petsc_done && !gs_ours_done) PetscCall(PetscRegisterFinalize(GSStreamEventsDestroy));
    GSCallCUDA(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreateWithFlags()");
  }
  GSCallCUDA(cudaEventRecord(*ev, first), "cudaEventRecord()");
  GSCallCUDA(cudaStreamWaitEvent(then, *ev, 0), "cudaStreamWaitEvent()");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plugin's stream after PETSc's (before the plugin touches a device array PETSc may still be writing), and
   PETSc's after the plugin's (before PETSc touches an array the plugin may still be reading or writing) */
static PetscErrorCode OursAfterPetsc(void)
{
  cudaStream_t ps;

  PetscFunctionBegin;
  PetscCall(PetscGetCurrentCUDAStream(&ps));
  PetscCall(StreamOrder(ps, Exec().cuda_stream(), &gs_petsc_done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PetscAfterOurs(void)
{
  cudaStream_t ps;

  PetscFunctionBegin;
  PetscCall(PetscGetCurrentCUDAStream(&ps));
  PetscCall(StreamOrder(Exec().cuda_stream(), ps, &gs_ours_done));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

const char *GSDeviceVecType(void)
{
#if defined(GS_DEVICE_VECTORS)
  return VECCUDA;
#else
  return NULL;
#endif
}

/* The array of v, in device memory where PETSc has it there and device is true, else on the host */
static PetscErrorCode GetArray(Vec v, GSAccess access, PetscBool device, GSVecArray *a)
{
  PetscMemType mtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  a->access  = access;
  a->memtype = PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  a->memtype = device;
#else
  (void)device;
#endif
  if (a->memtype) {
    switch (access) {
    case GS_ACCESS_READ:
      PetscCall(VecGetArrayReadAndMemType(v, (const PetscScalar **)&a->array, &mtype));
      break;
    case GS_ACCESS_WRITE:
      PetscCall(VecGetArrayWriteAndMemType(v, &a->array, &mtype));
      break;
    default:
      PetscCall(VecGetArrayAndMemType(v, &a->array, &mtype));
    }
  } else {
    switch (access) {
    case GS_ACCESS_READ:
      PetscCall(VecGetArrayRead(v, (const PetscScalar **)&a->array));
      break;
    case GS_ACCESS_WRITE:
      PetscCall(VecGetArrayWrite(v, &a->array));
      break;
    default:
      PetscCall(VecGetArray(v, &a->array));
    }
  }
  a->device = PetscMemTypeDevice(mtype) ? PETSC_TRUE : PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(OursAfterPetsc());
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecGetArray(Vec v, GSAccess access, GSVecArray *a)
{
  PetscFunctionBegin;
  PetscCall(GetArray(v, access, PETSC_TRUE, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecRestoreArray(Vec v, GSVecArray *a)
{
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(PetscAfterOurs());
#endif
  if (a->memtype) {
    switch (a->access) {
    case GS_ACCESS_READ:
      PetscCall(VecRestoreArrayReadAndMemType(v, (const PetscScalar **)&a->array));
      break;
    case GS_ACCESS_WRITE:
      PetscCall(VecRestoreArrayWriteAndMemType(v, &a->array));
      break;
    default:
      PetscCall(VecRestoreArrayAndMemType(v, &a->array));
    }
  } else {
    switch (a->access) {
    case GS_ACCESS_READ:
      PetscCall(VecRestoreArrayRead(v, (const PetscScalar **)&a->array));
      break;
    case GS_ACCESS_WRITE:
      PetscCall(VecRestoreArrayWrite(v, &a->array));
      break;
    default:
      PetscCall(VecRestoreArray(v, &a->array));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecGetArrays(PetscInt n, const Vec v[], const GSAccess access[], GSVecArray a[])
{
  PetscBool all = PETSC_TRUE, any = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(GetArray(v[i], access[i], PETSC_TRUE, &a[i]));
    all = (PetscBool)(all && a[i].device);
    any = (PetscBool)(any || a[i].device);
  }
  if (any && !all) { /* some on the host: all there */
    for (PetscInt i = n - 1; i >= 0; i--) PetscCall(GSVecRestoreArray(v[i], &a[i]));
    for (PetscInt i = 0; i < n; i++) PetscCall(GetArray(v[i], access[i], PETSC_FALSE, &a[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSVecRestoreArrays(PetscInt n, const Vec v[], GSVecArray a[])
{
  PetscFunctionBegin;
  for (PetscInt i = n - 1; i >= 0; i--) PetscCall(GSVecRestoreArray(v[i], &a[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A dense matrix's array (its local rows, column-major): in device memory for a device matrix (MATDENSECUDA), as
   GetArray() does for vectors */
PetscErrorCode GSMatDenseGetArray(Mat M, GSAccess access, GSVecArray *a)
{
  PetscMemType mtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  a->access  = access;
  a->memtype = PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  a->memtype = PETSC_TRUE;
  if (access == GS_ACCESS_READ)
    PetscCall(MatDenseGetArrayReadAndMemType(M, (const PetscScalar **)&a->array, &mtype));
  else if (access == GS_ACCESS_WRITE)
    PetscCall(MatDenseGetArrayWriteAndMemType(M, &a->array, &mtype));
  else
    PetscCall(MatDenseGetArrayAndMemType(M, &a->array, &mtype));
#else
  if (access == GS_ACCESS_READ)
    PetscCall(MatDenseGetArrayRead(M, (const PetscScalar **)&a->array));
  else if (access == GS_ACCESS_WRITE)
    PetscCall(MatDenseGetArrayWrite(M, &a->array));
  else
    PetscCall(MatDenseGetArray(M, &a->array));
#endif
  a->device = PetscMemTypeDevice(mtype) ? PETSC_TRUE : PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(OursAfterPetsc());
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSMatDenseRestoreArray(Mat M, GSVecArray *a)
{
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(PetscAfterOurs());
  if (a->access == GS_ACCESS_READ)
    PetscCall(MatDenseRestoreArrayReadAndMemType(M, (const PetscScalar **)&a->array));
  else if (a->access == GS_ACCESS_WRITE)
    PetscCall(MatDenseRestoreArrayWriteAndMemType(M, &a->array));
  else
    PetscCall(MatDenseRestoreArrayAndMemType(M, &a->array));
#else
  if (a->access == GS_ACCESS_READ)
    PetscCall(MatDenseRestoreArrayRead(M, (const PetscScalar **)&a->array));
  else if (a->access == GS_ACCESS_WRITE)
    PetscCall(MatDenseRestoreArrayWrite(M, &a->array));
  else
    PetscCall(MatDenseRestoreArray(M, &a->array));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCopyToHost(const PetscScalar d[], PetscScalar h[], PetscCount n)
{
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  PetscCall(OursAfterPetsc());
#endif
  GSCallKokkos(SyncCopy(HostUnmanaged<PetscScalar>(h, (size_t)n), Kokkos::View<const PetscScalar *, Mem, Kokkos::MemoryUnmanaged>(d, (size_t)n)));
  if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * sizeof(PetscScalar)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceArrayBegin(const void *p, PetscBool *device)
{
  PetscFunctionBegin;
  *device = PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  if (p) {
    PetscMemType mtype = PETSC_MEMTYPE_HOST;
    PetscCall(PetscGetMemType(p, &mtype));
    *device = PetscMemTypeDevice(mtype) ? PETSC_TRUE : PETSC_FALSE;
  }
  if (*device) PetscCall(OursAfterPetsc());
#else
  (void)p;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSDeviceArrayEnd(PetscBool device)
{
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  if (device) PetscCall(PetscAfterOurs());
#else
  (void)device;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
