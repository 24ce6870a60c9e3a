/* KSPPIPEBCGSF's kernels against their serial twins */
#include "unit.hpp"

namespace unit
{
/* GSWorkNorm(), the norm pipebcgsf and sgmresf start from, against a serial sum in long double; a vector id the
   solver does not have is an error */
void TestWorkNorm()
{
  for (PetscInt n : sizes) {
    const std::string tag = " n=" + std::to_string(n);
    auto              r   = Random(n);
    long double       ref = 0;
    PetscReal         nrm = -1;
    PBFWork           W;

    for (PetscScalar v : r) ref += (long double)PetscRealPart(v * PetscConj(v));
    ref = std::sqrt(ref);
    Check(!PBFWorkCreate(n, GS_PC_NONE, &W), "PBFWorkCreate" + tag);
    GSWorkSetVec(PBFWorkBase(W), PBF_R, r.data());
    Check(!GSWorkNorm(PBFWorkBase(W), PBF_R, PETSC_COMM_SELF, &nrm), "GSWorkNorm" + tag);
    Check(std::abs((long double)nrm - ref) <= 1e-12 * ref, "GSWorkNorm matches the serial norm" + tag);
    PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
    Check(GSWorkNorm(PBFWorkBase(W), -1, PETSC_COMM_SELF, &nrm) == PETSC_ERR_ARG_OUTOFRANGE, "GSWorkNorm of a vector the solver lacks is an error" + tag);
    PetscPopErrorHandler();
    PBFWorkDestroy(&W);
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
        Check(!PBFWorkCreate(n, GS_PC_PBJACOBI, &W) && !GSWorkSetBlocks(PBFWorkBase(W), bs, blocks.data()), "PBFWorkSetBlocks" + tag);
        GSWorkSetVec(PBFWorkBase(W), PBF_X, x.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_R, r.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_R0, r0.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_P, p.data());
        Check(!PBFSpMVDot1(W, dA, nullptr, nullptr), "PBFSpMVDot1 blocks" + tag);
        GSWorkGetVec(PBFWorkBase(W), PBF_V, v.data());
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, blocks.data(), p.data(), vref.data());
        Check(RelDiff(v, vref) < 1e-14, "v = A D^-1 p with blocks matches reference" + tag);
        Check(!PBFUpdateS(W, PETSC_TRUE, 0.7), "PBFUpdateS blocks" + tag);
        GSWorkGetVec(PBFWorkBase(W), PBF_S, s.data());
        Check(!PBFSpMVDot3(W, dA, nullptr, nullptr), "PBFSpMVDot3 blocks" + tag);
        GSWorkGetVec(PBFWorkBase(W), PBF_T, t.data());
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), bs, blocks.data(), s.data(), tref.data());
        Check(RelDiff(t, tref) < 1e-14, "t = A D^-1 s with blocks matches reference" + tag);
        Check(!PBFUpdate(W, 0.4, -0.3) && !PBFReduce(W, sums), "PBFUpdate blocks" + tag);
        PBFUpdate_Ref(n, bs, 0.7, 0.4, -0.3, blocks.data(), nullptr, nullptr, x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rr0);
        GSWorkGetVec(PBFWorkBase(W), PBF_X, gx.data());
        GSWorkGetVec(PBFWorkBase(W), PBF_R, gr.data());
        GSWorkGetVec(PBFWorkBase(W), PBF_P, gp.data());
        Check(RelDiff(gx, x) < 1e-13 && RelDiff(gr, r) < 1e-14 && RelDiff(gp, p) < 1e-14, "x, r, p updates by blocks match reference" + tag);
        Check(Close(sums[PBF_RR0], rr0, AbsSum(r, r0)), "<r,r0*> after the update by blocks matches reference" + tag);
        PBFWorkDestroy(&W);
        GSDeviceMatDestroy(&dA);
      }
    }
}

/* KSPPIPEBCGSF's kernels against their twins, with PCNONE, fused Jacobi and a PC applied on the host; short and long
   rows (on a device: a thread and a warp per row) */
void TestBCGS()
{
  for (PetscInt n : sizes) {
    for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI, GS_PC_APPLY})
      for (PetscInt maxlen : {9, 40}) {
        const std::string        tag = " n=" + std::to_string(n) + " pc=" + std::to_string((int)pc) + " maxlen=" + std::to_string(maxlen);
        CSRHost                  A   = RandomCSR(n, n, maxlen);
        GSDeviceMat              dA;
        PBFWork                  W;
        auto                     x = Random(n), r = Random(n), r0 = Random(n), p = Random(n), d = Random(n, 0.5, 2), ph = Random(n), sh = Random(n);
        std::vector<PetscScalar> v(n), s(n), t(n), got(n), dv(n);
        PetscScalar              sums[PBF_NSUMS], rr0 = 0, vr0 = 0, ss, ts = 0, tt = 0, tr0 = 0;
        const PetscScalar       *dinv = pc == GS_PC_JACOBI ? d.data() : nullptr;

        GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
        Check(!PBFWorkCreate(n, pc, &W), "PBFWorkCreate" + tag);
        GSWorkSetVec(PBFWorkBase(W), PBF_X, x.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_R, r.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_R0, r0.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_P, p.data());
        if (dinv) GSWorkSetVec(PBFWorkBase(W), PBF_DINV, d.data());
        if (pc == GS_PC_APPLY) {
          GSWorkSetVec(PBFWorkBase(W), PBF_PH, ph.data());
          GSWorkSetVec(PBFWorkBase(W), PBF_SH, sh.data());
        }
        /* <r,r0*>; v = A M^{-1} p and <v,r0*> (the fused kernel knows Jacobi; an applied PC goes through MatMult) */
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, p.data(), v.data());
        for (PetscInt i = 0; i < n; i++) rr0 += r[i] * r0[i], vr0 += v[i] * r0[i];
        Check(!PBFRDot(W), "PBFRDot" + tag);
        if (pc == GS_PC_APPLY) {
          GSWorkSetVec(PBFWorkBase(W), PBF_V, v.data());
          Check(!PBFDot1(W), "PBFDot1" + tag);
        } else
          Check(!PBFSpMVDot1(W, dA, nullptr, nullptr), "PBFSpMVDot1" + tag);
        GSWorkGetVec(PBFWorkBase(W), PBF_V, got.data());
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
          GSWorkGetVec(PBFWorkBase(W), PBF_S, got.data());
          Check(RelDiff(got, s) < 1e-9 * std::max(1.0, std::abs(alpha)), "s with the device's alpha matches reference" + tag);
        }
        /* the given alpha (several ranks) gives the reference s exactly up to FMA */
        PBFUpdateS(W, PETSC_TRUE, alpha);
        GSWorkGetVec(PBFWorkBase(W), PBF_S, got.data());
        Check(RelDiff(got, s) < 1e-14, "s with a given alpha matches reference" + tag);
        /* t = A M^{-1} s and its three sums */
        PBFSpMV_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), 1, dinv, s.data(), t.data());
        for (PetscInt i = 0; i < n; i++) ts += t[i] * s[i], tt += t[i] * t[i], tr0 += t[i] * r0[i];
        if (pc == GS_PC_APPLY) {
          GSWorkSetVec(PBFWorkBase(W), PBF_T, t.data());
          Check(!PBFDot3(W), "PBFDot3" + tag);
        } else
          Check(!PBFSpMVDot3(W, dA, nullptr, nullptr), "PBFSpMVDot3" + tag);
        PBFReduce(W, sums);
        GSWorkGetVec(PBFWorkBase(W), PBF_T, got.data());
        Check(RelDiff(got, t) < 1e-14, "t = A M^-1 s matches reference" + tag);
        Check(Close(sums[PBF_SS], ss, AbsSum(s, s)) && Close(sums[PBF_TS], ts, AbsSum(t, s)) && Close(sums[PBF_TT], tt, AbsSum(t, t)) && Close(sums[PBF_TR0], tr0, AbsSum(t, r0)), "the four sums match reference" + tag);
        /* x, r, p and <r,r0*> */
        PetscScalar rrnew;
        Check(!PBFUpdate(W, 0.4, -0.3), "PBFUpdate" + tag); /* with the alpha of the last UpdateS, the given one */
        PBFReduce(W, sums);
        PBFUpdate_Ref(n, 1, alpha, 0.4, -0.3, dinv, pc == GS_PC_APPLY ? ph.data() : nullptr, sh.data(), x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rrnew);
        std::vector<PetscScalar> gx(n), gr(n), gp(n);
        GSWorkGetVec(PBFWorkBase(W), PBF_X, gx.data());
        GSWorkGetVec(PBFWorkBase(W), PBF_R, gr.data());
        GSWorkGetVec(PBFWorkBase(W), PBF_P, gp.data());
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
      for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI})
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
          const PetscScalar       *dinv = pc == GS_PC_JACOBI ? d.data() : nullptr;

          Check(!GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, bs, -1, &dA), "GSDeviceMatCreate" + tag);
          Check(!PBFWorkCreate(n, pc, &W) && !PBFWorkSetDeviceScalars(W), "PBFWorkSetDeviceScalars" + tag);
          GSWorkSetVec(PBFWorkBase(W), PBF_X, x.data());
          GSWorkSetVec(PBFWorkBase(W), PBF_R, r.data());
          GSWorkSetVec(PBFWorkBase(W), PBF_R0, r0.data());
          GSWorkSetVec(PBFWorkBase(W), PBF_P, p.data());
          if (dinv) GSWorkSetVec(PBFWorkBase(W), PBF_DINV, d.data());
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
          GSWorkGetVec(PBFWorkBase(W), PBF_S, got.data());
          Check(RelDiff(got, s) < 1e-13 * amp, "s formed in the SpMV matches reference" + tag);
          GSWorkGetVec(PBFWorkBase(W), PBF_T, got.data());
          Check(RelDiff(got, t) < 1e-12 * amp, "t = A M^-1 s of the gathered s matches reference" + tag);
          Check(Close(sums[PBF_RR0], rr0, AbsSum(r, r0)) && Close(sums[PBF_RR], rr, AbsSum(r, r)) && Close(sums[PBF_VR0], vr0, AbsSum(v, r0)), "<r,r0*>, <r,r>, <v,r0*> in the slot" + tag);
          Check(Close(sums[PBF_SS], ss, 1e2 * amp * AbsSum(s, s)) && Close(sums[PBF_TS], ts, 1e2 * amp * AbsSum(t, s)) && Close(sums[PBF_TT], tt, 1e2 * amp * AbsSum(t, t)) && Close(sums[PBF_TR0], tr0, 1e2 * amp * AbsSum(t, r0)),
                "<s,s>, <t,s>, <t,t>, <t,r0*> in the slot" + tag);
          /* the Update moves x by the alpha the kernel stored (and the device's omega and beta) */
          const PetscScalar omega = sums[PBF_TT] != 0 ? sums[PBF_TS] / sums[PBF_TT] : 0, beta = sums[PBF_VR0] != 0 ? -sums[PBF_TR0] / sums[PBF_VR0] : 0;
          PetscScalar       rrnew;
          Check(!PBFUpdateDevice(W), "PBFUpdateDevice" + tag);
          PBFUpdate_Ref(n, 1, alpha, omega, beta, dinv, nullptr, nullptr, x.data(), r.data(), p.data(), v.data(), s.data(), t.data(), r0.data(), &rrnew);
          GSWorkGetVec(PBFWorkBase(W), PBF_X, got.data());
          Check(RelDiff(got, x) < 1e-11 * amp, "the Update after the fold moves x by the stored alpha" + tag);
          GSWorkGetCounts(PBFWorkBase(W), &l, &tr, &c);
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
      for (GSKSPPC pc : {GS_PC_NONE, GS_PC_JACOBI}) {
        const PetscInt           n   = bs * (m + rank);
        const GSHaloShared       sh  = bs == 1 ? GS_HALO_SHARED_TRUE : GS_HALO_SHARED_FALSE; /* each halo path, with both PCs */
        const std::string        tag = " n=" + std::to_string(n) + " bs=" + std::to_string(bs) + " pc=" + std::to_string((int)pc) + " shared=" + std::to_string(bs == 1) + " rank=" + std::to_string(rank);
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
        const PetscScalar *dinv = pc == GS_PC_JACOBI ? d.data() : nullptr;
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
        Check(!GSHaloCreate(comm, n, ranges.data(), ng, garray.data(), devicempi, sh, NULL, &H) && !GSHaloGetSizes(H, &nsend, &nghost, &neighbors), "GSHaloCreate" + tag);
        {
          GSHaloPath  path;
          const char *pwhy;
          Check(!GSHaloGetPath(H, &path, &pwhy) && path == (sh == GS_HALO_SHARED_TRUE ? GS_HALO_PATH_SHARED : (devicempi ? GS_HALO_PATH_DEVICE_MPI : GS_HALO_PATH_HOST_MPI)), "the halo's path as asked" + tag);
        }
        Check(!PBFWorkCreate(n, pc, &W), "PBFWorkCreate" + tag);
        GSWorkSetVec(PBFWorkBase(W), PBF_P, p.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_S, s.data());
        GSWorkSetVec(PBFWorkBase(W), PBF_R0, r0.data());
        if (dinv) GSWorkSetVec(PBFWorkBase(W), PBF_DINV, d.data());
        const PetscInt launches = (nsend > 0) + 1 + (offrows > 0);

        GSWorkGetCounts(PBFWorkBase(W), &l0, &t0, &c0);
        Check(!PBFSpMVDot1(W, dA, dB, H), "PBFSpMVDot1 with the halo" + tag);
        GSWorkGetCounts(PBFWorkBase(W), &l1, &t0, &c0);
        Check(l1 - l0 == launches, "SpMVDot1 with the halo: gather, interior and off-diagonal launches" + tag);
        Twin(p, pall, v);
        GSWorkGetVec(PBFWorkBase(W), PBF_V, got.data());
        Check(RelDiff(got, v) < 1e-14, "v = A M^-1 p with the halo matches the twins" + tag);
        for (PetscInt i = 0; i < n; i++) vr0 += v[i] * r0[i];
        PBFReduce(W, sums);
        Check(Close(sums[PBF_VR0], vr0, AbsSum(v, r0)), "local <v,r0*> with the halo matches the twins" + tag);

        Check(!PBFSpMVDot3(W, dA, dB, H), "PBFSpMVDot3 with the halo" + tag);
        GSWorkGetCounts(PBFWorkBase(W), &l0, &t0, &c0);
        Check(l0 - l1 == launches, "SpMVDot3 with the halo: gather, interior and off-diagonal launches" + tag);
        Twin(s, sall, t);
        GSWorkGetVec(PBFWorkBase(W), PBF_T, got.data());
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
} // namespace unit
