/* Times our SpMV kernel (MatMult's, on the device CSR) on the matrices of bench/generators.h, with the default
   launch shape and over vector lengths per row, for the comparison with cuSPARSE (bench/cusparse_spmv.cu, same
   matrices, same run).
     bench_spmv -mats poisson2d:1e7,cube27:100:3 [-reps 50]
   CSV: kernel,matrix,n,nnz,vlen,team,league,us,GBps   (GBps: CSR bytes + x read once + y written, over the time) */
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../src/mat/gpustream/devicemat.hpp"
#include "generators.h"

using namespace gpustream;

template <class F> static double TimeUs(int reps, F f)
{
  std::vector<double> t;
  f();
  Kokkos::fence();
  for (int r = 0; r < reps; r++) {
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds() * 1e6);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
    auto run = [&](const char *kernel) {
      const double us = TimeUs((int)reps, [&] { SpMV<false>(A->csr, A->shape, x, y, y); });
      std::printf("%s,%s,%d,%d,%d,%d,%d,%.2f,%.1f\n", kernel, mats[k], (int)n, (int)A->val.extent(0), A->shape.vlen, A->shape.team, A->shape.league, us, bytes / us * 1e-3);
      std::fflush(stdout);
    };
    run("spmv_default");
    const LaunchShape def = A->shape;
    for (int vlen : OnDevice() ? std::vector<int>{2, 4, 8, 16, 32} : std::vector<int>{}) {
      const int team = 256 / vlen;
      PetscCall(GSDeviceMatSetLaunchShape(A, vlen, team, std::max<PetscInt>(1, std::min<PetscInt>((n + team - 1) / team, MaxTeams(256)))));
      run("spmv_vlen");
    }
    A->shape = def;
    PetscCall(GSDeviceMatDestroy(&A));
    PetscCall(PetscFree(mats[k]));
  }
  PetscCall(PetscFinalize());
  return 0;
}
