/* The device ILU(0) and ICC(0) factors (GSTriFactor) against a serial twin, and their pivot checks */
#include <cstring>
#include "unit.hpp"
#include "cusparse.hpp"

namespace unit
{
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
PetscErrorCode FactorSolve(const CSRHost &A, bool symmetric, bool device, GSTriSolve mode, const std::vector<PetscScalar> &b, std::vector<PetscScalar> &x, PetscInt *bad, GSTriBackend backend = GS_TRI_BACKEND_AUTO, PetscInt sweeps = 0,
                           const std::vector<PetscScalar> *before = nullptr, PetscInt fsweeps = 0, int onekernel = -1, bool *used = nullptr)
{
  GSTriFactor F = nullptr;
  PetscReal   pivot;

  PetscFunctionBegin;
  x.assign(A.m, 0);
  PetscCall(GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), symmetric ? PETSC_TRUE : PETSC_FALSE, backend, &F));
  PetscCall(GSTriFactorSetFactorSweeps(F, fsweeps));
  if (onekernel >= 0) PetscCall(GSTriFactorSetOneKernel(F, onekernel ? PETSC_TRUE : PETSC_FALSE));
  if (sweeps > 0) { /* jacobi's */
    PetscCall(GSTriFactorSetSweeps(F, sweeps));
    PetscCheck(!std::strcmp(GSTriFactorSolverName(F), "Jacobi sweeps"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Not solved by sweeps: %s", GSTriFactorSolverName(F));
  }
  if (before) { /* other values of the same pattern factored and solved first: what the solve keeps must follow */
    PetscCall(GSTriFactorNumeric(F, before->data(), PETSC_FALSE, GS_PIVOT_ABS, 1e-14, bad, &pivot));
    PetscCall(GSTriFactorSolve(F, mode, b.data(), x.data(), PETSC_FALSE));
  }
  if (device) { /* the values in the execution space's memory, as a resident matrix's */
    gpustream::DView<PetscScalar> a("unit::factor_a", A.a.size());
    GSCallKokkos(gpustream::SyncCopy(a, gpustream::HostUnmanaged<const PetscScalar>(A.a.data(), A.a.size())));
    PetscCall(GSTriFactorNumeric(F, a.data(), PETSC_TRUE, GS_PIVOT_ABS, 1e-14, bad, &pivot));
  } else
    PetscCall(GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, GS_PIVOT_ABS, 1e-14, bad, &pivot));
  PetscCall(GSTriFactorSolve(F, mode, b.data(), x.data(), PETSC_FALSE));
  if (used) *used = GSTriFactorUsesOneKernel(F);
  PetscCall(GSTriFactorDestroy(&F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's values with row i scaled by 2 + i % 3: other values of the same pattern, factored before A's */
std::vector<PetscScalar> ScaledRows(const CSRHost &A)
{
  std::vector<PetscScalar> other(A.a);
  for (PetscInt i = 0; i < A.m; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) other[k] *= 2.0 + (i % 3);
  return other;
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
        for (int dev = 0; dev < 2; dev++)
          for (GSTriBackend be : {GS_TRI_BACKEND_AUTO, GS_TRI_BACKEND_KOKKOSKERNELS}) { /* auto: cuSPARSE's solves in CUDA builds */
            PetscInt bad = -2;
            Check(!FactorSolve(A, sym, dev, t ? GS_TRI_TRANSPOSE : GS_TRI_SOLVE, b, x, &bad, be) && bad == -1 && RelDiff(x, ref) < 1e-12,
                  std::string(sym ? "ICC(0)" : "ILU(0)") + (t ? " transposed" : "") + " solve, values on the " + (dev ? "device" : "host") + ", -mat_gpustream_trisolve " + GSTriBackends[be] + ", n=" + std::to_string(n));
          }
        for (int one = 0; one < 2; one++) { /* both solves in one kernel, forced on and off: it fits the sizes up to 257 here, not from 1000 rows */
          PetscInt bad  = -2;
          bool     used = !one;
          Check(!FactorSolve(A, sym, true, t ? GS_TRI_TRANSPOSE : GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_AUTO, 0, nullptr, 0, one, &used) && bad == -1 && RelDiff(x, ref) < 1e-12 && (one ? used == (n > 0 && n <= 257) : !used),
                std::string(sym ? "ICC(0)" : "ILU(0)") + (t ? " transposed" : "") + " solve, one kernel " + (one ? "on" : "off") + ", n=" + std::to_string(n));
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

/* Who solves: cuSPARSE where asked for or (auto) where it loads (CUDA builds whose machine has the library of the
   runtime's major version), Kokkos-Kernels where asked for; asking for cuSPARSE where it cannot load is an error, not
   a silent substitute */
void TestTriFactorBackends()
{
  { /* auto's one kernel: on a device for a small factor of many levels (dense rows), not for one of a single level
       (diagonal) whose rows one after another would cost more than a level's launch; never on a host backend */
    CSRHost diag{1500, 1500, {0}, {}, {}};
    for (PetscInt i = 0; i < diag.m; i++) diag.ja.push_back(i), diag.a.push_back(2.0 + (PetscScalar)(i % 7)), diag.ia.push_back(i + 1);
    const CSRHost dense = RandomFactorable(24, 24, false);
    for (int k = 0; k < 2; k++) {
      const CSRHost           &M = k ? diag : dense;
      std::vector<PetscScalar> lu, x;
      std::vector<PetscInt>    dg;
      const auto               b    = Random(M.m);
      PetscInt                 bad  = -2;
      bool                     used = false;
      ILU0Ref(M, lu, dg);
      Check(!FactorSolve(M, false, true, GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_AUTO, 0, nullptr, 0, -1, &used) && bad == -1 && RelDiff(x, LUSolveRef(M, lu, dg, b, false)) < 1e-12 && used == (!k && GSOnDevice()),
            std::string("auto's one kernel: ") + (k ? "not for a diagonal factor" : "for a small dense factor on a device only"));
    }
  }
  const CSRHost A = RandomFactorable(50, 5, false);
#  if defined(KOKKOS_ENABLE_CUDA)
  const bool have = gpustream::Cusparse() != nullptr;
#  else
  const bool have = false;
#  endif
  const char *cu = "cuSPARSE's SpSV", *kk = "Kokkos-Kernels' sptrsv";
  struct {
    GSTriBackend backend;
    const char  *solver; /* expected; nullptr: an error */
  } cases[] = {
      {GS_TRI_BACKEND_AUTO, have ? cu : kk},
      {GS_TRI_BACKEND_CUSPARSE, have ? cu : nullptr},
      {GS_TRI_BACKEND_KOKKOSKERNELS, kk},
  };
  for (const auto &c : cases) {
    GSTriFactor F = nullptr;
    PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
    const PetscErrorCode ierr = GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, c.backend, &F);
    PetscPopErrorHandler();
    if (F) GSTriFactorSetOneKernel(F, PETSC_FALSE); /* the level-by-level solver, not the small factor's one kernel */
    Check(c.solver ? !ierr && F && !std::strcmp(GSTriFactorSolverName(F), c.solver) : ierr == PETSC_ERR_SUP && !F, std::string("-mat_gpustream_trisolve ") + GSTriBackends[c.backend] + ": " + (c.solver ? c.solver : "an error"));
    if (F) GSTriFactorDestroy(&F);
  }
}

/* s Jacobi sweeps from zero on the triangle whose row i is rows[i] (its diagonal among them): the serial twin of
   -mat_gpustream_trisolve jacobi */
std::vector<PetscScalar> SweepsRef(const std::vector<std::vector<std::pair<PetscInt, PetscScalar>>> &rows, const std::vector<PetscScalar> &b, PetscInt s)
{
  const size_t             n = b.size();
  std::vector<PetscScalar> x(n, 0), y(n);
  for (PetscInt j = 0; j < s; j++) {
    for (size_t i = 0; i < n; i++) {
      PetscScalar acc = b[i], d = 1;
      for (const auto &e : rows[i]) {
        if ((size_t)e.first == i)
          d = e.second;
        else
          acc -= e.second * x[e.first];
      }
      y[i] = acc / d;
    }
    x.swap(y);
  }
  return x;
}

/* The Jacobi sweeps of the device factors against their serial twin: L (unit diagonal) then U for a solve, U^T then
   L^T for a transposed one, values on the host and on the device; enough sweeps on a diagonally dominant matrix
   reach the exact solves. A count below 1 is an error. */
void TestTriFactorSweeps()
{
  for (PetscInt n : sizes) {
    if (n > 10007) continue;
    for (int kind = 0; kind < 6; kind++) {
      const int sym = kind % 2, wide = kind / 2; /* wide: rows long enough for the sweeps' lanes a row (2: 32 of them on a device) */
      if (wide && n > 1000) continue;
      const CSRHost            A = RandomFactorable(n, wide == 2 ? 200 : wide ? 80 : 7, sym);
      std::vector<PetscScalar> lu, x;
      std::vector<PetscInt>    diag;
      const auto               b = Random(n);
      ILU0Ref(A, lu, diag);
      std::vector<std::vector<std::pair<PetscInt, PetscScalar>>> L(n), U(n), Lt(n), Ut(n);
      for (PetscInt i = 0; i < n; i++) {
        L[i].push_back({i, 1.0});
        Lt[i].push_back({i, 1.0});
        for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
          const PetscInt j = A.ja[k];
          if (j < i)
            L[i].push_back({j, lu[k]}), Lt[j].push_back({i, lu[k]});
          else
            U[i].push_back({j, lu[k]}), Ut[j].push_back({i, lu[k]});
        }
      }
      for (PetscInt s : {1, 2, 5, 60})
        for (int t = 0; t < 2; t++) {
          const auto ref = t ? SweepsRef(Lt, SweepsRef(Ut, b, s), s) : SweepsRef(U, SweepsRef(L, b, s), s);
          for (int dev = 0; dev < 2; dev++) {
            PetscInt          bad = -2;
            const std::string what =
                std::string(sym ? "ICC(0)" : "ILU(0)") + (wide ? " of long rows" : "") + (t ? " transposed" : "") + " solve by " + std::to_string(s) + " Jacobi sweeps, values on the " + (dev ? "device" : "host") + ", n=" + std::to_string(n);
            Check(!FactorSolve(A, sym, dev, t ? GS_TRI_TRANSPOSE : GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_JACOBI, s) && bad == -1 && RelDiff(x, ref) < 1e-12, what);
            if (s == 60 && !wide) Check(RelDiff(x, LUSolveRef(A, lu, diag, b, t)) < 1e-10, what + " reaches the exact solve");
            if (s == 5) { /* after a factorization of other values (rows scaled), whose diagonal the sweeps must not keep */
              const std::vector<PetscScalar> other = ScaledRows(A);
              Check(!FactorSolve(A, sym, dev, t ? GS_TRI_TRANSPOSE : GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_JACOBI, s, &other) && bad == -1 && RelDiff(x, ref) < 1e-12, what + ", after other values");
            }
          }
        }
    }
  }
  const CSRHost A = RandomFactorable(20, 5, false);
  GSTriFactor   F = nullptr, K = nullptr;
  Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, GS_TRI_BACKEND_JACOBI, &F) && GSTriFactorGetSweeps(F) == GS_TRI_SWEEPS_DEFAULT, "jacobi: the default sweeps");
  Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, GS_TRI_BACKEND_KOKKOSKERNELS, &K) && GSTriFactorGetSweeps(K) == 0, "kokkoskernels: no sweeps");
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(GSTriFactorSetSweeps(F, 0) == PETSC_ERR_ARG_OUTOFRANGE, "jacobi: 0 sweeps is an error");
  Check(GSTriFactorSetSweeps(K, 3) == PETSC_ERR_ARG_WRONGSTATE, "sweeps for exact solves are an error");
  PetscPopErrorHandler();
  GSTriFactorDestroy(&F);
  GSTriFactorDestroy(&K);
}

/* s synchronous fixed-point sweeps of ILU(0) in the form L D V (L, V unit triangular), returned in A's layout as
   ILU0Ref()'s factors (U = D V): the serial twin of -mat_gpustream_factor_sweeps, each entry summed in the same order
   (by k, over row i of L and column j of V) */
void FixedPointRef(const CSRHost &A, PetscInt s, std::vector<PetscScalar> &lu, std::vector<PetscInt> &diag)
{
  const PetscInt                                          n = A.m;
  std::vector<std::vector<std::pair<PetscInt, PetscInt>>> ucol(n); /* column j of V and D: (row, entry), rows ascending */
  std::vector<PetscScalar>                                f(A.a.size());
  diag.assign(n, -1);
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
      if (A.ja[k] == i) diag[i] = k;
      if (A.ja[k] >= i) ucol[A.ja[k]].push_back({i, k});
    }
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
      const PetscInt j = A.ja[k];
      f[k]             = j == i ? A.a[k] : A.a[k] / A.a[diag[std::min(i, j)]];
    }
  for (PetscInt t = 0; t < s; t++) {
    const std::vector<PetscScalar> old(f);
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
        const PetscInt j = A.ja[k], m = std::min(i, j);
        PetscScalar    acc = A.a[k];
        PetscInt       p   = A.ia[i];
        size_t         q   = 0;
        while (p < A.ia[i + 1] && q < ucol[j].size()) {
          const PetscInt kl = A.ja[p], ku = ucol[j][q].first;
          if (kl >= m || ku >= m) break;
          if (kl == ku)
            acc -= old[p++] * old[diag[kl]] * old[ucol[j][q++].second];
          else if (kl < ku)
            p++;
          else
            q++;
        }
        f[k] = i == j ? acc : acc / old[diag[m]];
      }
  }
  lu = f;
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++)
      if (A.ja[k] > i) lu[k] = f[diag[i]] * f[k];
}

/* The fixed-point factorization (-mat_gpustream_factor_sweeps) against its serial twin on random diagonally
   dominant matrices, through exact solves with the factors (and transposed ones): ILU(0) and ICC(0), short and long
   rows, values on the host and on the device, again after other values; enough sweeps reach ILU(0)'s factors. A
   negative count is an error. */
void TestTriFactorFixedPoint()
{
  for (PetscInt n : sizes) {
    if (n > 10007) continue;
    for (int kind = 0; kind < 4; kind++) {
      const int sym = kind % 2, wide = kind / 2;
      if (wide && n > 1000) continue;
      const CSRHost            A = RandomFactorable(n, wide ? 60 : 7, sym);
      std::vector<PetscScalar> lu, x, exact;
      std::vector<PetscInt>    diag;
      const auto               b = Random(n);
      ILU0Ref(A, exact, diag);
      const auto ilu = LUSolveRef(A, exact, diag, b, false);
      for (PetscInt s : {1, 3, 40}) {
        FixedPointRef(A, s, lu, diag);
        const auto ref = LUSolveRef(A, lu, diag, b, false);
        for (int dev = 0; dev < 2; dev++) {
          PetscInt          bad  = -2;
          const std::string what = std::string(sym ? "ICC(0)" : "ILU(0)") + (wide ? " of long rows" : "") + " by " + std::to_string(s) + " fixed-point sweeps, values on the " + (dev ? "device" : "host") + ", n=" + std::to_string(n);
          Check(!FactorSolve(A, sym, dev, GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_KOKKOSKERNELS, 0, nullptr, s) && bad == -1 && RelDiff(x, ref) < 1e-11, what);
          std::vector<PetscScalar> xt;
          Check(!FactorSolve(A, sym, dev, GS_TRI_TRANSPOSE, b, xt, &bad, GS_TRI_BACKEND_KOKKOSKERNELS, 0, nullptr, s) && bad == -1 && RelDiff(xt, LUSolveRef(A, lu, diag, b, true)) < 1e-11, what + ", transposed solve");
          if (s == 40) Check(RelDiff(x, ilu) < 1e-9, what + " reaches ILU(0)");
          if (s == 3) { /* after the factorization of other values (rows scaled): nothing of it is kept */
            const std::vector<PetscScalar> other = ScaledRows(A);
            Check(!FactorSolve(A, sym, dev, GS_TRI_SOLVE, b, x, &bad, GS_TRI_BACKEND_KOKKOSKERNELS, 0, &other, s) && bad == -1 && RelDiff(x, ref) < 1e-11, what + ", after other values");
          }
        }
      }
    }
  }
  const CSRHost A = RandomFactorable(20, 5, false);
  GSTriFactor   F = nullptr;
  Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, GS_TRI_BACKEND_KOKKOSKERNELS, &F) && GSTriFactorGetFactorSweeps(F) == 0, "the exact factorization by default");
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  Check(GSTriFactorSetFactorSweeps(F, -1) == PETSC_ERR_ARG_OUTOFRANGE, "-1 fixed-point sweeps is an error");
  PetscPopErrorHandler();
  GSTriFactorDestroy(&F);
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
    Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, GS_TRI_BACKEND_AUTO, &F) && !GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, c.test, c.tol, &row, &pivot) && row == c.first && pivot == 0, std::string("pivot check: ") + c.what);
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
    Check(!GSTriFactorCreate(A.m, A.ia.data(), A.ja.data(), PETSC_FALSE, GS_TRI_BACKEND_AUTO, &F) && !GSTriFactorNumeric(F, A.a.data(), PETSC_FALSE, c.test, c.tol, &row, &pivot) && row == c.first,
          "pivot check, test " + std::to_string((int)c.test) + " tolerance " + std::to_string(c.tol));
    GSTriFactorDestroy(&F);
  }
}
#else
/* without Kokkos-Kernels the plugin has no device factors */
void TestTriFactor() {}
void TestTriFactorPivots() {}
void TestTriFactorBackends() {}
void TestTriFactorSweeps() {}
void TestTriFactorFixedPoint() {}
#endif
} // namespace unit
