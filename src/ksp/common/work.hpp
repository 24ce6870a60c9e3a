/* The device work of the three fused solvers (work.h): the base every solver's work derives from, the device
   scalars of the solvers that run ahead of the host, and the dispatch of their kernels on the preconditioner and the
   norm type. Never included from C. */
#pragma once

#include "kokkosimpl.hpp"
#include "work.h"

#include <limits>
#include <type_traits>

/* What the three solvers' device work shares: the local size, the preconditioner as the kernels see it with D^{-1}
   (Jacobi's inverse diagonal, or point-block Jacobi's n / bs inverse blocks, row-major), the launch shape of the
   vector kernels, the partial sums of the reductions and their host copy, the counts -ksp_view reports, and the table
   of work vectors by the solver's own ids, through which GSWorkSetVec(), GSWorkLoad() and the others reach them */
struct _n_GSWork {
  virtual ~_n_GSWork()                                   = default;
  virtual gpustream::DView<PetscScalar> Vector(PetscInt) = 0;
  /* whether the solver has a work vector v */
  virtual bool Has(PetscInt v) const
  {
    return v >= 0;
  }

  std::string                                         name; /* of the solver, the prefix of the views' labels */
  PetscInt                                            n  = 0;
  GSKSPPC                                             pc = GS_PC_NONE;
  gpustream::DView<PetscScalar>                       dinv;
  int                                                 bs = 1, maxbs = 1; /* point-block Jacobi's block size, and the largest the kernels take */
  int                                                 tu = 1, lu = 1;    /* threads per team and teams of the vector kernels */
  gpustream::DView<PetscScalar>                       partials;          /* one partial sum per team and sum */
  Kokkos::View<PetscScalar *, gpustream::PinnedSpace> hpartials;
  PetscInt                                            launches = 0, transfers = 0, copies = 0;
  gpustream::DView<PetscScalar>                       npartials; /* GSWorkNorm()'s partial sums, one per team, and their host copy */
  Kokkos::View<PetscScalar *, gpustream::PinnedSpace> hnpartials;

  /* The solver's name, n rows and the preconditioner pc, whose blocks may have up to maxbs rows; the vector kernels in
     teams of TeamThreads() threads, one team per such number of rows and at most teams */
  void Init(const char *solver, PetscInt rows, GSKSPPC kind, int maxblock, int teams)
  {
    name             = solver;
    n                = rows;
    pc               = kind;
    maxbs            = maxblock;
    tu               = gpustream::TeamThreads();
    const PetscInt t = (n + tu - 1) / tu;
    lu               = (int)PetscMax(1, PetscMin(t, (PetscInt)teams));
  }

  /* A label of the solver's views: "PipeCGFused::x" */
  std::string Label(const char *what) const
  {
    return name + "::" + what;
  }

  /* Point-block Jacobi's inverse blocks of size b, made ahead (KSPSetUp()) */
  void ReserveBlocks(PetscInt b)
  {
    if (pc == GS_PC_PBJACOBI && dinv.extent(0) != (size_t)(n * b)) dinv = gpustream::DView<PetscScalar>(Label("dinvblocks"), n * b);
  }

  /* The policy of the fused vector kernels, with scratch for the team sums of nsums per-thread values, on teams teams
     (0: lu) */
  gpustream::FusedPol FusedPolicy(int nsums, int teams = 0) const
  {
    return gpustream::FusedPol(teams ? teams : lu, tu).set_scratch_size(0, Kokkos::PerTeam((size_t)nsums * tu * sizeof(PetscScalar)));
  }
};

/* A new work of type T (derived from _n_GSWork), constructed from args once Kokkos is initialized: its constructor makes
   the views, which a failed allocation frees again */
template <class T, class... Args> PetscErrorCode GSWorkNew(T **work, Args... args)
{
  PetscFunctionBegin;
  PetscCall(GSKokkosInitialize());
  GSCallKokkos(*work = new T(args...));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Deletes a solver's work, its views with it */
template <class W> PetscErrorCode GSWorkDelete(W **work)
{
  PetscFunctionBegin;
  if (!*work) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(delete *work);
  *work = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Defines the C functions every solver's work type T (a pointer to a type derived from _n_GSWork) has: Base(), its
   base for GSWorkSetVec() and the others, and Destroy() */
#define GS_WORK_INTERFACE(T, Base, Destroy)                                                                                                                                                                                                              \
  GSWork Base(T w)                                                                                                                                                                                                                                       \
  {                                                                                                                                                                                                                                                      \
    return w;                                                                                                                                                                                                                                            \
  }                                                                                                                                                                                                                                                      \
  PetscErrorCode Destroy(T *w)                                                                                                                                                                                                                           \
  {                                                                                                                                                                                                                                                      \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(GSWorkDelete(w));                                                                                                                                                                                                                          \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }

/* One launch of the work's kernels: kernel() (Kokkos calls) inside the log event ev, counted, with its flops */
template <class K> PetscErrorCode GSWorkLaunch(_n_GSWork *W, PetscLogEvent ev, PetscLogDouble flops, const K &kernel)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(ev, 0, 0, 0, 0));
  GSCallKokkos(kernel());
  W->launches++;
  PetscCall(PetscLogFlops(flops));
  PetscCall(PetscLogEventEnd(ev, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace gpustream
{
/* Device scalars (one process, the host one iteration behind): the scalars a final kernel's last team computes for
   the next kernels (scal), the count of its teams done, the finished sums of the last two iterations in pinned host
   memory (nsums a slot), and the events after which the host reads a slot */
struct DeviceScalars {
  DView<PetscScalar>                       scal;
  DView<unsigned>                          done;
  Kokkos::View<PetscScalar *, PinnedSpace> hsums;
  SlotEvents                               ready;

  /* made once: nscal scalars, two slots of nsums sums */
  void Ensure(const _n_GSWork &W, int nscal, int nsums)
  {
    if (scal.data()) return;
    scal  = DView<PetscScalar>(W.Label("scal"), nscal);
    done  = DView<unsigned>(W.Label("done"), 1);
    hsums = Kokkos::View<PetscScalar *, PinnedSpace>(W.Label("hsums"), 2 * nsums);
  }

  /* The nsums sums of slot 0 or 1 of the work W, once the kernel that wrote them has finished (later kernels may
     still run), inside the log event ev; a transfer of W's */
  PetscErrorCode Read(_n_GSWork *W, PetscLogEvent ev, PetscInt slot, int nsums, PetscScalar sums[])
  {
    PetscFunctionBegin;
    PetscCall(PetscLogEventBegin(ev, 0, 0, 0, 0));
    PetscCall(ready.Wait(slot));
    for (int k = 0; k < nsums; k++) sums[k] = hsums(nsums * slot + k);
    W->transfers++;
    PetscCall(PetscLogEventEnd(ev, 0, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};

/* f(std::integral_constant<GSKSPPC, pc>()) for the preconditioners PCs the kernels are compiled for; any other
   (never met where the caller names them all) as GS_PC_NONE */
template <GSKSPPC... PCs, class F> void ByPC(GSKSPPC pc, const F &f)
{
  bool found = false;
  ((!found && pc == PCs ? (f(std::integral_constant<GSKSPPC, PCs>()), found = true) : false), ...);
  if (!found) f(std::integral_constant<GSKSPPC, GS_PC_NONE>());
}

/* f(std::integral_constant<KSPNormType, norm>()) for the norm a kernel sums besides <r,z>: the preconditioned or the
   unpreconditioned residual's, or none (the natural norm comes from <r,z>) */
template <class F> void ByNorm(KSPNormType normtype, const F &f)
{
  switch (normtype) {
  case KSP_NORM_PRECONDITIONED:
    f(std::integral_constant<KSPNormType, KSP_NORM_PRECONDITIONED>());
    break;
  case KSP_NORM_UNPRECONDITIONED:
    f(std::integral_constant<KSPNormType, KSP_NORM_UNPRECONDITIONED>());
    break;
  default:
    f(std::integral_constant<KSPNormType, KSP_NORM_NONE>());
  }
}

/* s += the square the norm Norm sums of an entry with residual r and preconditioned residual z */
template <KSPNormType Norm> KOKKOS_FORCEINLINE_FUNCTION void NormAdd(PetscScalar &s, const PetscScalar r, const PetscScalar z)
{
  if (Norm == KSP_NORM_PRECONDITIONED) s += z * z;
  if (Norm == KSP_NORM_UNPRECONDITIONED) s += r * r;
}

/* A vector kernel of the fused solvers on n units (entries, or blocks of rows): every thread adds the N sums of the
   units ForEachIndex() gives it with sums(u, acc), and each team stores its partial of each sum at out
   (TeamSumStore()) */
template <int N, class S> void IndexSums(const _n_GSWork &W, const char *name, PetscInt n, PetscScalar *out, const S &sums)
{
  TeamFor(
      name, W.FusedPolicy(N), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[N] = {};
        ForEachIndex(t, n, [&](const PetscInt u) { sums(u, acc); });
        TeamSumStore<N>(t, acc, out);
      });
}

/* Calls f(i, (D y)_i) for the bs rows i of block b, D the inverse diagonal blocks d of point-block Jacobi (d(i bs + k):
   row i of its block, column k) */
template <class Y, class F> KOKKOS_INLINE_FUNCTION void BlockApply(const DView<PetscScalar> &d, const int bs, const PetscInt b, const Y &y, const F &f)
{
  const PetscInt o = b * bs;
  for (int i = 0; i < bs; i++) {
    PetscScalar dy = 0;
    for (int k = 0; k < bs; k++) dy += d((o + i) * bs + k) * y(o + k);
    f(o + i, dy);
  }
}

/* The sums[k] of nsums sums, each over L teams' partials p[k * L + l] in team order */
inline void SumPartials(const PetscScalar *p, int nsums, int L, PetscScalar sums[])
{
  for (int k = 0; k < nsums; k++) {
    sums[k] = 0;
    for (int i = 0; i < L; i++) sums[k] += p[(size_t)k * L + i];
  }
}
} // namespace gpustream
