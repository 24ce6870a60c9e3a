/* The base of the Kokkos layer: C++ exceptions and CUDA errors as PETSc errors (GSCallKokkos), checked fences and
   copies, the execution and memory spaces, policies and team sizes, slot events and the copies of work vectors.
   Never included from C; kokkosimpl.hpp gathers it with launch.hpp and teamsum.hpp. */
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include "gpustreamimpl.h"

/* A CUDA build in a PETSc with CUDA (3.20 or later) reads PETSc's device vectors in place (vecaccess.kokkos.cxx) and
   runs on PETSc's GPU */
#if defined(KOKKOS_ENABLE_CUDA) && defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
#  define GS_DEVICE_VECTORS 1
#endif

/* Turns a C++ exception from Kokkos into a PETSc error; a failed allocation becomes PETSC_ERR_MEM. Kokkos reports a
   failed View allocation as a std::runtime_error (see IsAllocationFailure()); plain new throws bad_alloc. */
#define GS_OOM_MESSAGE "Out of device memory (%s): set -mat_gpustream_max_device_bytes below the free device memory so that the matrix streams, or use a smaller problem per GPU"
#define GSCallKokkos(...)                                                                                                                                                                                                                                \
  do {                                                                                                                                                                                                                                                   \
    try {                                                                                                                                                                                                                                                \
      __VA_ARGS__;                                                                                                                                                                                                                                       \
    } catch (const std::bad_alloc &e) {                                                                                                                                                                                                                  \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, GS_OOM_MESSAGE, e.what());                                                                                                                                                                                 \
    } catch (const gpustream::DeviceError &e) {                                                                                                                                                                                                          \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_GPU, "%s", e.what());                                                                                                                                                                                           \
    } catch (const std::exception &e) {                                                                                                                                                                                                                  \
      PetscCheck(!gpustream::IsAllocationFailure(e), PETSC_COMM_SELF, PETSC_ERR_MEM, GS_OOM_MESSAGE, e.what());                                                                                                                                          \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "Kokkos: %s", e.what());                                                                                                                                                                                   \
    }                                                                                                                                                                                                                                                    \
    GSCheckDevice();                                                                                                                                                                                                                                     \
  } while (0)

/* After the launches and copies of a GSCallKokkos(): the CUDA runtime's last error. Kokkos (unless built for debugging)
   does not check a launch, and a kernel that failed to launch leaves its output as it was: without this check a
   product could come back as zeros and a solver claim convergence. A fault of a kernel still running surfaces at the
   next synchronization (a copy back, a fence), which Kokkos checks and GSCallKokkos() turns into an error. Not ready
   (an event or stream query) is no error. */
#if defined(KOKKOS_ENABLE_CUDA)
#  define GSCheckDevice()                                                                                                                                                                                                                                \
    do {                                                                                                                                                                                                                                                 \
      const cudaError_t _gs_e = cudaGetLastError();                                                                                                                                                                                                      \
      PetscCheck(_gs_e == cudaSuccess || _gs_e == cudaErrorNotReady, PETSC_COMM_SELF, PETSC_ERR_GPU, "CUDA error in %s: %s (%s)", PETSC_FUNCTION_NAME, cudaGetErrorName(_gs_e), cudaGetErrorString(_gs_e));                                              \
    } while (0)
#else
#  define GSCheckDevice()                                                                                                                                                                                                                                \
    do {                                                                                                                                                                                                                                                 \
    } while (0)
#endif

namespace gpustream
{
/* Whether e is Kokkos' report of a failed allocation. Kokkos 3 to 4.3 catch their RawMemoryAllocationFailure (a
   std::bad_alloc) and rethrow it as "Kokkos failed to allocate memory for label ..."; from 4.4 on (5.x too) the
   memory space throws "Kokkos ERROR: Host memory space failed to allocate 16 MiB (label=...)." itself. */
inline bool IsAllocationFailure(const std::exception &e)
{
  static const char before44[] = "Kokkos failed to allocate memory", since44[] = "Kokkos ERROR: ";
  const char       *what = e.what();

  if (!std::strncmp(what, before44, sizeof(before44) - 1)) return true;
  return !std::strncmp(what, since44, sizeof(since44) - 1) && std::strstr(what, " memory space failed to allocate ");
}

using Exec = Kokkos::DefaultExecutionSpace;
using Mem  = Exec::memory_space;

/* A CUDA synchronization the plugin made itself failed: PETSC_ERR_GPU through GSCallKokkos() */
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#if defined(KOKKOS_ENABLE_CUDA)
inline void ThrowIfFailed(cudaError_t e, const char *what)
{
  if (e != cudaSuccess) throw DeviceError(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
#endif

/* Waits for the work queued on e (Fence) or on the device (FenceAll). Kokkos ends the program when its own fences meet
   a CUDA error (a kernel that faulted), so the plugin synchronizes itself wherever it waits, and the error becomes a
   PETSc error instead. */
inline void Fence(const Exec &e = Exec())
{
#if defined(KOKKOS_ENABLE_CUDA)
  ThrowIfFailed(cudaStreamSynchronize(e.cuda_stream()), "cudaStreamSynchronize()");
#else
  e.fence();
#endif
}

inline void FenceAll()
{
#if defined(KOKKOS_ENABLE_CUDA)
  ThrowIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize()");
#endif
  Kokkos::fence();
}

/* dst = src (views, or a view and a value), complete on return: waited for with Fence() before and after, not by
   Kokkos' fences around a plain deep_copy, so that an earlier kernel's fault is the plugin's error before Kokkos (which
   ends the program at a CUDA call that meets a fault) sees it */
template <class D, class S> inline void SyncCopy(const D &dst, const S &src)
{
  Fence();
  Kokkos::deep_copy(Exec(), dst, src);
  Fence();
}

/* An error the CUDA runtime holds (a failed launch, a fault it has seen) as DeviceError, before a Kokkos call that
   would end the program on it */
inline void CheckPending()
{
#if defined(KOKKOS_ENABLE_CUDA)
  ThrowIfFailed(cudaPeekAtLastError(), "a kernel before this copy");
#endif
}
/* Kernels take their closure as launch arguments: Kokkos 3.4 otherwise launches closures of 512 bytes or more (most
   fused kernels) through constant memory, which first waits for the previous such kernel to finish
   (cudaEventSynchronize), so the host could never queue a kernel behind a running one */
using LightWeight = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
using TeamPol     = Kokkos::TeamPolicy<Exec, LightWeight>;
using RangePol    = Kokkos::RangePolicy<Exec, LightWeight>;
using Member      = TeamPol::member_type;
using Scratch     = Kokkos::View<PetscScalar *, Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
#if defined(KOKKOS_ENABLE_CUDA)
using PinnedSpace = Kokkos::CudaHostPinnedSpace; /* fast, truly asynchronous device-to-host copies */
#else
using PinnedSpace = Kokkos::HostSpace;
#endif

template <class T> using DView         = Kokkos::View<T *, Mem>;
template <class T> using HostUnmanaged = Kokkos::View<T *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

/* True when the default execution space runs on a device with its own memory */
constexpr bool OnDevice()
{
  return !std::is_same<Mem, Kokkos::HostSpace>::value;
}

/* Loads and stores of data no kernel rereads soon (the matrix, x): evict-first in L1 and L2 (CUDA's .cs), so that
   L2 keeps the vectors the next kernels read. Only where a load instruction's lines are not reread by the thread's
   next iterations (lanes or tiles reading entries contiguously): a thread-per-row loop rereads them from L1 and was
   much slower with these loads, and with an L2-only evict-first policy too (H200; docs/design-measurements.md) */
template <class T> KOKKOS_FORCEINLINE_FUNCTION T LoadOnce(const T &a)
{
#if defined(__CUDA_ARCH__)
  return __ldcs(&a);
#else
  return a;
#endif
}

template <class T> KOKKOS_FORCEINLINE_FUNCTION void StoreOnce(T &a, const T v)
{
#if defined(__CUDA_ARCH__)
  __stcs(&a, v);
#else
  a = v;
#endif
}

/* Threads per team on a GPU; one on host backends, where a team is a plain loop */
inline int TeamThreads()
{
  return OnDevice() ? 256 : 1;
}

/* Teams that fill the device once; reductions write one partial per team, so this also bounds the transfer */
inline int MaxTeams(int threads_per_team)
{
  const int c = Exec().concurrency() / threads_per_team; /* an instance: Kokkos 4 made it non-static */
  return c > 0 ? c : 1;
}

/* Solver kernels whose teams loop over the rows are compiled for B teams of 256 threads on each multiprocessor
   (launch bounds: at most 65536 / (256 B) registers a thread) and launched with at most B teams per multiprocessor
   (WaveTeams), so that all their teams run in one wave: launched with MaxTeams() teams, pipecgfused's took more than
   one wave on an H200 and measured slower (docs/design-measurements.md) */
template <int B> using WavePol = Kokkos::TeamPolicy<Exec, LightWeight, Kokkos::LaunchBounds<256, B>>;

/* The most teams of a WavePol<B> kernel: B per multiprocessor (MaxTeams() on other backends) */
inline int WaveTeams(int threads_per_team, int B)
{
#if defined(KOKKOS_ENABLE_CUDA)
  static int sms = 0;
  if (!sms) {
    int dev;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      sms = -1;
    }
  }
  if (sms > 0) return std::max(1, std::min(MaxTeams(threads_per_team), sms * B * 256 / threads_per_team));
#else
  (void)B;
#endif
  return MaxTeams(threads_per_team);
}

/* pipecgfused's and pipebcgsf's kernels (at most 48 registers): 5 teams per multiprocessor measured fastest, or as
   fast as 6, against 4, 6 and 8 on an H200 (docs/design-measurements.md) */
constexpr int FusedTeamsPerSM = 5;
using FusedPol                = WavePol<FusedTeamsPerSM>;

inline int FusedTeams(int threads_per_team)
{
  return WaveTeams(threads_per_team, FusedTeamsPerSM);
}

/* Two events on the default execution space's stream, one per slot: the host waits for the work queued up to a
   slot's record (a copy to pinned memory, a kernel's finished sums) and not for the work queued after it. Host
   backends run everything in order: waiting is a fence. */
class SlotEvents {
public:
  PetscErrorCode Create()
  {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    for (auto &e : ev_)
      if (!e) PetscCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventCreateWithFlags() failed");
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode Record(PetscInt slot)
  {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    PetscCheck(cudaEventRecord(ev_[slot], Exec().cuda_stream()) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventRecord() failed");
#else
    (void)slot;
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode Wait(PetscInt slot)
  {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    PetscCheck(cudaEventSynchronize(ev_[slot]) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventSynchronize() failed");
#else
    (void)slot;
    GSCallKokkos(Fence());
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  ~SlotEvents()
  {
#if defined(KOKKOS_ENABLE_CUDA)
    for (auto e : ev_)
      if (e) cudaEventDestroy(e);
#endif
  }

private:
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t ev_[2] = {nullptr, nullptr};
#endif
};

/* n scalars from a host array into device memory, queued on Exec() (the host array may change once it returns), and
   back, complete on return; arrays of StagingMinBytes or more cross through pinned staging (staging.kokkos.cxx) */
constexpr size_t StagingMinBytes = (size_t)1 << 20;
PetscErrorCode   HostToDevice(PetscScalar *, const PetscScalar *, size_t);
PetscErrorCode   DeviceToHost(PetscScalar *, const PetscScalar *, size_t);
PetscErrorCode   StagingThreads(int *);

/* A work vector from a PETSc vector's array and back (gpustreamimpl.h's GSVecArray): a copy on the device, ordered
   on the execution space's stream, when the array is in device memory; else one host-device copy, counted in copies
   and in -log_view's CPU-to-GPU and GPU-to-CPU counts. A NULL array zeroes the work vector. */
inline PetscErrorCode CopyIn(const DView<PetscScalar> &d, const PetscScalar a[], PetscBool device, PetscInt *copies)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(GPUS_CopyVec, 0, 0, 0, 0));
  if (!a) /* queued, as the kernels that read it */
    GSCallKokkos(Kokkos::deep_copy(Exec(), d, PetscScalar(0)));
  else if (device)
    GSCallKokkos({
      CheckPending();
      Kokkos::deep_copy(Exec(), d, DView<PetscScalar>(const_cast<PetscScalar *>(a), d.extent(0)));
    });
  else {
    PetscCall(HostToDevice(d.data(), a, d.extent(0)));
    (*copies)++;
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(d.extent(0) * sizeof(PetscScalar))));
  }
  PetscCall(PetscLogEventEnd(GPUS_CopyVec, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

inline PetscErrorCode CopyOut(const DView<PetscScalar> &d, PetscScalar a[], PetscBool device, PetscInt *copies)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(GPUS_CopyVec, 0, 0, 0, 0));
  if (device)
    GSCallKokkos({
      CheckPending();
      Kokkos::deep_copy(Exec(), DView<PetscScalar>(a, d.extent(0)), d);
    });
  else {
    PetscCall(DeviceToHost(a, d.data(), d.extent(0)));
    (*copies)++;
    if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(d.extent(0) * sizeof(PetscScalar))));
  }
  PetscCall(PetscLogEventEnd(GPUS_CopyVec, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Point-block Jacobi: the n / bs inverse diagonal blocks (bs x bs each, row-major) into d, reallocated when its size
   changes; bs must be at most the maxbs a kernel's local arrays hold and divide n */
inline PetscErrorCode LoadInverseBlocks(DView<PetscScalar> &d, const char *label, PetscInt n, PetscInt bs, int maxbs, const PetscScalar blocks[], PetscInt *copies)
{
  PetscFunctionBegin;
  PetscCheck(bs >= 1 && bs <= maxbs && n % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Block size %" PetscInt_FMT " must be in 1..%d and divide the local size %" PetscInt_FMT, bs, maxbs, n);
  if (d.extent(0) != (size_t)(n * bs)) GSCallKokkos(d = DView<PetscScalar>(std::string(label), n * bs));
  PetscCall(CopyIn(d, blocks, PETSC_FALSE, copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace gpustream
