/* How team kernels are launched: programmatic dependent launch (sm_90), and with CUDA a launch of our own (TeamLaunch:
   closures as launch arguments, the dependent-launch attribute, on Kokkos 3 the L1/shared-memory carveout); TeamFor()
   is the entry every team kernel goes through. The CUDA-specific launch code of the plugin. */
#pragma once

#include "kokkosbase.hpp"

namespace gpustream
{
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

/* Our own launch on Kokkos 3 with CUDA, and on Kokkos 4, whose team member is built alike, where the build asks for
   it (CMake's GPUSTREAM_OWN_TEAM_LAUNCH, on by default: the dependent launch saves most at small sizes, where a solve
   is bound by launches; docs/design-measurements.md); Kokkos' parallel_for elsewhere */
#if defined(KOKKOS_ENABLE_CUDA) && (KOKKOS_VERSION < 40000 || (KOKKOS_VERSION < 50000 && defined(GPUSTREAM_OWN_TEAM_LAUNCH)))
#  define GS_OWN_TEAM_LAUNCH 1
#endif

#if defined(GS_OWN_TEAM_LAUNCH)
/* Kokkos 3 gives every TeamPolicy kernel cudaFuncCachePreferShared (kokkos#2066; Kokkos 4 leaves the split to the
   driver), which leaves a team kernel's gathers of x little L1: measured slower than the same row loop as a range
   kernel on an H200 (docs/design-measurements.md). TeamLaunch() gives its kernel func, at the first launch of a size, the
   shared memory its resident teams need and L1 the rest (dyn: its dynamic shared memory; shmem: what the carveout was
   computed for). */
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
   stores visible). The launch and the ramp of teams then overlap the last team's finish: measured a little faster
   than triggering as each team starts, or than no dependent launch (docs/design-measurements.md). Set at initialization
   (-gpustream_dependent_launch). */
inline bool &DependentLaunch()
{
  static bool on = false;
  return on;
}

/* Kokkos' team loop (ParallelFor<TeamPolicy, Cuda>::operator(), the same in Kokkos 3 and 4) for level-0 scratch only, after the wait for the
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

/* The launch of a team kernel as Kokkos' own (its shared memory layout), with the carveout above and, where DependentLaunch() is on, the dependent-launch
   attribute; for explicit team sizes and level-0 scratch, all the kernels here use */
template <class F, class Pol> void TeamLaunch(const char *name, const Pol &pol, const F &f)
{
  const int team = pol.team_size(), vlen = pol.impl_vector_length(), league = pol.league_size();
  if (team <= 0 || pol.scratch_size(1, team) > 0) throw std::runtime_error(std::string(name) + ": a team kernel needs an explicit team size and level-0 scratch only");
  if (league <= 0) return;
  const int begin = (int)(sizeof(double) * (team + 2)), size = (int)pol.scratch_size(0, team); /* as Kokkos sizes them */
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
#  if KOKKOS_VERSION < 40000
  TeamCarveout(func, team * vlen, begin + size, shmem);
#  else
  shmem = begin + size; /* Kokkos 4 leaves the split to the driver, as here */
#  endif
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

/* Kokkos::parallel_for on a team policy; TeamLaunch() where GS_OWN_TEAM_LAUNCH */
template <class F, class Pol> void TeamFor(const char *name, const Pol &pol, const F &f)
{
#if defined(GS_OWN_TEAM_LAUNCH)
  TeamLaunch(name, pol, f);
#else
  Kokkos::parallel_for(name, pol, f);
#endif
}
} // namespace gpustream
