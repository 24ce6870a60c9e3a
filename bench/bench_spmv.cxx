/* Times our SpMV kernel (MatMult's, on the device CSR) on the matrices of bench/generators.h, with the default
   choice, then direct (no tiles) over vector lengths per row and by tiles of 256 to 2048 entries with a
   thread and a warp per row, for the comparison with cuSPARSE (bench/cusparse_spmv.cu, same matrices, same run).
     bench_spmv -mats poisson2d:1e7,cube27:100:3 [-reps 50]
   Matrices of full D x D blocks (cube27:E:D) then run with block column indices (spmv_block_*).
   CSV: kernel,matrix,n,nnz,vlen,team,league,us,GBps   (GBps: the storage's bytes + x read once + y written, over the
   time; tiled kernels: team = entries a tile stages, league = tiles) */
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "devicemat.hpp"
#include "kokkostiming.hpp"
#include "generators.h"

using namespace gpustream;

int main(int argc, char **argv)
{
  char    *mats[32];
  PetscInt nmats = 32, reps = 50;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(GSKokkosInitialize());
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
  PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-mats", mats, &nmats, nullptr));
  std::printf("kernel,matrix,n,nnz,vlen,team,league,us,GBps\n");
  for (PetscInt k = 0; k < nmats; k++) {
    benchgen::CSR<PetscInt, PetscScalar> h;
    PetscCallCXX(h = benchgen::FromSpec<PetscInt, PetscScalar>(mats[k]));
    const PetscInt n     = h.m;
    double         bytes = 12.0 * h.nnz() + 4.0 * (n + 1) + 16.0 * n;
    const int      bs    = benchgen::BlockSize(mats[k]);
    GSDeviceMat    A, Ablk = nullptr;
    PetscCall(GSDeviceMatCreate(n, n, h.ia.data(), h.ja.data(), h.a.data(), PETSC_FALSE, 1, -1, &A));
    if (bs > 1 && GSBlockPatternRow(n, n, h.ia.data(), h.ja.data(), bs) < 0) PetscCall(GSDeviceMatCreate(n, n, h.ia.data(), h.ja.data(), h.a.data(), PETSC_FALSE, bs, -1, &Ablk));
    h = {}; /* the host copy is no longer needed: large matrices need the memory */
    DView<PetscScalar> x("x", n), y("y", n);
    Kokkos::deep_copy(x, 1.0);
    auto time = [&](const std::string &kernel, const std::function<void()> &f = {}) {
      PetscInt     cap, ntiles;
      const double us = TimeUs((int)reps, f ? f : [&] { SpMV<false>(A->csr, A->shape, x, y, y); });
      PetscCallAbort(PETSC_COMM_SELF, GSDeviceMatGetTileSize(A, &cap, &ntiles));
      std::printf("%s,%s,%d,%d,%d,%d,%d,%.2f,%.1f\n", kernel.c_str(), mats[k], (int)n, (int)A->val.extent(0), A->shape.vlen, cap ? (int)cap : A->shape.team, cap ? (int)ntiles : A->shape.league, us, bytes / us * 1e-3);
      std::fflush(stdout);
    };
    time("spmv_default");
    const LaunchShape def = A->shape;
    PetscCall(GSDeviceMatSetTileSize(A, 0));
    for (int vlen : OnDevice() ? std::vector<int>{1, 4, 32} : std::vector<int>{1}) {
      const int team = TeamThreads() / vlen;
      PetscCall(GSDeviceMatSetLaunchShape(A, vlen, team, std::max<PetscInt>(1, std::min<PetscInt>((n + team - 1) / team, MaxTeams(256)))));
      time("spmv_vlen");
    }
    for (GSSpMVKernel kern : {GS_KERNEL_THREAD, GS_KERNEL_WARP}) {
      if (!OnDevice() && kern == GS_KERNEL_WARP) continue;
      PetscCall(GSDeviceMatSetKernel(A, kern));
      for (int cap : {256, 512, 1024, 2048}) {
        PetscCall(GSDeviceMatSetTileSize(A, cap));
        time("spmv_tiled_" + std::to_string(cap));
      }
      /* launch bounds (teams per multiprocessor B) and entries loaded per thread before storing (E); the default is
         B = TileTeamsPerSM, E = TileEPT */
      for (int cap : {1024, 1536, 2048}) {
        PetscCall(GSDeviceMatSetTileSize(A, cap));
        const std::string c     = "_" + std::to_string(cap);
        auto              tiled = [&](const std::string &name, auto b, auto e) {
          constexpr int B = decltype(b)::value, E = decltype(e)::value;
          time(name + c, [&] { TiledSpMV<false, B, B, E>(Exec(), A->csr, A->shape, 0, x, y, y); });
        };
        using C4 = std::integral_constant<int, 4>;
        tiled("spmv_tiled_b5e4", std::integral_constant<int, 5>(), C4());
        tiled("spmv_tiled_b6e4", std::integral_constant<int, 6>(), C4());
        tiled("spmv_tiled_b4e8", C4(), std::integral_constant<int, 8>());
        tiled("spmv_tiled_b4e4", C4(), C4());
        tiled("spmv_tiled_b8e4", std::integral_constant<int, 8>(), C4());
        tiled("spmv_tiled_b3e4", std::integral_constant<int, 3>(), C4());
        tiled("spmv_tiled_b4e2", C4(), std::integral_constant<int, 2>());
      }
    }
    PetscCall(GSDeviceMatSetLaunchShape(A, def.vlen, def.team, def.league));
    PetscCall(GSDeviceMatDestroy(&A));
    if (Ablk) { /* block column indices: the same kernels on fewer bytes */
      std::swap(A, Ablk);
      bytes = 8.0 * A->val.extent(0) + 4.0 * A->colidx.extent(0) + 4.0 * A->rowptr.extent(0) + 16.0 * n;
      time("spmv_block_default");
      for (int vlen : OnDevice() ? std::vector<int>{1, 4, 8, 16, 32} : std::vector<int>{1}) {
        const int team = TeamThreads() / vlen;
        PetscCall(GSDeviceMatSetLaunchShape(A, vlen, team, std::max<PetscInt>(1, std::min<PetscInt>((n + team - 1) / team, MaxTeams(256)))));
        time("spmv_block_vlen");
      }
      PetscCall(GSDeviceMatDestroy(&A));
    }
    PetscCall(PetscFree(mats[k]));
  }
  PetscCall(PetscFinalize());
  return 0;
}
