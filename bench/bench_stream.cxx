/* Benchmark of the streaming engine on the cantilever cube (bench/cube.c), one process, in one run:
     - pinned host-to-device bandwidth (one large copy, as the engine's copies are made);
     - MatMult of the gpustream matrix, resident and streamed under the budget (the user's path, host vectors);
     - the engine's streamed SpMV against the number of subdivisions, overlap on and off;
     - the block product with k vectors per pass (device blocks), streamed with overlap on and off, and with the
       whole matrix resident (the compute time alone), next to the transfer time at the measured bandwidth.
   Options: -cube_n <nodes per edge> -dof <1,3,6> -budget <bytes> -subs <list> -ks <list> -reps <5> -buffers <2>
     -more_budgets <list of bytes>: the model's plan under each of these budgets too
     -inplace: the engine streams from the generated arrays, page-locked in place, not from a pinned copy (halves the
       host memory: for matrices near the host's size); -skip_mat: leave out the MatMult part (which copies)
   Times are medians of -reps after one untimed warm-up; every timed call ends with the device idle.
   Prints CSV: bench,dof,cube_n,rows,nnz,csr_bytes,budget,subs,resident_subs,buffers,overlap,k,bytes_copied,ms,GBps
   (GBps: bytes copied per second for streamed runs and pinned copies, CSR bytes per second for resident ones). */
#include <algorithm>
#include <utility>
#include <cstdio>
#include <vector>

#include "kokkosimpl.hpp"
#include "../src/stream/streamimpl.h"
#include "cube.h"
#include "kokkostiming.hpp"

using namespace gpustream;

namespace
{
PetscInt       cube_n = 20, dof = 3, m = 0, nnz = 0;
PetscLogDouble csrbytes = 0, budget = 0;

void Line(const char *bench, PetscLogDouble bud, PetscInt subs, PetscInt res, PetscInt buffers, int overlap, PetscInt k, double bytes, double ms, double gbps)
{
  std::printf("%s,%d,%d,%lld,%lld,%.0f,%.0f,%d,%d,%d,%d,%d,%.0f,%.4f,%.3f\n", bench, (int)dof, (int)cube_n, (long long)m, (long long)nnz, csrbytes, bud, (int)subs, (int)res, (int)buffers, overlap, (int)k, bytes, ms, gbps);
  std::fflush(stdout);
}

/* Parses "-name a,b,c" into v (kept when absent) */
PetscErrorCode GetList(const char *name, std::vector<PetscInt> &v)
{
  PetscInt  a[32], n = 32;
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetIntArray(nullptr, nullptr, name, a, &n, &flg));
  if (flg) v.assign(a, a + n);
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

int main(int argc, char **argv)
{
  PetscInt                    reps = 5, *ia, *ja;
  PetscScalar                *a;
  std::vector<PetscInt>       subs = {2, 4, 8, 16, 32, 64}, ks = {1, 4, 16, 64};
  std::vector<PetscLogDouble> budgets; /* more budgets, each with the model's plan */
  double                      pinned  = 0;
  PetscBool                   inplace = PETSC_FALSE, skipmat = PETSC_FALSE;
  PetscInt                    buffers = 2; /* device buffers of the engine's plans (-mat_gpustream_buffers) */

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(GSKokkosInitialize());
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-cube_n", &cube_n, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-dof", &dof, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
  PetscCall(GetList("-subs", subs));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-inplace", &inplace, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-buffers", &buffers, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-skip_mat", &skipmat, nullptr));
  PetscCall(GetList("-ks", ks));
  m = cube_n * cube_n * cube_n * dof;
  PetscCall(CubeCSR(cube_n, dof, 0, m, &ia, &ja, &a));
  nnz      = ia[m];
  csrbytes = GSStreamCSRBytes(m, nnz);
  budget   = csrbytes / 5;
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-budget", &budget, nullptr));
  {
    PetscReal b[16];
    PetscInt  nb = 16;
    PetscCall(PetscOptionsGetRealArray(nullptr, nullptr, "-more_budgets", b, &nb, nullptr));
    budgets.assign(b, b + nb);
  }
  std::printf("bench,dof,cube_n,rows,nnz,csr_bytes,budget,subs,resident_subs,buffers,overlap,k,bytes_copied,ms,GBps\n");

  { /* pinned host to device: one copy of min(1 GiB, CSR) */
    const size_t                             n = (size_t)std::min(csrbytes, 1073741824.0) / sizeof(PetscScalar);
    Kokkos::View<PetscScalar *, PinnedSpace> h("bench::pinned", n);
    DView<PetscScalar>                       d("bench::device", n);
    const double                             ms = 1e-3 * TimeUs((int)reps, [&]() { Kokkos::deep_copy(d, h); });
    pinned                                      = n * sizeof(PetscScalar) / ms / 1e6;
    Line("pinned_h2d", 0, 0, 0, 0, 0, 0, n * sizeof(PetscScalar), ms, pinned);
  }

  if (!skipmat) { /* MatMult through PETSc: resident (default budget), then streamed under the budget (automatic plan) */
    Mat  A;
    Vec  x, y;
    char b[64];
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, m, ia, ja, a, &A));
    PetscCall(MatSetBlockSize(A, dof));
    PetscCall(MatConvert(A, MATGPUSTREAM, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatCreateVecs(A, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(PetscOptionsSetValue(nullptr, "-mat_gpustream_mode", "resident"));
    PetscCall(MatSetFromOptions(A));
    double ms = 1e-3 * TimeUs((int)reps, [&]() { MatMult(A, x, y); });
    Line("matmult_resident", 0, 1, 1, 0, 1, 1, 0, ms, csrbytes / ms / 1e6);
    PetscCall(PetscSNPrintf(b, sizeof(b), "%g", budget));
    PetscCall(PetscOptionsSetValue(nullptr, "-mat_gpustream_mode", "stream"));
    PetscCall(PetscOptionsSetValue(nullptr, "-mat_gpustream_max_device_bytes", b));
    PetscCall(MatSetFromOptions(A));
    ms = 1e-3 * TimeUs((int)reps, [&]() { MatMult(A, x, y); });
    Line("matmult_stream_auto", budget, 0, 0, 2, 1, 1, 0, ms, csrbytes / ms / 1e6);
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDERR_SELF, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(A, PETSC_VIEWER_STDERR_SELF)); /* the plan, on stderr */
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDERR_SELF));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&A));
  }

  {
    std::vector<PetscScalar> x(m, 1.0), y(m);
    DView<PetscScalar>       X("bench::X", (size_t)m * ks.back()), Y("bench::Y", (size_t)m * ks.back());
    Kokkos::deep_copy(X, 1.0);
    std::vector<std::pair<PetscLogDouble, PetscInt>> plans; /* (budget, subdivisions; 0: the model's choice) */
    for (PetscInt s : subs) plans.push_back({budget, s});
    plans.push_back({budget, 0});
    for (PetscLogDouble b : budgets) plans.push_back({b, 0});
    PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
    for (auto [bud, s] : plans) { /* single-vector streamed SpMV against the number of subdivisions */
      GSStreamOptions o{GS_STREAM_STREAM, bud, buffers, s, PETSC_TRUE, inplace};
      GSStreamPlan    P;
      GSStreamInfo    info;
      if (GSStreamPlanCreate(m, m, ia, ja, a, &o, &P)) { /* too few subdivisions for the budget */
        Line("stream_infeasible", bud, s, 0, buffers, 1, 1, 0, 0, 0);
        continue;
      }
      GSStreamPlanGetInfo(P, &info);
      for (int ov = 1; ov >= 0; ov--) {
        GSStreamPlanSetOverlap(P, (PetscBool)ov);
        const double ms = 1e-3 * TimeUs((int)reps, [&]() { GSStreamPlanMult(P, nullptr, nullptr, x.data(), nullptr, y.data()); });
        Line(s ? "stream_spmv" : "stream_spmv_auto", bud, info.nsub, info.nresident, info.buffers, ov, 1, info.streambytes, ms, info.streambytes / ms / 1e6);
      }
      if (!s) /* block products on the automatic plan */
        for (PetscInt k : ks)
          for (int ov = 1; ov >= 0; ov--) {
            GSStreamPlanSetOverlap(P, (PetscBool)ov);
            const double ms = 1e-3 * TimeUs((int)reps, [&]() { GSStreamPlanMultBlockDevice(P, k, X.data(), m, Y.data(), m); });
            Line("stream_block", bud, info.nsub, info.nresident, info.buffers, ov, k, info.streambytes, ms, info.streambytes / ms / 1e6);
          }
      GSStreamPlanDestroy(&P);
    }
    { /* the compute alone: everything resident, same kernels */
      GSStreamOptions o{GS_STREAM_STREAM, -1, 2, 1, PETSC_TRUE};
      GSStreamPlan    P;
      if (!GSStreamPlanCreate(m, m, ia, ja, a, &o, &P)) {
        for (PetscInt k : ks) {
          const double ms = 1e-3 * TimeUs((int)reps, [&]() { GSStreamPlanMultBlockDevice(P, k, X.data(), m, Y.data(), m); });
          Line("resident_block", 0, 1, 1, 0, 1, k, 0, ms, csrbytes / ms / 1e6);
        }
        GSStreamPlanDestroy(&P);
      } else
        Line("resident_block_infeasible", 0, 1, 1, 0, 1, 0, 0, 0, 0);
    }
    PetscPopErrorHandler();
  }
  PetscCall(PetscFree3(ia, ja, a));
  PetscCall(PetscFinalize());
  return 0;
}
