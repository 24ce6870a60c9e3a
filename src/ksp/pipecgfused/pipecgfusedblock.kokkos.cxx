/* KSPMatSolve of KSPPIPECGFUSED: the k right-hand sides advance together, each column with its own alpha and beta,
   through the same two stages as one solve (see pipecgfusedimpl.h): BlockUpdate, then W = A P for all columns in one
   pass over the matrix (the block kernel MatMatMult and the streaming engine use) and BlockDot; one device-to-host
   copy of every column's partial sums per iteration. The vector kernels give a team 8 columns of its rows, so their
   sums stay in registers. */
#include "../../mat/gpustream/devicemat.hpp"
#include "pipecgfusedimpl.h"

using namespace gpustream;

namespace
{
constexpr int KC = 8; /* columns per team */
} // namespace

struct _n_PCGFBlock {
  PetscInt                                 n = 0, k = 0, nch = 0; /* rows, columns, chunks of KC columns */
  bool                                     jacobi = false;
  DView<PetscScalar>                       x, r, p, w, dinv; /* n x k column-major; dinv: n */
  DView<PetscScalar>                       ab;               /* alpha (k) then beta (k) of this iteration */
  Kokkos::View<PetscScalar *, PinnedSpace> hab;
  DView<PetscScalar>                       partials; /* [Update: 2 KC nch L][Dot: 2 KC nch L] */
  DView<PetscScalar>                       ghosts;   /* the ghost rows of P on several processes */
  Kokkos::View<PetscScalar *, PinnedSpace> hpartials;
  int                                      tu = 1, lu = 1;
  PetscInt                                 launches = 0, transfers = 0;
};

PetscErrorCode PCGFBlockCreate(PetscInt n, PetscInt k, PetscBool jacobi, PCGFBlock *block)
{
  std::unique_ptr<_n_PCGFBlock> B; /* freed, with the views made so far, if an allocation fails */

  PetscFunctionBegin;
  PetscCheck(k >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A block solve needs at least one column, not %" PetscInt_FMT, k);
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCallCXX(B.reset(new _n_PCGFBlock));
  B->n             = n;
  B->k             = k;
  B->nch           = (k + KC - 1) / KC;
  B->jacobi        = jacobi;
  B->tu            = TeamThreads();
  const PetscInt t = (n + B->tu - 1) / B->tu;
  B->lu            = (int)PetscMax(1, PetscMin(t, (PetscInt)MaxTeams(B->tu)));
  GSCallKokkos({
    for (auto v : {&B->x, &B->r, &B->p, &B->w}) *v = DView<PetscScalar>("PipeCGFused::block", (size_t)n * k);
    B->dinv      = DView<PetscScalar>("PipeCGFused::blockdinv", jacobi ? n : 0);
    B->ab        = DView<PetscScalar>("PipeCGFused::alphabeta", 2 * k);
    B->hab       = Kokkos::View<PetscScalar *, PinnedSpace>("PipeCGFused::halphabeta", 2 * k);
    B->partials  = DView<PetscScalar>("PipeCGFused::blockpartials", 4 * (size_t)KC * B->nch * B->lu);
    B->hpartials = Kokkos::View<PetscScalar *, PinnedSpace>("PipeCGFused::hblockpartials", 4 * (size_t)KC * B->nch * B->lu);
  });
  *block = B.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCGFBlockDestroy(PCGFBlock *B)
{
  PetscFunctionBegin;
  if (!*B) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(delete *B);
  *B = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static DView<PetscScalar> &BlockVec(PCGFBlock B, PCGFVec v)
{
  switch (v) {
  case PCGF_X:
    return B->x;
  case PCGF_R:
    return B->r;
  case PCGF_P:
    return B->p;
  case PCGF_W:
    return B->w;
  default:
    return B->dinv;
  }
}

/* X, R, P, W: n x k column-major (leading dimension n); DINV: n. A NULL array zeroes the block. */
PetscErrorCode PCGFBlockSetVec(PCGFBlock B, PCGFVec v, const PetscScalar a[])
{
  PetscInt copies = 0;

  PetscFunctionBegin;
  PetscCheck(v <= PCGF_DINV, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A block solve has X, R, P, W and DINV only");
  PetscCall(CopyIn(BlockVec(B, v), a, &copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCGFBlockGetVec(PCGFBlock B, PCGFVec v, PetscScalar a[])
{
  PetscInt copies = 0;

  PetscFunctionBegin;
  PetscCheck(v <= PCGF_DINV, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A block solve has X, R, P, W and DINV only");
  PetscCall(CopyOut(BlockVec(B, v), a, &copies));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCGFBlockGetCounts(PCGFBlock B, PetscInt *launches, PetscInt *transfers)
{
  PetscFunctionBegin;
  *launches  = B->launches;
  *transfers = B->transfers;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Calls f(row, first column, columns) for the rows of this team's share and its chunk of columns */
template <class F> KOKKOS_INLINE_FUNCTION void ForEachBlockRow(const Member &t, PetscInt n, PetscInt k, int L, const F &f)
{
  const int      c = t.league_rank() / L, tl = t.league_rank() % L;
  const PetscInt j0 = (PetscInt)c * KC, nc = PetscMin((PetscInt)KC, k - j0);
  for (PetscInt i = (PetscInt)tl * t.team_size() + t.team_rank(); i < n; i += (PetscInt)L * t.team_size()) f(i, j0, nc);
}

template <bool Jacobi, KSPNormType Norm> static void BlockUpdate(PCGFBlock B)
{
  const DView<PetscScalar> x = B->x, r = B->r, p = B->p, w = B->w, d = B->dinv, ab = B->ab;
  PetscScalar *const       out = B->partials.data();
  const PetscInt           n = B->n, k = B->k;
  const int                L = B->lu, T = B->tu;

  TeamFor(
      "PipeCGFused::BlockUpdate", TeamPol(L * (int)B->nch, T).set_scratch_size(0, Kokkos::PerTeam(2 * KC * T * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2 * KC] = {};
        ForEachBlockRow(t, n, k, L, [&](const PetscInt i, const PetscInt j0, const PetscInt nc) {
          for (PetscInt q = 0; q < nc; q++) {
            const PetscInt    e = i + (j0 + q) * n;
            const PetscScalar a = ab(j0 + q), b = ab(k + j0 + q), pi = p(e), ri = r(e) - a * w(e), zi = Jacobi ? d(i) * ri : ri;
            x(e) += a * pi;
            r(e) = ri;
            p(e) = zi + b * pi;
            acc[2 * q] += ri * zi;
            if (Norm == KSP_NORM_PRECONDITIONED) acc[2 * q + 1] += zi * zi;
            if (Norm == KSP_NORM_UNPRECONDITIONED) acc[2 * q + 1] += ri * ri;
          }
        });
        TeamSumStore<2 * KC>(t, acc, out);
      });
}

template <bool Jacobi> static void BlockUpdateNorm(PCGFBlock B, KSPNormType normtype)
{
  switch (normtype) {
  case KSP_NORM_PRECONDITIONED:
    BlockUpdate<Jacobi, KSP_NORM_PRECONDITIONED>(B);
    break;
  case KSP_NORM_UNPRECONDITIONED:
    BlockUpdate<Jacobi, KSP_NORM_UNPRECONDITIONED>(B);
    break;
  default:
    BlockUpdate<Jacobi, KSP_NORM_NONE>(B);
  }
}

/* x += alpha_j p; r -= alpha_j w; z = D^{-1} r; p = z + beta_j p in every column j; partial <r,z> and norm sums */
PetscErrorCode PCGFBlockUpdate(PCGFBlock B, const PetscScalar alpha[], const PetscScalar beta[], KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  for (PetscInt j = 0; j < B->k; j++) {
    B->hab(j)        = alpha[j];
    B->hab(B->k + j) = beta[j];
  }
  GSCallKokkos(Kokkos::deep_copy(B->ab, B->hab));
  if (B->jacobi)
    GSCallKokkos(BlockUpdateNorm<true>(B, normtype));
  else
    GSCallKokkos(BlockUpdateNorm<false>(B, normtype));
  B->launches++;
  PetscCall(PetscLogFlops(10.0 * B->n * B->k));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* W = A P for all columns in one pass over the matrix, then the partial <p,w> and <w, D^{-1} w> of every column */
PetscErrorCode PCGFBlockSpMVDot(PCGFBlock B, GSDeviceMat A, GSDeviceMat O, GSHalo H, GSStreamPlan plan)
{
  const DView<PetscScalar> p = B->p, w = B->w, d = B->dinv;
  PetscScalar *const       out = B->partials.data() + 2 * (size_t)KC * B->nch * B->lu;
  const PetscInt           n = B->n, k = B->k;
  const int                L = B->lu, T = B->tu;
  const bool               jacobi = B->jacobi;

  PetscFunctionBegin;
  PetscCheck(!A || (A->csr.m == n && A->csr.n == n), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for blocks of %" PetscInt_FMT " rows", A->csr.m, A->csr.n, n);
  PetscCall(PetscLogEventBegin(PCGF_SpMVDot, 0, 0, 0, 0));
  if (A) {
    GSCallKokkos(SpMMBlock(Exec(), A->csr, 0, k, p.data(), n, w.data(), n));
    if (H) {
      PetscCall(HaloBlock(H, k, B->p, n, B->ghosts));
      GSCallKokkos(SpMMBlock<true>(Exec(), O->csr, 0, k, B->ghosts.data(), O->csr.n, w.data(), n));
      B->launches++;
    }
  } else {
    PetscCall(GSStreamPlanMultBlockDevice(plan, k, p.data(), n, w.data(), n));
    GSCallKokkos(Kokkos::fence()); /* the product ran on the plan's instances */
  }
  GSCallKokkos(TeamFor(
      "PipeCGFused::BlockDot", TeamPol(L * (int)B->nch, T).set_scratch_size(0, Kokkos::PerTeam(2 * KC * T * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2 * KC] = {};
        ForEachBlockRow(t, n, k, L, [&](const PetscInt i, const PetscInt j0, const PetscInt nc) {
          for (PetscInt q = 0; q < nc; q++) {
            const PetscScalar wi = w(i + (j0 + q) * n);
            acc[2 * q] += p(i + (j0 + q) * n) * wi;
            acc[2 * q + 1] += jacobi ? wi * d(i) * wi : wi * wi;
          }
        });
        TeamSumStore<2 * KC>(t, acc, out);
      }));
  B->launches += 2;
  if (A) PetscCall(PetscLogFlops(2.0 * (A->val.extent(0) + (O ? O->val.extent(0) : 0)) * k));
  PetscCall(PetscLogFlops(5.0 * n * k));
  PetscCall(PetscLogEventEnd(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every column's sums in one copy: sums[j * PCGF_NSUMS + PCGF_RZ ...], summed on the host in team order */
PetscErrorCode PCGFBlockReduce(PCGFBlock B, PetscScalar sums[])
{
  const PetscInt     k = B->k, LL = (PetscInt)B->lu * B->nch, half = 2 * KC * LL;
  const PetscScalar *h = B->hpartials.data();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(Kokkos::deep_copy(B->hpartials, B->partials));
  B->transfers++;
  for (PetscInt j = 0; j < k * PCGF_NSUMS; j++) sums[j] = 0;
  for (PetscInt team = 0; team < LL; team++) { /* team = chunk * lu + share; slot s of the chunk's column s / 2 */
    const PetscInt j0 = (team / B->lu) * KC;
    for (PetscInt s = 0; s < 2 * KC && j0 + s / 2 < k; s++) {
      const PetscInt j = j0 + s / 2;
      sums[j * PCGF_NSUMS + (s % 2 ? PCGF_NRM : PCGF_RZ)] += h[s * LL + team];
      sums[j * PCGF_NSUMS + (s % 2 ? PCGF_WDW : PCGF_PW)] += h[half + s * LL + team];
    }
  }
  PetscCall(PetscLogEventEnd(PCGF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
