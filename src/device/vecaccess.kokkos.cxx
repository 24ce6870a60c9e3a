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

/* Whether s waits for the legacy default stream's earlier work and it for s's: the legacy stream itself and the
   streams created without cudaStreamNonBlocking (Kokkos' default instance makes one) */
static bool Blocking(cudaStream_t s)
{
  static cudaStream_t known  = nullptr;
  static bool         answer = true;
  unsigned int        flags;

  if (!s || s == cudaStreamLegacy) return true;
  if (s == cudaStreamPerThread) return false;
  if (s != known) {
    const cudaError_t e = cudaStreamGetFlags(s, &flags);

    if (e != cudaSuccess) (void)cudaGetLastError(); /* unknown: ordered by events */
    answer = e == cudaSuccess && !(flags & cudaStreamNonBlocking);
    known  = s;
  }
  return answer;
}

/* The work queued so far on stream `first` comes before what is queued next on `then`: a recorded event, no wait on
   the host. Nothing to do when both are one stream, or where CUDA orders them itself: the legacy default stream
   (PETSc's, CheckPetscStream()) against a blocking stream, which saves two CUDA calls per array on the host. */
static PetscErrorCode StreamOrder(cudaStream_t first, cudaStream_t then, cudaEvent_t *ev)
{
  PetscFunctionBegin;
  if (first == then) PetscFunctionReturn(PETSC_SUCCESS);
  if (((!first || first == cudaStreamLegacy) && Blocking(then)) || ((!then || then == cudaStreamLegacy) && Blocking(first))) PetscFunctionReturn(PETSC_SUCCESS);
  if (!*ev) {
    if (!gs_petsc_done && !gs_ours_done) PetscCall(PetscRegisterFinalize(GSStreamEventsDestroy));
    GSCallCUDA(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreateWithFlags()");
  }
  GSCallCUDA(cudaEventRecord(*ev, first), "cudaEventRecord()");
  GSCallCUDA(cudaStreamWaitEvent(then, *ev, 0), "cudaStreamWaitEvent()");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc on another stream than CUDA's legacy default one (-root_device_context_stream_type nonblocking): the
   plugin's device-vector tests then differ from AIJ's, with event or full synchronization alike, so the plugin stops
   with an error rather than answer wrongly. Checked at the first array access. */
static PetscErrorCode CheckPetscStream(void)
{
  static bool  ok = false;
  cudaStream_t ps;

  PetscFunctionBegin;
  if (ok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscGetCurrentCUDAStream(&ps));
  PetscCheck(!ps || ps == cudaStreamLegacy, PETSC_COMM_SELF, PETSC_ERR_SUP, "GPUStream needs PETSc's device context on CUDA's default stream, not a non-blocking one (-root_device_context_stream_type default)");
  ok = true;
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

/* Calls the one of PETSc's accessors (each a callable returning an error code) for the access: read, write, or both */
template <class R, class W, class RW> static PetscErrorCode ByAccess(GSAccess access, const R &read, const W &write, const RW &both)
{
  PetscFunctionBegin;
  if (access == GS_ACCESS_READ)
    PetscCall(read());
  else if (access == GS_ACCESS_WRITE)
    PetscCall(write());
  else
    PetscCall(both());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The array of v, in device memory where PETSc has it there and device is true, else on the host */
/* a from PETSc's accessors of an object's array: typed(&mtype) with its memory type where memtype is true (then in
   device memory where PETSc has it there, the plugin's stream ordered after PETSc's), else host() */
template <class T, class H> static PetscErrorCode AccessArray(GSAccess access, PetscBool memtype, GSVecArray *a, const T &typed, const H &host)
{
  PetscMemType mtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  PetscCall(CheckPetscStream());
#endif
  a->access  = access;
  a->memtype = memtype;
  if (memtype)
    PetscCall(typed(&mtype));
  else
    PetscCall(host());
  a->device = PetscMemTypeDevice(mtype) ? PETSC_TRUE : PETSC_FALSE;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(OursAfterPetsc());
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GetArray(Vec v, GSAccess access, PetscBool device, GSVecArray *a)
{
  PetscFunctionBegin;
#if !defined(GS_DEVICE_VECTORS)
  device = PETSC_FALSE;
#endif
  PetscCall(AccessArray(
      access, device, a,
      [&](PetscMemType *mt) {
        return ByAccess(
            access, [&] { return VecGetArrayReadAndMemType(v, (const PetscScalar **)&a->array, mt); }, [&] { return VecGetArrayWriteAndMemType(v, &a->array, mt); }, [&] { return VecGetArrayAndMemType(v, &a->array, mt); });
      },
      [&] {
        return ByAccess(
            access, [&] { return VecGetArrayRead(v, (const PetscScalar **)&a->array); }, [&] { return VecGetArrayWrite(v, &a->array); }, [&] { return VecGetArray(v, &a->array); });
      }));
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
  if (a->memtype)
    PetscCall(ByAccess(
        a->access, [&] { return VecRestoreArrayReadAndMemType(v, (const PetscScalar **)&a->array); }, [&] { return VecRestoreArrayWriteAndMemType(v, &a->array); }, [&] { return VecRestoreArrayAndMemType(v, &a->array); }));
  else
    PetscCall(ByAccess(
        a->access, [&] { return VecRestoreArrayRead(v, (const PetscScalar **)&a->array); }, [&] { return VecRestoreArrayWrite(v, &a->array); }, [&] { return VecRestoreArray(v, &a->array); }));
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
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  PetscCall(AccessArray(
      access, PETSC_TRUE, a,
      [&](PetscMemType *mt) {
        return ByAccess(
            access, [&] { return MatDenseGetArrayReadAndMemType(M, (const PetscScalar **)&a->array, mt); }, [&] { return MatDenseGetArrayWriteAndMemType(M, &a->array, mt); }, [&] { return MatDenseGetArrayAndMemType(M, &a->array, mt); });
      },
      [] { return PetscErrorCode(PETSC_SUCCESS); }));
#else
  PetscCall(AccessArray(
      access, PETSC_FALSE, a, [](PetscMemType *) { return PetscErrorCode(PETSC_SUCCESS); },
      [&] {
        return ByAccess(
            access, [&] { return MatDenseGetArrayRead(M, (const PetscScalar **)&a->array); }, [&] { return MatDenseGetArrayWrite(M, &a->array); }, [&] { return MatDenseGetArray(M, &a->array); });
      }));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSMatDenseRestoreArray(Mat M, GSVecArray *a)
{
  PetscFunctionBegin;
#if defined(GS_DEVICE_VECTORS)
  if (a->device) PetscCall(PetscAfterOurs());
  PetscCall(ByAccess(
      a->access, [&] { return MatDenseRestoreArrayReadAndMemType(M, (const PetscScalar **)&a->array); }, [&] { return MatDenseRestoreArrayWriteAndMemType(M, &a->array); }, [&] { return MatDenseRestoreArrayAndMemType(M, &a->array); }));
#else
  PetscCall(ByAccess(
      a->access, [&] { return MatDenseRestoreArrayRead(M, (const PetscScalar **)&a->array); }, [&] { return MatDenseRestoreArrayWrite(M, &a->array); }, [&] { return MatDenseRestoreArray(M, &a->array); }));
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
  PetscCall(CheckPetscStream());
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
