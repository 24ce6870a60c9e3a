/* KSPPIPECGFUSED's kernels against their serial twins */
#include "unit.hpp"

namespace unit
{
CGVecs RandomCG(PetscInt n)
{
  return {Random(n), Random(n), Random(n), Random(n), Random(n, 0.5, 2)};
}

void Load(PCGFWork W, const CGVecs &v, bool jacobi)
{
  GSWorkSetVec(PCGFWorkBase(W), PCGF_X, v.x.data());
  GSWorkSetVec(PCGFWorkBase(W), PCGF_R, v.r.data());
  GSWorkSetVec(PCGFWorkBase(W), PCGF_P, v.p.data());
  GSWorkSetVec(PCGFWorkBase(W), PCGF_W, v.w.data());
  if (jacobi) GSWorkSetVec(PCGFWorkBase(W), PCGF_DINV, v.d.data());
}

CGVecs Store(PCGFWork W, PetscInt n)
{
  CGVecs v{std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), std::vector<PetscScalar>(n), {}};
  GSWorkGetVec(PCGFWorkBase(W), PCGF_X, v.x.data());
  GSWorkGetVec(PCGFWorkBase(W), PCGF_R, v.r.data());
  GSWorkGetVec(PCGFWorkBase(W), PCGF_P, v.p.data());
  GSWorkGetVec(PCGFWorkBase(W), PCGF_W, v.w.data());
  return v;
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

        Check(!PCGFWorkCreate(n, jacobi ? GS_PC_JACOBI : GS_PC_NONE, &W), "PCGFWorkCreate" + tag);
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
        GSWorkGetCounts(PCGFWorkBase(W), &l, &t, &c);
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
          Check(!PCGFWorkCreate(n, jacobi ? GS_PC_JACOBI : GS_PC_NONE, &W) && !PCGFWorkSetDeviceScalars(W), "PCGFWorkSetDeviceScalars" + tag);
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
          GSWorkGetVec(PCGFWorkBase(W), PCGF_X, got.x.data());
          Check(RelDiff(got.x, x0) == 0, "RevertX gives the x before the last UpdateDevice" + tag);
          GSWorkGetCounts(PCGFWorkBase(W), &l, &t, &c);
          Check(l == 3 && t == 1, "3 launches, 1 transfer counted" + tag);
          PCGFWorkDestroy(&W);
          GSDeviceMatDestroy(&dA);
        }
  }
  PCGFWork W;
  PCGFWorkCreate(10, GS_PC_APPLY, &W);
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
    for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI, GS_PC_APPLY, GS_PC_PBJACOBI}) {
      const PetscInt           bs = pc == GS_PC_PBJACOBI ? 3 : 1, n = bs * n0;
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
      Load(W, v, pc == GS_PC_JACOBI);
      if (pc == GS_PC_PBJACOBI) GSWorkSetBlocks(PCGFWorkBase(W), bs, blocks.data());
      if (pc == GS_PC_APPLY) {
        GSWorkSetVec(PCGFWorkBase(W), PCGF_Z, z.data());
        GSWorkSetVec(PCGFWorkBase(W), PCGF_Q, q.data());
      }
      const PetscScalar *d = pc == GS_PC_JACOBI ? v.d.data() : (pc == GS_PC_PBJACOBI ? blocks.data() : nullptr);
      Check(!PCGFUpdate(W, alpha, beta, nt) && !PCGFSpMVDot(W, dA, nullptr, nullptr) && !PCGFReduce(W, sums), "Update with norms, SpMVDot, Reduce" + tag);
      PCGFUpdateNorms_Ref(n, alpha, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), nsums);
      if (pc == GS_PC_APPLY)
        PCGFUpdateApply_Ref(n, alpha, beta, nt, ref.x.data(), ref.r.data(), zref.data(), ref.p.data(), ref.w.data(), q.data(), rsums);
      else
        PCGFUpdate_Ref(n, bs, alpha, beta, nt, d, ref.x.data(), ref.r.data(), ref.p.data(), ref.w.data(), rsums);
      PCGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, d, ref.p.data(), wref.data(), dsums);
      CGVecs got = Store(W, n);
      Check(RelDiff(got.x, ref.x) < 1e-14 && RelDiff(got.r, ref.r) < 1e-14 && RelDiff(got.p, ref.p) < 1e-13 && RelDiff(got.w, wref) < 1e-13, "Update with norms: vectors match reference" + tag);
      const double zscale = pc == GS_PC_APPLY ? AbsSum(zref, zref) + AbsSum(ref.r, zref) : 9.0 * bs * bs * AbsSum(ref.r, ref.r);
      Check(Close(sums[PCGF_RZ], rsums[0], zscale) && Close(sums[PCGF_NRM], rsums[1], zscale), "Update with norms: <r,z> and norm sums match reference" + tag);
      Check(Close(sums[PCGF_XX], nsums[0], nsums[0]) && Close(sums[PCGF_PP], nsums[1], nsums[1]) && Close(sums[PCGF_WW], nsums[2], nsums[2]) && Close(sums[PCGF_RR], nsums[3], 4 * nsums[3]),
            "Update norms ||x||, ||p||, ||w||, ||r|| match reference" + tag);
      Check(Close(sums[PCGF_PW], dsums[0], AbsSum(ref.p, wref)) && Close(sums[PCGF_WDW], dsums[1], 3.0 * bs * AbsSum(wref, wref)), "SpMVDot sums after an Update with norms" + tag);
      GSWorkGetCounts(PCGFWorkBase(W), &l, &t, &c);
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
  PCGFWorkCreate(10, GS_PC_NONE, &W);
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
        PCGFWorkCreate(n, jacobi ? GS_PC_JACOBI : GS_PC_NONE, &W);
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

      Check(!PCGFWorkCreate(n, GS_PC_APPLY, &W), "PCGFWorkCreate apply" + tag);
      Load(W, v, false);
      GSWorkSetVec(PCGFWorkBase(W), PCGF_Z, z.data());
      GSWorkSetVec(PCGFWorkBase(W), PCGF_Q, q.data());
      Check(!PCGFUpdate(W, 0.3, 0.6, nt) && !PCGFReduce(W, sums), "PCGFUpdate apply" + tag);
      PCGFUpdateApply_Ref(n, 0.3, 0.6, nt, ref.x.data(), ref.r.data(), zref.data(), ref.p.data(), ref.w.data(), q.data(), rsums);
      CGVecs g = Store(W, n);
      GSWorkGetVec(PCGFWorkBase(W), PCGF_Z, got.data());
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
            Check(!PCGFWorkCreate(n, jacobi ? GS_PC_JACOBI : GS_PC_NONE, &W) && !PCGFWorkSetDeviceScalars(W) && !PCGFWorkSetStep(W), "PCGFWorkSetStep" + tag);
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
            GSWorkGetCounts(PCGFWorkBase(W), &l, &t, &c);
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
  PCGFWorkCreate(1, GS_PC_NONE, &W);
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
        PCGFWorkCreate(n, jacobi ? GS_PC_JACOBI : GS_PC_NONE, &W);
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
    for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI, GS_PC_APPLY})
      for (KSPNormType nt : norms) {
        const std::string        tag     = " n=" + std::to_string(n) + " pc=" + std::to_string((int)pc) + " norm=" + std::to_string((int)nt);
        const PCGFVec            ids[10] = {PCGF_X, PCGF_R, PCGF_U, PCGF_W, PCGF_M, PCGF_N, PCGF_Z, PCGF_Q, PCGF_P, PCGF_S};
        std::vector<PetscScalar> v[10], got(n), d = Random(n, 0.5, 2);
        PetscScalar              sums[PCGF_NSUMS], rsums[3];
        PCGFWork                 W;
        Check(!PCGFWorkCreate(n, pc, &W) && !PCGFWorkSetOverlap(W), "PCGFWorkSetOverlap" + tag);
        for (int k = 0; k < 10; k++) {
          v[k] = Random(n);
          GSWorkSetVec(PCGFWorkBase(W), ids[k], v[k].data());
        }
        if (pc == GS_PC_JACOBI) GSWorkSetVec(PCGFWorkBase(W), PCGF_DINV, d.data());
        Check(!PCGFOverlapUpdate(W, 0.3, 0.6, nt) && !PCGFReduce(W, sums), "PCGFOverlapUpdate" + tag);
        PCGFOverlapUpdate_Ref(n, 0.3, 0.6, nt, pc == GS_PC_JACOBI ? d.data() : nullptr, pc == GS_PC_APPLY ? PETSC_TRUE : PETSC_FALSE, v[0].data(), v[1].data(), v[2].data(), v[3].data(), v[4].data(), v[5].data(), v[6].data(), v[7].data(), v[8].data(),
                              v[9].data(), rsums);
        bool same = true;
        for (int k = 0; k < 10; k++) {
          GSWorkGetVec(PCGFWorkBase(W), ids[k], got.data());
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
        GSWorkGetVec(PCGFWorkBase(W), PCGF_N, got.data());
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
      for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI, GS_PC_APPLY})
        for (KSPNormType nt : {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED}) {
          const bool               jacobi = pc == GS_PC_JACOBI, apply = pc == GS_PC_APPLY;
          const std::string        tag = " n=" + std::to_string(n) + " k=" + std::to_string(k) + (jacobi ? " jacobi" : (apply ? " apply" : " none")) + " norm=" + std::to_string((int)nt);
          CSRHost                  A   = RandomCSR(n, n, 7);
          GSDeviceMat              dA;
          PCGFBlock                B;
          auto                     x = Random(n * k), r = Random(n * k), p = Random(n * k), w = Random(n * k), z = Random(n * k), q = Random(n * k), qw = Random(n * k), d = Random(n, 0.5, 2), alpha = Random(k), beta = Random(k);
          std::vector<PetscScalar> sums(k * PCGF_NSUMS), got(n * k);
          bool                     vecs = true, sumsok = true;

          GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
          Check(!PCGFBlockCreate(n, k, pc, &B), "PCGFBlockCreate" + tag);
          GSWorkSetVec(PCGFBlockBase(B), PCGF_X, x.data());
          GSWorkSetVec(PCGFBlockBase(B), PCGF_R, r.data());
          GSWorkSetVec(PCGFBlockBase(B), PCGF_P, p.data());
          GSWorkSetVec(PCGFBlockBase(B), PCGF_W, w.data());
          if (jacobi) GSWorkSetVec(PCGFBlockBase(B), PCGF_DINV, d.data());
          if (apply) {
            GSWorkSetVec(PCGFBlockBase(B), PCGF_Z, z.data());
            GSWorkSetVec(PCGFBlockBase(B), PCGF_Q, q.data());
          }
          Check(!PCGFBlockUpdate(B, alpha.data(), beta.data(), nt) && !PCGFBlockSpMVDot(B, dA, nullptr, nullptr, nullptr), "block Update, SpMVDot" + tag);
          if (apply) Check(!GSWorkSetVec(PCGFBlockBase(B), PCGF_Q, qw.data()) && !PCGFBlockDot(B), "block Dot with the host's Q" + tag); /* qw stands for M^{-1} W */
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
            GSWorkGetVec(PCGFBlockBase(B), v, got.data());
            vecs = vecs && RelDiff(got, v == PCGF_X ? x : (v == PCGF_R ? r : (v == PCGF_P ? p : (v == PCGF_W ? w : z)))) < 1e-14;
          }
          Check(vecs, "block vectors match the single-vector twins column by column" + tag);
          Check(sumsok, "block sums match the single-vector twins column by column" + tag);
          PetscInt l, t, c;
          Check(!GSWorkGetCounts(PCGFBlockBase(B), &l, &t, &c) && l == 3 && t == 1, "3 launches and 1 transfer for all columns" + tag);
          PCGFBlockDestroy(&B);
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
  PCGFWorkCreate(n, GS_PC_NONE, &W);
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
        Check(!PCGFWorkCreate(n, GS_PC_PBJACOBI, &W) && !GSWorkSetBlocks(PCGFWorkBase(W), bs, blocks.data()), "PCGFWorkSetBlocks" + tag);
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
  PCGFWorkCreate(12, GS_PC_PBJACOBI, &W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(GSWorkSetBlocks(PCGFWorkBase(W), PCGF_MAX_BS + 1, nullptr) == PETSC_ERR_ARG_OUTOFRANGE, "a block size above PCGF_MAX_BS is PETSC_ERR_ARG_OUTOFRANGE");
  Check(GSWorkSetBlocks(PCGFWorkBase(W), 5, nullptr) == PETSC_ERR_ARG_OUTOFRANGE, "a block size that does not divide n is PETSC_ERR_ARG_OUTOFRANGE");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
}

void TestSizeMismatch()
{
  CSRHost     A = RandomCSR(10, 10, 3);
  GSDeviceMat dA;
  PCGFWork    W;
  GSDeviceMatCreate(10, 10, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
  PCGFWorkCreate(11, GS_PC_NONE, &W);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(PCGFSpMVDot(W, dA, nullptr, nullptr) == PETSC_ERR_ARG_SIZ, "SpMVDot with mismatched sizes is PETSC_ERR_ARG_SIZ");
  PetscPopErrorHandler();
  PCGFWorkDestroy(&W);
  GSDeviceMatDestroy(&dA);
}
} // namespace unit
