/* Unit tests: every device kernel against its serial reference twin, on random inputs of several sizes (0, 1,
   sizes that are not multiples of any team or block size, and sizes spanning many teams). Runs on whatever
   Kokkos backend the library was built for. Ends with 'N passed, N failed'. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpustreamimpl.h"
#include "../../src/ksp/pipecgfused/pipecgfusedimpl.h"
#include "../../src/ksp/pipebcgsf/pipebcgsfimpl.h"
#include "../../src/ksp/sgmresf/sgmresfimpl.h"
#include "../../src/stream/streamimpl.h"
#include "../../src/mat/gpustream/devicemat.hpp"

namespace
{
int passed = 0, failed = 0;

void Check(bool ok, const std::string &what)
{
  if (ok)
    passed++;
  else {
    failed++;
    std::printf("not ok %s\n", what.c_str());
  }
}

/* max |a-b| over max(1, max |b|): kernels and twins may round differently (FMA contraction) */
double RelDiff(const std::vector<PetscScalar> &a, const std::vector<PetscScalar> &b)
{
  double d = 0, s = 1;
  for (size_t i = 0; i < a.size(); i++) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / s;
}

bool Close(double a, double b, double scale)
{
  return std::isfinite(a) && std::abs(a - b) <= 1e-12 * std::max(1.0, scale);
}

std::mt19937_64 rng(20261121);

std::vector<PetscScalar> Random(PetscInt n, double lo = -1, double hi = 1)
{
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<PetscScalar>               v(n);
  for (auto &x : v) x = u(rng);
  return v;
}

struct CSRHost {
  PetscInt                 m, n;
  std::vector<PetscInt>    ia, ja;
  std::vector<PetscScalar> a;
};

/* Random CSR with length(i) entries drawn for row i (fewer after duplicates), sorted distinct columns */
template <class Len> CSRHost RandomCSRBy(PetscInt m, PetscInt n, const Len &length)
{
  CSRHost                                 A{m, n, {0}, {}, {}};
  std::uniform_int_distribution<PetscInt> col(0, n > 0 ? n - 1 : 0);
  for (PetscInt i = 0; i < m; i++) {
    std::vector<PetscInt> cols;
    const PetscInt        l = n > 0 ? length(i) : 0;
    for (PetscInt k = 0; k < l; k++) cols.push_back(col(rng));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    A.ja.insert(A.ja.end(), cols.begin(), cols.end());
    A.ia.push_back((PetscInt)A.ja.size());
  }
  A.a = Random((PetscInt)A.ja.size());
  return A;
}

/* Rows of 0 to maxlen entries (some empty) */
CSRHost RandomCSR(PetscInt m, PetscInt n, PetscInt maxlen)
{
  std::uniform_int_distribution<PetscInt> len(0, maxlen);
  return RandomCSRBy(m, n, [&](PetscInt) { return len(rng); });
}

const PetscInt        allsizes[] = {0, 1, 2, 3, 31, 255, 256, 257, 1000, 10007, 300001};
std::vector<PetscInt> sizes; /* all sizes up to -max_size (valgrind runs use small ones) */

void TestSpMV()
{
  for (PetscInt m : sizes) {
    for (PetscInt maxlen : {1, 5, 40}) {
      const PetscInt           n = m ? m + 3 : 0;
      CSRHost                  A = RandomCSR(m, n, maxlen);
      GSDeviceMat              dA;
      auto                     x = Random(n), z = Random(m);
      std::vector<PetscScalar> y(m), yref(m);
      const std::string        tag = " m=" + std::to_string(m) + " maxlen=" + std::to_string(maxlen);

      Check(!GSDeviceMatCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA), "GSDeviceMatCreate" + tag);
      Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()), "GSDeviceMatMult" + tag);
      GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), nullptr, yref.data());
      Check(RelDiff(y, yref) < 1e-14, "SpMV matches reference" + tag);
      Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), y.data()), "GSDeviceMatMult add" + tag);
      GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), z.data(), yref.data());
      Check(RelDiff(y, yref) < 1e-14, "SpMV+z matches reference" + tag);
      /* new values, same pattern */
      A.a = Random((PetscInt)A.a.size(), 1, 2);
      Check(!GSDeviceMatSetValues(dA, A.a.data()), "GSDeviceMatSetValues" + tag);
      Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()), "GSDeviceMatMult after new values" + tag);
      GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), nullptr, yref.data());
      Check(RelDiff(y, yref) < 1e-14, "SpMV with new values matches reference" + tag);
      /* each kernel choice: a thread or a warp per row on a device, a thread per row on host backends */
      const bool device = std::string(PetscGPUStreamExecutionSpace()) == "Cuda" || std::string(PetscGPUStreamExecutionSpace()) == "HIP";
      for (GSSpMVKernel k : {GS_KERNEL_THREAD, GS_KERNEL_WARP, GS_KERNEL_AUTO}) {
        PetscInt vlen, team, league;
        Check(!GSDeviceMatSetKernel(dA, k) && !GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league), "GSDeviceMatSetKernel" + tag);
        Check(vlen == ((device && (k == GS_KERNEL_WARP || (k == GS_KERNEL_AUTO && 2 * (PetscInt)A.ja.size() >= 24 * m && m > 0))) ? 32 : 1), "kernel " + std::string(GSSpMVKernels[k]) + " has its lanes" + tag);
        Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()) && RelDiff(y, yref) < 1e-14, "SpMV with kernel " + std::string(GSSpMVKernels[k]) + " matches reference" + tag);
      }
      Check(!GSDeviceMatDestroy(&dA) && !dA, "GSDeviceMatDestroy" + tag);
    }
  }
}

/* The sum of V lanes (lane l adding entries l, l + V, ..., then the butterfly: partners l ^ V/2, l ^ V/4, ...) formed by
   one thread (LaneOrderSum, the tiles' order) against a simulation of the V lanes, bitwise */
template <int V> void TestLaneOrderSum()
{
  for (PetscInt len : {0, 1, 2, V - 1, V, V + 1, 3 * V + 5, 100}) {
    const std::string        tag = " V=" + std::to_string(V) + " len=" + std::to_string(len);
    auto                     p   = Random(len, -1e3, 1e3);
    std::vector<PetscScalar> lane(V, 0.0);
    for (PetscInt j = 0; j < len; j++) lane[j % V] += p[j];
    const auto sums = lane;
    for (int o = V / 2; o > 0; o /= 2) {
      std::vector<PetscScalar> next(V);
      for (int l = 0; l < V; l++) next[l] = lane[l] + lane[l ^ o];
      lane = next;
    }
    Check(std::all_of(lane.begin(), lane.end(), [&](PetscScalar a) { return a == lane[0]; }), "every lane holds the same sum" + tag);
    Check(gpustream::LaneOrderSum<V>([&](int l) { return sums[l]; }) == lane[0], "one thread sums in the lanes' order" + tag);
  }
}

/* MatMult by tiles (GSDeviceMatSetTileSize) against the twin and against the direct kernels with a thread and a warp
   per row (rows up to 32 entries, a thread each in the warp's order, and longer ones): bitwise equal on every row no
   longer than a tile, also on a second product (the pieces' counters start over); rows longer than a tile (cut into pieces, some 3x and 40x
   the tile) to rounding; the tile limits */
void TestTiles()
{
  TestLaneOrderSum<1>();
  TestLaneOrderSum<4>();
  TestLaneOrderSum<32>();
  for (PetscInt m : sizes) {
    if (m > 10007) continue;
    for (PetscInt maxlen : {5, 32, 40, -1}) /* -1: mostly short rows and every 97th up to 5000 entries long */
      for (GSSpMVKernel kernel : {GS_KERNEL_THREAD, GS_KERNEL_WARP}) {
        const PetscInt                          n = m ? m + 3 : 0;
        std::uniform_int_distribution<PetscInt> len(100, 5000);
        CSRHost                                 A = maxlen < 0 ? RandomCSRBy(m, n, [&](PetscInt i) { return i % 97 == 3 ? len(rng) : i % 3; }) : RandomCSR(m, n, maxlen);
        GSDeviceMat                             dA;
        auto                                    x = Random(n), z = Random(m);
        std::vector<PetscScalar>                y(m), y2(m), yz(m), ydirect(m), yzdirect(m), yref(m), yzref(m);
        const std::string                       tag = " m=" + std::to_string(m) + " maxlen=" + std::to_string(maxlen) + " kernel=" + GSSpMVKernels[kernel];
        Check(!GSDeviceMatCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, 0, &dA) && !GSDeviceMatSetKernel(dA, kernel), "GSDeviceMatCreate" + tag);
        GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), nullptr, yref.data());
        GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), z.data(), yzref.data());
        Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, ydirect.data()) && !GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), yzdirect.data()), "direct SpMV" + tag);
        for (PetscInt cap : {1, 3, 8, 64, 2048}) {
          const std::string ctag = tag + " cap=" + std::to_string(cap);
          PetscInt          c, ntiles;
          bool              same = true;
          Check(!GSDeviceMatSetTileSize(dA, cap) && !GSDeviceMatGetTileSize(dA, &c, &ntiles) && c == cap && ntiles >= (m + 254) / 255 && ntiles >= (A.ia[m] + cap - 1) / cap, "tiles set" + ctag);
          Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()) && !GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y2.data()) && !GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), yz.data()),
                "tiled SpMV" + ctag);
          Check(RelDiff(y, yref) < 1e-14 && RelDiff(yz, yzref) < 1e-14, "tiled SpMV matches reference" + ctag);
          Check(y2 == y, "a second tiled product gives the same bits" + ctag);
          for (PetscInt i = 0; i < m; i++)
            if (A.ia[i + 1] - A.ia[i] <= cap && (y[i] != ydirect[i] || yz[i] != yzdirect[i])) same = false;
          Check(same, "tiled and direct SpMV bitwise equal on rows within a tile" + ctag);
        }
        PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
        Check(GSDeviceMatSetTileSize(dA, 2049) == PETSC_ERR_ARG_OUTOFRANGE, "a tile of 2049 entries is PETSC_ERR_ARG_OUTOFRANGE" + tag);
        PetscPopErrorHandler();
        GSDeviceMatDestroy(&dA);
      }
  }
}

struct CGVecs {
  std::vector<PetscScalar> x, r, p, w, d;
};

CGVecs RandomCG(PetscInt n)
{
  return {Random(n), Random(n), Random(n), Random(n), Random(n, 0.5, 2)};
}

void Load(PCGFWork W, const CGVecs &v, bool jacobi)
{
  PCGFWorkSetVec(W, PCGF_X, v.x.data());
  PCGFWorkSetVec(W, PCGF_R, v.r.data());
  PCGFWorkSetVec(W, PCGF_P, v.p.data());
  PCGFWorkSetVec(W, PCGF_W, v.w.data());
  if (jacobi) PCGFWorkSetVec(W, PCGF_DINV, v.d.data());
}

CGVecs Store(PCGFWork W, PetscInt n)
{
  CGVecs v{std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), {}};
  PCGFWorkGetVec(W, PCGF_X, v.x.data());
  PCGFWorkGetVec(W, PCGF_R, v.r.data());
  PCGFWorkGetVec(W, PCGF_P, v.p.data());
  PCGFWorkGetVec(W, PCGF_W, v.w.data());
  return v;
}

double AbsSum(const std::vector<PetscScalar> &a, const std::vector<PetscScalar> &b)
{
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += std::abs(a[i] * b[i]);
  return s;
}

void TestUpdate()
{
  const KSPNormType norms[] = {KSP_NORM_NONE, KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL};
  for (PetscInt n : sizes) {
    for (bool jacobi : {false, true}) {
      for (KSPNormType nt : norms) {
        const std::string tag = " n=" + std::to_string(n) + (jacobi ? " jacobi" : " none") + " norm=" + KSPNormTypes[nt];
        CGVecs            v = RandomCG(n), ref = v;
        PCGFWork          W;
        PetscScalar       sums[PCGF_NSUMS], rsums[2];
        const PetscScalar alpha = 0.37, beta = -0.81;
        PetscInt          l, t, c;

        Check(!PCGFWorkCreate(n, jacobi ? PCGF_PC_JACOBI : PCGF_PC_NONE, &W), "PCGFWorkCreate" + tag);
        Load(W, v, jacobi);
        Check(!PCGFUpdate(W, alpha, beta, nt), "PCGFUpdate" + tag);
        Check(!PCGFReduce(W, sums), "PCGFReduce" + tag);
        PCGFUpdate_Ref(n, 1, alpha, beta, nt, jacobi ? ref.d.data() : nullptr, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
        CGVecs got = Store(W, n);
        Check(RelDiff(got.x, ref.x) < 1e-14 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-14, "Update vectors match reference" + tag);
        Check(RelDiff(got.w, v.w) == 0, "Update leaves w alone" + tag);
        Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(ref.r, ref.r) * 2), "Update <r,z> matches reference" + tag);
        Check(Close(sums[PCGF_NRM], rsums[1], AbsSum(ref.r, ref.r) * 4 + AbsSum(ref.p, ref.p)), "Update norm sum matches reference" + tag);
        Check(sums[PCGF_PW] == 0 && sums[PCGF_WDW] == 0, "Reduce without SpMV gives zero <p,w>" + tag);
        PCGFWorkGetCounts(W, &l, &t, &c);
        Check(l == 1 && t == 1, "one launch and one transfer counted" + tag);
        Check(!PCGFWorkDestroy(&W) && !W, "PCGFWorkDestroy" + tag);
      }
    }
  }
}

/* Device scalars: UpdateDevice with alpha = beta = 0, SpMVDotFinal into a slot, ReduceSlot, then UpdateDevice with the
   alpha and beta the last team computed, against the twins with alpha and beta computed on the host from the twins'
   sums (short and long rows: a thread or a warp per row on a device); RevertX gives the x before the last Update */
void TestDeviceScalars()
{
  for (PetscInt n : sizes) {
    if (n == 0 || n > 100000) continue;
    for (bool jacobi : {false, true})
      for (PetscInt rowlen : {5, 40})
        for (KSPNormType nt : {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NONE}) {
          const std::string        tag = " n=" + std::to_string(n) + (jacobi ? " jacobi" : " none") + " row length " + std::to_string(rowlen) + " norm=" + KSPNormTypes[nt];
          CSRHost                  A   = RandomCSR(n, n, rowlen);
          CGVecs                   v = RandomCG(n), ref = v;
          std::vector<PetscScalar> wref(n), x0(n);
          GSDeviceMat              dA;
          PCGFWork                 W;
          PetscScalar              sums[PCGF_NSUMS], rsums[2], dsums[2];
          PetscInt                 l, t, c;
          const PetscScalar       *d = jacobi ? v.d.data() : nullptr;

          GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
          Check(!PCGFWorkCreate(n, jacobi ? PCGF_PC_JACOBI : PCGF_PC_NONE, &W) && !PCGFWorkSetDeviceScalars(W), "PCGFWorkSetDeviceScalars" + tag);
          Load(W, v, jacobi);
          Check(!PCGFUpdateDevice(W, nt) && !PCGFSpMVDotFinal(W, dA, 1) && !PCGFReduceSlot(W, 1, sums), "UpdateDevice, SpMVDotFinal, ReduceSlot" + tag);
          PCGFUpdate_Ref(n, 1, 0, 0, nt, d, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
          PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, d, ref.p.data(), wref.data(), dsums);
          CGVecs got = Store(W, n);
          Check(RelDiff(got.x, ref.x) == 0 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-14 && RelDiff(got.w, wref) < 1e-13, "first UpdateDevice and SpMVDotFinal: vectors match reference" + tag);
          Check(Close(sums[PCGF_RZ], rsums[0], 4 * AbsSum(ref.r, ref.r)) && (nt == KSP_NORM_NONE ? sums[PCGF_NRM] == 0 : Close(sums[PCGF_NRM], rsums[1], 4 * AbsSum(ref.r, ref.r) + 4 * AbsSum(ref.p, ref.p))), "ReduceSlot: the Update's sums" + tag);
          Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, wref)) && Close(sums[PCGF_WDW], dsums[1], 3.0 * AbsSum(wref, wref)), "ReduceSlot: the SpMVDot's sums" + tag);
          /* the next Update with the device's alpha and beta, against the twin with the host's from the twins' sums */
          const PetscScalar alpha = rsums[0] / dsums[0], beta = alpha * alpha * dsums[1] / rsums[0] - 1;
          const double      amp = (1 + std::abs(alpha)) * (1 + std::abs(beta)) * (1 + AbsSum(ref.p, wref) / std::abs(dsums[0])) * (1 + 4 * AbsSum(ref.r, ref.r) / std::abs(rsums[0]));
          x0                    = ref.x;
          ref.w                 = wref;
          Check(!PCGFUpdateDevice(W, nt), "second UpdateDevice" + tag);
          PCGFUpdate_Ref(n, 1, alpha, beta, nt, d, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
          got = Store(W, n);
          /* alpha and beta carry the rounding of the sums, amplified by cancellation in <p,w> and <r,z> (the random
             matrix is not definite); one unknown: CG is exact after one step, r and p cancel to rounding */
          if (dsums[0] == 0)
            Check(RelDiff(got.x, x0) == 0, "UpdateDevice after <p,w> = 0 leaves x alone (alpha 0, where the host loop stops)" + tag);
          else if (n > 1)
            Check(RelDiff(got.x, ref.x) < 1e-14 * amp && RelDiff(got.r, ref.r) < 1e-14 * amp && RelDiff(got.p, ref.p) < 1e-14 * amp, "UpdateDevice with the device's alpha and beta matches the twin with the host's" + tag);
          Check(!PCGFWorkRevertX(W), "RevertX" + tag);
          PCGFWorkGetVec(W, PCGF_X, got.x.data());
          Check(RelDiff(got.x, x0) == 0, "RevertX gives the x before the last UpdateDevice" + tag);
          PCGFWorkGetCounts(W, &l, &t, &c);
          Check(l == 3 && t == 1, "3 launches, 1 transfer counted" + tag);
          PCGFWorkDestroy(&W);
          GSDeviceMatDestroy(&dA);
        }
  }
  PCGFWork W;
  PCGFWorkCreate(10, PCGF_PC_APPLY, &W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFWorkSetDeviceScalars(W) == PETSC_ERR_SUP, "device scalars with a host PC is PETSC_ERR_SUP");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
}

/* Update with the norms of automatic residual replacement (PCGFWorkSetNorms()), for every fused PC and the host one:
   the same vectors and sums as without, the four norm sums of PCGFUpdateNorms_Ref(), and an SpMVDot after it whose
   sums still land where Reduce reads them; 2 launches and 1 transfer for all. Then norms off again. */
void TestUpdateNorms()
{
  for (PetscInt n0 : sizes) {
    if (n0 > 100000) continue;
    for (PCGFPC pc : {PCGF_PC_NONE, PCGF_PC_JACOBI, PCGF_PC_APPLY, PCGF_PC_PBJACOBI}) {
      const PetscInt           bs = pc == PCGF_PC_PBJACOBI ? 3 : 1, n = bs * n0;
      const std::string        tag = " n=" + std::to_string(n) + " pc=" + std::to_string((int)pc);
      CSRHost                  A   = RandomCSR(n, n, 7);
      CGVecs                   v = RandomCG(n), ref = v;
      std::vector<PetscScalar> z = Random(n), q = Random(n), zref = z, blocks = Random(n * bs, -0.3, 0.3), wref(n);
      GSDeviceMat              dA;
      PCGFWork                 W;
      PetscScalar              sums[PCGF_NALL], rsums[2], nsums[4], dsums[2];
      PetscInt                 l, t, c;
      const PetscScalar        alpha = 0.37, beta = -0.81;
      const KSPNormType        nt = KSP_NORM_PRECONDITIONED;

      for (PetscInt i = 0; i < n; i++) blocks[i * bs + i % bs] += 2;
      GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
      Check(!PCGFWorkCreate(n, pc, &W) && !PCGFWorkSetNorms(W, PETSC_TRUE), "PCGFWorkSetNorms" + tag);
      Load(W, v, pc == PCGF_PC_JACOBI);
      if (pc == PCGF_PC_PBJACOBI) PCGFWorkSetBlocks(W, bs, blocks.data());
      if (pc == PCGF_PC_APPLY) {
        PCGFWorkSetVec(W, PCGF_Z, z.data());
        PCGFWorkSetVec(W, PCGF_Q, q.data());
      }
      const PetscScalar *d = pc == PCGF_PC_JACOBI ? v.d.data() : (pc == PCGF_PC_PBJACOBI ? blocks.data() : nullptr);
      Check(!PCGFUpdate(W, alpha, beta, nt) && !PCGFSpMVDot(W, dA, nullptr, nullptr) && !PCGFReduce(W, sums), "Update with norms, SpMVDot, Reduce" + tag);
      PCGFUpdateNorms_Ref(n, alpha, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), nsums);
      if (pc == PCGF_PC_APPLY)
        PCGFUpdateApply_Ref(n, alpha, beta, nt, ref.x.data(), ref.r.data(), zref.data(), ref.p.data(), ref.w.data(), q.data(), rsums);
      else
        PCGFUpdate_Ref(n, bs, alpha, beta, nt, d, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
      PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, d, ref.p.data(), wref.data(), dsums);
      CGVecs got = Store(W, n);
      Check(RelDiff(got.x, ref.x) < 1e-14 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-13 && RelDiff(got.w, wref) < 1e-13, "Update with norms: vectors match reference" + tag);
      const double zscale = pc == PCGF_PC_APPLY ? AbsSum(zref, zref) + AbsSum(ref.r, zref) : 9.0 * bs * bs * AbsSum(ref.r, ref.r);
      Check(Close(sums[PCGF_RZ], rsums[0], zscale) && Close(sums[PCGF_NRM], rsums[1], zscale), "Update with norms: <r,z> and norm sums match reference" + tag);
      Check(Close(sums[PCGF_XX], nsums[0], nsums[0]) && Close(sums[PCGF_PP], nsums[1], nsums[1]) && Close(sums[PCGF_WW], nsums[2], nsums[2]) && Close(sums[PCGF_RR], nsums[3], 4 * nsums[3]),
            "Update norms ||x||, ||p||, ||w||, ||r|| match reference" + tag);
      Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, wref)) && Close(sums[PCGF_WDW], dsums[1], 3.0 * bs * AbsSum(wref, wref)), "SpMVDot sums after an Update with norms" + tag);
      PCGFWorkGetCounts(W, &l, &t, &c);
      Check(l == 2 && t == 1, "Update with norms and SpMVDot: 2 launches, 1 transfer" + tag);
      /* off again: Reduce writes PCGF_NSUMS sums only, the Update's two in place */
      sums[PCGF_XX] = -1;
      Check(!PCGFWorkSetNorms(W, PETSC_FALSE) && !PCGFUpdate(W, 0.0, 0.0, nt) && !PCGFReduce(W, sums) && sums[PCGF_XX] == -1 && sums[PCGF_PW] == 0, "norms off: Reduce gives PCGF_NSUMS sums" + tag);
      PCGFWorkDestroy(&W);
      GSDeviceMatDestroy(&dA);
    }
  }
  /* the overlapped variant's update has no norms */
  PCGFWork W;
  PCGFWorkCreate(10, PCGF_PC_NONE, &W);
  PCGFWorkSetOverlap(W);
  PCGFWorkSetNorms(W, PETSC_TRUE);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFOverlapUpdate(W, 0.1, 0.2, KSP_NORM_PRECONDITIONED) == PETSC_ERR_SUP, "OverlapUpdate with norms is PETSC_ERR_SUP");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
}

void TestSums()
{
  const KSPNormType norms[] = {KSP_NORM_NONE, KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL};
  for (PetscInt n : sizes) {
    for (bool jacobi : {false, true}) {
      for (KSPNormType nt : norms) {
        const std::string tag = " n=" + std::to_string(n) + (jacobi ? " jacobi" : " none") + " norm=" + KSPNormTypes[nt];
        CGVecs            v   = RandomCG(n);
        PCGFWork          W;
        PetscScalar       sums[PCGF_NSUMS], rsums[2];
        PCGFWorkCreate(n, jacobi ? PCGF_PC_JACOBI : PCGF_PC_NONE, &W);
        Load(W, v, jacobi);
        Check(!PCGFSums(W, nt) && !PCGFReduce(W, sums), "PCGFSums" + tag);
        PCGFSums_Ref(n, 1, nt, jacobi ? v.d.data() : nullptr, v.r.data(), rsums);
        Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(v.r, v.r) * 2) && Close(sums[PCGF_NRM], rsums[1], AbsSum(v.r, v.r) * 4), "Sums match reference" + tag);
        CGVecs got = Store(W, n);
        Check(RelDiff(got.x, v.x) == 0 && RelDiff(got.r, v.r) == 0 && RelDiff(got.p, v.p) == 0 && RelDiff(got.w, v.w) == 0, "Sums change no vector" + tag);
        Check(!PCGFUpdateX(W, -0.7), "PCGFUpdateX" + tag);
        PCGFUpdateX_Ref(n, -0.7, v.p.data(), v.x.data());
        got = Store(W, n);
        Check(RelDiff(got.x, v.x) < 1e-14 && RelDiff(got.r, v.r) == 0 && RelDiff(got.p, v.p) == 0, "UpdateX matches reference and changes only x" + tag);
        PCGFWorkDestroy(&W);
      }
    }
  }
}

/* The kernels with a PC applied on the host: z follows z -= alpha q, and Dot's second sum is <w,q> */
void TestApply()
{
  const KSPNormType norms[] = {KSP_NORM_NONE, KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL};
  for (PetscInt n : sizes) {
    for (KSPNormType nt : norms) {
      const std::string        tag = " n=" + std::to_string(n) + " norm=" + KSPNormTypes[nt];
      CGVecs                   v = RandomCG(n), ref = v;
      std::vector<PetscScalar> z = Random(n), q = Random(n), zref = z, got(n);
      PCGFWork                 W;
      PetscScalar              sums[PCGF_NSUMS], rsums[2], dsums[2];

      Check(!PCGFWorkCreate(n, PCGF_PC_APPLY, &W), "PCGFWorkCreate apply" + tag);
      Load(W, v, false);
      PCGFWorkSetVec(W, PCGF_Z, z.data());
      PCGFWorkSetVec(W, PCGF_Q, q.data());
      Check(!PCGFUpdate(W, 0.3, 0.6, nt) && !PCGFReduce(W, sums), "PCGFUpdate apply" + tag);
      PCGFUpdateApply_Ref(n, 0.3, 0.6, nt, ref.x.data(), ref.r.data(), zref.data(), ref.p.data(), ref.w.data(), q.data(), rsums);
      CGVecs g = Store(W, n);
      PCGFWorkGetVec(W, PCGF_Z, got.data());
      Check(RelDiff(g.x, ref.x) < 1e-14 && RelDiff(g.r, ref.r) < 1e-14 && RelDiff(g.p, ref.p) < 1e-14 && RelDiff(got, zref) < 1e-14, "Update apply vectors match reference" + tag);
      Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(ref.r, zref) * 2) && Close(sums[PCGF_NRM], rsums[1], AbsSum(ref.r, ref.r) + AbsSum(zref, zref)), "Update apply sums match reference" + tag);
      Check(!PCGFDot(W) && !PCGFReduce(W, sums), "PCGFDot apply" + tag);
      PCGFDot_Ref(n, 1, nullptr, q.data(), ref.p.data(), ref.w.data(), dsums);
      Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, ref.w)) && Close(sums[PCGF_WDW], dsums[1], AbsSum(ref.w, q)), "Dot apply matches reference" + tag);
      Check(!PCGFSums(W, nt) && !PCGFReduce(W, sums), "PCGFSums apply" + tag);
      Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(ref.r, zref) * 2) && Close(sums[PCGF_NRM], rsums[1], AbsSum(ref.r, ref.r) + AbsSum(zref, zref)), "Sums apply use z" + tag);
      PCGFWorkDestroy(&W);
    }
  }
}

/* A random pattern of full bs x bs blocks (up to maxb a block row, some block rows empty), random values */
CSRHost RandomBlockCSR(PetscInt nb, PetscInt bs, PetscInt maxb)
{
  std::uniform_int_distribution<PetscInt> nblocks(0, maxb);
  const CSRHost                           P = RandomCSRBy(nb, nb, [&](PetscInt) { return nblocks(rng); });
  CSRHost                                 A{nb * bs, nb * bs, {0}, {}, {}};
  for (PetscInt br = 0; br < nb; br++)
    for (PetscInt i = 0; i < bs; i++) {
      for (PetscInt j = P.ia[br]; j < P.ia[br + 1]; j++)
        for (PetscInt c = 0; c < bs; c++) A.ja.push_back(P.ja[j] * bs + c);
      A.ia.push_back((PetscInt)A.ja.size());
    }
  A.a = Random((PetscInt)A.ja.size());
  return A;
}

/* Block column indices (GSDeviceMatCreate with bs > 1) against CSR storage: MatMult, MatMultAdd, new values, the
   multi-column product and pipecgfused's fused SpMV, bitwise equal with one lane per row (the same values summed in
   the same order), to rounding with a warp (whole blocks a lane); the fused SpMV bitwise equal to MatMult on the
   same storage; patterns that are not made of blocks are found and refused; no tiles */
void TestBlockFormat()
{
  for (PetscInt bs : {2, 3, 6})
    for (PetscInt nb : sizes) {
      if (nb > 10007) continue;
      for (PetscInt maxb : {1, 9, 40}) {
        const std::string        tag    = " bs=" + std::to_string(bs) + " nb=" + std::to_string(nb) + " maxb=" + std::to_string(maxb);
        const bool               device = std::string(PetscGPUStreamExecutionSpace()) == "Cuda";
        CSRHost                  A      = RandomBlockCSR(nb, bs, maxb);
        const PetscInt           n      = A.m;
        GSDeviceMat              dA, dB;
        PetscInt                 got;
        auto                     x = Random(n), z = Random(n);
        std::vector<PetscScalar> y(n), yb(n), yref(n);
        Check(GSBlockPatternRow(n, n, A.ia.data(), A.ja.data(), bs) == -1, "block pattern found" + tag);
        Check(!GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA) && !GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dB), "GSDeviceMatCreate" + tag);
        Check(!GSDeviceMatGetBlockSize(dB, &got) && got == bs && !GSDeviceMatGetBlockSize(dA, &got) && got == 1, "GSDeviceMatGetBlockSize" + tag);
        GSSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), x.data(), nullptr, yref.data());
        for (GSSpMVKernel k : {GS_KERNEL_THREAD, GS_KERNEL_WARP, GS_KERNEL_AUTO}) {
          const std::string ktag = tag + " kernel=" + GSSpMVKernels[k];
          GSDeviceMatSetKernel(dA, k);
          GSDeviceMatSetKernel(dB, k);
          Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()) && !GSDeviceMatMult(dB, nullptr, nullptr, x.data(), nullptr, yb.data()), "SpMV" + ktag);
          const bool one = !device || k == GS_KERNEL_THREAD; /* one lane per row: the CSR's order */
          Check((!one || yb == y) && RelDiff(yb, yref) < 1e-14, "block and CSR SpMV equal (bitwise with one lane), and match the reference" + ktag);
          Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), y.data()) && !GSDeviceMatMult(dB, nullptr, nullptr, x.data(), z.data(), yb.data()) && (!one || yb == y) && RelDiff(yb, y) < 1e-14, "block and CSR SpMV+z equal" + ktag);
        }
        A.a = Random((PetscInt)A.a.size(), 1, 2);
        Check(!GSDeviceMatSetValues(dA, A.a.data()) && !GSDeviceMatSetValues(dB, A.a.data()), "GSDeviceMatSetValues" + tag);
        Check(!GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data()) && !GSDeviceMatMult(dB, nullptr, nullptr, x.data(), nullptr, yb.data()) && (device || yb == y) && RelDiff(yb, y) < 1e-14,
              "block and CSR SpMV equal after new values" + tag);
        {
          const PetscInt           k = 3;
          auto                     X = Random(n * k);
          std::vector<PetscScalar> Y(n * k), Yb(n * k);
          Check(!GSDeviceMatMultBlock(dA, nullptr, nullptr, k, X.data(), n, Y.data(), n) && !GSDeviceMatMultBlock(dB, nullptr, nullptr, k, X.data(), n, Yb.data(), n) && Yb == Y,
                "block and CSR products of 3 columns bitwise equal (a thread a row)" + tag);
        }
        {
          PCGFWork    W;
          CGVecs      v = RandomCG(n);
          PetscScalar s[PCGF_NSUMS], sb[PCGF_NSUMS];
          PCGFWorkCreate(n, PCGF_PC_NONE, &W);
          Load(W, v, false);
          Check(!PCGFSpMVDot(W, dA, nullptr, nullptr) && !PCGFReduce(W, s), "PCGFSpMVDot CSR" + tag);
          const CGVecs c = Store(W, n);
          Load(W, v, false);
          Check(!PCGFSpMVDot(W, dB, nullptr, nullptr) && !PCGFReduce(W, sb), "PCGFSpMVDot block" + tag);
          const CGVecs             b = Store(W, n);
          std::vector<PetscScalar> w(n);
          GSDeviceMatMult(dB, nullptr, nullptr, v.p.data(), nullptr, w.data());
          Check(b.w == w, "fused and plain SpMV on block storage bitwise equal" + tag);
          Check((device || (b.w == c.w && s[PCGF_PW] == sb[PCGF_PW] && s[PCGF_WDW] == sb[PCGF_WDW])) && RelDiff(b.w, c.w) < 1e-14 && Close(s[PCGF_PW], sb[PCGF_PW], AbsSum(v.p, c.w)), "fused SpMV on block and CSR storage equal" + tag);
          PCGFWorkDestroy(&W);
        }
        PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
        Check(GSDeviceMatSetTileSize(dB, 8) == PETSC_ERR_ARG_INCOMP && !GSDeviceMatSetTileSize(dB, 0), "no tiles on block storage" + tag);
        PetscPopErrorHandler();
        GSDeviceMatDestroy(&dA);
        GSDeviceMatDestroy(&dB);
        if (A.ja.size() > (size_t)bs) { /* one entry less breaks the pattern at its row */
          const PetscInt r = (PetscInt)(std::upper_bound(A.ia.begin(), A.ia.end(), (PetscInt)A.ja.size() / 2) - A.ia.begin()) - 1;
          A.ja.erase(A.ja.begin() + A.ia[r]);
          A.a.pop_back();
          for (PetscInt i = r + 1; i <= n; i++) A.ia[i]--;
          Check(GSBlockPatternRow(n, n, A.ia.data(), A.ja.data(), bs) == r, "a broken block pattern found at its row" + tag);
          PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
          Check(GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dB) == PETSC_ERR_ARG_WRONG, "block storage of a broken pattern refused" + tag);
          PetscPopErrorHandler();
        }
      }
    }
  Check(GSBlockPatternRow(4, 4, nullptr, nullptr, 3) == 0, "sizes that are not multiples of the block size refused");
  {
    GSDeviceMat    dA;
    const PetscInt ia[2] = {0, 0};
    PetscErrorCode ierr;
    PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
    ierr = GSDeviceMatCreate(0, 0, ia, nullptr, nullptr, PETSC_FALSE, GS_MAX_FORMAT_BS + 1, -1, &dA);
    PetscPopErrorHandler();
    Check(ierr == PETSC_ERR_ARG_OUTOFRANGE, "block sizes above GS_MAX_FORMAT_BS refused");
  }
}

/* One kernel per iteration (PCGFStep): three Steps, the first with alpha = beta = 0, against the twins PCGFUpdate_Ref
   and PCGFSpMVDot_Ref with the alpha and beta the host derives from the Step's sums as the last team does (so the
   vectors show that the device used them), the sums against the twins' (forward and reversed rows, since the Steps
   alternate; a thread or a warp per row; CSR and block storage); RevertX gives back x, r, p and w of the Step before;
   one launch and one transfer a Step */
void TestStep()
{
  for (PetscInt n0 : sizes) {
    if (n0 == 0 || n0 > 100000) continue;
    for (PetscInt bs : {1, 3})
      for (bool jacobi : {false, true})
        for (PetscInt rowlen : {5, 40})
          for (KSPNormType nt : {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL}) {
            if (bs > 1 && rowlen > 5) continue;
            const PetscInt     n   = bs * n0;
            const std::string  tag = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + (jacobi ? " jacobi" : " none") + " row length " + std::to_string(rowlen) + " norm=" + KSPNormTypes[nt];
            const CSRHost      A   = bs == 1 ? RandomCSR(n, n, rowlen) : RandomBlockCSR(n0, bs, 3);
            CGVecs             v = RandomCG(n), ref = v, before;
            GSDeviceMat        dA;
            PCGFWork           W;
            PetscScalar        sums[PCGF_NSUMS], rsums[2], dsums[2], alpha = 0, beta = 0;
            PetscInt           l, t, c;
            const PetscScalar *d = jacobi ? v.d.data() : nullptr;

            Check(!GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dA), "GSDeviceMatCreate" + tag);
            Check(!PCGFWorkCreate(n, jacobi ? PCGF_PC_JACOBI : PCGF_PC_NONE, &W) && !PCGFWorkSetDeviceScalars(W) && !PCGFWorkSetStep(W), "PCGFWorkSetStep" + tag);
            Load(W, v, jacobi);
            for (int it = 0; it < 3; it++) {
              const std::string at = " (Step " + std::to_string(it) + ")" + tag;
              before               = Store(W, n);
              Check(!PCGFStep(W, dA, nt, it % 2) && !PCGFReduceSlot(W, it % 2, sums), "PCGFStep, ReduceSlot" + at);
              PCGFUpdate_Ref(n, 1, alpha, beta, nt, d, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
              PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, d, ref.p.data(), ref.w.data(), dsums);
              const CGVecs got = Store(W, n);
              if (it + 1 < n) { /* the last steps before n of n unknowns leave r and p near rounding: cancellation */
                Check(RelDiff(got.x, ref.x) < 1e-14 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-14 && RelDiff(got.w, ref.w) < 1e-13, "Step: x, r, p, w match the twins" + at);
                Check(Close(sums[PCGF_RZ], rsums[0], 4 * AbsSum(ref.r, ref.r)) && (nt == KSP_NORM_NATURAL ? sums[PCGF_NRM] == 0 : Close(sums[PCGF_NRM], rsums[1], 4 * AbsSum(ref.r, ref.r) + 4 * AbsSum(ref.p, ref.p))), "Step: the Update's sums" + at);
                Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, ref.w)) && Close(sums[PCGF_WDW], dsums[1], 3.0 * AbsSum(ref.w, ref.w)), "Step: the SpMV's sums" + at);
              }
              if (it == 0) Check(RelDiff(got.x, v.x) == 0 && RelDiff(got.r, v.r) == 0, "first Step (alpha = 0) leaves x and r alone" + at);
              alpha = sums[PCGF_PW] != 0 ? sums[PCGF_RZ] / sums[PCGF_PW] : 0; /* as the last team computes them */
              beta  = sums[PCGF_RZ] != 0 ? alpha * alpha * sums[PCGF_WDW] / sums[PCGF_RZ] - 1 : 0;
            }
            Check(!PCGFWorkRevertX(W), "RevertX" + tag);
            const CGVecs back = Store(W, n);
            Check(RelDiff(back.x, before.x) == 0 && RelDiff(back.r, before.r) == 0 && RelDiff(back.p, before.p) == 0 && RelDiff(back.w, before.w) == 0, "RevertX after a Step gives x, r, p, w before it" + tag);
            PCGFWorkGetCounts(W, &l, &t, &c);
            Check(l == 3 && t == 3, "3 Steps: 3 launches, 3 transfers counted" + tag);
            PCGFWorkDestroy(&W);
            GSDeviceMatDestroy(&dA);
          }
  }
  PCGFWork    W;
  GSDeviceMat dA;
  PetscInt    ia[2] = {0, 1}, ja[1] = {0};
  PetscScalar a[1] = {2};
  GSDeviceMatCreate(1, 1, ia, ja, a, PETSC_FALSE, 1, -1, &dA);
  PCGFWorkCreate(1, PCGF_PC_NONE, &W);
  PCGFWorkSetDeviceScalars(W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFStep(W, dA, KSP_NORM_PRECONDITIONED, 0) == PETSC_ERR_ARG_WRONGSTATE, "Step before PCGFWorkSetStep is PETSC_ERR_ARG_WRONGSTATE");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
  GSDeviceMatDestroy(&dA);
}

void TestSpMVDot()
{
  for (PetscInt n : sizes) {
    for (PetscInt maxlen : {1, 7, 60}) {
      for (bool jacobi : {false, true}) {
        const std::string        tag = " n=" + std::to_string(n) + " maxlen=" + std::to_string(maxlen) + (jacobi ? " jacobi" : " none");
        CSRHost                  A   = RandomCSR(n, n, maxlen);
        GSDeviceMat              dA;
        CGVecs                   v = RandomCG(n);
        PCGFWork                 W;
        PetscScalar              sums[PCGF_NSUMS], rsums[2], dsums[PCGF_NSUMS];
        std::vector<PetscScalar> wref(n);

        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        PCGFWorkCreate(n, jacobi ? PCGF_PC_JACOBI : PCGF_PC_NONE, &W);
        Load(W, v, jacobi);
        Check(!PCGFSpMVDot(W, dA, nullptr, nullptr), "PCGFSpMVDot" + tag);
        Check(!PCGFReduce(W, sums), "PCGFReduce" + tag);
        PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, jacobi ? v.d.data() : nullptr, v.p.data(), wref.data(), rsums);
        CGVecs got = Store(W, n);
        Check(RelDiff(got.w, wref) < 1e-14, "SpMVDot w = A p matches reference" + tag);
        Check(RelDiff(got.x, v.x) == 0 && RelDiff(got.r, v.r) == 0 && RelDiff(got.p, v.p) == 0, "SpMVDot leaves x, r, p alone" + tag);
        Check(Close(sums[PCGF_PW], rsums[0], AbsSum(v.p, wref)), "SpMVDot <p,Ap> matches reference" + tag);
        Check(Close(sums[PCGF_WDW], rsums[1], AbsSum(wref, wref) * 2), "SpMVDot <Ap,D^-1 Ap> matches reference" + tag);
        /* Dot on the w SpMVDot left gives the same sums */
        Check(!PCGFDot(W) && !PCGFReduce(W, dsums), "PCGFDot" + tag);
        Check(Close(dsums[PCGF_PW], rsums[0], AbsSum(v.p, wref)) && Close(dsums[PCGF_WDW], rsums[1], AbsSum(wref, wref) * 2), "Dot matches reference" + tag);
        /* the SpMV fused into the solver and the plain one sum rows in the same order */
        std::vector<PetscScalar> y(n);
        GSDeviceMatMult(dA, nullptr, nullptr, v.p.data(), nullptr, y.data());
        Check(RelDiff(y, got.w) == 0, "fused and plain SpMV are bitwise equal" + tag);
        PCGFWorkDestroy(&W);
        GSDeviceMatDestroy(&dA);
      }
    }
  }
}

/* pipecgfused's overlapped variant (Ghysels-Vanroose): OverlapUpdate and SpMVN against their twins */
void TestOverlap()
{
  const KSPNormType norms[] = {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL};
  for (PetscInt n : sizes)
    for (PCGFPC pc : {PCGF_PC_NONE, PCGF_PC_JACOBI, PCGF_PC_APPLY})
      for (KSPNormType nt : norms) {
        const std::string        tag     = " n=" + std::to_string(n) + " pc=" + std::to_string((int)pc) + " norm=" + std::to_string((int)nt);
        const PCGFVec            ids[10] = {PCGF_X, PCGF_R, PCGF_U, PCGF_W, PCGF_M, PCGF_N, PCGF_Z, PCGF_Q, PCGF_P, PCGF_S};
        std::vector<PetscScalar> v[10], got(n), d = Random(n, 0.5, 2);
        PetscScalar              sums[PCGF_NSUMS], rsums[3];
        PCGFWork                 W;
        Check(!PCGFWorkCreate(n, pc, &W) && !PCGFWorkSetOverlap(W), "PCGFWorkSetOverlap" + tag);
        for (int k = 0; k < 10; k++) {
          v[k] = Random(n);
          PCGFWorkSetVec(W, ids[k], v[k].data());
        }
        if (pc == PCGF_PC_JACOBI) PCGFWorkSetVec(W, PCGF_DINV, d.data());
        Check(!PCGFOverlapUpdate(W, 0.3, 0.6, nt) && !PCGFReduce(W, sums), "PCGFOverlapUpdate" + tag);
        PCGFOverlapUpdate_Ref(n, 0.3, 0.6, nt, pc == PCGF_PC_JACOBI ? d.data() : nullptr, pc == PCGF_PC_APPLY ? PETSC_TRUE : PETSC_FALSE, v[0].data(), v[1].data(), v[2].data(), v[3].data(), v[4].data(), v[5].data(), v[6].data(), v[7].data(),
                              v[8].data(), v[9].data(), rsums);
        bool same = true;
        for (int k = 0; k < 10; k++) {
          PCGFWorkGetVec(W, ids[k], got.data());
          same = same && RelDiff(got, v[k]) < 1e-14;
        }
        Check(same, "OverlapUpdate vectors match reference" + tag);
        Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(v[1], v[2])) && Close(sums[PCGF_NRM], rsums[1], AbsSum(v[1], v[1]) + AbsSum(v[2], v[2])) && Close(sums[PCGF_PW], rsums[2], AbsSum(v[3], v[2])) && sums[PCGF_WDW] == 0,
              "OverlapUpdate sums match reference" + tag);
        /* n = A m */
        CSRHost     A = RandomCSR(n, n, 30);
        GSDeviceMat dA;
        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        std::vector<PetscScalar> ref(n);
        Check(!PCGFSpMVN(W, dA, nullptr, nullptr), "PCGFSpMVN" + tag);
        PCGFWorkGetVec(W, PCGF_N, got.data());
        GSSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), v[4].data(), nullptr, ref.data());
        Check(RelDiff(got, ref) < 1e-14, "SpMVN n = A m matches reference" + tag);
        GSDeviceMatDestroy(&dA);
        PCGFWorkDestroy(&W);
      }
}

/* KSPMatSolve's block kernels: every column against the single-vector twins, with its own alpha and beta; with a PC
   applied on the host, Z by its recurrence and the sums with the Q the host gives after W = A P */
void TestMatSolveBlock()
{
  for (PetscInt n : sizes) {
    if (n > 100000) continue;
    for (PetscInt k : {1, 5, 8, 13})
      for (PCGFPC pc : {PCGF_PC_NONE, PCGF_PC_JACOBI, PCGF_PC_APPLY})
        for (KSPNormType nt : {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED}) {
          const bool               jacobi = pc == PCGF_PC_JACOBI, apply = pc == PCGF_PC_APPLY;
          const std::string        tag = " n=" + std::to_string(n) + " k=" + std::to_string(k) + (jacobi ? " jacobi" : (apply ? " apply" : " none")) + " norm=" + std::to_string((int)nt);
          CSRHost                  A   = RandomCSR(n, n, 7);
          GSDeviceMat              dA;
          PCGFBlock                B;
          auto                     x = Random(n * k), r = Random(n * k), p = Random(n * k), w = Random(n * k), z = Random(n * k), q = Random(n * k), qw = Random(n * k), d = Random(n, 0.5, 2), alpha = Random(k), beta = Random(k);
          std::vector<PetscScalar> sums(k * PCGF_NSUMS), got(n * k);
          bool                     vecs = true, sumsok = true;

          GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
          Check(!PCGFBlockCreate(n, k, pc, &B), "PCGFBlockCreate" + tag);
          PCGFBlockSetVec(B, PCGF_X, x.data());
          PCGFBlockSetVec(B, PCGF_R, r.data());
          PCGFBlockSetVec(B, PCGF_P, p.data());
          PCGFBlockSetVec(B, PCGF_W, w.data());
          if (jacobi) PCGFBlockSetVec(B, PCGF_DINV, d.data());
          if (apply) {
            PCGFBlockSetVec(B, PCGF_Z, z.data());
            PCGFBlockSetVec(B, PCGF_Q, q.data());
          }
          Check(!PCGFBlockUpdate(B, alpha.data(), beta.data(), nt) && !PCGFBlockSpMVDot(B, dA, nullptr, nullptr, nullptr), "block Update, SpMVDot" + tag);
          if (apply) Check(!PCGFBlockSetVec(B, PCGF_Q, qw.data()) && !PCGFBlockDot(B), "block Dot with the host's Q" + tag); /* qw stands for M^{-1} W */
          Check(!PCGFBlockReduce(B, sums.data()), "block Reduce" + tag);
          for (PetscInt j = 0; j < k; j++) { /* the twins on column j: Update, then w = A p */
            PetscScalar              rs[2], ds[2];
            std::vector<PetscScalar> wj(n);
            if (apply) {
              PCGFUpdateApply_Ref(n, alpha[j], beta[j], nt, x.data() + j * n, r.data() + j * n, z.data() + j * n, p.data() + j * n, w.data() + j * n, q.data() + j * n, rs);
              GSSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), p.data() + j * n, nullptr, wj.data());
              PCGFDot_Ref(n, 1, nullptr, qw.data() + j * n, p.data() + j * n, wj.data(), ds);
            } else {
              PCGFUpdate_Ref(n, 1, alpha[j], beta[j], nt, jacobi ? d.data() : nullptr, x.data() + j * n, r.data() + j * n, p.data() + j * n, w.data() + j * n, rs);
              PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, jacobi ? d.data() : nullptr, p.data() + j * n, wj.data(), ds);
            }
            std::copy(wj.begin(), wj.end(), w.begin() + j * n);
            const std::vector<PetscScalar> rj(r.begin() + j * n, r.begin() + (j + 1) * n), pj(p.begin() + j * n, p.begin() + (j + 1) * n), zj(z.begin() + j * n, z.begin() + (j + 1) * n), qj(qw.begin() + j * n, qw.begin() + (j + 1) * n);
            const PetscScalar             *sj = sums.data() + j * PCGF_NSUMS;
            const PetscScalar              rz = apply ? AbsSum(rj, zj) : 2 * AbsSum(rj, rj), nrm = apply && nt == KSP_NORM_PRECONDITIONED ? AbsSum(zj, zj) : 4 * AbsSum(rj, rj), wq = apply ? AbsSum(wj, qj) : 2 * AbsSum(wj, wj);
            sumsok = sumsok && Close(sj[PCGF_RZ], rs[0], rz) && Close(sj[PCGF_NRM], rs[1], nrm) && Close(sj[PCGF_PW], ds[0], AbsSum(pj, wj)) && Close(sj[PCGF_WDW], ds[1], wq);
          }
          for (PCGFVec v : {PCGF_X, PCGF_R, PCGF_P, PCGF_W, PCGF_Z}) {
            if (v == PCGF_Z && !apply) continue;
            PCGFBlockGetVec(B, v, got.data());
            vecs = vecs && RelDiff(got, v == PCGF_X ? x : (v == PCGF_R ? r : (v == PCGF_P ? p : (v == PCGF_W ? w : z)))) < 1e-14;
          }
          Check(vecs, "block vectors match the single-vector twins column by column" + tag);
          Check(sumsok, "block sums match the single-vector twins column by column" + tag);
          PetscInt l, t, c;
          Check(!PCGFBlockGetCounts(B, &l, &t, &c) && l == 3 && t == 1, "3 launches and 1 transfer for all columns" + tag);
          PCGFBlockDestroy(&B);
          GSDeviceMatDestroy(&dA);
        }
  }
}

/* KSPPIPEBCGSF with point-block Jacobi fused: the block gathers of both SpMVs and the Update by blocks */
void TestBCGSBlocks()
{
  for (PetscInt bs : {2, 3, 6})
    for (PetscInt m : sizes) {
      if (m > 100000) continue;
      for (PetscInt maxlen : {9, 40}) {
        const PetscInt           n      = bs * m;
        const std::string        tag    = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + " maxlen=" + std::to_string(maxlen);
        CSRHost                  A      = RandomCSR(n, n, maxlen);
        auto                     blocks = Random(n * bs, -0.3, 0.3), x = Random(n), r = Random(n), r0 = Random(n), p = Random(n);
        std::vector<PetscScalar> v(n), s(n), t(n), vref(n), tref(n), gx(n), gr(n), gp(n);
        GSDeviceMat              dA;
        PBFWork                  W;
        PetscScalar              sums[PBF_NSUMS], rr0;

        for (PetscInt i = 0; i < n; i++) blocks[i * bs + i % bs] += 2;
        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        Check(!PBFWorkCreate(n, PBF_PC_PBJACOBI, &W) && !PBFWorkSetBlocks(W, bs, blocks.data()), "PBFWorkSetBlocks" + tag);
        PBFWorkSetVec(W, PBF_X, x.data());
        PBFWorkSetVec(W, PBF_R, r.data());
        PBFWorkSetVec(W, PBF_R0, r0.data());
        PBFWorkSetVec(W, PBF_P, p.data());
        Check(!PBFSpMVDot1(W, dA, nullptr, nullptr), "PBFSpMVDot1 blocks" + tag);
        PBFWorkGetVec(W, PBF_V, v.data());
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, blocks.data(), p.data(), vref.data());
        Check(RelDiff(v, vref) < 1e-14, "v = A D^-1 p with blocks matches reference" + tag);
        Check(!PBFUpdateS(W, PETSC_TRUE, 0.7), "PBFUpdateS blocks" + tag);
        PBFWorkGetVec(W, PBF_S, s.data());
        Check(!PBFSpMVDot3(W, dA, nullptr, nullptr), "PBFSpMVDot3 blocks" + tag);
        PBFWorkGetVec(W, PBF_T, t.data());
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, blocks.data(), s.data(), tref.data());
        Check(RelDiff(t, tref) < 1e-14, "t = A D^-1 s with blocks matches reference" + tag);
        Check(!PBFUpdate(W, 0.4, -0.3) && !PBFReduce(W, sums), "PBFUpdate blocks" + tag);
        PBFUpdate_Ref(n, bs, 0.7, 0.4, -0.3, blocks.data(), nullptr, nullptr, x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rr0);
        PBFWorkGetVec(W, PBF_X, gx.data());
        PBFWorkGetVec(W, PBF_R, gr.data());
        PBFWorkGetVec(W, PBF_P, gp.data());
        Check(RelDiff(gx, x) < 1e-13 && RelDiff(gr, r) < 1e-14 && RelDiff(gp, p) < 1e-14, "x, r, p updates by blocks match reference" + tag);
        Check(Close(sums[PBF_RR0], rr0, AbsSum(r, r0)), "<r,r0*> after the update by blocks matches reference" + tag);
        PBFWorkDestroy(&W);
        GSDeviceMatDestroy(&dA);
      }
    }
}

/* The reduction buffer grows when an SpMV needs more teams than it had room for; the Update's partial sums written
   before must survive the growth */
void TestPartialsGrowth()
{
  const PetscInt           n = 1000;
  CSRHost                  A = RandomCSR(n, n, 5);
  GSDeviceMat              dA;
  PCGFWork                 W;
  CGVecs                   v = RandomCG(n), ref = v;
  PetscScalar              sums[PCGF_NSUMS], rsums[2], dsums[2];
  PetscInt                 vlen, team, league;
  std::vector<PetscScalar> wref(n);

  GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
  GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league);
  GSDeviceMatSetLaunchShape(dA, vlen, team, 50000); /* more teams than rows: most do nothing */
  PCGFWorkCreate(n, PCGF_PC_NONE, &W);
  Load(W, v, false);
  PCGFUpdate(W, 0.5, 0.25, KSP_NORM_UNPRECONDITIONED);
  Check(!PCGFSpMVDot(W, dA, nullptr, nullptr), "SpMVDot after the reduction buffer grew");
  PCGFReduce(W, sums);
  PCGFUpdate_Ref(n, 1, 0.5, 0.25, KSP_NORM_UNPRECONDITIONED, nullptr, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
  PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, nullptr, ref.p.data(), wref.data(), dsums);
  Check(Close(sums[PCGF_RZ], rsums[0], AbsSum(ref.r, ref.r) * 2) && Close(sums[PCGF_NRM], rsums[1], AbsSum(ref.r, ref.r) * 2), "Update sums survive the growth of the buffer");
  Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, wref)) && Close(sums[PCGF_WDW], dsums[1], AbsSum(wref, wref) * 2), "SpMVDot sums with a grown buffer");
  PCGFWorkDestroy(&W);
  GSDeviceMatDestroy(&dA);
}

/* Point-block Jacobi fused (PCPBJACOBI): SpMVDot, Dot, Update and Sums against their twins, with blocks of 2, 3 and 6
   rows, short and long rows (on a device: a thread and a warp per row) */
void TestPointBlock()
{
  for (PetscInt bs : {2, 3, 6})
    for (PetscInt m : sizes) {
      if (m > 100000) continue;
      for (PetscInt maxlen : {7, 60}) {
        const PetscInt           n      = bs * m;
        const std::string        tag    = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + " maxlen=" + std::to_string(maxlen);
        CSRHost                  A      = RandomCSR(n, n, maxlen);
        auto                     blocks = Random(n * bs, -0.3, 0.3);
        CGVecs                   v = RandomCG(n), ref = v;
        GSDeviceMat              dA;
        PCGFWork                 W;
        PetscScalar              sums[PCGF_NSUMS], rsums[2];
        std::vector<PetscScalar> wref(n), y(n);

        for (PetscInt i = 0; i < n; i++) blocks[i * bs + i % bs] += 2; /* a dominant diagonal, as an inverse block has */
        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        Check(!PCGFWorkCreate(n, PCGF_PC_PBJACOBI, &W) && !PCGFWorkSetBlocks(W, bs, blocks.data()), "PCGFWorkSetBlocks" + tag);
        Load(W, v, false);
        Check(!PCGFSpMVDot(W, dA, nullptr, nullptr) && !PCGFReduce(W, sums), "SpMVDot blocks" + tag);
        PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, blocks.data(), v.p.data(), wref.data(), rsums);
        CGVecs       got    = Store(W, n);
        const double wscale = 3.0 * bs * AbsSum(wref, wref);
        Check(RelDiff(got.w, wref) < 1e-14, "SpMVDot blocks w = A p matches reference" + tag);
        Check(Close(sums[PCGF_PW], rsums[0], AbsSum(v.p, wref)) && Close(sums[PCGF_WDW], rsums[1], wscale), "SpMVDot blocks sums match reference" + tag);
        GSDeviceMatMult(dA, nullptr, nullptr, v.p.data(), nullptr, y.data());
        Check(RelDiff(y, got.w) == 0, "SpMVDot blocks and plain SpMV are bitwise equal" + tag);
        Check(!PCGFDot(W) && !PCGFReduce(W, sums), "Dot blocks" + tag);
        Check(Close(sums[PCGF_PW], rsums[0], AbsSum(v.p, wref)) && Close(sums[PCGF_WDW], rsums[1], wscale), "Dot blocks matches reference" + tag);
        for (KSPNormType nt : {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL}) {
          const std::string ntag = tag + " norm=" + std::to_string((int)nt);
          ref                    = v;
          Load(W, v, false);
          Check(!PCGFUpdate(W, 0.3, 0.6, nt) && !PCGFReduce(W, sums), "Update blocks" + ntag);
          PCGFUpdate_Ref(n, bs, 0.3, 0.6, nt, blocks.data(), ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
          got = Store(W, n);
          Check(RelDiff(got.x, ref.x) < 1e-14 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-13, "Update blocks vectors match reference" + ntag);
          Check(Close(sums[PCGF_RZ], rsums[0], 3.0 * bs * AbsSum(ref.r, ref.r)) && Close(sums[PCGF_NRM], rsums[1], 9.0 * bs * bs * AbsSum(ref.r, ref.r)), "Update blocks sums match reference" + ntag);
          Check(!PCGFSums(W, nt) && !PCGFReduce(W, sums), "Sums blocks" + ntag);
          PCGFSums_Ref(n, bs, nt, blocks.data(), ref.r.data(), rsums);
          Check(Close(sums[PCGF_RZ], rsums[0], 3.0 * bs * AbsSum(ref.r, ref.r)) && Close(sums[PCGF_NRM], rsums[1], 9.0 * bs * bs * AbsSum(ref.r, ref.r)), "Sums blocks match reference" + ntag);
        }
        PCGFWorkDestroy(&W);
        GSDeviceMatDestroy(&dA);
      }
    }
  /* blocks larger than the fused kernels hold, or that do not divide the local size */
  PCGFWork W;
  PCGFWorkCreate(12, PCGF_PC_PBJACOBI, &W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFWorkSetBlocks(W, PCGF_MAX_BS + 1, nullptr) == PETSC_ERR_ARG_OUTOFRANGE, "a block size above PCGF_MAX_BS is PETSC_ERR_ARG_OUTOFRANGE");
  Check(PCGFWorkSetBlocks(W, 5, nullptr) == PETSC_ERR_ARG_OUTOFRANGE, "a block size that does not divide n is PETSC_ERR_ARG_OUTOFRANGE");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
}

/* KSPPIPEBCGSF's kernels against their twins, with PCNONE, fused Jacobi and a PC applied on the host; short and long
   rows (on a device: a thread and a warp per row) */
void TestBCGS()
{
  for (PetscInt n : sizes) {
    for (PBFPC pc : {PBF_PC_NONE, PBF_PC_JACOBI, PBF_PC_APPLY})
      for (PetscInt maxlen : {9, 40}) {
        const std::string        tag = " n=" + std::to_string(n) + " pc=" + std::to_string((int)pc) + " maxlen=" + std::to_string(maxlen);
        CSRHost                  A   = RandomCSR(n, n, maxlen);
        GSDeviceMat              dA;
        PBFWork                  W;
        auto                     x = Random(n), r = Random(n), r0 = Random(n), p = Random(n), d = Random(n, 0.5, 2), ph = Random(n), sh = Random(n);
        std::vector<PetscScalar> v(n), s(n), t(n), got(n), dv(n);
        PetscScalar              sums[PBF_NSUMS], rr0 = 0, vr0 = 0, ss, ts = 0, tt = 0, tr0 = 0;
        const PetscScalar       *dinv = pc == PBF_PC_JACOBI ? d.data() : nullptr;

        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        Check(!PBFWorkCreate(n, pc, &W), "PBFWorkCreate" + tag);
        PBFWorkSetVec(W, PBF_X, x.data());
        PBFWorkSetVec(W, PBF_R, r.data());
        PBFWorkSetVec(W, PBF_R0, r0.data());
        PBFWorkSetVec(W, PBF_P, p.data());
        if (dinv) PBFWorkSetVec(W, PBF_DINV, d.data());
        if (pc == PBF_PC_APPLY) {
          PBFWorkSetVec(W, PBF_PH, ph.data());
          PBFWorkSetVec(W, PBF_SH, sh.data());
        }
        /* <r,r0*>; v = A M^{-1} p and <v,r0*> (the fused kernel knows Jacobi; an applied PC goes through MatMult) */
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, p.data(), v.data());
        for (PetscInt i = 0; i < n; i++) rr0 += r[i] * r0[i], vr0 += v[i] * r0[i];
        Check(!PBFRDot(W), "PBFRDot" + tag);
        if (pc == PBF_PC_APPLY) {
          PBFWorkSetVec(W, PBF_V, v.data());
          Check(!PBFDot1(W), "PBFDot1" + tag);
        } else
          Check(!PBFSpMVDot1(W, dA, nullptr, nullptr), "PBFSpMVDot1" + tag);
        PBFWorkGetVec(W, PBF_V, got.data());
        Check(RelDiff(got, v) < 1e-14, "v = A M^-1 p matches reference" + tag);
        if (n && vr0 == 0) { /* an empty row made v = 0: the solver stops at this breakdown before UpdateS */
          PBFWorkDestroy(&W);
          GSDeviceMatDestroy(&dA);
          continue;
        }
        /* s = r - alpha v with alpha from the partial sums in device memory */
        Check(!PBFUpdateS(W, PETSC_FALSE, 0.0), "PBFUpdateS" + tag);
        PBFReduce(W, sums);
        Check(Close(sums[PBF_RR0], rr0, AbsSum(r, r0)) && Close(sums[PBF_VR0], vr0, AbsSum(v, r0)), "<r,r0*> and <v,r0*> match reference" + tag);
        const PetscScalar alpha = n ? rr0 / vr0 : 0;
        PBFUpdateS_Ref(n, alpha, r.data(), v.data(), s.data(), &ss);
        if (n) {
          PBFWorkGetVec(W, PBF_S, got.data());
          Check(RelDiff(got, s) < 1e-9 * std::max(1.0, std::abs(alpha)), "s with the device's alpha matches reference" + tag);
        }
        /* the given alpha (several ranks) gives the reference s exactly up to FMA */
        PBFUpdateS(W, PETSC_TRUE, alpha);
        PBFWorkGetVec(W, PBF_S, got.data());
        Check(RelDiff(got, s) < 1e-14, "s with a given alpha matches reference" + tag);
        /* t = A M^{-1} s and its three sums */
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, s.data(), t.data());
        for (PetscInt i = 0; i < n; i++) ts += t[i] * s[i], tt += t[i] * t[i], tr0 += t[i] * r0[i];
        if (pc == PBF_PC_APPLY) {
          PBFWorkSetVec(W, PBF_T, t.data());
          Check(!PBFDot3(W), "PBFDot3" + tag);
        } else
          Check(!PBFSpMVDot3(W, dA, nullptr, nullptr), "PBFSpMVDot3" + tag);
        PBFReduce(W, sums);
        PBFWorkGetVec(W, PBF_T, got.data());
        Check(RelDiff(got, t) < 1e-14, "t = A M^-1 s matches reference" + tag);
        Check(Close(sums[PBF_SS], ss, AbsSum(s, s)) && Close(sums[PBF_TS], ts, AbsSum(t, s)) && Close(sums[PBF_TT], tt, AbsSum(t, t)) && Close(sums[PBF_TR0], tr0, AbsSum(t, r0)), "the four sums match reference" + tag);
        /* x, r, p and <r,r0*> */
        PetscScalar rrnew;
        Check(!PBFUpdate(W, 0.4, -0.3), "PBFUpdate" + tag); /* with the alpha of the last UpdateS, the given one */
        PBFReduce(W, sums);
        PBFUpdate_Ref(n, 1, alpha, 0.4, -0.3, dinv, pc == PBF_PC_APPLY ? ph.data() : nullptr, sh.data(), x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rrnew);
        std::vector<PetscScalar> gx(n), gr(n), gp(n);
        PBFWorkGetVec(W, PBF_X, gx.data());
        PBFWorkGetVec(W, PBF_R, gr.data());
        PBFWorkGetVec(W, PBF_P, gp.data());
        Check(RelDiff(gx, x) < 1e-9 && RelDiff(gr, r) < 1e-9 && RelDiff(gp, p) < 1e-9, "x, r, p updates match reference" + tag);
        Check(Close(sums[PBF_RR0], rrnew, 1e3 * (AbsSum(r, r0) + 1)), "<r,r0*> after the update matches reference" + tag);
        PBFWorkDestroy(&W);
        GSDeviceMatDestroy(&dA);
      }
  }
}

/* UpdateS folded into the second SpMV (PBFSpMVDot3Final with formS, device scalars), after RDot and SpMVDot1: s and t against
   PBFUpdateS_Ref with alpha from the twins' sums and PBFSpMV_Ref, the slot's sums against the twins', the Update
   reading the alpha the kernel stored; PCNONE and Jacobi, short and long rows, CSR and block storage; 3 launches */
void TestBCGSFold()
{
  for (PetscInt n0 : sizes) {
    if (n0 == 0) continue;
    for (PetscInt bs : {1, 3})
      for (PBFPC pc : {PBF_PC_NONE, PBF_PC_JACOBI})
        for (PetscInt maxlen : {9, 40}) {
          if (bs > 1 && maxlen > 9) continue;
          const PetscInt           n   = bs * n0;
          const std::string        tag = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + " pc=" + std::to_string((int)pc) + " maxlen=" + std::to_string(maxlen);
          const CSRHost            A   = bs == 1 ? RandomCSR(n, n, maxlen) : RandomBlockCSR(n0, bs, 3);
          GSDeviceMat              dA;
          PBFWork                  W;
          auto                     x = Random(n), r = Random(n), r0 = Random(n), p = Random(n), d = Random(n, 0.5, 2);
          std::vector<PetscScalar> v(n), s(n), t(n), got(n);
          PetscScalar              sums[PBF_NSUMS], rr0 = 0, rr = 0, vr0 = 0, ss, ts = 0, tt = 0, tr0 = 0;
          PetscInt                 l, tr, c;
          const PetscScalar       *dinv = pc == PBF_PC_JACOBI ? d.data() : nullptr;

          Check(!GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dA), "GSDeviceMatCreate" + tag);
          Check(!PBFWorkCreate(n, pc, &W) && !PBFWorkSetDeviceScalars(W), "PBFWorkSetDeviceScalars" + tag);
          PBFWorkSetVec(W, PBF_X, x.data());
          PBFWorkSetVec(W, PBF_R, r.data());
          PBFWorkSetVec(W, PBF_R0, r0.data());
          PBFWorkSetVec(W, PBF_P, p.data());
          if (dinv) PBFWorkSetVec(W, PBF_DINV, d.data());
          PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, p.data(), v.data());
          for (PetscInt i = 0; i < n; i++) rr0 += r[i] * r0[i], rr += r[i] * r[i], vr0 += v[i] * r0[i];
          if (vr0 == 0) { /* the solver stops at this breakdown before s */
            PBFWorkDestroy(&W);
            GSDeviceMatDestroy(&dA);
            continue;
          }
          const PetscScalar alpha = rr0 / vr0;
          PBFUpdateS_Ref(n, alpha, r.data(), v.data(), s.data(), &ss);
          PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, s.data(), t.data());
          for (PetscInt i = 0; i < n; i++) ts += t[i] * s[i], tt += t[i] * t[i], tr0 += t[i] * r0[i];
          Check(!PBFRDot(W) && !PBFSpMVDot1(W, dA, nullptr, nullptr) && !PBFSpMVDot3Final(W, dA, 1, PETSC_TRUE) && !PBFReduceSlot(W, 1, sums), "RDot, SpMVDot1, SpMVDot3Final with s, ReduceSlot" + tag);
          /* the device's alpha carries the rounding of its sums, amplified by cancellation in <v,r0*> */
          const double amp = (1 + std::abs(alpha)) * (1 + AbsSum(v, r0) / std::abs(vr0));
          PBFWorkGetVec(W, PBF_S, got.data());
          Check(RelDiff(got, s) < 1e-13 * amp, "s formed in the SpMV matches reference" + tag);
          PBFWorkGetVec(W, PBF_T, got.data());
          Check(RelDiff(got, t) < 1e-12 * amp, "t = A M^-1 s of the gathered s matches reference" + tag);
          Check(Close(sums[PBF_RR0], rr0, AbsSum(r, r0)) && Close(sums[PBF_RR], rr, AbsSum(r, r)) && Close(sums[PBF_VR0], vr0, AbsSum(v, r0)), "<r,r0*>, <r,r>, <v,r0*> in the slot" + tag);
          Check(Close(sums[PBF_SS], ss, 1e2 * amp * AbsSum(s, s)) && Close(sums[PBF_TS], ts, 1e2 * amp * AbsSum(t, s)) && Close(sums[PBF_TT], tt, 1e2 * amp * AbsSum(t, t)) && Close(sums[PBF_TR0], tr0, 1e2 * amp * AbsSum(t, r0)),
                "<s,s>, <t,s>, <t,t>, <t,r0*> in the slot" + tag);
          /* the Update moves x by the alpha the kernel stored (and the device's omega and beta) */
          const PetscScalar omega = sums[PBF_TT] != 0 ? sums[PBF_TS] / sums[PBF_TT] : 0, beta = sums[PBF_VR0] != 0 ? -sums[PBF_TR0] / sums[PBF_VR0] : 0;
          PetscScalar       rrnew;
          Check(!PBFUpdateDevice(W), "PBFUpdateDevice" + tag);
          PBFUpdate_Ref(n, 1, alpha, omega, beta, dinv, nullptr, nullptr, x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rrnew);
          PBFWorkGetVec(W, PBF_X, got.data());
          Check(RelDiff(got, x) < 1e-11 * amp, "the Update after the fold moves x by the stored alpha" + tag);
          PBFWorkGetCounts(W, &l, &tr, &c);
          Check(l == 4 && tr == 1, "RDot, SpMVDot1, SpMVDot3Final with s, Update: 4 launches, 1 transfer" + tag);
          PBFWorkDestroy(&W);
          GSDeviceMatDestroy(&dA);
        }
  }
}

/* KSPPIPEBCGSF's SpMV stages on several processes (unit.kernels_np2 runs them on two; on one the off-diagonal block
   is empty): the interior kernel over the diagonal block (CSR and block storage) while the halo exchange travels,
   the ghost values scaled by their owners' D^{-1} under Jacobi, then the off-diagonal kernel. v and t against the
   twins of the two blocks with the ghost values gathered on the host, the local sums where PBFReduce() reads them,
   and the launches: the gather (where this process sends), the interior kernel, the off-diagonal one (where a row
   has off-diagonal entries). Uneven partitions; about one row in three has off-diagonal entries. */
void TestBCGSHalo()
{
  const MPI_Comm comm = PETSC_COMM_WORLD;
  PetscMPIInt    size, rank;

  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  for (PetscInt m : sizes) {
    if (m > 100000) continue;
    for (PetscInt bs : {1, 3})
      for (PBFPC pc : {PBF_PC_NONE, PBF_PC_JACOBI}) {
        const PetscInt           n   = bs * (m + rank);
        const std::string        tag = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + " pc=" + std::to_string((int)pc) + " rank=" + std::to_string(rank);
        const PetscMPIInt        nl  = (PetscMPIInt)n;
        std::vector<PetscMPIInt> counts(size), displs(size + 1, 0);
        std::vector<PetscInt>    ranges(size + 1, 0), garray;

        MPI_Allgather(&nl, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
        for (PetscMPIInt q = 0; q < size; q++) {
          displs[q + 1] = displs[q] + counts[q];
          ranges[q + 1] = displs[q + 1];
        }
        const PetscInt           N = ranges[size];
        auto                     p = Random(n), s = Random(n), r0 = Random(n), d = Random(n, 0.5, 2);
        std::vector<PetscScalar> pall(N), sall(N), dall(N), v(n), t(n), got(n);
        MPI_Allgatherv(p.data(), nl, MPIU_SCALAR, pall.data(), counts.data(), displs.data(), MPIU_SCALAR, comm);
        MPI_Allgatherv(s.data(), nl, MPIU_SCALAR, sall.data(), counts.data(), displs.data(), MPIU_SCALAR, comm);
        MPI_Allgatherv(d.data(), nl, MPIU_SCALAR, dall.data(), counts.data(), displs.data(), MPIU_SCALAR, comm);
        std::bernoulli_distribution             ghost(0.2), offdiag(0.3);
        std::uniform_int_distribution<PetscInt> len(1, 6);
        for (PetscInt c = 0; c < N; c++)
          if ((c < ranges[rank] || c >= ranges[rank + 1]) && ghost(rng)) garray.push_back(c);
        const PetscInt     ng   = (PetscInt)garray.size();
        const CSRHost      A    = bs == 1 ? RandomCSR(n, n, 9) : RandomBlockCSR(n / bs, bs, 4);
        const CSRHost      B    = RandomCSRBy(n, ng, [&](PetscInt) { return offdiag(rng) ? len(rng) : 0; });
        const PetscScalar *dinv = pc == PBF_PC_JACOBI ? d.data() : nullptr;
        /* the twins: the diagonal block on the local values, the off-diagonal block added on the ghost values with
           their owners' D^{-1} */
        const auto Twin = [&](const std::vector<PetscScalar> &x, const std::vector<PetscScalar> &xall, std::vector<PetscScalar> &y) {
          std::vector<PetscScalar> ya(n), g(ng);
          for (PetscInt j = 0; j < ng; j++) g[j] = (dinv ? dall[garray[j]] : 1) * xall[garray[j]];
          PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, x.data(), ya.data());
          GSSpMV_Ref(n, B.ia.data(), B.ja.data(), B.a.data(), g.data(), ya.data(), y.data());
        };
        GSDeviceMat dA, dB;
        GSHalo      H;
        PBFWork     W;
        PetscBool   devicempi;
        const char *why;
        PetscInt    nsend, nghost, neighbors, offrows = 0, l0, l1, t0, c0;
        PetscScalar sums[PBF_NSUMS], vr0 = 0, ts = 0, tt = 0, tr0 = 0;

        for (PetscInt i = 0; i < n; i++) offrows += B.ia[i + 1] > B.ia[i];
        GSHaloUseDeviceMPI(GS_DEVICE_MPI_AUTO, NULL, &devicempi, &why);
        Check(!GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dA) && !GSDeviceMatCreate(n, ng, B.ia.data(), B.ja.data(), B.a.data(), PETSC_TRUE, 1, -1, &dB), "GSDeviceMatCreate" + tag);
        Check(!GSHaloCreate(comm, n, ranges.data(), ng, garray.data(), devicempi, &H) && !GSHaloGetSizes(H, &nsend, &nghost, &neighbors, nullptr), "GSHaloCreate" + tag);
        Check(!PBFWorkCreate(n, pc, &W), "PBFWorkCreate" + tag);
        PBFWorkSetVec(W, PBF_P, p.data());
        PBFWorkSetVec(W, PBF_S, s.data());
        PBFWorkSetVec(W, PBF_R0, r0.data());
        if (dinv) PBFWorkSetVec(W, PBF_DINV, d.data());
        const PetscInt launches = (nsend > 0) + 1 + (offrows > 0);

        PBFWorkGetCounts(W, &l0, &t0, &c0);
        Check(!PBFSpMVDot1(W, dA, dB, H), "PBFSpMVDot1 with the halo" + tag);
        PBFWorkGetCounts(W, &l1, &t0, &c0);
        Check(l1 - l0 == launches, "SpMVDot1 with the halo: gather, interior and off-diagonal launches" + tag);
        Twin(p, pall, v);
        PBFWorkGetVec(W, PBF_V, got.data());
        Check(RelDiff(got, v) < 1e-14, "v = A M^-1 p with the halo matches the twins" + tag);
        for (PetscInt i = 0; i < n; i++) vr0 += v[i] * r0[i];
        PBFReduce(W, sums);
        Check(Close(sums[PBF_VR0], vr0, AbsSum(v, r0)), "local <v,r0*> with the halo matches the twins" + tag);

        Check(!PBFSpMVDot3(W, dA, dB, H), "PBFSpMVDot3 with the halo" + tag);
        PBFWorkGetCounts(W, &l0, &t0, &c0);
        Check(l0 - l1 == launches, "SpMVDot3 with the halo: gather, interior and off-diagonal launches" + tag);
        Twin(s, sall, t);
        PBFWorkGetVec(W, PBF_T, got.data());
        Check(RelDiff(got, t) < 1e-14, "t = A M^-1 s with the halo matches the twins" + tag);
        for (PetscInt i = 0; i < n; i++) ts += t[i] * s[i], tt += t[i] * t[i], tr0 += t[i] * r0[i];
        PBFReduce(W, sums);
        Check(Close(sums[PBF_TS], ts, AbsSum(t, s)) && Close(sums[PBF_TT], tt, AbsSum(t, t)) && Close(sums[PBF_TR0], tr0, AbsSum(t, r0)) && Close(sums[PBF_VR0], vr0, AbsSum(v, r0)),
              "local <t,s>, <t,t>, <t,r0*> with the halo match the twins, <v,r0*> kept" + tag);
        PBFWorkDestroy(&W);
        GSHaloDestroy(&H);
        GSDeviceMatDestroy(&dB);
        GSDeviceMatDestroy(&dA);
      }
  }
}

/* A case of the sgmresf kernel tests: pcteams % 4 picks PCNONE, fused Jacobi, point-block Jacobi (3 x 3 blocks) or a
   column computed elsewhere, pcteams >= 4 seven teams instead of the default (sums across teams on a host backend
   too); a random 9-per-row matrix of n0 rows (rounded down to whole blocks) and inverse diagonal blocks */
struct SGFCase {
  const SGFPC              pc;
  const PetscInt           teams, bs, n;
  const CSRHost            A;
  GSDeviceMat              dA;
  std::vector<PetscScalar> d;
  const PetscScalar       *dinv;
  const std::string        tag;

  static SGFPC PCOf(int pcteams)
  {
    const SGFPC pcs[4] = {SGF_PC_NONE, SGF_PC_JACOBI, SGF_PC_PBJACOBI, SGF_PC_APPLY};
    return pcs[pcteams % 4];
  }

  SGFCase(PetscInt n0, int pcteams)
      : pc(PCOf(pcteams)), teams(pcteams < 4 ? 0 : 7), bs(pc == SGF_PC_PBJACOBI ? 3 : 1), n(n0 - n0 % bs), A(RandomCSR(n, n, 9)), d(Random(n * bs, 0.5, 2)), dinv(pc == SGF_PC_JACOBI || pc == SGF_PC_PBJACOBI ? d.data() : nullptr),
        tag(" n=" + std::to_string(n) + " pc=" + std::to_string((int)pc) + " teams=" + std::to_string(teams))
  {
    GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
  }
  ~SGFCase()
  {
    GSDeviceMatDestroy(&dA);
  }

  /* a work for restart m with the case's teams and inverse diagonal blocks */
  SGFWork Work(PetscInt m, const std::string &what) const
  {
    SGFWork W = nullptr;
    Check(!SGFWorkCreate(n, m, pc, bs, &W), "SGFWorkCreate" + what);
    if (teams) Check(!SGFWorkSetTeams(W, teams), "SGFWorkSetTeams" + what);
    if (dinv) SGFWorkSetVec(W, SGF_DINV, d.data());
    return W;
  }
};

/* KSPSGMRESF's kernels against their twins: iterations k = 1 (no orthogonalization), 2, 9 and 11 (sums in one, two
   chunks), the refinement never, ifneeded, always, with sums reduced on the device or given by the host, PCNONE,
   fused Jacobi and point-block Jacobi (SpMVDot) or a column computed elsewhere (Dot). Basis columns 1.. have norm about 0.1, so that the
   refined norm stays positive. The largest size runs the two-chunk cases only. */
void TestSGMRES()
{
  const PetscInt m = 11;
  for (PetscInt n0 : sizes) {
    for (int pcteams = 0; pcteams < 2 * 4; pcteams++) {
      if (pcteams >= 4 && n0 > 10007) continue;
      const SGFCase      C(n0, pcteams);
      const SGFPC        pc = C.pc;
      const PetscInt     bs = C.bs, n = C.n;
      const CSRHost     &A    = C.A;
      const GSDeviceMat  dA   = C.dA;
      const PetscScalar *dinv = C.dinv;
      const std::string &tagn = C.tag;
      auto               x = Random(n), b = Random(n);
      SGFWork            W = C.Work(m, tagn);
      for (PetscInt k : {1, 2, 9, 11}) {
        for (SGFRefine refine : {SGF_REFINE_NEVER, SGF_REFINE_IFNEEDED, SGF_REFINE_ALWAYS}) {
          if (n > 20000 && (k < 9 || refine == SGF_REFINE_IFNEEDED)) continue; /* many teams: the long cases only */
          for (PetscBool given : {PETSC_FALSE, PETSC_TRUE}) {
            if (given && refine == SGF_REFINE_IFNEEDED) continue; /* the host decides first */
            const std::string        tag = tagn + " k=" + std::to_string(k) + " refine=" + std::to_string((int)refine) + " given=" + std::to_string((int)given);
            std::vector<PetscScalar> V(n * (m + 1)), col(n), ref(n), s1(k), s2(k), got(std::max<PetscInt>(k, 1)), R((m + 1) * (m + 1)), rec(SGF_NREC);
            const double             sc = n ? 0.1 * std::sqrt(3.0 / n) : 0;
            PetscScalar              rkk, xi, gxi;

            V = Random(n * (m + 1));
            for (PetscInt i = n; i < n * (m + 1); i++) V[i] *= sc;
            for (PetscInt j = 0; j < k; j++) SGFWorkSetColumn(W, j, V.data() + j * n);
            /* w = s A M^{-1} v_{k-1} and the first-stage sums */
            SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, k, k == 1 ? 0.7 : 1.0, V.data(), s1.data());
            if (pc == SGF_PC_APPLY) {
              SGFWorkSetColumn(W, k, V.data() + k * n);
              Check(!SGFDot(W, k), "SGFDot" + tag);
            } else
              Check(!SGFSpMVDot(W, dA, k, k == 1 ? 0.7 : 1.0), "SGFSpMVDot" + tag);
            SGFWorkGetColumn(W, k, col.data());
            Check(RelDiff(col, std::vector<PetscScalar>(V.begin() + k * n, V.begin() + (k + 1) * n)) < 1e-14, "w = A M^-1 v matches reference" + tag);
            SGFReduceDots(W, SGF_PASS1, k, got.data());
            bool ok = true;
            for (PetscInt j = 0; j < k; j++) ok = ok && Close(got[j], s1[j], 10 * n);
            Check(ok, "first-stage sums match reference" + tag);
            for (PetscInt j = 0; j < k; j++) s1[j] = got[j]; /* the twin continues with the device's sums */
            PetscBool refined = PETSC_FALSE;
            if (k > 1) {
              PetscScalar hh = 0;
              for (PetscInt j = 1; j < k; j++) hh += s1[j] * s1[j];
              refined = (PetscBool)(refine == SGF_REFINE_ALWAYS || (refine == SGF_REFINE_IFNEEDED && SGF_REFINE_NEEDED(s1[0], hh)));
              if (given) SGFWorkSetGiven(W, k, s1.data());
              Check(!SGFOrthogonalize(W, k, refine, given), "SGFOrthogonalize" + tag);
              SGFOrthogonalize_Ref(n, k, s1.data(), refined, V.data(), s2.data());
              SGFWorkGetColumn(W, k, col.data());
              Check(RelDiff(col, std::vector<PetscScalar>(V.begin() + k * n, V.begin() + (k + 1) * n)) < 1e-12, "w' matches reference" + tag);
              SGFReduceDots(W, SGF_PASS2, refined ? k : 1, got.data());
              ok = true;
              for (PetscInt j = 0; j < (refined ? k : 1); j++) ok = ok && Close(got[j], s2[j], 10 * n);
              Check(ok, "second-pass sums match reference" + tag);
              for (PetscInt j = 0; j < (refined ? k : 1); j++) s2[j] = got[j];
              if (given) SGFWorkSetGiven(W, refined ? k : 1, s2.data());
            } else {
              s2[0] = s1[0];
              if (given) SGFWorkSetGiven(W, 1, s2.data());
            }
            Check(!SGFNormalize(W, k, given, PETSC_FALSE), "SGFNormalize" + tag);
            SGFReduceXi(W, &gxi, rec.data());
            SGFNormalize_Ref(n, k, refined, s2.data(), V.data(), &rkk, &xi);
            SGFWorkGetColumn(W, k, col.data());
            Check(RelDiff(col, std::vector<PetscScalar>(V.begin() + k * n, V.begin() + (k + 1) * n)) < 1e-10, "v_k matches reference" + tag);
            Check(Close(rec[SGF_REC_RKK], rkk, 1e3 * std::abs(rkk)) && (rec[SGF_REC_REFINED] != 0) == (bool)refined && Close(rec[SGF_REC_WW], s1[0], 10 * n), "R(k,k) and the record match reference" + tag);
            Check(Close(gxi, xi, 10 * n), "xi matches reference" + tag);
            { /* the asynchronous path reads the same from slot k % 2, where Normalize stored it, and refuses the other */
              PetscScalar xi1, rec1[SGF_NREC];
              Check(!SGFReduceXiBegin(W, k % 2) && !SGFReduceXiEnd(W, k % 2, &xi1, rec1), "SGFReduceXiBegin/End" + tag);
              Check(xi1 == gxi && rec1[SGF_REC_RKK] == rec[SGF_REC_RKK] && rec1[SGF_REC_REFINED] == rec[SGF_REC_REFINED], "xi through the slot of step k" + tag);
              PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
              Check(SGFReduceXiBegin(W, (k + 1) % 2) == PETSC_ERR_ARG_WRONGSTATE, "SGFReduceXiBegin refuses the slot Normalize did not store" + tag);
              PetscPopErrorHandler();
            }
            /* R(:,k): the first pass's sums plus the refinement's, and R(k,k) */
            SGFGetR(W, R.data());
            ok = Close(R[k + k * (m + 1)], rkk, 1e3 * std::abs(rkk));
            for (PetscInt j = 1; j < k; j++) ok = ok && Close(R[j + k * (m + 1)], s1[j] + (refined ? s2[j] : 0), 10 * n);
            Check(ok, "R(:,k) matches reference" + tag);
            /* x += M^{-1} V(:,0:k-1) c, or u = V(:,0:k-1) c */
            auto c = Random(k);
            SGFWorkSetGiven(W, k, c.data());
            std::vector<PetscScalar> xr = x, u(n, 0.0), ur(n);
            if (pc != SGF_PC_APPLY) {
              SGFWorkSetVec(W, SGF_X, x.data());
              Check(!SGFUpdateSolution(W, k, PETSC_FALSE), "SGFUpdateSolution" + tag);
              SGFUpdateSolution_Ref(n, k, c.data(), dinv, bs, V.data(), xr.data(), ur.data());
              SGFWorkGetVec(W, SGF_X, col.data());
              Check(RelDiff(col, xr) < 1e-12, "x update matches reference" + tag);
            }
            Check(!SGFUpdateSolution(W, k, PETSC_TRUE), "SGFUpdateSolution into u" + tag);
            SGFUpdateSolution_Ref(n, k, c.data(), nullptr, 1, V.data(), u.data(), ur.data());
            SGFWorkGetVec(W, SGF_U, col.data());
            Check(RelDiff(col, u) < 1e-12, "u = V c matches reference" + tag);
          }
        }
      }
      /* r0 = b - A x into column 0 and <r0,r0> */
      if (pc != SGF_PC_APPLY) {
        std::vector<PetscScalar> r(n), col(n), rec(SGF_NREC);
        PetscScalar              rr, grr;
        SGFWorkSetVec(W, SGF_X, x.data());
        SGFWorkSetVec(W, SGF_B, b.data());
        Check(!SGFResidual(W, dA), "SGFResidual" + tagn);
        SGFReduceXi(W, &grr, rec.data());
        SGFResidual_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), x.data(), b.data(), r.data(), &rr);
        SGFWorkGetColumn(W, 0, col.data());
        Check(RelDiff(col, r) < 1e-14 && Close(grr, rr, AbsSum(r, r)), "residual and its norm match reference" + tagn);
      }
      SGFWorkDestroy(&W);
    }
  }
}

/* KSPSGMRESF's delayed refinement: a whole cycle of m = 36 (pairs of more than 32 columns: two passes of the CUDA
   butterfly) from a random r0, every iteration against the twins (SpMV, the pairs, the coefficients and R, the two
   columns, xi and the record), then the cycle's close (Dot, Normalize with close); sums reduced on the device or
   given by the host, the PCs of TestSGMRES, default teams and 7 teams. The twins go on with the device's sums and
   columns, so that rounding does not pile up over the cycle. */
void TestSGMRESDelayed()
{
  const PetscInt m = 36, ld = m + 1;
  for (PetscInt n0 : sizes) {
    for (int pcteams = 0; pcteams < 2 * 4; pcteams++) {
      if ((pcteams >= 4 && n0 > 10007) || (n0 > 20000 && pcteams > 1)) continue;
      const SGFCase      C(n0, pcteams);
      const SGFPC        pc = C.pc;
      const PetscInt     bs = C.bs, n = C.n, kmax = n >= 8 ? std::min<PetscInt>(m, n / 2) : 2; /* well inside the Krylov space's dimension (a breakdown ends it) */
      const CSRHost     &A    = C.A;
      const GSDeviceMat  dA   = C.dA;
      const PetscScalar *dinv = C.dinv;
      for (PetscBool given : {PETSC_FALSE, PETSC_TRUE}) {
        const std::string        tagn = C.tag + " given=" + std::to_string((int)given);
        SGFWork                  W    = C.Work(m, tagn);
        std::vector<PetscScalar> V    = Random(n * (m + 1)), col(n), sums(2 * m), got(2 * m), coef(2 * m + 2), Rt(ld * ld, 0.0), R(ld * ld), rect(SGF_NREC), rec(SGF_NREC);
        PetscScalar              xi, gxi;
        auto                     Col = [&](PetscInt j) { return std::vector<PetscScalar>(V.begin() + j * n, V.begin() + (j + 1) * n); };

        SGFWorkSetColumn(W, 0, V.data());
        /* iteration 1: column 1 only */
        SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, 1, 0.7, V.data(), sums.data());
        if (pc == SGF_PC_APPLY) {
          SGFWorkSetColumn(W, 1, V.data() + n);
          Check(!SGFDot(W, 1), "SGFDot" + tagn);
        } else
          Check(!SGFSpMVDot(W, dA, 1, 0.7), "SGFSpMVDot" + tagn);
        SGFWorkGetColumn(W, 1, col.data());
        Check(RelDiff(col, Col(1)) < 1e-14, "column 1 matches reference" + tagn);
        bool ok = true, closed = false;
        for (PetscInt k = 2; k <= kmax && ok; k++) {
          const PetscInt    nc  = k - 1;
          const std::string tag = tagn + " k=" + std::to_string(k);
          if (k > 2) { /* w'_{k-1} -= V c, R(:,k-1) += c: the same Arnoldi relation, but a second pass of size c */
            auto c = Random(nc - 1, -0.3, 0.3);
            for (PetscInt j = 1; j < nc; j++) {
              for (PetscInt i = 0; i < n; i++) V[nc * n + i] -= c[j - 1] * V[j * n + i];
              Rt[j + nc * ld] += c[j - 1];
            }
            SGFWorkSetColumn(W, nc, V.data() + nc * n);
            SGFWorkSetR(W, Rt.data());
          }
          /* V(:,k) = A M^{-1} w'_{k-1} and the pairs */
          SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, k, 1.0, V.data(), got.data());
          SGFPairDots_Ref(n, k, V.data(), sums.data());
          if (pc == SGF_PC_APPLY || given) { /* the column from elsewhere (several processes: SpMVHalo) */
            SGFWorkSetColumn(W, k, V.data() + k * n);
            ok = ok && !SGFDotDelayed(W, k, (PetscBool)!given);
          } else
            ok = ok && !SGFSpMVDotDelayed(W, dA, k);
          SGFWorkGetColumn(W, k, col.data());
          ok = ok && RelDiff(col, Col(k)) < 1e-12;
          Check(ok, "SpMV of w'_{k-1} matches reference" + tag);
          SGFReduceDots(W, SGF_PASS1, 2 * nc, got.data());
          for (PetscInt j = 0; j < 2 * nc; j++) ok = ok && Close(got[j], sums[j], 10 * n);
          Check(ok, "the pairs match reference" + tag);
          if (given) SGFWorkSetGiven(W, 2 * nc, got.data());
          SGFCoefficients_Ref(k, got.data(), ld, Rt.data(), coef.data(), rect.data());
          /* v_{k-1}, w'_k and xi_{k-1} */
          ok = ok && !SGFOrthogonalizeDelayed(W, k, given);
          SGFReduceXi(W, &gxi, rec.data());
          if (rect[SGF_REC_RKK] <= 1e-8 * std::sqrt(std::abs(rect[SGF_REC_WW]))) { /* a breakdown (the solver's is at 100 epsilon): rounding from here on */
            closed = true;
            break;
          }
          SGFOrthogonalizeDelayed_Ref(n, k, coef.data(), V.data(), &xi);
          SGFWorkGetColumn(W, nc, col.data());
          ok = ok && RelDiff(col, Col(nc)) < 1e-10;
          SGFWorkGetColumn(W, k, col.data());
          ok = ok && RelDiff(col, Col(k)) < 1e-10;
          Check(ok, "v_{k-1} and w'_k match reference" + tag);
          ok = ok && Close(gxi, xi, 10 * n) && Close(rec[SGF_REC_RKK], rect[SGF_REC_RKK], 1e3 * std::abs(rect[SGF_REC_RKK])) && rec[SGF_REC_REFINED] == 1 && Close(rec[SGF_REC_WW], rect[SGF_REC_WW], 1e3 * std::abs(rect[SGF_REC_WW]));
          Check(ok, "xi_{k-1} and step k-1's record match reference" + tag);
          SGFGetR(W, R.data());
          for (PetscInt j = 1; j <= nc; j++) ok = ok && Close(R[j + nc * ld], Rt[j + nc * ld], 1e3 * (std::abs(Rt[j + nc * ld]) + 1)) && Close(R[j + k * ld], Rt[j + k * ld], 1e3 * (std::abs(Rt[j + k * ld]) + 1));
          Check(ok, "R(:,k-1) and the first pass of R(:,k) match reference" + tag);
          /* the twins go on from the device's columns and R */
          for (PetscInt j : {nc, k}) SGFWorkGetColumn(W, j, V.data() + j * n);
          Rt = R;
        }
        if (ok && !closed) { /* the close of the cycle at kmax */
          const PetscInt k = kmax;
          PetscScalar    rkk, ww = 0;
          for (PetscInt j = 0; j < k; j++) {
            sums[j] = 0;
            for (PetscInt i = 0; i < n; i++) sums[j] += V[(j ? j : k) * n + i] * V[k * n + i];
          }
          Check(!SGFDot(W, k), "SGFDot" + tagn);
          SGFReduceDots(W, SGF_PASS1, k, got.data());
          for (PetscInt j = 0; j < k; j++) ok = ok && Close(got[j], sums[j], 10 * n);
          Check(ok, "the close's sums match reference" + tagn);
          if (given) SGFWorkSetGiven(W, k, got.data());
          Check(!SGFNormalize(W, k, given, PETSC_TRUE), "SGFNormalize close" + tagn);
          SGFReduceXi(W, &gxi, rec.data());
          ww = got[0];
          for (PetscInt j = 1; j < k; j++) ww += Rt[j + k * ld] * Rt[j + k * ld];
          SGFNormalize_Ref(n, k, PETSC_TRUE, got.data(), V.data(), &rkk, &xi);
          SGFWorkGetColumn(W, k, col.data());
          SGFGetR(W, R.data());
          if (rkk <= 1e-8 * std::sqrt(std::abs(ww))) { /* a breakdown (n = 1): v_k is rounding */
            SGFWorkDestroy(&W);
            continue;
          }
          ok = RelDiff(col, Col(k)) < 1e-10 && Close(gxi, xi, 10 * n) && Close(rec[SGF_REC_RKK], rkk, 1e3 * std::abs(rkk)) && rec[SGF_REC_REFINED] == 1 && Close(rec[SGF_REC_WW], ww, 1e3 * std::abs(ww)) &&
               Close(R[k + k * ld], rkk, 1e3 * std::abs(rkk));
          for (PetscInt j = 1; j < k; j++) ok = ok && Close(R[j + k * ld], Rt[j + k * ld] + got[j], 1e3 * (std::abs(Rt[j + k * ld]) + 1));
          Check(ok, "the close (v_k, xi_k, R(:,k), record) matches reference" + tagn);
          /* the Arnoldi relation A M^{-1} z_j = sum_{i<=j} R(i,j) v_i (z_1 = 0.7 r0, z_j = v_{j-1}) and orthonormal v_j */
          std::vector<PetscScalar> Z(n * (k + 1), 0.0), dum(k + 1);
          for (PetscInt i = 0; i < n; i++) Z[i] = 0.7 * V[i];
          for (PetscInt j = 2; j <= k; j++) std::copy(V.begin() + (j - 1) * n, V.begin() + j * n, Z.begin() + (j - 1) * n);
          double worst = 0, nonorth = 0;
          for (PetscInt j = 1; j <= k; j++) {
            double e = 0, s2 = 0;
            SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, j, 1.0, Z.data(), dum.data()); /* Z(:,j) = A M^{-1} z_j */
            for (PetscInt i = 0; i < n; i++) {
              PetscScalar r = Z[j * n + i];
              for (PetscInt q = 1; q <= j; q++) r -= R[q + j * ld] * V[q * n + i];
              e += r * r;
              s2 += Z[j * n + i] * Z[j * n + i];
            }
            worst = std::max(worst, std::sqrt(e / std::max(s2, 1e-300)));
            for (PetscInt q = 1; q <= j; q++) {
              double dot = 0;
              for (PetscInt i = 0; i < n; i++) dot += V[q * n + i] * V[j * n + i];
              nonorth = std::max(nonorth, std::abs(dot - (q == j ? 1.0 : 0.0)));
            }
            if (j < k) std::copy(V.begin() + j * n, V.begin() + (j + 1) * n, Z.begin() + j * n); /* z_{j+1} = v_j */
          }
          if (n >= 8) Check(worst < 1e-10 && nonorth < 1e-10, "the cycle's Arnoldi relation and orthonormal basis (error " + std::to_string(worst) + ", " + std::to_string(nonorth) + ")" + tagn);
        }
        SGFWorkDestroy(&W);
      }
    }
  }
}

void TestSizeMismatch()
{
  CSRHost     A = RandomCSR(10, 10, 3);
  GSDeviceMat dA;
  PCGFWork    W;
  GSDeviceMatCreate(10, 10, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
  PCGFWorkCreate(11, PCGF_PC_NONE, &W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFSpMVDot(W, dA, nullptr, nullptr) == PETSC_ERR_ARG_SIZ, "SpMVDot with mismatched sizes is PETSC_ERR_ARG_SIZ");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
  GSDeviceMatDestroy(&dA);
}
/* The block kernel (k columns in one pass) against its twin, resident and streamed with leading dimensions larger
   than the sizes; k not a multiple of the kernel's 8 columns per pass */
void TestBlock()
{
  for (PetscInt m : sizes) {
    if (m > 10007) continue;
    for (PetscInt k : {1, 3, 8, 13}) {
      const PetscInt           n = m ? m + 3 : 0, ldx = n + 2, ldy = m + 1, maxlen = 7;
      CSRHost                  A = RandomCSR(m, n, maxlen);
      GSDeviceMat              dA;
      GSStreamPlan             P;
      GSStreamOptions          o{GS_STREAM_STREAM, -1, 2, 5, PETSC_TRUE};
      auto                     X = Random(ldx * k);
      std::vector<PetscScalar> Y(ldy * k, -7), Ys(ldy * k, -7), Yref(ldy * k, -7);
      const std::string        tag = " m=" + std::to_string(m) + " k=" + std::to_string(k);

      o.budget = GSStreamVecBytes(m, n) + 0.7 * GSStreamCSRBytes(m, A.ia[m]) + 3 * GSStreamCSRBytes(1, maxlen); /* streams most rows */
      GSSpMMBlock_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), k, X.data(), ldx, Yref.data(), ldy);
      Check(!GSDeviceMatCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA), "GSDeviceMatCreate" + tag);
      Check(!GSDeviceMatMultBlock(dA, nullptr, nullptr, k, X.data(), ldx, Y.data(), ldy), "GSDeviceMatMultBlock" + tag);
      Check(RelDiff(Y, Yref) < 1e-14, "block SpMV matches reference" + tag);
      Check(!GSStreamPlanCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), &o, &P), "GSStreamPlanCreate" + tag);
      Check(!GSStreamPlanMultBlock(P, nullptr, nullptr, k, X.data(), ldx, Ys.data(), ldy), "GSStreamPlanMultBlock" + tag);
      Check(Ys == Y, "streamed block SpMV bitwise equal to resident, padding untouched" + tag);
      Check(!GSStreamPlanDestroy(&P) && !P, "GSStreamPlanDestroy" + tag);
      Check(!GSDeviceMatDestroy(&dA), "GSDeviceMatDestroy" + tag);
    }
  }
}

/* Streamed SpMV bitwise equal to the resident one for many plans: subdivisions from 1 to one per row, budgets from
   all-resident to nearly nothing resident, 2 and 3 buffers, overlap on and off; new values; the plan's bookkeeping
   (subdivisions partition the rows and the bytes) */
void TestStream()
{
  std::uniform_int_distribution<int> coin(0, 1), tiles(0, 3);
  for (PetscInt m : sizes) {
    if (m > 10007) continue;
    for (PetscInt maxlen : {1, 9, 40}) {
      const PetscInt           n = m ? m + 3 : 0;
      CSRHost                  A = RandomCSR(m, n, maxlen);
      GSDeviceMat              dA;
      auto                     x = Random(n), z = Random(m);
      std::vector<PetscScalar> y(m), yz(m);
      Check(!GSDeviceMatCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA), "GSDeviceMatCreate");
      GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data());
      GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), yz.data());
      for (PetscInt nsub : {(PetscInt)0, (PetscInt)1, (PetscInt)2, (PetscInt)7, m}) {
        for (double frac : {2.0, 0.5, 0.0}) {
          GSStreamOptions   o{GS_STREAM_STREAM, 0, 2 + coin(rng), nsub, coin(rng) ? PETSC_TRUE : PETSC_FALSE, coin(rng) ? PETSC_TRUE : PETSC_FALSE, GS_KERNEL_AUTO, std::vector<PetscInt>{-1, 0, 4, 16}[tiles(rng)]};
          GSStreamPlan      P;
          GSStreamInfo      info;
          const std::string tag = " m=" + std::to_string(m) + " maxlen=" + std::to_string(maxlen) + " nsub=" + std::to_string(nsub) + " budget=" + std::to_string(frac) + " buffers=" + std::to_string(o.buffers) +
                                  " overlap=" + std::to_string(o.overlap) + " inplace=" + std::to_string(o.inplace) + " tile=" + std::to_string(o.tile);
          std::vector<PetscScalar> ys(m), yzs(m);
          if ((nsub == 0 || nsub == m) && m > 2000) continue; /* the model tries every count up to 512, one row each makes m copies: slow under valgrind and compute-sanitizer */
          /* the resident product with the plan's tiles: rows longer than a tile are summed in pieces */
          GSDeviceMatSetTileSize(dA, o.tile);
          GSDeviceMatMult(dA, nullptr, nullptr, x.data(), nullptr, y.data());
          GSDeviceMatMult(dA, nullptr, nullptr, x.data(), z.data(), yz.data());
          /* room for the buffers: a buffer holds the most rows and the most entries of any subdivision, each at most its share of the bytes and two more rows */
          o.budget = GSStreamVecBytes(m, n) + frac * GSStreamCSRBytes(m, A.ia[m]) + o.buffers * 2 * (GSStreamCSRBytes(m, A.ia[m]) / PetscMax(1, nsub ? nsub : 1) + 2 * GSStreamCSRBytes(1, maxlen));
          P        = nullptr;
          Check(!GSStreamPlanCreate(m, n, A.ia.data(), A.ja.data(), A.a.data(), &o, &P), "GSStreamPlanCreate" + tag);
          if (!P) continue;
          GSStreamPlanGetInfo(P, &info);
          Check(info.nsub == (nsub ? PetscMin(nsub, m) : info.nsub) && info.nresident <= info.nsub && (m == 0 || info.nsub >= 1), "plan counts" + tag);
          Check(frac < 1 || info.nresident == info.nsub, "a budget above the CSR keeps everything resident" + tag);
          Check(std::abs(info.residentbytes + info.streambytes - (GSStreamCSRBytes(m, A.ia[m]) + (info.nsub - 1) * sizeof(PetscInt))) < 0.5 || m == 0, "subdivisions partition the bytes" + tag);
          Check(info.residentbytes - PetscMax(info.nresident - 1, 0) * sizeof(PetscInt) + o.buffers * info.bufferbytes + info.vecbytes <= o.budget, "resident part within budget" + tag);
          Check(!GSStreamPlanMult(P, nullptr, nullptr, x.data(), nullptr, ys.data()), "GSStreamPlanMult" + tag);
          Check(ys == y, "streamed SpMV bitwise equal to resident" + tag);
          Check(!GSStreamPlanMult(P, nullptr, nullptr, x.data(), z.data(), yzs.data()), "GSStreamPlanMult add" + tag);
          Check(yzs == yz, "streamed SpMV+z bitwise equal to resident" + tag);
          { /* new values, in the same array (an inplace plan reads its streamed rows there), then the old ones back */
            const std::vector<PetscScalar> old = A.a, b = Random((PetscInt)A.a.size(), 1, 2);
            std::vector<PetscScalar>       yb(m), ybs(m);
            std::copy(b.begin(), b.end(), A.a.begin());
            Check(!GSStreamPlanSetValues(P, A.a.data()), "GSStreamPlanSetValues" + tag);
            Check(!GSStreamPlanMult(P, nullptr, nullptr, x.data(), nullptr, ybs.data()), "GSStreamPlanMult new values" + tag);
            GSSpMV_Ref(m, A.ia.data(), A.ja.data(), A.a.data(), x.data(), nullptr, yb.data());
            Check(RelDiff(ybs, yb) < 1e-14, "streamed SpMV with new values matches reference" + tag);
            std::copy(old.begin(), old.end(), A.a.begin());
          }
          Check(!GSStreamPlanDestroy(&P) && !P, "GSStreamPlanDestroy" + tag);
        }
      }
      GSDeviceMatDestroy(&dA);
    }
  }
}

/* A budget below two buffers of the longest row is an error, not a crash */
void TestStreamTooSmall()
{
  CSRHost         A = RandomCSR(100, 100, 20);
  GSStreamOptions o{GS_STREAM_STREAM, 10, 2, 0, PETSC_TRUE};
  GSStreamPlan    P = nullptr;
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(GSStreamPlanCreate(100, 100, A.ia.data(), A.ja.data(), A.a.data(), &o, &P) == PETSC_ERR_ARG_OUTOFRANGE && !P, "too small a budget is PETSC_ERR_ARG_OUTOFRANGE");
  o.budget  = 1e9;
  o.buffers = 1;
  Check(GSStreamPlanCreate(100, 100, A.ia.data(), A.ja.data(), A.a.data(), &o, &P) == PETSC_ERR_ARG_OUTOFRANGE && !P, "one buffer is PETSC_ERR_ARG_OUTOFRANGE");
  PetscPopErrorHandler();
}

#if defined(GPUSTREAM_HAVE_KOKKOSKERNELS)
/* Level-0 incomplete LU in place on a CSR whose rows are sorted and hold their diagonal (the serial twin of spiluk):
   row i eliminates with the rows k < i of its pattern in order, dropping what falls outside it */
void ILU0Ref(const CSRHost &A, std::vector<PetscScalar> &lu, std::vector<PetscInt> &diag)
{
  const PetscInt        n = A.m;
  std::vector<PetscInt> pos(n, -1);
  lu = A.a;
  diag.assign(n, -1);
  for (PetscInt i = 0; i < n; i++) {
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
      pos[A.ja[k]] = k;
      if (A.ja[k] == i) diag[i] = k;
    }
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1] && A.ja[k] < i; k++) {
      const PetscInt r = A.ja[k];
      lu[k] /= lu[diag[r]];
      for (PetscInt q = diag[r] + 1; q < A.ia[r + 1]; q++)
        if (pos[A.ja[q]] >= 0) lu[pos[A.ja[q]]] -= lu[k] * lu[q];
    }
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) pos[A.ja[k]] = -1;
  }
}

/* x = (L U)^-1 b, or (L U)^-T b, from ILU0Ref()'s factors (L's unit diagonal implied) */
std::vector<PetscScalar> LUSolveRef(const CSRHost &A, const std::vector<PetscScalar> &lu, const std::vector<PetscInt> &diag, const std::vector<PetscScalar> &b, bool transpose)
{
  const PetscInt           n = A.m;
  std::vector<PetscScalar> y(b), x(n);
  if (!transpose) {
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = A.ia[i]; k < diag[i]; k++) y[i] -= lu[k] * y[A.ja[k]];
    for (PetscInt i = n - 1; i >= 0; i--) {
      PetscScalar s = y[i];
      for (PetscInt k = diag[i] + 1; k < A.ia[i + 1]; k++) s -= lu[k] * x[A.ja[k]];
      x[i] = s / lu[diag[i]];
    }
  } else { /* U^T y = b by columns of U^T (rows of U), then L^T x = y */
    for (PetscInt i = 0; i < n; i++) {
      y[i] /= lu[diag[i]];
      for (PetscInt k = diag[i] + 1; k < A.ia[i + 1]; k++) y[A.ja[k]] -= lu[k] * y[i];
    }
    x = y;
    for (PetscInt i = n - 1; i >= 0; i--)
      for (PetscInt k = A.ia[i]; k < diag[i]; k++) x[A.ja[k]] -= lu[k] * x[i];
  }
  return x;
}

/* A random n x n CSR with its diagonal, diagonally dominant (symmetric: the upper triangle mirrored) */
CSRHost RandomFactorable(PetscInt n, PetscInt maxlen, bool symmetric)
{
  CSRHost                                                    R = RandomCSR(n, n, maxlen), A{n, n, {0}, {}, {}};
  std::vector<PetscScalar>                                   rowsum(n, 0);
  std::vector<std::vector<std::pair<PetscInt, PetscScalar>>> rows(n);
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = R.ia[i]; k < R.ia[i + 1]; k++) {
      const PetscInt j = R.ja[k];
      if (j == i || (symmetric && j < i)) continue;
      rows[i].push_back({j, R.a[k]});
      if (symmetric) rows[j].push_back({i, R.a[k]});
    }
  for (PetscInt i = 0; i < n; i++) {
    std::sort(rows[i].begin(), rows[i].end());
    rows[i].erase(std::unique(rows[i].begin(), rows[i].end(), [](const auto &p, const auto &q) { return p.first == q.first; }), rows[i].end());
    PetscScalar s = 1.5;
    for (const auto &e : rows[i]) s += std::abs(e.second);
    rows[i].push_back({i, s});
    std::sort(rows[i].begin(), rows[i].end());
    for (const auto &e : rows[i]) A.ja.push_back(e.first), A.a.push_back(e.second);
    A.ia.push_back((PetscInt)A.ja.size());
  }
  return A;
}

/* The matrix the ICC(0) factor factors: the upper triangle mirrored (symmetric already for RandomFactorable(true)) */
PetscErrorCode FactorSolve(const CSRHost &A, bool symmetric, bool device, GSTriSolve mode, const std::vector<PetscScalar> &b, std::vector<PetscScalar> &x, PetscInt *bad)
{
  GSTriFactor F = nullptr;
  PetscReal   pivot;

  PetscFunctionBegin;
  x.assign(A.m, 0);
  PetscCall(GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), symmetric ? PETSC_TRUE : PETSC_FALSE, &F));
  if (device) { /* the values in the execution space's memory, as a resident matrix's */
    gpustream::DView<PetscScalar> a("unit::factor_a", A.a.size());
    GSCallKokkos(gpustream::SyncCopy(a, gpustream::HostUnmanaged<const PetscScalar>(A.a.data(), A.a.size())));
    PetscCall(GSTriFactorNumeric(F, a.data(), PETSC_TRUE, GS_PIVOT_ABS, 1e-14, bad, &pivot));
  } else
    PetscCall(GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, GS_PIVOT_ABS, 1e-14, bad, &pivot));
  PetscCall(GSTriFactorSolve(F, mode, b.data(), x.data(), PETSC_FALSE));
  PetscCall(GSTriFactorDestroy(&F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The symmetric matrix A's upper triangle defines (its lower triangle mirrored from the upper one) */
CSRHost UpperSymmetric(const CSRHost &A)
{
  const PetscInt                                             n = A.m;
  std::vector<std::vector<std::pair<PetscInt, PetscScalar>>> rows(n);
  CSRHost                                                    S{n, n, {0}, {}, {}};
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++)
      if (A.ja[k] >= i) {
        rows[i].push_back({A.ja[k], A.a[k]});
        if (A.ja[k] > i) rows[A.ja[k]].push_back({i, A.a[k]});
      }
  for (PetscInt i = 0; i < n; i++) {
    std::sort(rows[i].begin(), rows[i].end());
    for (const auto &e : rows[i]) S.ja.push_back(e.first), S.a.push_back(e.second);
    S.ia.push_back((PetscInt)S.ja.size());
  }
  return S;
}

/* The device ILU(0) and ICC(0) (Kokkos-Kernels' spiluk and sptrsv, with the plugin's gathers, transposes and pivot
   checks) against the serial twin on random diagonally dominant matrices: solves, transposed solves, values from the
   host and from the device; ICC(0) of a matrix that is not symmetric factors the one its upper triangle defines */
void TestTriFactor()
{
  for (PetscInt n : sizes) {
    if (n > 10007) continue;
    for (int sym = 0; sym < 2; sym++) {
      const CSRHost            A = RandomFactorable(n, 7, sym);
      std::vector<PetscScalar> lu, x;
      std::vector<PetscInt>    diag;
      const auto               b = Random(n);
      ILU0Ref(A, lu, diag);
      for (int t = 0; t < 2; t++) {
        const auto ref = LUSolveRef(A, lu, diag, b, t);
        for (int dev = 0; dev < 2; dev++) {
          PetscInt bad = -2;
          Check(!FactorSolve(A, sym, dev, t ? GS_TRI_TRANSPOSE : GS_TRI_SOLVE, b, x, &bad) && bad == -1 && RelDiff(x, ref) < 1e-12,
                std::string(sym ? "ICC(0)" : "ILU(0)") + (t ? " transposed" : "") + " solve, values on the " + (dev ? "device" : "host") + ", n=" + std::to_string(n));
        }
      }
      if (sym) { /* the halves of ICC's symmetric application: D^(-1/2) L^-1 b and L^-T D^(-1/2) b */
        std::vector<PetscScalar> fwd(b), bwd(b);
        for (PetscInt i = 0; i < n; i++) {
          for (PetscInt k = A.ia[i]; k < diag[i]; k++) fwd[i] -= lu[k] * fwd[A.ja[k]];
        }
        for (PetscInt i = 0; i < n; i++) fwd[i] /= std::sqrt(lu[diag[i]]), bwd[i] /= std::sqrt(lu[diag[i]]);
        for (PetscInt i = n - 1; i >= 0; i--)
          for (PetscInt k = A.ia[i]; k < diag[i]; k++) bwd[A.ja[k]] -= lu[k] * bwd[i];
        for (int half = 0; half < 2; half++) {
          PetscInt bad = -2;
          Check(!FactorSolve(A, true, true, half ? GS_TRI_BACKWARD : GS_TRI_FORWARD, b, x, &bad) && bad == -1 && RelDiff(x, half ? bwd : fwd) < 1e-12, std::string("ICC(0) ") + (half ? "backward" : "forward") + " half, n=" + std::to_string(n));
        }
      }
      if (!sym) { /* ICC(0) of the nonsymmetric A */
        const CSRHost            S = UpperSymmetric(A);
        std::vector<PetscScalar> slu;
        std::vector<PetscInt>    sdiag;
        PetscInt                 bad = -2;
        ILU0Ref(S, slu, sdiag);
        const auto ref = LUSolveRef(S, slu, sdiag, b, false);
        Check(!FactorSolve(A, true, true, GS_TRI_SOLVE, b, x, &bad) && bad == -1 && RelDiff(x, ref) < 1e-12, "ICC(0) of a matrix that is not symmetric, n=" + std::to_string(n));
      }
    }
  }
}

/* The first row whose pivot fails each test, and the pivot spiluk met (it writes 1e6 in place of an exact zero) */
void TestTriFactorPivots()
{
  /* rows: [1 1; 1 1] (row 1's pivot 0 from the elimination), then rows whose pivots are 1e6 (a plain value), 1e-20 with
     an off-diagonal entry 1, -2 and 3 */
  CSRHost A{6, 6, {0, 2, 4, 5, 7, 9, 10}, {0, 1, 0, 1, 2, 3, 4, 3, 4, 5}, {1, 1, 1, 1, 1e6, 1e-20, 1, 0, -2, 3}};
  struct {
    GSPivotTest test;
    PetscReal   tol;
    PetscInt    first;
    const char *what;
  } cases[] = {
      {GS_PIVOT_ABS, 1e-14, 1, "the zero pivot of row 1"},
      {GS_PIVOT_ABS, 0, 1, "an exact zero with a zero tolerance"},
      {GS_PIVOT_REAL_ROWSUM, 1e-14, 1, "the zero pivot before the negative one (positive definite test)"},
  };
  for (const auto &c : cases) {
    GSTriFactor F = nullptr;
    PetscInt    row;
    PetscReal   pivot = -1;
    Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, &F) && !GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, c.test, c.tol, &row, &pivot) && row == c.first && pivot == 0, std::string("pivot check: ") + c.what);
    GSTriFactorDestroy(&F);
  }
  /* rows 0 and 1 made regular ([2 1; 1 2]): the 1e6 pivot passes, 1e-20 fails |p| <= 1e-14 (row 3) but not |p| <= 1e-21,
     fails |p| <= 1e-14 |row| (row 3's entry 1), and -2 fails Re(p) <= 1e-14 |row| (row 4) */
  A.a[0] = A.a[3] = 2;
  struct {
    GSPivotTest test;
    PetscReal   tol;
    PetscInt    first;
  } more[] = {
      {GS_PIVOT_ABS, 1e-14, 3},
      {GS_PIVOT_ABS, 1e-21, -1},
      {GS_PIVOT_ABS_ROWSUM, 1e-14, 3},
      {GS_PIVOT_REAL_ROWSUM, 1e-21, 4},
  };
  for (const auto &c : more) {
    GSTriFactor F = nullptr;
    PetscInt    row;
    PetscReal   pivot;
    Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, &F) && !GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, c.test, c.tol, &row, &pivot) && row == c.first,
          "pivot check, test " + std::to_string((int)c.test) + " tolerance " + std::to_string(c.tol));
    GSTriFactorDestroy(&F);
  }
}
#else
/* without Kokkos-Kernels the plugin has no device factors */
void TestTriFactor() {}
void TestTriFactorPivots() {}
#endif

/* A View larger than any memory (2^58 bytes) */
PetscErrorCode AllocateHuge()
{
  PetscFunctionBegin;
  GSCallKokkos(gpustream::DView<PetscScalar> v("unit::huge", (size_t)1 << 55));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ThrowText(const char *what)
{
  PetscFunctionBegin;
  GSCallKokkos(throw std::runtime_error(what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A failed allocation is PETSC_ERR_MEM (with the hint of GS_OOM_MESSAGE) in every Kokkos' wording; another Kokkos error PETSC_ERR_LIB */
void TestAllocationFailure()
{
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(AllocateHuge() == PETSC_ERR_MEM, "a View larger than memory is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos failed to allocate memory for label \"x\".  Allocation using MemorySpace named \"Cuda\" failed with the following error:  Allocation of size 16 MiB failed") == PETSC_ERR_MEM, "Kokkos 3 to 4.3's wording is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: Host memory space failed to allocate 16 MiB (label=\"x\").") == PETSC_ERR_MEM, "Kokkos 4.4 and later's wording (host) is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: Cuda memory space failed to allocate 2 GiB (label=\"x\").") == PETSC_ERR_MEM, "Kokkos 4.4 and later's wording (CUDA) is PETSC_ERR_MEM");
  Check(ThrowText("Kokkos ERROR: the execution space is not initialized") == PETSC_ERR_LIB, "another Kokkos error is PETSC_ERR_LIB");
  PetscPopErrorHandler();
}
} // namespace

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscGPUStreamKokkosInitialize());
  {
    PetscInt maxsize = PETSC_MAX_INT;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-max_size", &maxsize, nullptr));
    for (PetscInt n : allsizes)
      if (n <= maxsize) sizes.push_back(n);
  }
  std::printf("# Kokkos execution space: %s\n", PetscGPUStreamExecutionSpace());
  {
    /* -only Tiles,SpMV: those tests alone (a sanitizer run of a few kernels) */
    const std::pair<const char *, void (*)()> tests[] = {{"SpMV", TestSpMV},
                                                         {"Tiles", TestTiles},
                                                         {"BlockFormat", TestBlockFormat},
                                                         {"Update", TestUpdate},
                                                         {"UpdateNorms", TestUpdateNorms},
                                                         {"DeviceScalars", TestDeviceScalars},
                                                         {"Step", TestStep},
                                                         {"Sums", TestSums},
                                                         {"Apply", TestApply},
                                                         {"SpMVDot", TestSpMVDot},
                                                         {"PointBlock", TestPointBlock},
                                                         {"Overlap", TestOverlap},
                                                         {"MatSolveBlock", TestMatSolveBlock},
                                                         {"BCGS", TestBCGS},
                                                         {"BCGSFold", TestBCGSFold},
                                                         {"BCGSBlocks", TestBCGSBlocks},
                                                         {"BCGSHalo", TestBCGSHalo},
                                                         {"SGMRES", TestSGMRES},
                                                         {"SGMRESDelayed", TestSGMRESDelayed},
                                                         {"PartialsGrowth", TestPartialsGrowth},
                                                         {"SizeMismatch", TestSizeMismatch},
                                                         {"Block", TestBlock},
                                                         {"Stream", TestStream},
                                                         {"StreamTooSmall", TestStreamTooSmall},
                                                         {"TriFactor", TestTriFactor},
                                                         {"TriFactorPivots", TestTriFactorPivots},
                                                         {"AllocationFailure", TestAllocationFailure}};
    char                                     *only[32];
    PetscInt                                  nonly = 32;
    PetscBool                                 set;
    PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-only", only, &nonly, &set));
    for (const auto &t : tests)
      if (!set || std::any_of(only, only + nonly, [&](const char *o) { return std::string(o) == t.first; })) t.second();
    for (PetscInt i = 0; set && i < nonly; i++) PetscCall(PetscFree(only[i]));
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  PetscCall(PetscFinalize());
  return failed ? 1 : 0;
}
