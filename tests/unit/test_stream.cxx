/* The streaming engine and the block product of k columns, against the resident product and the twins */
#include "unit.hpp"

namespace unit
{
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
} // namespace unit
