/* Times each fused kernel of KSPPIPECGFUSED alone on the 2D 5-point Laplacian, over launch shapes, against a
   Kokkos copy kernel on the same vectors: the numbers behind the default shapes (docs/performance.md).
     bench_kernels [-n rows] [-reps 50]
   CSV: kernel,n,vlen,team,league,us,GBps   (GBps: the bytes the kernel must move, over its time) */
#include <algorithm>
#include <cstdio>
#include <vector>

#include "../src/mat/gpustream/devicemat.hpp"
#include "generators.h"
#include "kokkostiming.hpp"
#include "../src/ksp/pipecgfused/pipecgfusedimpl.h"

using namespace gpustream;

int main(int argc, char **argv)
{
  PetscReal nreal = 1e7;
  PetscInt  reps  = 50;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-n", &nreal, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
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
    PetscCall(GSDeviceMatCreate(n, n, ia.data(), ja.data(), a.data(), PETSC_FALSE, &A));
    PetscCall(PCGFWorkCreate(n, PCGF_PC_NONE, &W));
    for (auto v : {PCGF_X, PCGF_R, PCGF_P, PCGF_W}) PetscCall(PCGFWorkSetVec(W, v, x.data()));
    std::printf("kernel,n,vlen,team,league,us,GBps\n");

    {
      DView<PetscScalar> s = DView<PetscScalar>("s", n), d = DView<PetscScalar>("d", n);
      const double       us = TimeUs(reps, [&] {
        Kokkos::parallel_for(
                  "bench::copy", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { d(i) = s(i); });
      });
      std::printf("kokkos_copy,%d,1,-,-,%.2f,%.1f\n", (int)n, us, 2 * vecb / us * 1e-3);
    }
    const int sms = MaxTeams(256) / 8; /* multiprocessors, at 2048 threads each */
    for (int team : OnDevice() ? std::vector<int>{128, 256, 512, 1024} : std::vector<int>{})
      for (int per : {1, 2, 4, 8, 16, 0}) {
        const int league = per ? std::max(1, sms * per * 256 / team) : (int)((n + team - 1) / team);
        PetscCall(PCGFWorkSetLaunchShape(W, team, league));
        const double us = TimeUs(reps, [&] { PCGFUpdate(W, 0.0, 0.0, KSP_NORM_UNPRECONDITIONED); });
        std::printf("update,%d,1,%d,%d,%.2f,%.1f\n", (int)n, team, league, us, 7 * vecb / us * 1e-3);
      }
    for (int vlen : OnDevice() ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{})
      for (int threads : {128, 256, 512})
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
    PetscCall(PCGFWorkCreate(n, PCGF_PC_NONE, &W));
    for (auto v : {PCGF_X, PCGF_R, PCGF_P, PCGF_W}) PetscCall(PCGFWorkSetVec(W, v, x.data()));
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
