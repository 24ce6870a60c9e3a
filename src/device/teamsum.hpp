/* Team loops and reductions: one lane or thread of a team, grid-stride loops over indices, team sums in a fixed
   order (warp shuffles on CUDA), the last team of a kernel and its reads of the other teams' partial sums. */
#pragma once

#include "launch.hpp"

namespace gpustream
{
/* f() on vector lane 0 of this thread (OneLane) or on one thread of the team (OneThread). Kokkos 3's single(PerThread)
   and single(PerTeam) end with a __syncwarp on a mask of the calling thread's lanes, which nvcc turns into a loop
   over the 32 lanes (WARPSYNC.COLLECTIVE) in every warp, once per call: per row in the SpMV kernels, and a large
   share of the stall samples of sgmresf's kernels at small sizes. The kernels here never read what the one lane or
   thread wrote before a team barrier or the end of the kernel, so they need no such sync. */
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
} // namespace gpustream
