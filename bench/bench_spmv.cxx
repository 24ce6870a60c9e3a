/* Times our SpMV kernel (MatMult's, on the device CSR) on the matrices of bench/generators.h, with the default
   launch shape and over vector lengths per row, for the comparison with cuSPARSE (bench/cusparse_spmv.cu, same
   matrices, same run).
     bench_spmv -mats poisson2d:1e7,cube27:100:3 [-reps 50]
   CSV: kernel,matrix,n,nnz,vlen,team,league,us,GBps   (GBps: CSR bytes + x read once + y written, over the time) */
#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "../src/mat/gpustream/devicemat.hpp"
#include "kokkostiming.hpp"
#include "generators.h"

using namespace gpustream;

/* Candidates for the fused kernels: pipecgfused's SpMVDot (w = A p, per-team partial sums of <p,w> and <w,w>) with
   teams of 256 threads under launch bounds that ask the compiler for MinBlocks resident teams per multiprocessor
   (MinBlocks 0: no bounds, as the library launches it now) */
template <int MinBlocks> using BoundedPol = typename std::conditional<MinBlocks == 0, TeamPol, Kokkos::TeamPolicy<Exec, LightWeight, Kokkos::LaunchBounds<256, MinBlocks>>>::type;

template <int MinBlocks> static void SpMVDotBounded(const CSR &A, const LaunchShape &s, const DView<PetscScalar> &p, const DView<PetscScalar> &w, const DView<PetscScalar> &partials)
{
  PetscScalar *const out = partials.data();
  Kokkos::parallel_for(
      "bench::SpMVDotBounded", BoundedPol<MinBlocks>(s.league, s.team, s.vlen).set_scratch_size(0, Kokkos::PerTeam(2 * s.team * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2] = {0, 0};
        ForEachRowProduct(t, A, p, [&](const PetscInt row, const PetscScalar wi) {
          Kokkos::single(Kokkos::PerThread(t), [&]() { w(row) = wi; });
          acc[0] += p(row) * wi;
          acc[1] += wi * wi;
        });
        TeamSumStore<2>(t, acc, out);
      });
}

template <int MinBlocks> static void SpMVBounded(const CSR &A, const LaunchShape &s, const DView<PetscScalar> &x, const DView<PetscScalar> &y)
{
  Kokkos::parallel_for(
      "bench::SpMVBounded", BoundedPol<MinBlocks>(s.league, s.team, s.vlen),
      KOKKOS_LAMBDA(const Member &t) { ForEachRowProduct(t, A, x, [&](const PetscInt row, const PetscScalar sum) { Kokkos::single(Kokkos::PerThread(t), [&]() { y(row) = sum; }); }); });
}

int main(int argc, char **argv)
{
  char    *mats[32];
  PetscInt nmats = 32, reps = 50;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
  PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-mats", mats, &nmats, nullptr));
  std::printf("kernel,matrix,n,nnz,vlen,team,league,us,GBps\n");
  for (PetscInt k = 0; k < nmats; k++) {
    benchgen::CSR<PetscInt, PetscScalar> h;
    PetscCallCXX(h = benchgen::FromSpec<PetscInt, PetscScalar>(mats[k]));
    const PetscInt n     = h.m;
    const double   bytes = 12.0 * h.nnz() + 4.0 * (n + 1) + 16.0 * n;
    GSDeviceMat    A;
    PetscCall(GSDeviceMatCreate(n, n, h.ia.data(), h.ja.data(), h.a.data(), PETSC_FALSE, &A));
    h = {}; /* the host copy is no longer needed: large matrices need the memory */
    DView<PetscScalar> x("x", n), y("y", n);
    Kokkos::deep_copy(x, 1.0);
    auto time = [&](const char *kernel, auto f) {
      const double us = TimeUs((int)reps, f);
      std::printf("%s,%s,%d,%d,%d,%d,%d,%.2f,%.1f\n", kernel, mats[k], (int)n, (int)A->val.extent(0), A->shape.vlen, A->shape.team, A->shape.league, us, bytes / us * 1e-3);
      std::fflush(stdout);
    };
    auto run = [&](const char *kernel) { time(kernel, [&] { SpMV<false>(A->csr, A->shape, x, y, y); }); };
    run("spmv_default");
    const LaunchShape def = A->shape;
    for (int vlen : OnDevice() ? std::vector<int>{1, 2, 4, 8, 16, 32} : std::vector<int>{}) {
      const int team = 256 / vlen;
      PetscCall(GSDeviceMatSetLaunchShape(A, vlen, team, std::max<PetscInt>(1, std::min<PetscInt>((n + team - 1) / team, MaxTeams(256)))));
      run("spmv_vlen");
    }
    if (OnDevice()) { /* teams per multiprocessor-equivalent: 8 (the default cap), 6, 4, 16, and no cap */
      for (int per : {8, 6, 4, 16, 0}) {
        PetscCall(GSDeviceMatSetLaunchShape(A, 32, 8, per ? per * MaxTeams(256) / 8 : (n + 7) / 8));
        time(("spmv_warp_" + std::to_string(per)).c_str(), [&] { SpMV<false>(A->csr, A->shape, x, y, y); });
      }
      /* launch bounds, on the default lanes per row, with the default team cap and with a team per 256 threads' rows */
      const int          vl = def.vlen == 1 ? 1 : 32, tm = 256 / vl;
      DView<PetscScalar> partials("partials", 2 * ((n + tm - 1) / tm + 1));
      for (int per : {8, 0}) {
        PetscCall(GSDeviceMatSetLaunchShape(A, vl, tm, per ? MaxTeams(256) : (n + tm - 1) / tm));
        const std::string tag = per ? "_cap" : "_full";
        time(("spmvdot_lb0" + tag).c_str(), [&] { SpMVDotBounded<0>(A->csr, A->shape, x, y, partials); });
        time(("spmvdot_lb4" + tag).c_str(), [&] { SpMVDotBounded<4>(A->csr, A->shape, x, y, partials); });
        time(("spmvdot_lb6" + tag).c_str(), [&] { SpMVDotBounded<6>(A->csr, A->shape, x, y, partials); });
        time(("spmvdot_lb8" + tag).c_str(), [&] { SpMVDotBounded<8>(A->csr, A->shape, x, y, partials); });
        time(("spmv_lb0" + tag).c_str(), [&] { SpMVBounded<0>(A->csr, A->shape, x, y); });
        time(("spmv_lb8" + tag).c_str(), [&] { SpMVBounded<8>(A->csr, A->shape, x, y); });
      }
    }
    PetscCall(GSDeviceMatSetLaunchShape(A, def.vlen, def.team, def.league));
    PetscCall(GSDeviceMatDestroy(&A));
    PetscCall(PetscFree(mats[k]));
  }
  PetscCall(PetscFinalize());
  return 0;
}
