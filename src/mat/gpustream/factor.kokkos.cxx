/* The device ILU(0) and ICC(0) factors of MATSOLVERGPUSTREAM (factor.c): Kokkos-Kernels' level-scheduled incomplete
   factorization (spiluk) on the default execution space, and triangular solves through cuSPARSE's SpSV in CUDA builds
   (cusparse.hpp) or Kokkos-Kernels' sptrsv. Compiled where the build found Kokkos-Kernels
   (GPUSTREAM_HAVE_KOKKOSKERNELS); without it the plugin factors on the host as PETSc does. */
#include "kokkosimpl.hpp"

#if defined(GPUSTREAM_HAVE_KOKKOSKERNELS)
#  include <algorithm>
#  include <stdexcept>
#  include <vector>
#  include "hostcsr.hpp"
#  include "cusparse.hpp"
#  include <KokkosKernels_Handle.hpp>
#  include <KokkosSparse_spiluk.hpp>
#  include <KokkosSparse_sptrsv.hpp>

/* Kokkos-Kernels 4.6 moved spiluk and sptrsv out of the Experimental namespace (3.x does not define its version) */
#  if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40600
using KokkosSparse::spiluk_numeric;
using KokkosSparse::spiluk_symbolic;
using KokkosSparse::sptrsv_solve;
using KokkosSparse::sptrsv_symbolic;
#  else
using KokkosSparse::Experimental::spiluk_numeric;
using KokkosSparse::Experimental::spiluk_symbolic;
using KokkosSparse::Experimental::sptrsv_solve;
using KokkosSparse::Experimental::sptrsv_symbolic;
#  endif
using KokkosSparse::Experimental::SPILUKAlgorithm;
using KokkosSparse::Experimental::SPTRSVAlgorithm;

using namespace gpustream;

using KKHandle = KokkosKernels::Experimental::KokkosKernelsHandle<PetscInt, PetscInt, PetscScalar, Exec, Mem, Mem>;

/* spiluk writes this where a pivot came out exactly zero, and goes on */
constexpr double SpilukZeroPivot = 1e6;

/* A triangular factor in CSR with its solve handle; T: its transpose, made at the first transposed solve, whose
   values come from the factor's through map */
struct TriCSR {
  DView<PetscInt>                   row, col, map;
  DView<PetscScalar>                val;
  KKHandle                          kh; /* sptrsv's, where sv is empty and the factor has no sweeps */
  std::unique_ptr<CusparseTriSolve> sv;
  DView<PetscScalar>                sweep; /* the second vector of the factor's Jacobi sweeps */
  DView<PetscScalar>                dinv;  /* the sweeps' inverse diagonal, made again after the values change */
  bool                              dstale = true;
};

/* The fixed-point (Chow and Patel) numeric factorization: per entry of the pattern its row and its place (>= 0: in
   L; -1 - t: entry t of U^T), U^T's CSR (each row of U^T a column of U, sorted, its diagonal last) with the entry of
   U each comes from, and the second buffers of the sweeps, which read the last sweep's values and write new ones */
struct FixedPoint {
  DView<PetscInt>    erow, edst, adiag; /* adiag: the pattern's diagonal entry of each row */
  DView<PetscInt>    utrow, utcol, utmap;
  DView<PetscScalar> l2, ut[2];
};

struct _n_GSTriFactor {
  PetscInt                     n = 0, nnz = 0; /* rows, and entries of the matrix factored */
  bool                         symmetric = false;
  DView<PetscInt>              arow, acol; /* the pattern factored: A's, or (ICC) the symmetric one of A's upper triangle */
  DView<PetscInt>              amap;       /* ICC: the entry of A each entry of the pattern takes its value from */
  DView<PetscScalar>           aval;       /* the values factored where they are not A's device array itself */
  DView<PetscScalar>           ahost;      /* A's values from the host, staged */
  PetscCount                   annz = 0;   /* A's entries */
  KKHandle                     kh;
  bool                         transposed = false, tcurrent = false, dcurrent = false; /* dcurrent: the pivots were checked for the halves */
  DView<PetscScalar>           y, b, x;                                                /* between the two solves; the staging of host vectors */
  bool                         fromhost = false;                                       /* L and U are a host factor's (GSTriFactorSetHost()) */
  DView<PetscInt>              lmap, umap;                                             /* where their values are in the host factor's array: -1 (L's unit diagonal), -2 - k (U's diagonal, 1 / a[k]) */
  DView<PetscInt>              rperm, cperm;                                           /* its row and column permutations, empty where natural */
  DView<PetscScalar>           pb;                                                     /* the permuted right-hand side */
  std::vector<PetscInt>        hrow, hcol;                                             /* the host factor's pattern the device one was made from */
  Kokkos::View<PetscInt, Mem>  badrow;
  Kokkos::View<PetscReal, Mem> badpivot;
  PetscLogDouble               work    = 0;
  PetscInt                     sweeps  = 0; /* -mat_gpustream_trisolve jacobi: the sweeps of each triangular solve */
  int                          small   = 0; /* both solves in one kernel where the factor is small (OneKernelSolve()): 1 on, 0 off, -1 auto */
  PetscInt                     depth   = 0; /* the levels of L and U together, for auto's choice of OneKernelSolve() */
  PetscInt                     fsweeps = 0; /* -mat_gpustream_factor_sweeps: fixed-point sweeps of the numeric factorization (0: spiluk) */
  std::unique_ptr<FixedPoint>  fp;          /* made at the first numeric factorization by sweeps */
#  if defined(KOKKOS_ENABLE_CUDA)
  std::unique_ptr<CusparseHandle> sparse; /* the triangular solves are cuSPARSE's */
#  endif
  /* declared last, destroyed first: they hold the handle above */
  TriCSR L, U, Lt, Ut;
};

/* The factor's triangular solver: cuSPARSE's where the backend asks for it or (auto) where it loads, else sptrsv */
static PetscErrorCode ChooseTriSolver(_n_GSTriFactor *F, GSTriBackend backend)
{
  const char *why = nullptr;

  PetscFunctionBegin;
  if (backend == GS_TRI_BACKEND_JACOBI) F->sweeps = GS_TRI_SWEEPS_DEFAULT;
  F->small = backend == GS_TRI_BACKEND_AUTO ? -1 : 0;
  if (backend == GS_TRI_BACKEND_KOKKOSKERNELS || backend == GS_TRI_BACKEND_JACOBI) PetscFunctionReturn(PETSC_SUCCESS);
#  if defined(KOKKOS_ENABLE_CUDA)
  if (const CusparseAPI *api = Cusparse())
    GSCallKokkos(F->sparse.reset(new CusparseHandle(api)));
  else
    why = "the cuSPARSE library of this CUDA runtime could not be loaded";
#  else
  why = "this build has no CUDA backend";
#  endif
  PetscCheck(!why || backend != GS_TRI_BACKEND_CUSPARSE, PETSC_COMM_SELF, PETSC_ERR_SUP, "-mat_gpustream_trisolve cusparse: %s; use kokkoskernels or auto", why);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static bool UsesCusparse(const _n_GSTriFactor *F)
{
#  if defined(KOKKOS_ENABLE_CUDA)
  return F->sparse != nullptr;
#  else
  return false;
#  endif
}

/* The solver of T (n rows, lower or upper triangular; its arrays allocated) */
static void TriSymbolic(_n_GSTriFactor *F, TriCSR &T, bool lower)
{
  if (F->sweeps > 0) {
    T.sweep = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_sweep"), F->n);
    return;
  }
#  if defined(KOKKOS_ENABLE_CUDA)
  if (F->sparse) {
    T.sv.reset(new CusparseTriSolve(*F->sparse, lower, F->n, (PetscInt)T.col.extent(0), T.row.data(), T.col.data(), T.val.data()));
    return;
  }
#  endif
  T.kh.create_sptrsv_handle(SPTRSVAlgorithm::SEQLVLSCHD_TP1, F->n, lower);
  sptrsv_symbolic(&T.kh, T.row, T.col);
}

/* T's values changed */
static void TriStale(TriCSR &T)
{
  if (T.sv) T.sv->Stale();
  T.dstale = true;
}

/* x ~ T^-1 b by s Jacobi sweeps from x = 0: x <- D^-1 (b - N x), D T's diagonal, N the rest. The result is
   the truncated Neumann series of T^-1, a fixed linear operator: with L U = L D L^T (ILU(0) of a symmetric matrix)
   the sweeps through L and U make a symmetric preconditioner, as exact solves do. Each sweep is a product with T
   (one launch, no levels), where exact solves go level by level. */
static void JacobiSolve(TriCSR &T, PetscInt s, const DView<PetscScalar> &b, const DView<PetscScalar> &x)
{
  const PetscInt           n   = (PetscInt)T.row.extent(0) - 1;
  const DView<PetscInt>    row = T.row, col = T.col;
  const DView<PetscScalar> val = T.val;
  /* rows of 12 entries or more (elasticity's factors): lanes a row on a device, 16 up to 48 entries, else 32 */
  const PetscInt mean = n > 0 ? (PetscInt)col.extent(0) / n : 0;
  const bool     wide = mean >= 12;
  const int      vlen = OnDevice() ? (mean < 48 ? 16 : 32) : 1, team = OnDevice() ? TeamThreads() / vlen : 1;
  const PetscInt league = (n + team - 1) / team;
  if (T.dstale || T.dinv.extent(0) != (size_t)n) { /* a row without a diagonal entry takes 1 */
    if (T.dinv.extent(0) != (size_t)n) T.dinv = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_dinv"), n);
    const DView<PetscScalar> dinv = T.dinv;
    Kokkos::parallel_for(
        "GPUStream::FactorJacobiDiagonal", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) {
          PetscScalar d = 1;
          for (PetscInt k = row(i); k < row(i + 1); k++)
            if (col(k) == i) d = val(k);
          dinv(i) = 1 / d;
        });
    T.dstale = false;
  }
  const DView<PetscScalar> dinv = T.dinv;
  for (PetscInt j = 0; j < s; j++) {
    const bool               odd = (s - 1 - j) % 2; /* the last sweep writes x */
    const DView<PetscScalar> out = odd ? T.sweep : x, in = odd ? x : T.sweep;
    if (j == 0) /* from x = 0 */
      Kokkos::parallel_for(
          "GPUStream::FactorJacobiFirst", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { out(i) = dinv(i) * b(i); });
    else if (!wide)
      Kokkos::parallel_for(
          "GPUStream::FactorJacobiSweep", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) {
            PetscScalar acc = b(i);
            for (PetscInt k = row(i); k < row(i + 1); k++) {
              const PetscInt c = col(k);
              if (c != i) acc -= val(k) * in(c);
            }
            out(i) = dinv(i) * acc;
          });
    else
      Kokkos::parallel_for(
          "GPUStream::FactorJacobiSweepRows", TeamPol(league, team, vlen), KOKKOS_LAMBDA(const Member &t) {
            const PetscInt i = t.league_rank() * t.team_size() + t.team_rank();
            if (i >= n) return;
            const PetscInt beg = row(i), len = row(i + 1) - beg;
            PetscScalar    sum = 0;
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, len),
                [&](const PetscInt k, PetscScalar &a) {
                  const PetscInt c = col(beg + k);
                  if (c != i) a += val(beg + k) * in(c);
                },
                sum);
            Kokkos::single(Kokkos::PerThread(t), [&]() { out(i) = dinv(i) * (b(i) - sum); });
          });
  }
}

/* x = T^-1 b, T one of F's triangles (approximately where F sweeps) */
static void TriSolve(const _n_GSTriFactor *F, TriCSR &T, const DView<PetscScalar> &b, const DView<PetscScalar> &x)
{
  if (F->sweeps > 0)
    JacobiSolve(T, F->sweeps, b, x);
  else if (T.sv)
    T.sv->Solve(b.data(), x.data());
  else
    sptrsv_solve(&T.kh, T.row, T.col, T.val, b, x);
}

/* The scratch bytes of OneKernelSolve() on lo and up: the vector, the inverse diagonals, both triangles */
static size_t OneKernelBytes(PetscInt n, const TriCSR &lo, const TriCSR &up)
{
  const size_t nz = lo.col.extent(0) + up.col.extent(0);
  return (3 * (size_t)n + nz) * sizeof(PetscScalar) + (nz + 2 * (size_t)n + 2) * sizeof(PetscInt) + 64;
}

/* Factors this small are solved by OneKernelSolve() on a device under auto, where its rows one after another (a team
   reduction each) cost less than a level-scheduled solve's launches and synchronizations level after level: a
   coarse grid's dense factor, whose every row is a level */
constexpr size_t   OneKernelMaxBytes     = 40 * 1024;
constexpr PetscInt OneKernelMaxRows      = 2048;
constexpr PetscInt OneKernelRowsPerLevel = 16;

static bool UsesOneKernel(const _n_GSTriFactor *F, const TriCSR &lo, const TriCSR &up)
{
  if (F->sweeps > 0 || F->small == 0) return false;
  if (F->small < 0 && (!OnDevice() || F->n > OneKernelMaxRows || 2 * F->n > OneKernelRowsPerLevel * F->depth)) return false;
  return OneKernelBytes(F->n, lo, up) <= OneKernelMaxBytes;
}

/* The levels of the lower (columns before the diagonal) or upper part of the rows of a CSR pattern on the host: a
   row's level is one more than the highest of the rows it reads */
static PetscInt HostLevels(PetscInt n, const std::vector<PetscInt> &row, const std::vector<PetscInt> &col, bool lower)
{
  std::vector<PetscInt> lev(n, 0);
  PetscInt              most = 0;
  for (PetscInt q = 0; q < n; q++) {
    const PetscInt i = lower ? q : n - 1 - q;
    PetscInt       l = 0;
    for (PetscInt k = row[i]; k < row[i + 1]; k++) {
      const PetscInt j = col[k];
      if ((lower && j < i) || (!lower && j > i && j < n)) l = PetscMax(l, lev[j]);
    }
    lev[i] = l + 1;
    most   = PetscMax(most, lev[i]);
  }
  return most;
}

/* out(pout(i)) = (up^-1 lo^-1 in(pin(.)))(i) (no permutation where pin or pout is empty) in one kernel of one team: the
   triangles and the vector staged in scratch memory, then row after row, lo's first to last and up's last to first,
   each row's sum formed by the team */
static void OneKernelSolve(PetscInt n, const TriCSR &lo, const TriCSR &up, const DView<PetscInt> &pin, const DView<PetscInt> &pout, const DView<PetscScalar> &in, const DView<PetscScalar> &out)
{
  const DView<PetscInt>    lr = lo.row, lc = lo.col, ur = up.row, uc = up.col;
  const DView<PetscScalar> lv = lo.val, uv = up.val;
  const PetscInt           nl = (PetscInt)lc.extent(0), nu = (PetscInt)uc.extent(0);
  const int                team = OnDevice() ? 32 : 1;
  using IScr                    = Kokkos::View<PetscInt *, Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::parallel_for(
      "GPUStream::FactorOneKernelSolve", Kokkos::TeamPolicy<Exec>(1, team).set_scratch_size(0, Kokkos::PerTeam(OneKernelBytes(n, lo, up))), KOKKOS_LAMBDA(const Member &t) {
        const Scratch v(t.team_scratch(0), n), ld(t.team_scratch(0), n), ud(t.team_scratch(0), n), sv(t.team_scratch(0), nl + nu);
        const IScr    sc(t.team_scratch(0), nl + nu), sr(t.team_scratch(0), 2 * n + 2);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nl + nu), [&](const PetscInt k) {
          sv(k) = k < nl ? lv(k) : uv(k - nl);
          sc(k) = k < nl ? lc(k) : uc(k - nl);
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n + 1), [&](const PetscInt i) {
          sr(i)         = lr(i);
          sr(n + 1 + i) = nl + ur(i);
          if (i < n) v(i) = in(pin.extent(0) ? pin(i) : i);
        });
        t.team_barrier();
        /* the inverse diagonals; a row without its diagonal takes 1 */
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const PetscInt i) {
          PetscScalar dl = 1, du = 1;
          for (PetscInt k = sr(i); k < sr(i + 1); k++)
            if (sc(k) == i) dl = sv(k);
          for (PetscInt k = sr(n + 1 + i); k < sr(n + 2 + i); k++)
            if (sc(k) == i) du = sv(k);
          ld(i) = 1 / dl;
          ud(i) = 1 / du;
        });
        t.team_barrier();
        for (PetscInt q = 0; q < 2 * n; q++) {
          const bool     lower = q < n;
          const PetscInt i = lower ? q : 2 * n - 1 - q, b = lower ? sr(i) : sr(n + 1 + i), e = lower ? sr(i + 1) : sr(n + 2 + i);
          PetscScalar    sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(t, b, e),
              [&](const PetscInt k, PetscScalar &a) {
                if (sc(k) != i) a += sv(k) * v(sc(k));
              },
              sum);
          Kokkos::single(Kokkos::PerTeam(t), [&]() { v(i) = (v(i) - sum) * (lower ? ld(i) : ud(i)); });
          t.team_barrier();
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const PetscInt i) { out(pout.extent(0) ? pout(i) : i) = v(i); });
      });
}

PetscErrorCode GSTriFactorSetOneKernel(GSTriFactor F, PetscBool on)
{
  PetscFunctionBegin;
  F->small = on ? 1 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool GSTriFactorUsesOneKernel(GSTriFactor F)
{
  return F->n > 0 && UsesOneKernel(F, F->L, F->U) ? PETSC_TRUE : PETSC_FALSE;
}

PetscErrorCode GSTriFactorCreate(PetscInt n, const PetscInt ia[], const PetscInt ja[], PetscBool symmetric, GSTriBackend backend, GSTriFactor *out)
{
  std::unique_ptr<_n_GSTriFactor> F;
  std::vector<PetscInt>           row, col, map;
  PetscInt                        nnzL = n, nnzU = 0;

  PetscFunctionBegin;
  *out = NULL;
  PetscCall(GSKokkosInitialize());
  PetscCallCXX(F.reset(new _n_GSTriFactor));
  F->n         = n;
  F->symmetric = symmetric ? true : false;
  F->annz      = ia[n];
  PetscCall(ChooseTriSolver(F.get(), backend));
  PetscCallCXX({
    if (!symmetric) {
      row.assign(ia, ia + n + 1);
      col.assign(ja, ja + ia[n]);
    } else { /* S(i, j) = S(j, i) = A(i, j) for j >= i: row i is the transposed upper part (columns < i), then its own */
      std::vector<PetscInt> up(n + 1, 0), urow, ucol, umap, trow, tcol, tmap;
      for (PetscInt i = 0; i < n; i++)
        for (PetscInt k = ia[i]; k < ia[i + 1]; k++)
          if (ja[k] >= i) urow.push_back(i), ucol.push_back(ja[k]), umap.push_back(k);
      std::vector<PetscInt> uptr(n + 1, 0); /* the upper part's CSR, strictly upper in (tcol, ...) after transposing */
      for (size_t e = 0; e < urow.size(); e++) uptr[urow[e] + 1]++;
      for (PetscInt i = 0; i < n; i++) uptr[i + 1] += uptr[i];
      HostTranspose(n, n, uptr, ucol, trow, tcol, tmap);
      row.assign(n + 1, 0);
      for (PetscInt i = 0; i < n; i++) {
        for (PetscInt k = trow[i]; k < trow[i + 1]; k++)
          if (tcol[k] < i) col.push_back(tcol[k]), map.push_back(umap[tmap[k]]);
        for (PetscInt k = uptr[i]; k < uptr[i + 1]; k++) col.push_back(ucol[k]), map.push_back(umap[k]);
        row[i + 1] = (PetscInt)col.size();
      }
    }
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = row[i]; k < row[i + 1]; k++) {
        if (col[k] < i)
          nnzL++;
        else
          nnzU++;
      }
  });
  F->nnz = row[n];
  if (n <= OneKernelMaxRows) PetscCallCXX(F->depth = HostLevels(n, row, col, true) + HostLevels(n, row, col, false));
  GSCallKokkos({
    Upload(F->arow, "GPUStream::factor_arow", row);
    Upload(F->acol, "GPUStream::factor_acol", col);
    if (symmetric) {
      Upload(F->amap, "GPUStream::factor_amap", map);
      F->aval = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_aval"), F->nnz);
    }
    F->y        = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_y"), n);
    F->badrow   = Kokkos::View<PetscInt, Mem>("GPUStream::factor_badrow");
    F->badpivot = Kokkos::View<PetscReal, Mem>("GPUStream::factor_badpivot");
    if (n > 0) {
      F->kh.create_spiluk_handle(SPILUKAlgorithm::SEQLVLSCHD_TP1, n, nnzL, nnzU);
      F->L.row = DView<PetscInt>("GPUStream::factor_lrow", n + 1);
      F->L.col = DView<PetscInt>("GPUStream::factor_lcol", nnzL);
      F->U.row = DView<PetscInt>("GPUStream::factor_urow", n + 1);
      F->U.col = DView<PetscInt>("GPUStream::factor_ucol", nnzU);
      spiluk_symbolic(&F->kh, 0, F->arow, F->acol, F->L.row, F->L.col, F->U.row, F->U.col);
      Fence();
      if ((PetscInt)F->kh.get_spiluk_handle()->get_nnzL() != nnzL || (PetscInt)F->kh.get_spiluk_handle()->get_nnzU() != nnzU) throw std::runtime_error("spiluk_symbolic: the level-0 factors have other sizes than the pattern's");
      F->L.val = DView<PetscScalar>("GPUStream::factor_lval", nnzL);
      F->U.val = DView<PetscScalar>("GPUStream::factor_uval", nnzU);
      /* spiluk's symbolic phase sorts each row's columns (Kokkos-Kernels 3.4 on), as cuSPARSE wants them */
      TriSymbolic(F.get(), F->L, true);
      TriSymbolic(F.get(), F->U, false);
      Fence();
#  if !defined(KOKKOSKERNELS_VERSION) || KOKKOSKERNELS_VERSION < 40000
      /* Kokkos-Kernels 3 allocates a row-position table of n integers for every row of the widest level at each
         numeric factorization (later versions cut the levels into chunks that fit) */
      F->work = (PetscLogDouble)F->kh.get_spiluk_handle()->get_level_maxrows() * (PetscLogDouble)n * sizeof(PetscInt);
#  endif
    }
  });
  if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)((row.size() + col.size() + map.size()) * sizeof(PetscInt))));
  *out = F.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *GSTriFactorSolverName(GSTriFactor F)
{
  return F->sweeps > 0 ? "Jacobi sweeps" : GSTriFactorUsesOneKernel(F) ? "both solves in one kernel (a small factor)" : UsesCusparse(F) ? "cuSPARSE's SpSV" : "Kokkos-Kernels' sptrsv";
}

PetscErrorCode GSTriFactorSetSweeps(GSTriFactor F, PetscInt sweeps)
{
  PetscFunctionBegin;
  PetscCheck(F->sweeps > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Sweeps are for the factors of -mat_gpustream_trisolve jacobi");
  PetscCheck(sweeps > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " Jacobi sweeps: give at least 1", sweeps);
  F->sweeps = sweeps;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt GSTriFactorGetSweeps(GSTriFactor F)
{
  return F->sweeps;
}

PetscErrorCode GSTriFactorDestroy(GSTriFactor *F)
{
  PetscFunctionBegin;
  if (*F) GSCallKokkos(delete *F);
  *F = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSTriFactorGetInfo(GSTriFactor F, PetscCount *nnzL, PetscCount *nnzU, PetscInt *levels, PetscLogDouble *bytes, PetscLogDouble *work)
{
  PetscFunctionBegin;
  if (nnzL) *nnzL = (PetscCount)F->L.col.extent(0);
  if (nnzU) *nnzU = (PetscCount)F->U.col.extent(0);
  /* levels: spiluk's, or sptrsv's for a host factor's solves (-1: cuSPARSE's, which tells none, or sweeps') */
  if (levels) *levels = F->n > 0 ? (PetscInt)(!F->fromhost ? F->kh.get_spiluk_handle()->get_num_levels() : UsesCusparse(F) || F->sweeps > 0 ? -1 : F->L.kh.get_sptrsv_handle()->get_num_levels()) : 0;
  if (bytes) {
    const TriCSR  *t[4] = {&F->L, &F->U, &F->Lt, &F->Ut};
    PetscLogDouble b    = (F->arow.extent(0) + F->acol.extent(0) + F->amap.extent(0) + F->lmap.extent(0) + F->umap.extent(0) + F->rperm.extent(0) + F->cperm.extent(0)) * sizeof(PetscInt) +
                       (F->aval.extent(0) + F->ahost.extent(0) + F->y.extent(0) + F->b.extent(0) + F->x.extent(0) + F->pb.extent(0)) * sizeof(PetscScalar);
    for (const TriCSR *c : t) b += (c->row.extent(0) + c->col.extent(0) + c->map.extent(0)) * sizeof(PetscInt) + c->val.extent(0) * sizeof(PetscScalar) + (c->sv ? c->sv->Bytes() : 0) + (c->sweep.extent(0) + c->dinv.extent(0)) * sizeof(PetscScalar);
    if (F->fp) {
      const FixedPoint &fp = *F->fp;
      b += (fp.erow.extent(0) + fp.edst.extent(0) + fp.adiag.extent(0) + fp.utrow.extent(0) + fp.utcol.extent(0) + fp.utmap.extent(0)) * sizeof(PetscInt) + (fp.l2.extent(0) + fp.ut[0].extent(0) + fp.ut[1].extent(0)) * sizeof(PetscScalar);
    }
    *bytes = b;
  }
  if (work) *work = F->work;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pivot of row i as spiluk formed it, before it put SpilukZeroPivot in place of a zero: a(i, i) less the products
   of the row's multipliers with the column i entries of the rows above, in the order of the elimination */
struct RecomputePivot {
  DView<PetscInt>    arow, acol, lrow, lcol, urow, ucol;
  DView<PetscScalar> a, lval, uval;

  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt i) const
  {
    PetscScalar p = 0;
    for (PetscInt k = arow(i); k < arow(i + 1); k++)
      if (acol(k) == i) p = a(k);
    for (PetscInt k = lrow(i); k < lrow(i + 1) - 1; k++) { /* the unit diagonal is last */
      const PetscInt r = lcol(k);
      for (PetscInt q = urow(r); q < urow(r + 1); q++)
        if (ucol(q) == i) p -= lval(k) * uval(q);
    }
    return p;
  }
};

/* The structures of the fixed-point factorization, from the patterns of A, L and U on the device; every row holds its
   diagonal (MATSOLVERGPUSTREAM factors on the host a matrix that lacks one) */
static void FixedPointSetUp(_n_GSTriFactor *F)
{
  const PetscInt              n = F->n, nnz = F->nnz;
  const std::vector<PetscInt> arow = Download(F->arow), acol = Download(F->acol), lrow = Download(F->L.row), lcol = Download(F->L.col), urow = Download(F->U.row), ucol = Download(F->U.col);
  std::vector<PetscInt>       erow(nnz), edst(nnz), adiag(n, -1), trow, tcol, tmap, upos(ucol.size());
  HostTranspose(n, n, urow, ucol, trow, tcol, tmap);
  for (size_t t = 0; t < tmap.size(); t++) upos[tmap[t]] = (PetscInt)t;
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = arow[i]; k < arow[i + 1]; k++) {
      const PetscInt j = acol[k];
      erow[k]          = i;
      if (j == i) adiag[i] = k;
      if (j < i) {
        const auto q = std::lower_bound(lcol.begin() + lrow[i], lcol.begin() + lrow[i + 1], j);
        if (q == lcol.begin() + lrow[i + 1] || *q != j) throw std::runtime_error("fixed-point factorization: an entry of the pattern is not in L");
        edst[k] = (PetscInt)(q - lcol.begin());
      } else {
        const auto q = std::lower_bound(ucol.begin() + urow[i], ucol.begin() + urow[i + 1], j);
        if (q == ucol.begin() + urow[i + 1] || *q != j) throw std::runtime_error("fixed-point factorization: an entry of the pattern is not in U");
        edst[k] = -1 - upos[q - ucol.begin()];
      }
    }
  if (std::find(adiag.begin(), adiag.end(), -1) != adiag.end()) throw std::runtime_error("fixed-point factorization: a row without its diagonal entry");
  std::unique_ptr<FixedPoint> fp(new FixedPoint);
  Upload(fp->erow, "GPUStream::factor_fp_erow", erow);
  Upload(fp->edst, "GPUStream::factor_fp_edst", edst);
  Upload(fp->adiag, "GPUStream::factor_fp_adiag", adiag);
  Upload(fp->utrow, "GPUStream::factor_fp_utrow", trow);
  Upload(fp->utcol, "GPUStream::factor_fp_utcol", tcol);
  Upload(fp->utmap, "GPUStream::factor_fp_utmap", tmap);
  fp->l2    = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_fp_l2"), lcol.size());
  fp->ut[0] = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_fp_ut0"), tcol.size());
  fp->ut[1] = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_fp_ut1"), tcol.size());
  F->fp     = std::move(fp);
}

/* ILU(0) of the values vals on F's pattern by s synchronous fixed-point sweeps (Chow and Patel) in the form
   A = L D V, L and V unit triangular: from l_ij = a_ij / a_jj, v_ij = a_ij / a_ii and d_i = a_ii, each sweep computes
   every entry at once from the previous sweep's,
     l_ij = (a_ij - sum_{k<j} l_ik d_k v_kj) / d_j,  d_i = a_ii - sum_{k<i} l_ik d_k v_ki,  v_ij = (a_ij - sum_{k<i} l_ik d_k v_kj) / d_i,
   which keeps L = V^T on a symmetric matrix at every sweep, so that L (D V) is a symmetric preconditioner as exact
   ILU(0)'s is. One launch a sweep, where spiluk goes level by level; the factors converge to ILU(0)'s (exactly after
   as many sweeps as the longest chain of dependencies). U = D V lands in U's CSR at the end; V and D live in U^T's
   entries meanwhile, d_k the last of U^T's row k. */
static void FixedPointFactor(_n_GSTriFactor *F, const DView<PetscScalar> &vals, PetscInt s)
{
  if (!F->fp) FixedPointSetUp(F);
  const FixedPoint        &fp  = *F->fp;
  const PetscInt           n   = F->n;
  const DView<PetscInt>    col = F->acol, erow = fp.erow, edst = fp.edst, adiag = fp.adiag, lrow = F->L.row, lcol = F->L.col, utrow = fp.utrow, utcol = fp.utcol, utmap = fp.utmap;
  const DView<PetscScalar> lb[2] = {s % 2 ? fp.l2 : F->L.val, s % 2 ? F->L.val : fp.l2}, ub[2] = {fp.ut[0], fp.ut[1]}, uval = F->U.val;
  {
    const DView<PetscScalar> l0 = lb[0], l1 = lb[1], u0 = ub[0];
    Kokkos::parallel_for(
        "GPUStream::FactorFixedPointStart", RangePol(0, F->nnz), KOKKOS_LAMBDA(const PetscInt e) {
          const PetscInt    i = erow(e), j = col(e), d = edst(e), k = i < j ? i : j; /* the diagonal the entry divides by */
          const PetscScalar a = vals(e), akk = vals(adiag(k));
          if (d >= 0)
            l0(d) = a / akk;
          else
            u0(-1 - d) = i == j ? a : a / akk;
        });
    Kokkos::parallel_for(
        "GPUStream::FactorFixedPointUnit", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { l0(lrow(i + 1) - 1) = l1(lrow(i + 1) - 1) = 1; });
  }
  for (PetscInt t = 0; t < s; t++) {
    const DView<PetscScalar> lin = lb[t % 2], lout = lb[(t + 1) % 2], uin = ub[t % 2], uout = ub[(t + 1) % 2];
    Kokkos::parallel_for(
        "GPUStream::FactorFixedPointSweep", RangePol(0, F->nnz), KOKKOS_LAMBDA(const PetscInt e) {
          const PetscInt i = erow(e), j = col(e), m = i < j ? i : j, d = edst(e);
          PetscInt       p = lrow(i), q = utrow(j);
          const PetscInt pe = lrow(i + 1) - 1, qe = utrow(j + 1); /* L's unit diagonal left out */
          PetscScalar    acc = vals(e);
          while (p < pe && q < qe) {
            const PetscInt kl = lcol(p), ku = utcol(q);
            if (kl >= m || ku >= m) break;
            if (kl == ku)
              acc -= lin(p++) * uin(utrow(kl + 1) - 1) * uin(q++);
            else if (kl < ku)
              p++;
            else
              q++;
          }
          const PetscScalar dm = i == j ? PetscScalar(1) : uin(utrow(m + 1) - 1);
          if (d >= 0)
            lout(d) = acc / dm;
          else
            uout(-1 - d) = acc / dm;
        });
  }
  const DView<PetscScalar> ufinal = ub[s % 2];
  Kokkos::parallel_for(
      "GPUStream::FactorFixedPointU", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt j) {
        for (PetscInt t = utrow(j); t < utrow(j + 1); t++) { /* U(i, j) = d_i v_ij */
          const PetscInt i = utcol(t);
          uval(utmap(t))   = i == j ? ufinal(t) : ufinal(utrow(i + 1) - 1) * ufinal(t);
        }
      });
}

PetscErrorCode GSTriFactorSetFactorSweeps(GSTriFactor F, PetscInt sweeps)
{
  PetscFunctionBegin;
  PetscCheck(sweeps >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " fixed-point sweeps of the factorization: give 0 (exact) or more", sweeps);
  PetscCheck(!F->fromhost || sweeps == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "A host factor's L and U are not factored on the device");
  F->fsweeps = sweeps;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt GSTriFactorGetFactorSweeps(GSTriFactor F)
{
  return F->fsweeps;
}

PetscErrorCode GSTriFactorNumeric(GSTriFactor F, const PetscScalar a[], PetscBool device, GSPivotTest test, PetscReal zeropivot, PetscInt *badrow, PetscReal *badpivot)
{
  DView<PetscScalar> src, vals;
  const PetscInt     n = F->n;

  PetscFunctionBegin;
  *badrow     = -1;
  *badpivot   = 0;
  F->tcurrent = false;
  F->dcurrent = false;
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (!device && OnDevice()) { /* host values (a streamed matrix): one copy */
    if (F->ahost.extent(0) != (size_t)F->annz) GSCallKokkos(F->ahost = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_ahost"), F->annz));
    PetscCall(HostToDevice(F->ahost.data(), a, F->annz));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)F->annz * sizeof(PetscScalar)));
    src = F->ahost;
  } else
    src = Wrap(a, F->annz);
  GSCallKokkos({
    if (F->symmetric) {
      const DView<PetscScalar> s = src, v = F->aval;
      const DView<PetscInt>    map = F->amap;
      Kokkos::parallel_for(
          "GPUStream::FactorGather", RangePol(0, F->nnz), KOKKOS_LAMBDA(const PetscInt k) { v(k) = s(map(k)); });
      vals = F->aval;
    } else
      vals = src;
    if (F->fsweeps > 0)
      FixedPointFactor(F, vals, F->fsweeps);
    else
      spiluk_numeric(&F->kh, 0, F->arow, F->acol, vals, F->L.row, F->L.col, F->L.val, F->U.row, F->U.col, F->U.val);
    TriStale(F->L);
    TriStale(F->U);
    {
      /* the first row whose pivot fails the test: the row where PETSc's factorization meets a zero pivot or, with a
         shift, shifts */
      const RecomputePivot               rp{F->arow, F->acol, F->L.row, F->L.col, F->U.row, F->U.col, vals, F->L.val, F->U.val};
      const bool                         marked = F->fsweeps == 0; /* spiluk's mark of a zero pivot; the sweeps leave none */
      const bool                         withL  = !F->symmetric;   /* PETSc's LU sums the multipliers into the row's size, its Cholesky does not */
      const DView<PetscInt>              lrow = F->L.row, urow = F->U.row;
      const DView<PetscScalar>           lval = F->L.val, uval = F->U.val;
      const Kokkos::View<PetscInt, Mem>  bad = F->badrow;
      const Kokkos::View<PetscReal, Mem> piv = F->badpivot;
      Kokkos::parallel_reduce(
          "GPUStream::FactorPivots", RangePol(0, n),
          KOKKOS_LAMBDA(const PetscInt i, PetscInt &first) {
            PetscScalar p  = uval(urow(i));
            PetscReal   rs = 0, tol = zeropivot;
            if (marked && p == PetscScalar(SpilukZeroPivot)) p = rp(i);
            if (test != GS_PIVOT_ABS) {
              if (withL)
                for (PetscInt k = lrow(i); k < lrow(i + 1) - 1; k++) rs += PetscAbsScalar(lval(k));
              for (PetscInt k = urow(i) + 1; k < urow(i + 1); k++) rs += PetscAbsScalar(uval(k));
              tol *= rs;
            }
            const bool isnan = !(PetscRealPart(p) == PetscRealPart(p)) || !(PetscImaginaryPart(p) == PetscImaginaryPart(p));
            const bool fails = !isnan && (test == GS_PIVOT_REAL_ROWSUM ? PetscRealPart(p) <= tol : PetscAbsScalar(p) <= tol);
            if (fails && i < first) first = i;
          },
          Kokkos::Min<PetscInt, Mem>(bad));
      Kokkos::parallel_for(
          "GPUStream::FactorBadPivot", RangePol(0, 1), KOKKOS_LAMBDA(const PetscInt) {
            const PetscInt i = bad();
            if (i >= 0 && i < n) {
              PetscScalar p = uval(urow(i));
              if (marked && p == PetscScalar(SpilukZeroPivot)) p = rp(i);
              piv() = PetscAbsScalar(p);
            }
          });
      PetscInt  r;
      PetscReal v;
      SyncCopy(Kokkos::View<PetscInt, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&r), bad);
      SyncCopy(Kokkos::View<PetscReal, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&v), piv);
      if (r >= 0 && r < n) {
        *badrow   = r;
        *badpivot = v;
      }
    }
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device factor of a host factor in PETSc's SeqAIJ layout (MATSOLVERPETSC's LU and ILU): row i of L's strict
   lower part at ia[i] .. ia[i+1]-1 (its unit diagonal not stored); U's rows from ia[n] on, row n-1 first, each
   ending at its diagonal, which PETSc stores inverted. The patterns, as sptrsv wants them: L's diagonal last, U's
   first; lmap and umap tell where each value comes from in a[]. false where ia and ja (nz entries) are laid out
   otherwise (an in-place factor's older layout, say) */
static bool HostFactorPattern(PetscInt n, PetscInt nz, const PetscInt ia[], const PetscInt ja[], std::vector<PetscInt> lp[3], std::vector<PetscInt> up[3])
{
  std::vector<PetscInt> ustart(n), udiag(n);
  PetscInt              p = ia[n];

  if (ia[0] != 0 || ia[n] > nz) return false;
  for (PetscInt i = n - 1; i >= 0; i--) { /* U's rows, last first, each ending at its diagonal */
    ustart[i] = p;
    while (p < nz && ja[p] != i) {
      if (ja[p] <= i || ja[p] >= n) return false;
      p++;
    }
    if (p == nz) return false;
    udiag[i] = p++;
  }
  if (p != nz) return false; /* the layout accounts for every entry the factor holds */
  for (int k = 0; k < 3; k++) lp[k].clear(), up[k].clear();
  lp[0].push_back(0);
  up[0].push_back(0);
  for (PetscInt i = 0; i < n; i++) {
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) {
      if (ja[k] >= i || ja[k] < 0 || (k > ia[i] && ja[k] <= ja[k - 1])) return false;
      lp[1].push_back(ja[k]), lp[2].push_back(k);
    }
    lp[1].push_back(i), lp[2].push_back(-1);
    lp[0].push_back((PetscInt)lp[1].size());
    up[1].push_back(i), up[2].push_back(-2 - udiag[i]);
    for (PetscInt k = ustart[i]; k < udiag[i]; k++) {
      if (k > ustart[i] && ja[k] <= ja[k - 1]) return false;
      up[1].push_back(ja[k]), up[2].push_back(k);
    }
    up[0].push_back((PetscInt)up[1].size());
  }
  return true;
}

PetscErrorCode GSTriFactorSetHost(GSTriFactor *out, PetscInt n, PetscInt nz, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], const PetscInt r[], const PetscInt c[], GSTriBackend backend, PetscBool *ok)
{
  std::vector<PetscInt> lp[3], up[3];
  const PetscInt        end  = nz;
  GSTriFactor           F    = *out;
  bool                  laid = false;

  PetscFunctionBegin;
  PetscCall(GSKokkosInitialize());
  PetscCallCXX(laid = HostFactorPattern(n, nz, ia, ja, lp, up));
  *ok = laid ? PETSC_TRUE : PETSC_FALSE;
  if (!laid) PetscFunctionReturn(PETSC_SUCCESS);
  { /* a new device factor where the pattern or the orderings changed (a new symbolic factorization) */
    bool same = F && F->fromhost && F->n == n && F->hrow.size() == (size_t)n + 1 && F->hcol.size() == (size_t)end && std::equal(ia, ia + n + 1, F->hrow.begin()) && std::equal(ja, ja + end, F->hcol.begin());
    if (same && (r || c)) {
      std::vector<PetscInt> rp, cp;
      GSCallKokkos({
        rp = Download(F->rperm);
        cp = Download(F->cperm);
      });
      same = rp.size() == (r ? (size_t)n : 0) && cp.size() == (c ? (size_t)n : 0) && (!r || std::equal(r, r + n, rp.begin())) && (!c || std::equal(c, c + n, cp.begin()));
    } else if (same)
      same = F->rperm.extent(0) == 0 && F->cperm.extent(0) == 0;
    if (!same) {
      std::unique_ptr<_n_GSTriFactor> G;
      PetscCall(GSTriFactorDestroy(out));
      F = NULL;
      PetscCallCXX(G.reset(new _n_GSTriFactor));
      G->n        = n;
      G->fromhost = true;
      PetscCall(ChooseTriSolver(G.get(), backend));
      PetscCallCXX(G->hrow.assign(ia, ia + n + 1));
      PetscCallCXX(G->hcol.assign(ja, ja + end));
      if (n <= OneKernelMaxRows) PetscCallCXX(G->depth = HostLevels(n, lp[0], lp[1], true) + HostLevels(n, up[0], up[1], false));
      GSCallKokkos({
        Upload(G->L.row, "GPUStream::factor_lrow", lp[0]);
        Upload(G->L.col, "GPUStream::factor_lcol", lp[1]);
        Upload(G->lmap, "GPUStream::factor_lmap", lp[2]);
        Upload(G->U.row, "GPUStream::factor_urow", up[0]);
        Upload(G->U.col, "GPUStream::factor_ucol", up[1]);
        Upload(G->umap, "GPUStream::factor_umap", up[2]);
        if (r) Upload(G->rperm, "GPUStream::factor_rperm", std::vector<PetscInt>(r, r + n));
        if (c) Upload(G->cperm, "GPUStream::factor_cperm", std::vector<PetscInt>(c, c + n));
        G->L.val = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_lval"), lp[1].size());
        G->U.val = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_uval"), up[1].size());
        G->y     = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_y"), n);
        if (r || c) G->pb = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_pb"), n);
        G->ahost = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_ahost"), end);
        if (n > 0) {
          TriSymbolic(G.get(), G->L, true);
          TriSymbolic(G.get(), G->U, false);
        }
        Fence();
      });
      if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)((lp[0].size() + lp[1].size() + lp[2].size() + up[0].size() + up[1].size() + up[2].size() + (r ? n : 0) + (c ? n : 0)) * sizeof(PetscInt))));
      F    = G.release();
      *out = F;
    }
  }
  /* the values: the host factor's array to the device, then L's and U's gathered from it */
  F->tcurrent = false;
  if (end > 0) {
    PetscCall(HostToDevice(F->ahost.data(), a, (size_t)end));
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)end * sizeof(PetscScalar)));
  }
  {
    const DView<PetscScalar> h = F->ahost, lv = F->L.val, uv = F->U.val;
    const DView<PetscInt>    lm = F->lmap, um = F->umap;
    GSCallKokkos({
      Kokkos::parallel_for(
          "GPUStream::FactorFromHostL", RangePol(0, (PetscInt)lv.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { lv(k) = lm(k) < 0 ? PetscScalar(1) : h(lm(k)); });
      Kokkos::parallel_for(
          "GPUStream::FactorFromHostU", RangePol(0, (PetscInt)uv.extent(0)), KOKKOS_LAMBDA(const PetscInt k) { uv(k) = um(k) < 0 ? PetscScalar(1) / h(-2 - um(k)) : h(um(k)); });
      TriStale(F->L);
      TriStale(F->U);
    });
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* L^T and U^T (as CSR, their values gathered from L's and U's) for transposed solves: U^T is lower triangular, L^T
   upper, each with its diagonal where sptrsv looks for it (last, first) */
static PetscErrorCode MakeTransposes(GSTriFactor F)
{
  const PetscInt n = F->n;

  PetscFunctionBegin;
  if (!F->transposed) {
    GSCallKokkos({
      const TriCSR *f[2] = {&F->L, &F->U};
      TriCSR       *t[2] = {&F->Lt, &F->Ut};
      for (int k = 0; k < 2; k++) {
        std::vector<PetscInt> trow, tcol, tmap;
        const auto            row = Download(f[k]->row), col = Download(f[k]->col);
        HostTranspose(n, n, row, col, trow, tcol, tmap);
        Upload(t[k]->row, "GPUStream::factor_trow", trow);
        Upload(t[k]->col, "GPUStream::factor_tcol", tcol);
        Upload(t[k]->map, "GPUStream::factor_tmap", tmap);
        t[k]->val = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_tval"), tcol.size());
        TriSymbolic(F, *t[k], k == 1);
      }
      Fence();
    });
    F->transposed = true;
  }
  if (!F->tcurrent) {
    GSCallKokkos({
      const TriCSR *f[2] = {&F->L, &F->U};
      TriCSR       *t[2] = {&F->Lt, &F->Ut};
      for (int k = 0; k < 2; k++) {
        const DView<PetscScalar> v = t[k]->val, s = f[k]->val;
        const DView<PetscInt>    map = t[k]->map;
        Kokkos::parallel_for(
            "GPUStream::FactorTranspose", RangePol(0, (PetscInt)v.extent(0)), KOKKOS_LAMBDA(const PetscInt e) { v(e) = s(map(e)); });
        TriStale(*t[k]);
      }
    });
    F->tcurrent = true;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSTriFactorSolve(GSTriFactor F, GSTriSolve mode, const PetscScalar b[], PetscScalar x[], PetscBool device)
{
  const PetscInt     n     = F->n;
  const bool         stage = !device && OnDevice();
  const bool         half  = mode == GS_TRI_FORWARD || mode == GS_TRI_BACKWARD;
  DView<PetscScalar> B, X;

  PetscFunctionBegin;
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if ((mode == GS_TRI_TRANSPOSE && !F->symmetric) || mode == GS_TRI_BACKWARD) PetscCall(MakeTransposes(F));
  if (half && !F->dcurrent) { /* the halves scale by D^(-1/2): PETSc's refuse a negative pivot */
    const DView<PetscInt>    urow = F->U.row;
    const DView<PetscScalar> uval = F->U.val;
    PetscReal                dmin = 0;
    GSCallKokkos({
      Kokkos::View<PetscReal, Mem> r = F->badpivot;
      Kokkos::parallel_reduce(
          "GPUStream::FactorMinPivot", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i, PetscReal &m) { m = PetscMin(m, PetscRealPart(uval(urow(i)))); }, Kokkos::Min<PetscReal, Mem>(r));
      SyncCopy(Kokkos::View<PetscReal, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&dmin), r);
    });
    PetscCheck(dmin > 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "The halves of the device ICC(0) need positive pivots; the least is %g", (double)dmin);
    F->dcurrent = true;
  }
  if (stage) {
    GSCallKokkos({
      if (F->b.extent(0) != (size_t)n) F->b = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_b"), n);
      if (F->x.extent(0) != (size_t)n) F->x = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::factor_x"), n);
    });
    PetscCall(HostToDevice(F->b.data(), b, n));
    B = F->b;
    X = F->x;
  } else {
    B = Wrap(b, n);
    X = Wrap(x, n);
  }
  {
    const bool               t     = mode == GS_TRI_TRANSPOSE && !F->symmetric;
    TriCSR                  &first = t ? F->Ut : F->L, &second = t ? F->Lt : F->U;
    const DView<PetscInt>    urow = F->U.row;
    const DView<PetscScalar> uval = F->U.val, y = F->y, in = B, out = X;
    /* a host factor's orderings: it factors A(r, c), so A x = b takes b(r) in and gives x(c) out; A^T x = b the
       other way round */
    const DView<PetscInt> pin = t ? F->cperm : F->rperm, pout = t ? F->rperm : F->cperm;
    const bool            permuted = pin.extent(0) || pout.extent(0);
    if (!half && UsesOneKernel(F, first, second))
      GSCallKokkos(OneKernelSolve(n, first, second, pin, pout, B, X));
    else if (permuted) {
      const DView<PetscScalar> pb = F->pb;
      GSCallKokkos({
        DView<PetscScalar> src = B;
        if (pin.extent(0)) {
          Kokkos::parallel_for(
              "GPUStream::FactorPermuteIn", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { pb(i) = in(pin(i)); });
          src = pb;
        }
        TriSolve(F, first, src, F->y);
        if (pout.extent(0)) {
          TriSolve(F, second, F->y, F->pb);
          Kokkos::parallel_for(
              "GPUStream::FactorPermuteOut", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { out(pout(i)) = pb(i); });
        } else
          TriSolve(F, second, F->y, X);
      });
    } else
      GSCallKokkos({
        switch (mode) {
        case GS_TRI_FORWARD: /* x = D^(-1/2) L^-1 b */
          TriSolve(F, F->L, B, F->y);
          Kokkos::parallel_for(
              "GPUStream::FactorScale", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { out(i) = y(i) / PetscSqrtReal(PetscRealPart(uval(urow(i)))); });
          break;
        case GS_TRI_BACKWARD: /* x = L^-T D^(-1/2) b */
          Kokkos::parallel_for(
              "GPUStream::FactorScale", RangePol(0, n), KOKKOS_LAMBDA(const PetscInt i) { y(i) = in(i) / PetscSqrtReal(PetscRealPart(uval(urow(i)))); });
          TriSolve(F, F->Lt, F->y, X);
          break;
        default:
          TriSolve(F, first, B, F->y);
          TriSolve(F, second, F->y, X);
        }
      });
  }
  if (stage) {
    PetscCall(DeviceToHost(x, F->x.data(), n));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(PetscScalar)));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * sizeof(PetscScalar)));
  }
  PetscCall(PetscLogGpuFlops(half ? 2.0 * (PetscLogDouble)F->L.col.extent(0) - n : 2.0 * (PetscLogDouble)(F->L.col.extent(0) + F->U.col.extent(0)) - 3.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
