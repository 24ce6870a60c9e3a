/* KSPMatSolve of KSPPIPECGFUSED: the k right-hand sides advance together, each column with its own alpha and beta,
   through the same two stages as one solve (see pipecgfusedimpl.h): BlockUpdate, then W = A P for all columns in one
   pass over the matrix (the block kernel MatMatMult and the streaming engine use) and BlockDot; one device-to-host
   copy of every column's partial sums per iteration. With a PC applied on the host, BlockDot waits for Q = M^{-1} W
   (PCGFBlockDot) and BlockUpdate carries Z by its recurrence. The vector kernels give a team 8 columns of its rows, so their
   sums stay in registers. */
#include "devicemat.hpp"
#include "../common/work.hpp"
#include "pipecgfusedimpl.h"

using namespace gpustream;

namespace
{
constexpr int KC = 8; /* columns per team */
} // namespace

/* partials: [Update: 2 KC nch L][Dot: 2 KC nch L] */
struct _n_PCGFBlock : _n_GSWork {
  _n_PCGFBlock(PetscInt n, PetscInt k, GSKSPPC pc) : k(k), nch((k + KC - 1) / KC)
  {
    Init("PipeCGFused", n, pc, 1, MaxTeams(TeamThreads()));
    for (auto v : {&x, &r, &p, &w}) *v = DView<PetscScalar>("PipeCGFused::block", (size_t)n * k);
    dinv      = DView<PetscScalar>("PipeCGFused::blockdinv", pc == GS_PC_JACOBI ? n : 0);
    z         = DView<PetscScalar>("PipeCGFused::blockz", pc == GS_PC_APPLY ? (size_t)n * k : 0);
    q         = DView<PetscScalar>("PipeCGFused::blockq", pc == GS_PC_APPLY ? (size_t)n * k : 0);
    ab        = DView<PetscScalar>("PipeCGFused::alphabeta", 2 * k);
    hab       = Kokkos::View<PetscScalar *, PinnedSpace>("PipeCGFused::halphabeta", 2 * k);
    partials  = DView<PetscScalar>("PipeCGFused::blockpartials", 4 * (size_t)KC * nch * lu);
    hpartials = Kokkos::View<PetscScalar *, PinnedSpace>("PipeCGFused::hblockpartials", 4 * (size_t)KC * nch * lu);
  }
  DView<PetscScalar> Vector(PetscInt v) override
  {
    DView<PetscScalar> *all[] = {&x, &r, &p, &w, &dinv, &z, &q};
    return *all[v];
  }
  /* X, R, P, W, DINV, and Z and Q with a PC applied on the host */
  bool Has(PetscInt v) const override
  {
    return v >= PCGF_X && (v <= PCGF_DINV || (pc == GS_PC_APPLY && v <= PCGF_Q));
  }
  PetscInt                                 k = 0, nch = 0;   /* columns, chunks of KC columns */
  DView<PetscScalar>                       x, r, p, w, z, q; /* n x k column-major (dinv: n); z, q: PC applied on the host */
  DView<PetscScalar>                       ab;               /* alpha (k) then beta (k) of this iteration */
  Kokkos::View<PetscScalar *, PinnedSpace> hab;
  DView<PetscScalar>                       ghosts; /* the ghost rows of P on several processes */
};

PetscErrorCode PCGFBlockCreate(PetscInt n, PetscInt k, GSKSPPC pc, PCGFBlock *block)
{
  PetscFunctionBegin;
  PetscCheck(k >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A block solve needs at least one column, not %" PetscInt_FMT, k);
  PetscCheck(pc != GS_PC_PBJACOBI, PETSC_COMM_SELF, PETSC_ERR_SUP, "A block solve has no point-block Jacobi kernels");
  PetscCall(GSWorkNew(block, n, k, pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

GS_WORK_INTERFACE(PCGFBlock, PCGFBlockBase, PCGFBlockDestroy)

/* The vector kernels: L = lu teams for each chunk of KC columns, 2 KC sums a thread */
static TeamPol BlockPolicy(PCGFBlock B)
{
  return TeamPol(B->lu * (int)B->nch, B->tu).set_scratch_size(0, Kokkos::PerTeam(2 * KC * B->tu * sizeof(PetscScalar)));
}

/* Calls f(i, e, j, c) for the rows i of this team's share and the columns j = j0 + c of its chunk (c < KC, j < k), e
   the index of entry i of column j */
template <class F> KOKKOS_INLINE_FUNCTION void ForEachBlockEntry(const Member &t, PetscInt n, PetscInt k, int L, const F &f)
{
  const int      ch = t.league_rank() / L, tl = t.league_rank() % L;
  const PetscInt j0 = (PetscInt)ch * KC, nc = PetscMin((PetscInt)KC, k - j0);
  for (PetscInt i = (PetscInt)tl * t.team_size() + t.team_rank(); i < n; i += (PetscInt)L * t.team_size())
    for (PetscInt c = 0; c < nc; c++) f(i, i + (j0 + c) * n, j0 + c, c);
}

template <GSKSPPC PC, KSPNormType Norm> static void BlockUpdate(PCGFBlock B)
{
  const DView<PetscScalar> x = B->x, r = B->r, p = B->p, w = B->w, d = B->dinv, z = B->z, q = B->q, ab = B->ab;
  PetscScalar *const       out = B->partials.data();
  const PetscInt           n = B->n, k = B->k;
  const int                L = B->lu;

  TeamFor(
      "PipeCGFused::BlockUpdate", BlockPolicy(B), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2 * KC] = {};
        ForEachBlockEntry(t, n, k, L, [&](const PetscInt i, const PetscInt e, const PetscInt j, const PetscInt c) {
          const PetscScalar a = ab(j), b = ab(k + j), pi = p(e), ri = r(e) - a * w(e);
          const PetscScalar zi = PC == GS_PC_JACOBI ? d(i) * ri : (PC == GS_PC_APPLY ? z(e) - a * q(e) : ri);
          if (PC == GS_PC_APPLY) z(e) = zi;
          x(e) += a * pi;
          r(e) = ri;
          p(e) = zi + b * pi;
          acc[2 * c] += ri * zi;
          NormAdd<Norm>(acc[2 * c + 1], ri, zi);
        });
        TeamSumStore<2 * KC>(t, acc, out);
      });
}

/* x += alpha_j p; r -= alpha_j w; z = D^{-1} r (or z -= alpha_j q); p = z + beta_j p in every column j; partial <r,z>
   and norm sums */
PetscErrorCode PCGFBlockUpdate(PCGFBlock B, const PetscScalar alpha[], const PetscScalar beta[], KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  for (PetscInt j = 0; j < B->k; j++) {
    B->hab(j)        = alpha[j];
    B->hab(B->k + j) = beta[j];
  }
  GSCallKokkos(SyncCopy(B->ab, B->hab));
  GSCallKokkos(ByPC<GS_PC_JACOBI, GS_PC_APPLY>(B->pc, [&](auto pc) { ByNorm(normtype, [&](auto norm) { BlockUpdate<decltype(pc)::value, decltype(norm)::value>(B); }); }));
  B->launches++;
  PetscCall(PetscLogFlops((B->pc == GS_PC_APPLY ? 12.0 : 10.0) * B->n * B->k));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The partial <p_j,w_j> and <w_j, M w_j> of every column: M = D^{-1}, the identity, or given as q_j = M w_j */
template <GSKSPPC PC> static void BlockDot(PCGFBlock B)
{
  const DView<PetscScalar> p = B->p, w = B->w, d = B->dinv, q = B->q;
  PetscScalar *const       out = B->partials.data() + 2 * (size_t)KC * B->nch * B->lu;
  const PetscInt           n = B->n, k = B->k;
  const int                L = B->lu;

  TeamFor(
      "PipeCGFused::BlockDot", BlockPolicy(B), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2 * KC] = {};
        ForEachBlockEntry(t, n, k, L, [&](const PetscInt i, const PetscInt e, const PetscInt, const PetscInt c) {
          const PetscScalar wi = w(e);
          acc[2 * c] += p(e) * wi;
          acc[2 * c + 1] += PC == GS_PC_JACOBI ? wi * d(i) * wi : (PC == GS_PC_APPLY ? wi * q(e) : wi * wi);
        });
        TeamSumStore<2 * KC>(t, acc, out);
      });
}

/* W = A P for all columns in one pass over the matrix (resident, or streamed by the plan), the off-diagonal block's
   part with the ghost rows of P on several processes, then the partial <p,w> and <w, D^{-1} w> of every column; with
   a PC applied on the host the sums wait for Q = M^{-1} W (PCGFBlockDot) */
PetscErrorCode PCGFBlockSpMVDot(PCGFBlock B, GSDeviceMat A, GSDeviceMat O, GSHalo H, GSStreamPlan plan)
{
  const DView<PetscScalar> p = B->p, w = B->w;
  const PetscInt           n = B->n, k = B->k;

  PetscFunctionBegin;
  PetscCheck(!A || (A->csr.m == n && A->csr.n == n), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for blocks of %" PetscInt_FMT " rows", A->csr.m, A->csr.n, n);
  PetscCall(PetscLogEventBegin(PCGF_SpMVDot, 0, 0, 0, 0));
  if (A)
    GSCallKokkos(SpMMBlock(Exec(), A->csr, 0, k, p.data(), n, w.data(), n));
  else {
    PetscCall(GSStreamPlanMultBlockDevice(plan, k, p.data(), n, w.data(), n));
    GSCallKokkos(FenceAll()); /* the product ran on the plan's instances */
  }
  if (H) { /* several processes: the ghost rows of P, then W += B P_ghost with the resident off-diagonal block */
    PetscCall(HaloBlock(H, k, B->p, n, B->ghosts));
    GSCallKokkos(SpMMBlock<true>(Exec(), O->csr, 0, k, B->ghosts.data(), O->csr.n, w.data(), n));
    B->launches++;
  }
  B->launches++;
  if (B->pc != GS_PC_APPLY) {
    GSCallKokkos(ByPC<GS_PC_JACOBI>(B->pc, [&](auto pc) { BlockDot<decltype(pc)::value>(B); }));
    B->launches++;
    PetscCall(PetscLogFlops(5.0 * n * k));
  }
  if (A) PetscCall(PetscLogFlops(2.0 * A->val.extent(0) * k));
  if (H) PetscCall(PetscLogFlops(2.0 * O->val.extent(0) * k));
  PetscCall(PetscLogEventEnd(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A PC applied on the host: every column's partial <p_j,w_j> and <w_j,q_j> once Q = M^{-1} W is on the device */
PetscErrorCode PCGFBlockDot(PCGFBlock B)
{
  PetscFunctionBegin;
  PetscCheck(B->pc == GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCGFBlockDot is for a PC applied on the host; PCGFBlockSpMVDot forms the sums otherwise");
  PetscCall(PetscLogEventBegin(PCGF_Dot, 0, 0, 0, 0));
  GSCallKokkos(BlockDot<GS_PC_APPLY>(B));
  B->launches++;
  PetscCall(PetscLogFlops(5.0 * B->n * B->k));
  PetscCall(PetscLogEventEnd(PCGF_Dot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every column's sums in one copy: sums[j * PCGF_NSUMS + PCGF_RZ ...], summed on the host in team order */
PetscErrorCode PCGFBlockReduce(PCGFBlock B, PetscScalar sums[])
{
  const PetscInt     k = B->k, LL = (PetscInt)B->lu * B->nch, half = 2 * KC * LL;
  const PetscScalar *h = B->hpartials.data();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(SyncCopy(B->hpartials, B->partials));
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
