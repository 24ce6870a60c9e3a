/* Host arrays to and from device memory through pinned staging (kokkosimpl.hpp's HostToDevice() and DeviceToHost()).
   From pageable memory the driver stages a copy itself, through one buffer and one thread, well below the pinned
   rate; the engine of stager.hpp overlaps the host copies of some chunks with the transfers of others on the plugin's
   stream. */
#include "kokkosimpl.hpp"
#include <algorithm>
#include <cstdlib>
#include <thread>
#if defined(__linux__)
#  include <sched.h>
#endif

#include "stager.hpp"

namespace gpustream
{
static int gs_staging_threads = -1; /* -gpustream_staging_threads; -1: not set yet */

#if defined(KOKKOS_ENABLE_CUDA)
namespace
{
/* CUDA's calls for the staging engine (stager.hpp) */
struct CudaAPI {
  using Error                    = cudaError_t;
  using Event                    = cudaEvent_t;
  using Stream                   = cudaStream_t;
  static constexpr Error Success = cudaSuccess;
  static Error           EventCreate(Event *e)
  {
    return cudaEventCreateWithFlags(e, cudaEventDisableTiming);
  }
  static void EventDestroy(Event e)
  {
    (void)cudaEventDestroy(e);
  }
  static Error EventSync(Event e)
  {
    return cudaEventSynchronize(e);
  }
  static Error EventRecord(Event e, Stream s)
  {
    return cudaEventRecord(e, s);
  }
  static Error HostAlloc(void **p, size_t n)
  {
    return cudaHostAlloc(p, n, cudaHostAllocDefault);
  }
  static void HostFree(void *p)
  {
    (void)cudaFreeHost(p);
  }
  static Error SetDevice(int d)
  {
    return cudaSetDevice(d);
  }
  static Error ToDevice(void *d, const void *h, size_t n, Stream s)
  {
    return cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s);
  }
  static Error ToHost(void *h, const void *d, size_t n, Stream s)
  {
    return cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s);
  }
};
using Stager = staging::Stager<CudaAPI>;
using Job    = staging::Job<CudaAPI>;

Stager *gs_stager = nullptr;

PetscErrorCode StagerDestroy(void)
{
  PetscFunctionBegin;
  delete gs_stager;
  gs_stager = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One copy through the engine, on the plugin's stream and device */
PetscErrorCode Staged(bool todevice, void *dev, void *host, size_t bytes)
{
  Job job;

  PetscFunctionBegin;
  job.todevice = todevice;
  job.dev      = (char *)dev;
  job.host     = (char *)host;
  job.bytes    = bytes;
  job.chunk    = staging::ChunkBytes(bytes, gs_staging_threads);
  job.lanes    = staging::Lanes(bytes, job.chunk, gs_staging_threads);
  job.stream   = Exec().cuda_stream();
  PetscCheck(cudaGetDevice(&job.device) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "cudaGetDevice() failed");
  if (!gs_stager) {
    try {
      gs_stager = new Stager;
    } catch (const std::exception &x) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Pinned staging: %s", x.what());
    }
    PetscCall(PetscRegisterFinalize(StagerDestroy));
  }
  {
    cudaError_t e = cudaSuccess;
    try {
      e = gs_stager->Run(job);
    } catch (const std::exception &x) { /* a thread that could not start */
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "Pinned staging: %s", x.what());
    }
    PetscCheck(e == cudaSuccess, PETSC_COMM_SELF, e == cudaErrorMemoryAllocation ? PETSC_ERR_MEM : PETSC_ERR_GPU, "Copy of %zu bytes %s through pinned staging failed: %s (%s)", bytes, todevice ? "to the device" : "from the device",
               cudaGetErrorName(e), cudaGetErrorString(e));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace
#endif

/* -gpustream_staging_threads n: threads that stage copies between host arrays and the device through pinned memory,
   at most the cores this process may use (GSHostThreadsAuto()); 0 leaves the copies to the driver (pageable memory).
   Default 8 with CUDA. More threads than cores would only take turns on them, each handing its chunks on late. Read
   at first use, which is not collective. */
PetscErrorCode StagingThreads(int *n)
{
  PetscFunctionBegin;
  if (gs_staging_threads < 0) {
#if defined(KOKKOS_ENABLE_CUDA)
    PetscInt t = 8;
#else
    PetscInt t = 0;
#endif
    PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_staging_threads", GS_OPTION_INT, NULL, 0));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-gpustream_staging_threads", &t, NULL));
    PetscCheck(t >= 0 && t <= 256, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpustream_staging_threads %" PetscInt_FMT " must be in 0..256", t);
    if (t > 1) {
      const PetscInt asked = t;
      t                    = std::min(t, GSHostThreadsAuto());
      if (t < asked) PetscCall(PetscInfo(NULL, "GPUStream: staging threads capped at %" PetscInt_FMT ", the cores this process may use (asked: %" PetscInt_FMT ")\n", t, asked));
    }
    gs_staging_threads = (int)t;
  }
  *n = gs_staging_threads;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(KOKKOS_ENABLE_CUDA)
/* Whether h is page-locked memory (a pinned vector's array), which the copy engines read and write directly; since
   CUDA 11 an ordinary host pointer is reported as unregistered, so a failure here is a real CUDA error */
static PetscErrorCode Pinned(const void *h, bool *pinned)
{
  cudaPointerAttributes a;
  cudaError_t           e = cudaPointerGetAttributes(&a, h);

  PetscFunctionBegin;
  PetscCheck(e == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "cudaPointerGetAttributes() on a vector's host array failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
  *pinned = a.type == cudaMemoryTypeHost;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* n scalars between host array h and device array d, through the engine where staging is on and the array is large
   and pageable */
static PetscErrorCode Move(bool todevice, PetscScalar *d, PetscScalar *h, size_t n)
{
  int t;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (OnDevice()) gs_host_copies++;
  PetscCall(StagingThreads(&t));
#if defined(KOKKOS_ENABLE_CUDA)
  if (t > 0 && n * sizeof(PetscScalar) >= StagingMinBytes) {
    bool pinned;

    PetscCall(Pinned(h, &pinned));
    if (!pinned) {
      PetscCall(Staged(todevice, d, h, n * sizeof(PetscScalar)));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
#endif
  if (todevice)
    GSCallKokkos(SyncCopy(DView<PetscScalar>(d, n), HostUnmanaged<const PetscScalar>(h, n)));
  else
    GSCallKokkos(SyncCopy(HostUnmanaged<PetscScalar>(h, n), Kokkos::View<const PetscScalar *, Mem, Kokkos::MemoryUnmanaged>(d, n)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode HostToDevice(PetscScalar *d, const PetscScalar *h, size_t n)
{
  PetscFunctionBegin;
  PetscCall(Move(true, d, const_cast<PetscScalar *>(h), n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DeviceToHost(PetscScalar *h, const PetscScalar *d, size_t n)
{
  PetscFunctionBegin;
  PetscCall(Move(false, const_cast<PetscScalar *>(d), h, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace gpustream

PetscLogDouble gs_host_copies = 0;

PetscErrorCode GSPinnedMalloc(size_t bytes, void **p)
{
  PetscFunctionBegin;
  *p = NULL;
  if (!bytes) bytes = sizeof(PetscScalar);
#if defined(KOKKOS_ENABLE_CUDA)
  PetscCall(GSKokkosInitialize()); /* on the plugin's device */
  {
    const cudaError_t e = cudaHostAlloc(p, bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      *p = NULL;
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaHostAlloc() of %zu bytes of pinned host memory failed: %s (%s); -mat_gpustream_pinned_vecs false gives pageable vectors", bytes, cudaGetErrorName(e), cudaGetErrorString(e));
    }
  }
#else
  PetscCall(PetscMalloc(bytes, p));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSPinnedFree(void *p)
{
  PetscFunctionBegin;
  if (!p) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(KOKKOS_ENABLE_CUDA)
  {
    const cudaError_t e = cudaFreeHost(p);
    if (e != cudaSuccess) (void)cudaGetLastError();
    PetscCheck(e == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "cudaFreeHost() failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
  }
#else
  PetscCall(PetscFree(p));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cores this process may use: those it is bound to, else the node's divided among the processes the MPI launcher
   put on it */
PetscInt GSHostThreadsAuto(void)
{
  static int nt = 0;
  if (nt) return nt;
  const int avail = std::max(1, (int)std::thread::hardware_concurrency());
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < avail) return nt = CPU_COUNT(&set); /* bound: these cores are this process's */
#endif
  int local = 1; /* processes on this node, as the MPI launcher tells its processes */
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}) {
    const char *v = std::getenv(var);
    if (v && std::atoi(v) > 0) {
      local = std::atoi(v);
      break;
    }
  }
  return nt = std::max(1, avail / local);
}

PetscInt GSHostThreads(void)
{
  PetscInt  nt  = 0;
  PetscBool set = PETSC_FALSE;
  if (PetscOptionsGetInt(NULL, NULL, "-gpustream_host_threads", &nt, &set) || !set || nt < 1) nt = GSHostThreadsAuto(); /* unreadable: as unset */
  return nt;
}
