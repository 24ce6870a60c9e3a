/* Times each fused kernel of KSPPIPECGFUSED alone on the 2D 5-point Laplacian, over launch shapes, against a
   Kokkos copy kernel on the same vectors: the numbers behind the default shapes (docs/design-measurements.md).
     bench_kernels [-n rows] [-reps 50] [-variants]
   -variants: the fused SpMV-and-sums stage written several ways (what its kernel choice rests on)
   CSV: kernel,n,vlen,team,league,us,GBps   (GBps: the bytes the kernel must move, over its time) */
#include <algorithm>
#include <cstdio>
#include <vector>

#include "devicemat.hpp"
#include "generators.h"
#include "kokkostiming.hpp"
#include "../src/ksp/pipecgfused/pipecgfusedimpl.h"

using namespace gpustream;

namespace
{
/* w = A p with <p,w> and <w,w>, one row per thread: as a team kernel (partials per team, Final: the last team to finish
   sums them on the device), without the sums, and as a RangePolicy parallel_reduce */
template <class Pol, bool Sums, bool Final> static void SpMVDotRows(const CSR &A, const DView<PetscScalar> &p, const DView<PetscScalar> &w, const DView<PetscScalar> &part, const DView<unsigned> &count, const DView<PetscScalar> &res, int team)
{
  const int league = (int)((A.m + team - 1) / team);
  Kokkos::parallel_for(
      "bench::SpMVDotRows", Pol(league, team).set_scratch_size(0, Kokkos::PerTeam(2 * team * sizeof(PetscScalar))), KOKKOS_LAMBDA(const typename Pol::member_type &t) {
        const PetscInt row    = (PetscInt)t.league_rank() * t.team_size() + t.team_rank();
        PetscScalar    acc[2] = {0, 0};
        if (row < A.m) {
          const PetscScalar wi = RowSum<false>(A, p, row);
          w(row)               = wi;
          acc[0]               = p(row) * wi;
          acc[1]               = wi * wi;
        }
        if (!Sums) return;
        const Scratch s(t.team_scratch(0), 2 * t.team_size());
        TeamSumStoreIn<2>(t, s, acc, part.data());
        if (!Final) return;
        if (!LastTeam(t, &count(0))) return;
        PetscScalar                 tot[2] = {0, 0};
        const volatile PetscScalar *v      = part.data();
        for (int i = t.team_rank(); i < t.league_size(); i += t.team_size()) {
          tot[0] += v[i];
          tot[1] += v[t.league_size() + i];
        }
        TeamSumAllIn<2>(t, s, tot);
        if (t.team_rank() == 0) {
          res(0)   = tot[0];
          res(1)   = tot[1];
          count(0) = 0;
        }
      });
}

/* The same with `scr` scalars of team scratch (0: none requested), rows in a grid-stride loop over `league` teams:
   Kokkos sizes the multiprocessor's shared-memory carveout, and so what is left of its L1 cache for the gathers of x,
   from the scratch a kernel asks for */
template <bool Sums> static void SpMVDotScratch(const CSR &A, const DView<PetscScalar> &p, const DView<PetscScalar> &w, const DView<PetscScalar> &part, int team, int league, int scr)
{
  auto pol = Kokkos::TeamPolicy<Exec, LightWeight>(league, team);
  if (scr) pol.set_scratch_size(0, Kokkos::PerTeam(scr * sizeof(PetscScalar)));
  Kokkos::parallel_for(
      "bench::SpMVDotScratch", pol, KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2] = {0, 0};
        for (PetscInt row = (PetscInt)t.league_rank() * t.team_size() + t.team_rank(); row < A.m; row += (PetscInt)t.league_size() * t.team_size()) {
          const PetscScalar wi = RowSum<false>(A, p, row);
          w(row)               = wi;
          acc[0] += p(row) * wi;
          acc[1] += wi * wi;
        }
        if (Sums) TeamSumStoreIn<2>(t, Scratch(t.team_scratch(0), scr), acc, part.data());
      });
}

struct Sum2 {
  PetscScalar            v[2];
  KOKKOS_INLINE_FUNCTION Sum2()
  {
    v[0] = v[1] = 0;
  }
  KOKKOS_INLINE_FUNCTION Sum2 &operator+=(const Sum2 &o)
  {
    v[0] += o.v[0];
    v[1] += o.v[1];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sum2 &o) volatile /* Kokkos 3's volatile joins */
  {
    v[0] = v[0] + o.v[0]; /* not +=: C++20 deprecates compound assignment to volatile */
    v[1] = v[1] + o.v[1];
  }
#endif
};
} // namespace
namespace Kokkos
{
template <> struct reduction_identity<Sum2> {
  KOKKOS_FORCEINLINE_FUNCTION static Sum2 sum()
  {
    return Sum2();
  }
};
} // namespace Kokkos
namespace
{

static void Variants(const CSR &A, PetscInt n, double bytes, int reps)
{
  DView<PetscScalar> p("p", n), w("w", n), part("part", 2 * n + 2), res("res", 2);
  DView<unsigned>    count("count", 1);
  Kokkos::deep_copy(p, 1.0);
  using TP  = Kokkos::TeamPolicy<Exec>;
  using TPL = Kokkos::TeamPolicy<Exec, LightWeight>;
  using TPB = Kokkos::TeamPolicy<Exec, LightWeight, Kokkos::LaunchBounds<256, 4>>;
  auto put  = [&](const char *name, int team, double us) { std::printf("variant_%s,%d,1,%d,%d,%.2f,%.1f\n", name, (int)n, team, team ? (int)((n + team - 1) / team) : 0, us, bytes / us * 1e-3); };
  for (int team : OnDevice() ? std::vector<int>{128, 256, 512} : std::vector<int>{1}) {
    put("rows_nosums", team, TimeUs(reps, [&] { SpMVDotRows<TPL, false, false>(A, p, w, part, count, res, team); }));
    put("rows_partials", team, TimeUs(reps, [&] { SpMVDotRows<TPL, true, false>(A, p, w, part, count, res, team); }));
    put("rows_final", team, TimeUs(reps, [&] { SpMVDotRows<TPL, true, true>(A, p, w, part, count, res, team); }));
    put("rows_final_heavy", team, TimeUs(reps, [&] { SpMVDotRows<TP, true, true>(A, p, w, part, count, res, team); }));
  }
  if (OnDevice())
    for (int league : {(int)((n + 255) / 256), MaxTeams(256)}) {
      char name[64];
      for (int scr : {0, 16, 512, 1024, 3584}) {
        std::snprintf(name, sizeof(name), "scratch%d_nosums_league%d", scr, league);
        put(name, 256, TimeUs(reps, [&] { SpMVDotScratch<false>(A, p, w, part, 256, league, scr); }));
        if (scr >= 16) {
          std::snprintf(name, sizeof(name), "scratch%d_sums_league%d", scr, league);
          put(name, 256, TimeUs(reps, [&] { SpMVDotScratch<true>(A, p, w, part, 256, league, scr); }));
        }
      }
    }
  if (OnDevice()) put("rows_final_bounds", 256, TimeUs(reps, [&] { SpMVDotRows<TPB, true, true>(A, p, w, part, count, res, 256); }));
  Kokkos::View<Sum2, Mem> r2("r2");
  put("range_reduce", 0, TimeUs(reps, [&] {
        Kokkos::parallel_reduce(
            "bench::SpMVDotReduce", RangePol(0, n),
            KOKKOS_LAMBDA(const PetscInt row, Sum2 &s) {
              const PetscScalar wi = RowSum<false>(A, p, row);
              w(row)               = wi;
              s.v[0] += p(row) * wi;
              s.v[1] += wi * wi;
            },
            Kokkos::Sum<Sum2, Mem>(r2));
      }));
  /* check: the final sums against a host sum of w */
  SpMVDotRows<TPL, true, true>(A, p, w, part, count, res, TeamThreads());
  auto   hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  auto   hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), res);
  double s0 = 0, s1 = 0;
  for (PetscInt i = 0; i < n; i++) s0 += hw(i), s1 += hw(i) * hw(i);
  std::printf("# rows_final check: %g %g against %g %g\n", hr(0), hr(1), s0, s1);
}
} // namespace

int main(int argc, char **argv)
{
  PetscReal nreal = 1e7;
  PetscInt  reps  = 50;
  PetscBool variants;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(GSKokkosInitialize());
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-n", &nreal, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
  PetscCall(PetscOptionsHasName(nullptr, nullptr, "-variants", &variants));
  {
    const auto                      h  = benchgen::Poisson2D<PetscInt, PetscScalar>(nreal);
    const PetscInt                  n  = h.m;
    const std::vector<PetscInt>    &ia = h.ia, &ja = h.ja;
    const std::vector<PetscScalar> &a = h.a;
    std::vector<PetscScalar>        x(n, 1.0);
    const double                    nnz = (double)ja.size(), vecb = 8.0 * n;
    GSDeviceMat                     A;
    PCGFWork                        W;
    PetscScalar                     sums[PCGF_NSUMS];
    PetscCall(GSDeviceMatCreate(n, n, ia.data(), ja.data(), a.data(), PETSC_FALSE, 1, -1, &A));
    PetscCall(PCGFWorkCreate(n, GS_PC_NONE, &W));
    for (auto v : {PCGF_X, PCGF_R, PCGF_P, PCGF_W}) PetscCall(GSWorkSetVec(PCGFWorkBase(W), v, x.data()));
    std::printf("kernel,n,vlen,team,league,us,GBps\n");
    if (variants) {
      Variants(A->csr, n, 12 * nnz + 4.0 * (n + 1) + 2 * vecb, (int)reps);
    }

    {
      DView<PetscScalar> s = DView<PetscScalar>("s", n), d = DView<PetscScalar>("d", n);
      const double       us = TimeUs(reps, [&] {
        Kokkos::parallel_for(
                  "bench::copy", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { d(i) = s(i); });
      });
      std::printf("kokkos_copy,%d,1,-,-,%.2f,%.1f\n", (int)n, us, 2 * vecb / us * 1e-3);
    }
    const int sms = MaxTeams(256) / 8;                                            /* multiprocessors, at 2048 threads each */
    for (int team : OnDevice() ? std::vector<int>{128, 256} : std::vector<int>{}) /* the fused kernels' launch bound is 256 */
      for (int per : {1, 2, 4, 8, 16, 0}) {
        const int league = per ? std::max(1, sms * per * 256 / team) : (int)((n + team - 1) / team);
        PetscCall(PCGFWorkSetLaunchShape(W, team, league));
        const double us = TimeUs(reps, [&] { PCGFUpdate(W, 0.0, 0.0, KSP_NORM_UNPRECONDITIONED); });
        std::printf("update,%d,1,%d,%d,%.2f,%.1f\n", (int)n, team, league, us, 7 * vecb / us * 1e-3);
      }
    for (int vlen : OnDevice() ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{})
      for (int threads : {128, 256})
        for (int per : {1, 2, 4, 8, 16, 0}) {
          const int team = threads / vlen, league = per ? std::max(1, sms * per * 256 / threads) : (int)((n + team - 1) / team);
          PetscCall(GSDeviceMatSetLaunchShape(A, vlen, team, league));
          const double us = TimeUs(reps, [&] { PCGFSpMVDot(W, A, nullptr, nullptr); });
          std::printf("spmvdot,%d,%d,%d,%d,%.2f,%.1f\n", (int)n, vlen, team, league, us, (12 * nnz + 4.0 * (n + 1) + 2 * vecb) / us * 1e-3);
          PetscCall(PCGFReduce(W, sums));
        }
    /* the plain SpMV with the default shape (MatMult's kernel), to set next to cuSPARSE's */
    {
      DView<PetscScalar> xv("x", n), yv("y", n);
      Kokkos::deep_copy(xv, 1.0);
      const LaunchShape d = SpMVShape(n, (PetscInt)nnz);
      PetscCall(GSDeviceMatSetLaunchShape(A, d.vlen, d.team, d.league));
      const double us = TimeUs(reps, [&] { SpMV<false>(A->csr, A->shape, xv, yv, yv); });
      std::printf("spmv_default,%d,%d,%d,%d,%.2f,%.1f\n", (int)n, A->shape.vlen, A->shape.team, A->shape.league, us, (12 * nnz + 4.0 * (n + 1) + 2 * vecb) / us * 1e-3);
    }
    /* the defaults, one whole iteration */
    PetscCall(PCGFWorkDestroy(&W));
    PetscCall(PCGFWorkCreate(n, GS_PC_NONE, &W));
    for (auto v : {PCGF_X, PCGF_R, PCGF_P, PCGF_W}) PetscCall(GSWorkSetVec(PCGFWorkBase(W), v, x.data()));
    {
      const LaunchShape d = SpMVShape(n, (PetscInt)nnz);
      PetscCall(GSDeviceMatSetLaunchShape(A, d.vlen, d.team, d.league));
    }
    std::printf("# default SpMV shape: vlen %d team %d league %d\n", A->shape.vlen, A->shape.team, A->shape.league);
    {
      const double us = TimeUs(reps, [&] {
        PCGFUpdate(W, 0.0, 0.0, KSP_NORM_UNPRECONDITIONED);
        PCGFSpMVDot(W, A, nullptr, nullptr);
        PCGFReduce(W, sums);
      });
      std::printf("iteration_defaults,%d,-,-,-,%.2f,%.1f\n", (int)n, us, (12 * nnz + 4.0 * (n + 1) + 9 * vecb) / us * 1e-3);
    }
    PetscCall(PCGFWorkDestroy(&W));
    PetscCall(GSDeviceMatDestroy(&A));
  }
  PetscCall(PetscFinalize());
  return 0;
}
