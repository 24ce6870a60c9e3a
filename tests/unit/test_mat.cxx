/* The device matrix: SpMV of every kernel and storage, tiles and block column indices, against the
   serial twin */
#include "unit.hpp"

namespace unit
{
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
      const bool device = std::string(GSExecutionSpace()) == "Cuda" || std::string(GSExecutionSpace()) == "HIP";
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
        const bool               device = std::string(GSExecutionSpace()) == "Cuda";
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
          PCGFWorkCreate(n, GS_PC_NONE, &W);
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
} // namespace unit
