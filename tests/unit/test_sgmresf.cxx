/* KSPSGMRESF's kernels against their serial twins */
#include "unit.hpp"

namespace unit
{
/* A case of the sgmresf kernel tests: pcteams % 4 picks PCNONE, fused Jacobi, point-block Jacobi (3 x 3 blocks) or a
   column computed elsewhere, pcteams >= 4 seven teams instead of the default (sums across teams on a host backend
   too); a random 9-per-row matrix of n0 rows (rounded down to whole blocks) and inverse diagonal blocks */
struct SGFCase {
  const GSKSPPC            pc;
  const PetscInt           teams, bs, n;
  const CSRHost            A;
  GSDeviceMat              dA;
  std::vector<PetscScalar> d;
  const PetscScalar       *dinv;
  const std::string        tag;

  static GSKSPPC PCOf(int pcteams)
  {
    const GSKSPPC pcs[4] = {GS_PC_NONE, GS_PC_JACOBI, GS_PC_PBJACOBI, GS_PC_APPLY};
    return pcs[pcteams % 4];
  }

  SGFCase(PetscInt n0, int pcteams)
      : pc(PCOf(pcteams)), teams(pcteams < 4 ? 0 : 7), bs(pc == GS_PC_PBJACOBI ? 3 : 1), n(n0 - n0 % bs), A(RandomCSR(n, n, 9)), d(Random(n * bs, 0.5, 2)), dinv(pc == GS_PC_JACOBI || pc == GS_PC_PBJACOBI ? d.data() : nullptr),
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
    if (dinv) GSWorkSetVec(SGFWorkBase(W), SGF_DINV, d.data());
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
      const GSKSPPC      pc = C.pc;
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
            for (PetscInt j = 0; j < k; j++) GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(j), V.data() + j * n);
            /* w = s A M^{-1} v_{k-1} and the first-stage sums */
            SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, k, k == 1 ? 0.7 : 1.0, V.data(), s1.data());
            if (pc == GS_PC_APPLY) {
              GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(k), V.data() + k * n);
              Check(!SGFDot(W, k), "SGFDot" + tag);
            } else
              Check(!SGFSpMVDot(W, dA, k, k == 1 ? 0.7 : 1.0), "SGFSpMVDot" + tag);
            GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
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
              GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
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
            GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
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
            if (pc != GS_PC_APPLY) {
              GSWorkSetVec(SGFWorkBase(W), SGF_X, x.data());
              Check(!SGFUpdateSolution(W, k, PETSC_FALSE), "SGFUpdateSolution" + tag);
              SGFUpdateSolution_Ref(n, k, c.data(), dinv, bs, V.data(), xr.data(), ur.data());
              GSWorkGetVec(SGFWorkBase(W), SGF_X, col.data());
              Check(RelDiff(col, xr) < 1e-12, "x update matches reference" + tag);
            }
            Check(!SGFUpdateSolution(W, k, PETSC_TRUE), "SGFUpdateSolution into u" + tag);
            SGFUpdateSolution_Ref(n, k, c.data(), nullptr, 1, V.data(), u.data(), ur.data());
            GSWorkGetVec(SGFWorkBase(W), SGF_U, col.data());
            Check(RelDiff(col, u) < 1e-12, "u = V c matches reference" + tag);
          }
        }
      }
      /* r0 = b - A x into column 0 and <r0,r0> */
      if (pc != GS_PC_APPLY) {
        std::vector<PetscScalar> r(n), col(n), rec(SGF_NREC);
        PetscScalar              rr, grr;
        GSWorkSetVec(SGFWorkBase(W), SGF_X, x.data());
        GSWorkSetVec(SGFWorkBase(W), SGF_B, b.data());
        Check(!SGFResidual(W, dA), "SGFResidual" + tagn);
        SGFReduceXi(W, &grr, rec.data());
        SGFResidual_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), x.data(), b.data(), r.data(), &rr);
        GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(0), col.data());
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
      const GSKSPPC      pc = C.pc;
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

        GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(0), V.data());
        /* iteration 1: column 1 only */
        SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, 1, 0.7, V.data(), sums.data());
        if (pc == GS_PC_APPLY) {
          GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(1), V.data() + n);
          Check(!SGFDot(W, 1), "SGFDot" + tagn);
        } else
          Check(!SGFSpMVDot(W, dA, 1, 0.7), "SGFSpMVDot" + tagn);
        GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(1), col.data());
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
            GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(nc), V.data() + nc * n);
            SGFWorkSetR(W, Rt.data());
          }
          /* V(:,k) = A M^{-1} w'_{k-1} and the pairs */
          SGFSpMVDot_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), dinv, bs, k, 1.0, V.data(), got.data());
          SGFPairDots_Ref(n, k, V.data(), sums.data());
          if (pc == GS_PC_APPLY || given) { /* the column from elsewhere (several processes: SpMVHalo) */
            GSWorkSetVec(SGFWorkBase(W), SGF_COLUMN(k), V.data() + k * n);
            ok = ok && !SGFDotDelayed(W, k, (PetscBool)!given);
          } else
            ok = ok && !SGFSpMVDotDelayed(W, dA, k);
          GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
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
          GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(nc), col.data());
          ok = ok && RelDiff(col, Col(nc)) < 1e-10;
          GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
          ok = ok && RelDiff(col, Col(k)) < 1e-10;
          Check(ok, "v_{k-1} and w'_k match reference" + tag);
          ok = ok && Close(gxi, xi, 10 * n) && Close(rec[SGF_REC_RKK], rect[SGF_REC_RKK], 1e3 * std::abs(rect[SGF_REC_RKK])) && rec[SGF_REC_REFINED] == 1 && Close(rec[SGF_REC_WW], rect[SGF_REC_WW], 1e3 * std::abs(rect[SGF_REC_WW]));
          Check(ok, "xi_{k-1} and step k-1's record match reference" + tag);
          SGFGetR(W, R.data());
          for (PetscInt j = 1; j <= nc; j++) ok = ok && Close(R[j + nc * ld], Rt[j + nc * ld], 1e3 * (std::abs(Rt[j + nc * ld]) + 1)) && Close(R[j + k * ld], Rt[j + k * ld], 1e3 * (std::abs(Rt[j + k * ld]) + 1));
          Check(ok, "R(:,k-1) and the first pass of R(:,k) match reference" + tag);
          /* the twins go on from the device's columns and R */
          for (PetscInt j : {nc, k}) GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(j), V.data() + j * n);
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
          GSWorkGetVec(SGFWorkBase(W), SGF_COLUMN(k), col.data());
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
} // namespace unit
