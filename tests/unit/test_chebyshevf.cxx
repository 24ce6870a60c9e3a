/* KSPCHEBYSHEVF's kernels against their serial twins */
#include "unit.hpp"
#include "../../src/ksp/chebyshevf/chebyshevfimpl.h"

namespace unit
{
using gpustream::DView;

/* One step with the product in the kernel, with A x given, and from a zero x; with and without Jacobi, reading y or
   not, each norm (the norm only without the product); long rows too (lanes on a device); the noisy vector bit for bit */
void TestChebF()
{
  for (PetscInt n : sizes) {
    for (PetscInt maxlen : {7, 60}) {
      const std::string        tag = " n=" + std::to_string(n) + " maxlen=" + std::to_string(maxlen);
      CSRHost                  A   = RandomCSR(n, n, maxlen);
      GSDeviceMat              dA;
      auto                     b = Random(n), d = Random(n, 0.5, 2), x = Random(n), y0 = Random(n);
      std::vector<PetscScalar> ax(n);

      GSDeviceMatCreate(n, n, A.ia.data(), A.ja.data(), A.a.data(), PETSC_FALSE, 1, -1, &dA);
      ChebFStep_Ref(n, A.ia.data(), A.ja.data(), A.a.data(), nullptr, std::vector<PetscScalar>(n, 0).data(), nullptr, x.data(), ax.data(), 0, 0, -1, CHEBF_NORM_NONE, nullptr); /* ax = A x */
      const auto Db = ToDevice(b), Dd = ToDevice(d), Dx = ToDevice(x), Dax = ToDevice(ax);
      for (int kind = 0; kind < 3; kind++) /* 0: product in the kernel, 1: A x given, 2: zero x */
        for (int jac = 0; jac < 2; jac++)
          for (int norm = 0; norm < 3; norm++)
            for (PetscScalar c1 : {0.0, -0.4}) {
              if (kind == 0 && norm) continue;
              const std::string t    = tag + " kind=" + std::to_string(kind) + " jacobi=" + std::to_string(jac) + " norm=" + std::to_string(norm) + " c1=" + std::to_string(c1);
              auto              yref = y0;
              PetscReal         s = -1, sref = -1;
              const auto        Dy = ToDevice(y0);
              ChebFStep_Ref(n, kind == 0 ? A.ia.data() : nullptr, A.ja.data(), A.a.data(), kind == 1 ? ax.data() : nullptr, b.data(), jac ? d.data() : nullptr, kind == 2 ? nullptr : x.data(), yref.data(), c1, 1.3, 0.7, (ChebFNorm)norm, &sref);
              Check(!ChebFStep(n, kind == 0 ? dA : nullptr, kind == 1 ? Dax.data() : nullptr, Db.data(), jac ? Dd.data() : nullptr, kind == 2 ? nullptr : Dx.data(), Dy.data(), c1, 1.3, 0.7, (ChebFNorm)norm, &s), "ChebFStep" + t);
              Kokkos::fence();
              Check(RelDiff(ToHost(Dy), yref) < 1e-13, "ChebFStep's y matches the twin" + t);
              if (norm) Check(Close(s, sref, sref), "ChebFStep's norm matches the twin" + t);
            }
      { /* a norm alone, no update */
        PetscReal s = -1, sref = -1;
        ChebFStep_Ref(n, nullptr, nullptr, nullptr, ax.data(), b.data(), d.data(), x.data(), nullptr, 0, 0, 0, CHEBF_NORM_Z, &sref);
        Check(!ChebFStep(n, nullptr, Dax.data(), Db.data(), Dd.data(), Dx.data(), nullptr, 0, 0, 0, CHEBF_NORM_Z, &s) && Close(s, sref, sref), "ChebFStep's norm alone matches the twin" + tag);
      }
      PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
      Check(n == 0 || ChebFStep(n, dA, nullptr, Db.data(), nullptr, Dx.data(), Dx.data(), 0, 1, 1, CHEBF_NORM_NONE, nullptr) == PETSC_ERR_ARG_IDN, "ChebFStep refuses to write the x it gathers" + tag);
      Check(n == 0 || ChebFStep(n, dA, nullptr, Db.data(), nullptr, Dx.data(), Dax.data(), 0, 1, 1, CHEBF_NORM_R, nullptr) == PETSC_ERR_SUP, "ChebFStep with the product forms no norm" + tag);
      Check(ChebFStep(n + 1, dA, nullptr, Db.data(), nullptr, Dx.data(), Dax.data(), 0, 1, 1, CHEBF_NORM_NONE, nullptr) == PETSC_ERR_ARG_SIZ, "ChebFStep refuses a matrix of another size" + tag);
      PetscPopErrorHandler();
      GSDeviceMatDestroy(&dA);
    }
    {
      DView<PetscScalar> v("test::noisy", n);
      bool               same = !ChebFNoisy(n, 12345, v.data());
      Kokkos::fence();
      const auto h = ToHost(v);
      for (PetscInt i = 0; i < n && same; i++) same = h[i] == ChebFNoisy_Ref(12345 + i);
      Check(same, "ChebFNoisy gives PETSc's noisy values bit for bit n=" + std::to_string(n));
    }
  }
}
} // namespace unit
