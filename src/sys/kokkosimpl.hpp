/* Kokkos types and helpers shared by the *.kokkos.cxx files. Never included from C. */
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
   next iterations (lanes or tiles reading entries contiguously): a thread-per-row loop rereads them from L1 and took
   2.5x the time with these loads, 1.8x with an L2-only evict-first policy (H200) */
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
   (WaveTeams), so that all their teams run in one wave: launched with MaxTeams() teams, pipecgfused's took 1.33 waves
   (40 registers) and 2 waves (56) on an H200, 8% slower at 1e7 rows (docs/performance.md) */
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

/* pipecgfused's and pipebcgsf's kernels (at most 48 registers): with 5 teams per multiprocessor they were fastest,
   or within 1% of 6, against 4, 6 and 8 on an H200 at 4e6 and 1e7 rows */
constexpr int FusedTeamsPerSM = 5;
using FusedPol                = WavePol<FusedTeamsPerSM>;

inline int FusedTeams(int threads_per_team)
{
  return WaveTeams(threads_per_team, FusedTeamsPerSM);
}

/* griddepcontrol (sm_90) for programmatic dependent launch (below): a kernel lets the next one be scheduled
   (DependentTrigger) and waits for the one before to finish (DependentWait); no-ops in a kernel launched without it
   and on other targets */
KOKKOS_FORCEINLINE_FUNCTION void DependentTrigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

KOKKOS_FORCEINLINE_FUNCTION void DependentWait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
/* Kokkos 3 gives every TeamPolicy kernel cudaFuncCachePreferShared (kokkos#2066; Kokkos 4 leaves the split to the
   driver), which on an H200 keeps 228 KB of shared memory and about 23 KB of L1 per multiprocessor: the gathers of x
   then hit L1 42% of the time against 62% for the same row loop as a range kernel, 276 against 208 us at 1e7 (ncu,
   docs/performance.md). TeamLaunch() gives its kernel func, at the first launch of a size, the shared memory its
   resident teams need and L1 the rest (dyn: its dynamic shared memory; shmem: what the carveout was computed for). */
inline void TeamCarveout(const void *func, int threads, int dyn, int &shmem)
{
  if (dyn == shmem) return;
  cudaFuncAttributes attr;
  int                dev, blocks = 0, smem = 0, reserved = 0;
  /* the occupancy query honours the carveout set for an earlier size: lift it first (else each new size, say the
     tiles of another matrix, got the teams the last one left room for, down to one per multiprocessor) */
  if (cudaGetDevice(&dev) != cudaSuccess || cudaFuncGetAttributes(&attr, func) != cudaSuccess || cudaFuncSetAttribute(func, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, func, threads, dyn) != cudaSuccess || cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess || smem <= 0) {
    (void)cudaGetLastError(); /* a hint only: without it the kernel runs as launched */
    return;
  }
  const long need = (long)blocks * (dyn + (long)attr.sharedSizeBytes + reserved);
  const int  pct  = (int)PetscMin(100, (100 * need + smem - 1) / smem);
  if (cudaFuncSetCacheConfig(func, cudaFuncCachePreferNone) == cudaSuccess && cudaFuncSetAttribute(func, cudaFuncAttributePreferredSharedMemoryCarveout, pct) == cudaSuccess)
    shmem = dyn;
  else
    (void)cudaGetLastError();
}

/* Programmatic dependent launch (sm_90): a team kernel launched with it is scheduled while the kernel before it in the
   stream still runs, once every team of that one has called DependentTrigger() (CountLast(), as it has stored its
   partial sums) or exited, and waits at its start for that kernel to finish (griddepcontrol.wait, which also makes its
   stores visible). The launch and the ramp of teams then overlap the last team's finish. On an H200 at 4e6 rows
   pipecgfused and pipebcgsf took 1.4% and 1.2% less time an iteration (triggered as each team starts instead, 0.8%
   more and 1.5% less). Set at initialization (-gpustream_dependent_launch). */
inline bool &DependentLaunch()
{
  static bool on = false;
  return on;
}

/* Kokkos 3's team loop (ParallelFor<TeamPolicy, Cuda>::operator()) for level-0 scratch only, after the wait for the
   kernel before; the kernels with (T, B: the launch bounds) and without launch bounds run it */
template <class F> __device__ inline void TeamLoop(const F &f, const int league, const int begin, const int size)
{
  DependentWait();
  for (int r = blockIdx.x; r < league; r += gridDim.x) f(Member(kokkos_impl_cuda_shared_memory<void>(), begin, size, nullptr, 0, r, league));
}

template <class F, unsigned T, unsigned B> __global__ __launch_bounds__(T, B) void TeamKernel(const F f, const int league, const int begin, const int size)
{
  TeamLoop(f, league, begin, size);
}

template <class F> __global__ void TeamKernelUnbounded(const F f, const int league, const int begin, const int size)
{
  TeamLoop(f, league, begin, size);
}

template <class F, class LB> struct TeamKernelOf {
  static const void *Func()
  {
    return (const void *)TeamKernel<F, LB::maxTperB, LB::minBperSM>;
  }
};
template <class F> struct TeamKernelOf<F, Kokkos::LaunchBounds<0, 0>> {
  static const void *Func()
  {
    return (const void *)TeamKernelUnbounded<F>;
  }
};

/* Kokkos 3's launch of a team kernel, with the carveout above and, where DependentLaunch() is on, the dependent-launch
   attribute; for explicit team sizes and level-0 scratch, all the kernels here use */
template <class F, class Pol> void TeamLaunch(const char *name, const Pol &pol, const F &f)
{
  const int team = pol.team_size(), vlen = pol.impl_vector_length(), league = pol.league_size();
  if (team <= 0 || pol.scratch_size(1, team) > 0) throw std::runtime_error(std::string(name) + ": a team kernel needs an explicit team size and level-0 scratch only");
  if (league <= 0) return;
  const int begin = (int)(sizeof(double) * (team + 2)), size = (int)pol.scratch_size(0, team); /* as Kokkos 3 sizes them */
  static_assert(sizeof(F) <= 4000, "a team kernel's closure must fit its launch arguments");
  const void *func  = TeamKernelOf<F, typename Pol::launch_bounds>::Func();
  static int  shmem = -1, waits = -1; /* waits: compiled for sm_90 or later (from PTX of an older one, it has no wait) */
  if (waits < 0) {
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, func) == cudaSuccess)
      waits = a.ptxVersion >= 90;
    else {
      (void)cudaGetLastError();
      waits = 0;
    }
  }
  if (begin + size > 48 * 1024 && shmem != begin + size) (void)cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, begin + size);
  TeamCarveout(func, team * vlen, begin + size, shmem);
  uint64_t kid = 0;
  if (Kokkos::Profiling::profileLibraryLoaded()) Kokkos::Profiling::beginParallelFor(name, 0, &kid);
  cudaLaunchAttribute attr[1];
  attr[0].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg                             = {};
  cfg.gridDim                                        = dim3(league, 1, 1);
  cfg.blockDim                                       = dim3(vlen, team, 1);
  cfg.dynamicSmemBytes                               = begin + size;
  cfg.stream                                         = pol.space().cuda_stream();
  cfg.attrs                                          = attr;
  cfg.numAttrs                                       = DependentLaunch() && waits ? 1 : 0;
  void             *args[]                           = {(void *)&f, (void *)&league, (void *)&begin, (void *)&size};
  const cudaError_t e                                = cudaLaunchKernelExC(&cfg, func, args);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string(name) + ": " + cudaGetErrorString(e));
  }
  if (Kokkos::Profiling::profileLibraryLoaded()) Kokkos::Profiling::endParallelFor(kid);
}
#endif

/* Kokkos::parallel_for on a team policy; TeamLaunch() on Kokkos 3 with CUDA */
template <class F, class Pol> void TeamFor(const char *name, const Pol &pol, const F &f)
{
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
  TeamLaunch(name, pol, f);
#else
  Kokkos::parallel_for(name, pol, f);
#endif
}

/* f() on vector lane 0 of this thread (OneLane) or on one thread of the team (OneThread). Kokkos 3's single(PerThread)
   and single(PerTeam) end with a __syncwarp on a mask of the calling thread's lanes, which nvcc turns into a loop
   over the 32 lanes (WARPSYNC.COLLECTIVE) in every warp, once per call: per row in the SpMV kernels, and 16-34% of
   the stall samples of sgmresf's kernels at 1e5 (ncu). The kernels here never read what the one lane or thread
   wrote before a team barrier or the end of the kernel, so they need no such sync. */
template <class F> KOKKOS_INLINE_FUNCTION void OneLane(const Member &t, const F &f)
{
#if defined(__CUDA_ARCH__)
  (void)t;
  if (threadIdx.x == 0) f();
#else
  Kokkos::single(Kokkos::PerThread(t), f);
#endif
}

template <class F> KOKKOS_INLINE_FUNCTION void OneThread(const Member &t, const F &f)
{
#if defined(__CUDA_ARCH__)
  (void)t;
  if (threadIdx.x == 0 && threadIdx.y == 0) f();
#else
  Kokkos::single(Kokkos::PerTeam(t), f);
#endif
}

/* Calls f(i) for the indices in [0, n) this thread owns: consecutive threads take consecutive indices (coalesced),
   and the grid-stride loop lets a fixed number of teams cover any n; Rev: the last first, so that a kernel after one
   that went forward starts on the vectors that one left in L2 */
template <bool Rev = false, class F> KOKKOS_INLINE_FUNCTION void ForEachIndex(const Member &t, PetscInt n, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), first = (PetscInt)t.league_rank() * t.team_size() + t.team_rank();
  if (!Rev)
    for (PetscInt i = first; i < n; i += stride) f(i);
  else if (first < n)
    for (PetscInt i = first + (n - 1 - first) / stride * stride; i >= first; i -= stride) f(i);
}

/* ForEachIndex<true> with two of this thread's indices in flight: load(i, v) reads the K values index i needs,
   step(i, v) computes and stores; both indices' loads come before either's stores (which could alias them, so the
   compiler would not hoist them). The same indices in the same order. */
template <int K, class Ld, class St> KOKKOS_INLINE_FUNCTION void ForEachIndexPairRev(const Member &t, PetscInt n, const Ld &load, const St &step)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), first = (PetscInt)t.league_rank() * t.team_size() + t.team_rank();
  if (first >= n) return;
  for (PetscInt i = first + (n - 1 - first) / stride * stride; i >= first; i -= 2 * stride) {
    PetscScalar a[K], b[K];
    const bool  two = i - stride >= first;
    load(i, a);
    if (two) load(i - stride, b);
    step(i, a);
    if (two) step(i - stride, b);
  }
}

#if defined(__CUDA_ARCH__)
/* v summed over the 32 lanes of a warp by a butterfly, the same order in every lane, which all get the total */
__device__ inline PetscScalar WarpAllSum(PetscScalar v)
{
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
#endif

/* Sums N per-thread values over the team with a tree in the scratch buffer s (N * team_size scalars), in the same
   order in every team, and gives every thread the totals (by warp shuffles on CUDA). s may be reused by later calls
   in the same kernel: the leading barrier lets the previous call's readers finish first. */
template <int N> KOKKOS_INLINE_FUNCTION void TeamSumAllIn(const Member &t, const Scratch &s, PetscScalar (&a)[N])
{
  const int T  = t.team_size();
  const int tr = t.team_rank();
  t.team_barrier();
#if defined(__CUDA_ARCH__)
  /* Whole warps: shuffles within each warp, then the first warp sums the warps' totals (two barriers instead of one
     per tree level). Kokkos puts the vector lanes in threadIdx.x and the team rank in threadIdx.y; lane 0 of each
     thread contributes, since all its lanes hold the same values. */
  const int nt = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x, nw = nt / 32;
  if (nt % 32 == 0) {
    for (int k = 0; k < N; k++) {
      const PetscScalar v = WarpAllSum(threadIdx.x == 0 ? a[k] : 0);
      if (tid % 32 == 0) s(k * nw + tid / 32) = v;
    }
    t.team_barrier();
    if (tid < 32)
      for (int k = 0; k < N; k++) {
        const PetscScalar v = WarpAllSum(tid < nw ? s(k * nw + tid) : 0);
        if (tid == 0) s(k * nw) = v;
      }
    t.team_barrier();
    for (int k = 0; k < N; k++) a[k] = s(k * nw);
    return;
  }
#endif
  OneLane(t, [&]() {
    for (int k = 0; k < N; k++) s(k * T + tr) = a[k];
  });
  t.team_barrier();
  for (int h = T / 2; h > 0; h /= 2) {
    if (tr < h)
      OneLane(t, [&]() {
        for (int k = 0; k < N; k++) s(k * T + tr) += s(k * T + tr + h);
      });
    t.team_barrier();
  }
  for (int k = 0; k < N; k++) a[k] = s(k * T);
}

/* One thread's count of its team in *count: a fence orders the stores before it, and the last of total teams fences
   again so its reads of the others' stores come after the count */
KOKKOS_INLINE_FUNCTION bool CountLast(unsigned *count, unsigned total)
{
  DependentTrigger();
  Kokkos::memory_fence();
  const bool last = Kokkos::atomic_fetch_add(count, 1u) == total - 1;
  if (last) Kokkos::memory_fence();
  return last;
}

/* Whether this team is the last of the total teams (default: all of its kernel) counted in *count to get here; each
   team calls it after storing its partial sums. The barrier lets one thread's fence order every thread's stores
   before the count (fences are cumulative; sgmresf's pairs are stored by 64 threads), and the last team's second
   fence orders its reads of the others' stores, through LoadL2() (past its L1 cache), after the count that saw them
   all. That team sets *count back to 0 for the next launch. */
KOKKOS_INLINE_FUNCTION bool LastTeam(const Member &t, unsigned *count, unsigned total = 0)
{
  int last = 0;
  t.team_barrier();
  Kokkos::single(
      Kokkos::PerTeam(t), [&](int &l) { l = CountLast(count, total ? total : (unsigned)t.league_size()); }, last);
  return last != 0;
}

/* Another team's store of the same kernel, read past this multiprocessor's L1 cache by the team that LastTeam()
   found last: on CUDA a load cached in L2 only (GPU scope), a volatile load elsewhere. CUDA's __ldcg() is an asm
   statement without volatile or a memory clobber, which the compiler may move above the barrier and the count that
   order it after the stores; here the load is volatile with a memory clobber, and stays where it is written. */
KOKKOS_INLINE_FUNCTION PetscScalar LoadL2(const PetscScalar *p)
{
#if defined(__CUDA_ARCH__)
  if (sizeof(PetscScalar) == sizeof(double)) {
    double v;
    asm volatile("ld.global.cg.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
    return (PetscScalar)v;
  } else if (sizeof(PetscScalar) == sizeof(float)) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return (PetscScalar)v;
  }
#endif
  return *(const volatile PetscScalar *)p;
}

/* a[k] += p[k * stride + l] for k < N and the l in [0, L) this thread owns (team_rank, + team_size, ...), in that
   order. The last team of a kernel reads the other teams' partials through LoadL2() (past its L1 cache), an l's N
   loads issued before their sums so that they wait for L2 together. */
template <int N> KOKKOS_INLINE_FUNCTION void AddPartials(const Member &t, const PetscScalar *p, size_t stride, int L, PetscScalar (&a)[N])
{
  for (int l = t.team_rank(); l < L; l += t.team_size()) {
    PetscScalar q[N];
    for (int k = 0; k < N; k++) q[k] = LoadL2(p + k * stride + l);
    for (int k = 0; k < N; k++) a[k] += q[k];
  }
}

/* Level-0 scratch scalars for TeamSumAllIn<N> in teams of team threads of vlen lanes, and one more for TeamSumStoreLast's
   flag: a scalar per warp and sum on CUDA (whole warps), per thread and sum elsewhere */
inline size_t SumScratch(int N, int team, int vlen = 1)
{
#if defined(KOKKOS_ENABLE_CUDA)
  if (team * vlen % 32 == 0) return (size_t)N * (team * vlen / 32) + 1;
#else
  (void)vlen;
#endif
  return (size_t)N * team + 1;
}

/* TeamSumAllIn, then the team's sums stored at out[k * league_size + league_rank] */
template <int N> KOKKOS_INLINE_FUNCTION void TeamSumStoreIn(const Member &t, const Scratch &s, const PetscScalar (&a)[N], PetscScalar *out)
{
  PetscScalar b[N];
  for (int k = 0; k < N; k++) b[k] = a[k];
  TeamSumAllIn<N>(t, s, b);
  if (t.team_rank() == 0)
    OneLane(t, [&]() {
      for (int k = 0; k < N; k++) out[k * t.league_size() + t.league_rank()] = b[k];
    });
}

/* TeamSumStoreIn, then LastTeam(t, count) for teams whose only store the last team reads is of these sums: the
   thread that stores them counts, so neither a barrier before its fence nor Kokkos's broadcast after it is needed,
   and the team learns the answer from a flag after s's sums (s: SumScratch(N, ...) scalars), one barrier later */
template <int N> KOKKOS_INLINE_FUNCTION bool TeamSumStoreLast(const Member &t, const Scratch &s, const PetscScalar (&a)[N], PetscScalar *out, unsigned *count)
{
  PetscScalar b[N];
  for (int k = 0; k < N; k++) b[k] = a[k];
  TeamSumAllIn<N>(t, s, b);
  const size_t flag = s.extent(0) - 1;
  if (t.team_rank() == 0)
    OneLane(t, [&]() {
      for (int k = 0; k < N; k++) out[k * t.league_size() + t.league_rank()] = b[k];
      s(flag) = CountLast(count, (unsigned)t.league_size()) ? 1 : 0;
    });
  t.team_barrier();
  return s(flag) != 0;
}

/* The same on N * team_size scalars of level-0 scratch allocated per call (each call takes new scratch: size the
   policy's scratch for all calls of the kernel) */
template <int N> KOKKOS_INLINE_FUNCTION void TeamSumAll(const Member &t, PetscScalar (&a)[N])
{
  TeamSumAllIn<N>(t, Scratch(t.team_scratch(0), N * t.team_size()), a);
}

template <int N> KOKKOS_INLINE_FUNCTION void TeamSumStore(const Member &t, const PetscScalar (&a)[N], PetscScalar *out)
{
  TeamSumStoreIn<N>(t, Scratch(t.team_scratch(0), N * t.team_size()), a, out);
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

/* What the three solvers' device work shares: the counts -ksp_view reports and the table of work vectors by the
   solver's own ids, through which GSWorkLoad() and GSWorkStore() move them from and to PETSc vectors */
struct _n_GSWork {
  virtual ~_n_GSWork()                                     = default;
  virtual gpustream::DView<PetscScalar>   Vector(PetscInt) = 0;
  PetscInt                                launches = 0, transfers = 0, copies = 0;
  Kokkos::View<PetscReal, gpustream::Mem> norm; /* GSWorkNorm()'s sum, on the device: a reduction into a host value would
                                                 wait in Kokkos' fence */
};
