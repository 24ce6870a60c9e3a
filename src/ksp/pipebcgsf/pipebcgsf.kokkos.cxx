/* Fused kernels of KSPPIPEBCGSF on the default Kokkos execution space (see pipebcgsfimpl.h). Every kernel runs
   with the same launch shape (one thread per row or entry, a fixed number of teams in a grid-stride loop), so each
   reduction leaves one partial sum per team in its own slot of one device buffer, copied to the host once per
   iteration and summed there in a fixed order. */
#include "devicemat.hpp"
#include "../common/work.hpp"
#include "pipebcgsfimpl.h"

using namespace gpustream;

/* Slots of the partial sums in the order of PBFSum, each room for lu teams: R <r,r0*>, <r,r>; A <v,r0*>; S <s,s>;
   T <t,s>, <t,t>, <t,r0*> */
enum { SLOT_R = PBF_RR0, SLOT_A = PBF_VR0, SLOT_S = PBF_SS, SLOT_T = PBF_TS, NSLOTS = PBF_NSUMS };

struct _n_PBFWork : _n_GSWork {
  _n_PBFWork(PetscInt n, GSKSPPC pc)
  {
    _n_PBFWork *W = this;

    Init("PipeBCGSF", n, pc, PBF_MAX_BS, FusedTeams(TeamThreads()));
    for (auto v : {&W->x, &W->r, &W->r0, &W->p, &W->v, &W->s, &W->t}) *v = DView<PetscScalar>("PipeBCGSF::vec", n);
    W->dinv      = DView<PetscScalar>("PipeBCGSF::dinv", pc == GS_PC_JACOBI ? n : 0);
    W->ph        = DView<PetscScalar>("PipeBCGSF::ph", pc == GS_PC_APPLY ? n : 0);
    W->sh        = DView<PetscScalar>("PipeBCGSF::sh", pc == GS_PC_APPLY ? n : 0);
    W->alpha     = DView<PetscScalar>("PipeBCGSF::alpha", 1);
    W->partials  = DView<PetscScalar>("PipeBCGSF::partials", NSLOTS * (size_t)W->lu);
    W->hpartials = Kokkos::View<PetscScalar *, PinnedSpace>("PipeBCGSF::hpartials", NSLOTS * (size_t)W->lu);
  }
  DView<PetscScalar> Vector(PetscInt v) override
  {
    DView<PetscScalar> *all[] = {&x, &r, &r0, &p, &this->v, &s, &t, &dinv, &ph, &sh};
    return *all[v];
  }
  bool Has(PetscInt v) const override
  {
    return v >= PBF_X && v <= PBF_SH;
  }
  DView<PetscScalar> x, r, r0, p, v, s, t, ph, sh;
  DView<PetscScalar> alpha; /* the alpha UpdateS used, so that x moves with exactly the alpha r did */
  /* device scalars (PBFWorkSetDeviceScalars()): omega, beta and whether the Update may move x; SpMVDot3's teams done;
     the finished sums of the last two iterations */
  DeviceScalars ds;
};

PetscErrorCode PBFWorkCreate(PetscInt n, GSKSPPC pc, PBFWork *work)
{
  PetscFunctionBegin;
  PetscCall(GSWorkNew(work, n, pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything a solve would otherwise allocate when its steps first run: point-block Jacobi's blocks (of size bs) and
   the device scalars' buffers */
PetscErrorCode PBFWorkReserve(PBFWork W, PetscInt bs, PetscBool scalars)
{
  PetscFunctionBegin;
  GSCallKokkos({
    W->ReserveBlocks(bs);
    if (scalars) W->ds.Ensure(*W, 3, PBF_NSUMS);
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

GS_WORK_INTERFACE(PBFWork, PBFWorkBase, PBFWorkDestroy)

/* The SpMV kernels: the same teams (so the same partial-sum slots), each thread split into the matrix's lanes per row
   (a warp per row for long rows) */
static FusedPol SpMVPolicy(PBFWork W, const CSR &A, size_t scalars)
{
  const int lanes = PetscMin(A.lanes, W->tu);
  return FusedPol(W->lu, W->tu / lanes, lanes).set_scratch_size(0, Kokkos::PerTeam(scalars * sizeof(PetscScalar)));
}

/* The scratch scalars of the kernels that may finish an iteration: three sums a thread, and FinishSums' reduction of
   them all */
static size_t FinishScratch(PBFWork W, const CSR &A)
{
  const int lanes = PetscMin(A.lanes, W->tu);
  return PetscMax(3 * (size_t)W->tu, SumScratch(PBF_NSUMS, W->tu / lanes, lanes));
}

/* M^{-1} applied to the gathered vector inside the SpMV: Jacobi scales each gathered entry */
template <bool Jacobi> struct Gather {
  DView<PetscScalar>                 y, d;
  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt j) const
  {
    return Jacobi ? d(j) * y(j) : y(j);
  }
};

/* Point-block Jacobi: a gathered entry is its row of the inverse block times the block of y */
struct BlockGather {
  DView<PetscScalar>                 y, d;
  int                                bs;
  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt j) const
  {
    const PetscInt o = j - j % bs;
    PetscScalar    z = 0;
    for (int k = 0; k < bs; k++) z += d(j * bs + k) * y(o + k);
    return z;
  }
};

/* The sums of an SpMV's output y in row `row`, added to a: <v,r0*> (SpMVDot1); <t,s>, <t,t>, <t,r0*> (SpMVDot3) */
struct Dot1Sums {
  static constexpr int        N = 1;
  DView<PetscScalar>          r0;
  KOKKOS_INLINE_FUNCTION void operator()(const PetscInt row, const PetscScalar y, PetscScalar (&a)[N]) const
  {
    a[0] += y * r0(row);
  }
};

struct Dot3Sums {
  static constexpr int        N = 3;
  DView<PetscScalar>          s, r0;
  KOKKOS_INLINE_FUNCTION void operator()(const PetscInt row, const PetscScalar y, PetscScalar (&a)[N]) const
  {
    a[0] += y * s(row);
    a[1] += y * y;
    a[2] += y * r0(row);
  }
};

PetscErrorCode PBFRDot(PBFWork W)
{
  const DView<PetscScalar> r = W->r, r0 = W->r0;

  PetscFunctionBegin;
  GSCallKokkos(IndexSums<2>(
      *W, "PipeBCGSF::RDot", W->n, W->partials.data() + SLOT_R * (size_t)W->lu, KOKKOS_LAMBDA(const PetscInt i, PetscScalar(&acc)[2]) {
        acc[0] += r(i) * r0(i);
        acc[1] += r(i) * r(i);
      }));
  W->launches++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v = A M^{-1} p and <v,r0*>. Split (several ranks): A is the diagonal block and the rows with entries in the
   off-diagonal block (browptr) are left out of the sums, for OffDiagDot to finish */
template <bool Blk, bool Split = false, class G> static void SpMVDot1(PBFWork W, const CSR &A, const G g, const DView<const PetscInt> &browptr = {})
{
  const DView<PetscScalar> v   = W->v;
  const Dot1Sums           sum = {W->r0};
  PetscScalar *const       out = W->partials.data() + SLOT_A * (size_t)W->lu;

  TeamFor(
      Split ? "PipeBCGSF::SpMVDot1Interior" : "PipeBCGSF::SpMVDot1", SpMVPolicy(W, A, W->tu), KOKKOS_LAMBDA(const Member &m) {
        PetscScalar acc[1] = {0};
        ForEachRowProduct<Blk>(m, A, g, [&](const PetscInt row, const PetscScalar vi) {
          if (!Split || browptr(row + 1) == browptr(row)) sum(row, vi, acc); /* loads before the store, which they could alias: no wait for it */
          OneLane(m, [&]() { v(row) = vi; });
        });
        TeamSumStore<1>(m, acc, out);
      });
}

/* The rows with off-diagonal entries (B's row list), after an interior kernel wrote y = A M^{-1} x: y += B g with the
   ghost values g, and their sums added to the interior kernel's partials of the same team index (the kernels run in
   order), so that PBFReduce() finds a stage's sums where it finds those of the one-process kernel */
template <class S> static void OffDiagDot(PBFWork W, const char *name, const GSDeviceMat B, const DView<PetscScalar> &g, const DView<PetscScalar> &y, const S sum, int slot, int teams)
{
  constexpr int         N    = S::N;
  const DView<PetscInt> rows = B->nzrows;
  const CSR             b    = B->csr;
  const PetscInt        nb   = (PetscInt)rows.extent(0);
  const int             L    = W->lu;
  PetscScalar *const    out  = W->partials.data() + slot * (size_t)L;

  TeamFor(
      name, W->FusedPolicy(N, teams), KOKKOS_LAMBDA(const Member &m) {
        PetscScalar acc[N] = {};
        ForEachIndex(m, nb, [&](const PetscInt k) {
          const PetscInt    row = rows(k);
          const PetscScalar yi  = RowSum<false>(b, g, row, y(row));
          y(row)                = yi;
          sum(row, yi, acc);
        });
        TeamSumAll<N>(m, acc);
        if (m.team_rank() == 0)
          OneLane(m, [&]() {
            for (int k = 0; k < N; k++) out[k * L + m.league_rank()] += acc[k];
          });
      });
}

/* The halo part of an SpMV stage on several ranks, once the interior kernel is queued: the ghost values, then the
   off-diagonal kernel on as many teams as its rows need (at most those of the interior kernel, whose partials it adds
   to); its launch counted */
template <class S> static PetscErrorCode OffDiagStage(PBFWork W, const char *name, GSDeviceMat B, GSHalo H, const DView<PetscScalar> &y, const S sum, int slot)
{
  const PetscInt nb    = (PetscInt)B->nzrows.extent(0);
  const int      teams = (int)PetscMin((nb + W->tu - 1) / W->tu, (PetscInt)W->lu);

  PetscFunctionBegin;
  PetscCall(HaloEnd(H));
  if (teams) {
    GSCallKokkos(OffDiagDot(W, name, B, HaloGhosts(H), y, sum, slot, teams));
    W->launches++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Right Jacobi on several ranks: the owners scale the values they send by their D^{-1} as they gather them (the
   gather reads those entries anyway), so the ghosts arrive as M^{-1} x, as the interior kernel's Gather<true> forms
   the local ones, with no copy of D^{-1}'s ghost values to keep in step with the operator */
static DView<PetscScalar> GhostScale(PBFWork W)
{
  return W->pc == GS_PC_JACOBI ? W->dinv : DView<PetscScalar>();
}

static PetscErrorCode CheckStage(PBFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n && (!H || B->csr.m == W->n), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCheck(!H || W->pc == GS_PC_NONE || W->pc == GS_PC_JACOBI, PETSC_COMM_SELF, PETSC_ERR_SUP, "On several processes the SpMVs fuse PCNONE or PCJACOBI only");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f(g) for the gather g of y through the M^{-1} the kernels fuse: Jacobi's D^{-1}, the identity, or (Blocks: one
   process) point-block Jacobi's blocks */
template <bool Blocks, class F> static void ByGather(PBFWork W, const DView<PetscScalar> &y, const F &f)
{
  if constexpr (Blocks)
    if (W->pc == GS_PC_PBJACOBI) {
      f(BlockGather{y, W->dinv, W->bs});
      return;
    }
  if (W->pc == GS_PC_JACOBI)
    f(Gather<true>{y, W->dinv});
  else
    f(Gather<false>{y, W->dinv});
}

/* An SpMV stage, out = A M^{-1} y with its sums: kernel(blk, g, split) launches the stage's kernel for A's storage on
   the gather g. On several ranks (split) the interior kernel runs over the diagonal block while the ghost values
   travel; then only the rows that need them, in the off-diagonal kernel (offname), with their sums (sum, in slot) */
template <class S, class K>
static PetscErrorCode SpMVStage(PBFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H, const DView<PetscScalar> &y, const DView<PetscScalar> &out, const S sum, int slot, const char *offname, PetscLogDouble flops, const K &kernel)
{
  PetscFunctionBegin;
  PetscCall(CheckStage(W, A, B, H));
  PetscCall(PetscLogEventBegin(PBCGSF_SpMVDot, 0, 0, 0, 0));
  if (!H) {
    GSCallKokkos(ByGather<true>(W, y, [&](auto g) { ByStorage(A->csr, [&](auto blk) { kernel(blk, g, std::false_type()); }); }));
    W->launches++;
  } else {
    PetscInt gathers;
    PetscCall(HaloBegin(H, y, &gathers, GhostScale(W)));
    GSCallKokkos(ByGather<false>(W, y, [&](auto g) { ByStorage(A->csr, [&](auto blk) { kernel(blk, g, std::true_type()); }); }));
    W->launches += gathers + 1;
    PetscCall(OffDiagStage(W, offname, B, H, out, sum, slot));
  }
  PetscCall(PetscLogFlops(2.0 * (A->val.extent(0) + (H ? B->val.extent(0) : 0)) + flops * W->n));
  PetscCall(PetscLogEventEnd(PBCGSF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PBFSpMVDot1(PBFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  PetscFunctionBegin;
  PetscCall(SpMVStage(W, A, B, H, W->p, W->v, Dot1Sums{W->r0}, SLOT_A, "PipeBCGSF::SpMVDot1OffDiag", 2.0, [&](auto blk, auto g, auto split) {
    constexpr bool Split = decltype(split)::value;
    SpMVDot1<decltype(blk)::value, Split>(W, A->csr, g, Split ? B->csr.rowptr : DView<const PetscInt>());
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* <v,r0*> of a v computed elsewhere (host path) */
/* The sums (Dot1Sums, Dot3Sums) of an SpMV's output y computed elsewhere (host path), into slot */
template <class S> static PetscErrorCode HostSums(PBFWork W, const char *name, const DView<PetscScalar> &y, const S sum, int slot)
{
  PetscFunctionBegin;
  GSCallKokkos(IndexSums<S::N>(
      *W, name, W->n, W->partials.data() + slot * (size_t)W->lu, KOKKOS_LAMBDA(const PetscInt i, PetscScalar(&acc)[S::N]) { sum(i, y(i), acc); }));
  W->launches++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PBFDot1(PBFWork W)
{
  PetscFunctionBegin;
  PetscCall(HostSums(W, "PipeBCGSF::Dot1", W->v, Dot1Sums{W->r0}, SLOT_A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* alpha = <r,r0*> / <v,r0*> from the L teams' partial sums pr and pa: the second reduction stage, redundantly in every
   team (UpdateS, and SpMVDot3S with s formed inside), in one order */
KOKKOS_INLINE_FUNCTION PetscScalar TeamAlpha(const Member &m, const Scratch &buf, const PetscScalar *pr, const PetscScalar *pa, int L)
{
  PetscScalar ra[2] = {0, 0};
  for (int k = m.team_rank(); k < L; k += m.team_size()) {
    ra[0] += pr[k];
    ra[1] += pa[k];
  }
  TeamSumAllIn<2>(m, buf, ra);
  return ra[0] / ra[1];
}

PetscErrorCode PBFUpdateS(PBFWork W, PetscBool given, PetscScalar alpha_given)
{
  const DView<PetscScalar> r = W->r, v = W->v, s = W->s, a = W->alpha;
  const PetscScalar *const pr = W->partials.data() + SLOT_R * (size_t)W->lu, *const pa = W->partials.data() + SLOT_A * (size_t)W->lu;
  PetscScalar *const out = W->partials.data() + SLOT_S * (size_t)W->lu;
  const PetscInt     n   = W->n;
  const int          L   = W->lu;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PBCGSF_Update, 0, 0, 0, 0));
  GSCallKokkos(TeamFor(
      "PipeBCGSF::UpdateS", W->FusedPolicy(3), KOKKOS_LAMBDA(const Member &m) {
        const PetscScalar alpha = given ? alpha_given : TeamAlpha(m, Scratch(m.team_scratch(0), 2 * m.team_size()), pr, pa, L);
        if (m.league_rank() == 0 && m.team_rank() == 0) a(0) = alpha;
        PetscScalar acc[1] = {0};
        const auto  load   = [&](const PetscInt i, PetscScalar(&e)[2]) {
          e[0] = r(i);
          e[1] = v(i);
        };
        const auto step = [&](const PetscInt i, const PetscScalar(&e)[2]) {
          const PetscScalar si = e[0] - alpha * e[1];
          s(i)                 = si;
          acc[0] += si * si;
        };
        ForEachIndexPairRev<2>(m, n, load, step); /* last rows first: see Update() */
        TeamSumStore<1>(m, acc, out);
      }));
  W->launches++;
  PetscCall(PetscLogFlops(4.0 * W->n));
  PetscCall(PetscLogEventEnd(PBCGSF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The last team of a Final SpMVDot3 (device scalars): sums every slot of the iteration in team order, writes the sums
   to slot so of the pinned hs and omega, beta and whether x may move to sc: x moves unless the host loop would stop
   before its Update (a breakdown, or data not finite); omega = 0 when s = 0 (x + alpha M^{-1} p is exact) */
KOKKOS_INLINE_FUNCTION void FinishSums(const Member &m, const Scratch &buf, const PetscScalar *part, int L, const Kokkos::View<PetscScalar *, PinnedSpace> &hs, int so, const DView<PetscScalar> &sc, const DView<unsigned> &done)
{
  PetscScalar tot[PBF_NSUMS] = {};
  AddPartials<PBF_NSUMS>(m, part, L, L, tot);
  TeamSumAllIn<PBF_NSUMS>(m, buf, tot); /* buf: FinishScratch() scalars */
  OneThread(m, [&]() {
    bool finite = true;
    for (int k = 0; k < PBF_NSUMS; k++) {
      hs(so + k) = tot[k];
      finite     = finite && tot[k] - tot[k] == 0;
    }
    const bool exact = tot[PBF_SS] == 0, go = finite && tot[PBF_RR0] != 0 && tot[PBF_VR0] != 0 && (exact || (tot[PBF_TT] != 0 && tot[PBF_TS] != 0));
    sc(0)   = go && !exact ? tot[PBF_TS] / tot[PBF_TT] : 0;
    sc(1)   = go && !exact ? -tot[PBF_TR0] / tot[PBF_VR0] : 0;
    sc(2)   = go ? 1 : 0;
    done(0) = 0;
  });
}

/* Final (device scalars): the last team to finish gives the sums and the Update's scalars (FinishSums) to slot
   `slot`. Split (several ranks): as in SpMVDot1 */
template <bool Blk, class G, bool Final = false, bool Split = false> static void SpMVDot3(PBFWork W, const CSR &A, const G g, int slot = 0, const DView<const PetscInt> &browptr = {})
{
  const DView<PetscScalar>                       t = W->t, sc = W->ds.scal, part = W->partials;
  const Dot3Sums                                 sum  = {W->s, W->r0};
  const DView<unsigned>                          done = W->ds.done;
  const Kokkos::View<PetscScalar *, PinnedSpace> hs   = W->ds.hsums;
  const int                                      L = W->lu, so = PBF_NSUMS * slot;
  PetscScalar *const                             out = W->partials.data() + SLOT_T * (size_t)W->lu;
  const size_t                                   scr = FinishScratch(W, A);

  TeamFor(
      Final ? "PipeBCGSF::SpMVDot3Final" : (Split ? "PipeBCGSF::SpMVDot3Interior" : "PipeBCGSF::SpMVDot3"), SpMVPolicy(W, A, scr), KOKKOS_LAMBDA(const Member &m) {
        const Scratch buf(m.team_scratch(0), scr);
        PetscScalar   acc[3] = {0, 0, 0};
        ForEachRowProduct<Blk>(m, A, g, [&](const PetscInt row, const PetscScalar ti) {
          if (!Split || browptr(row + 1) == browptr(row)) sum(row, ti, acc); /* loads before the store, which they could alias */
          OneLane(m, [&]() { t(row) = ti; });
        });
        if (!Final)
          TeamSumStoreIn<3>(m, buf, acc, out);
        else if (TeamSumStoreLast<3>(m, buf, acc, out, &done(0)))
          FinishSums(m, buf, part.data(), L, hs, so, sc, done);
      });
}

PetscErrorCode PBFSpMVDot3(PBFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  PetscFunctionBegin;
  PetscCall(SpMVStage(W, A, B, H, W->s, W->t, Dot3Sums{W->s, W->r0}, SLOT_T, "PipeBCGSF::SpMVDot3OffDiag", 6.0, [&](auto blk, auto g, auto split) {
    constexpr bool Split = decltype(split)::value;
    SpMVDot3<decltype(blk)::value, decltype(g), false, Split>(W, A->csr, g, 0, Split ? B->csr.rowptr : DView<const PetscInt>());
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* <t,s>, <t,t>, <t,r0*> of a t computed elsewhere (host path) */
PetscErrorCode PBFDot3(PBFWork W)
{
  PetscFunctionBegin;
  PetscCall(HostSums(W, "PipeBCGSF::Dot3", W->t, Dot3Sums{W->s, W->r0}, SLOT_T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Dev: omega and beta from the device (SpMVDot3Final), and nothing moves when it found a reason to stop */
template <GSKSPPC PC, bool Dev = false> static void Update(PBFWork W, PetscScalar omega_, PetscScalar beta_)
{
  const DView<PetscScalar> x = W->x, r = W->r, r0 = W->r0, p = W->p, v = W->v, s = W->s, t = W->t, d = W->dinv, ph = W->ph, sh = W->sh, a = W->alpha, sc = W->ds.scal;
  PetscScalar *const       out = W->partials.data() + SLOT_R * (size_t)W->lu;
  const PetscInt           n   = W->n;

  TeamFor(
      Dev ? "PipeBCGSF::UpdateDev" : "PipeBCGSF::Update", W->FusedPolicy(2), KOKKOS_LAMBDA(const Member &m) {
        if (Dev && sc(2) == 0) return;
        PetscScalar       acc[2] = {0, 0};
        const PetscScalar alpha = a(0), omega = Dev ? sc(0) : omega_, beta = Dev ? sc(1) : beta_;
        /* every load of two elements before their stores, which could alias them: one wait for memory per two
           elements (measured faster than one on an H200). The last rows first, as in UpdateS, while the SpMVs go
           forward: each kernel starts on the vectors the one before left in L2 (measured faster on an H200 than both
           forward or the SpMVs reversed; docs/design-measurements.md) */
        const auto load = [&](const PetscInt i, PetscScalar(&e)[9]) {
          e[0] = p(i);
          e[1] = s(i);
          e[2] = t(i);
          e[3] = v(i);
          e[4] = r0(i);
          e[5] = LoadOnce(x(i)); /* x: no kernel reads it soon */
          if (PC == GS_PC_APPLY) {
            e[6] = ph(i);
            e[7] = sh(i);
          }
          if (PC == GS_PC_JACOBI) e[8] = d(i);
        };
        const auto step = [&](const PetscInt i, const PetscScalar(&e)[9]) {
          const PetscScalar pi = e[0], si = e[1], ti = e[2], vi = e[3], r0i = e[4], xi = e[5];
          const PetscScalar dx = PC == GS_PC_APPLY ? alpha * e[6] + omega * e[7] : (PC == GS_PC_JACOBI ? e[8] * (alpha * pi + omega * si) : alpha * pi + omega * si);
          const PetscScalar ri = si - omega * ti;
          StoreOnce(x(i), xi + dx);
          r(i) = ri;
          p(i) = ri + beta * (pi - omega * vi);
          acc[0] += ri * r0i;
          acc[1] += ri * ri;
        };
        ForEachIndexPairRev<9>(m, n, load, step);
        TeamSumStore<2>(m, acc, out);
      });
}

/* Update with point-block Jacobi: a thread per block, since x needs the block's old p */
static void UpdateBlocks(PBFWork W, PetscScalar omega, PetscScalar beta)
{
  const DView<PetscScalar> x = W->x, r = W->r, r0 = W->r0, p = W->p, v = W->v, s = W->s, t = W->t, d = W->dinv, a = W->alpha;
  PetscScalar *const       out = W->partials.data() + SLOT_R * (size_t)W->lu;
  const int                bs  = W->bs;
  const PetscInt           nb  = W->n / bs;

  TeamFor(
      "PipeBCGSF::UpdateBlocks", W->FusedPolicy(2), KOKKOS_LAMBDA(const Member &m) {
        PetscScalar       acc[2] = {0, 0};
        const PetscScalar alpha  = a(0);
        /* last blocks first: see Update() */
        ForEachIndex<true>(m, nb, [&](const PetscInt b) {
          const PetscInt o = b * bs;
          PetscScalar    u[PBF_MAX_BS];
          for (int k = 0; k < bs; k++) u[k] = alpha * p(o + k) + omega * s(o + k);
          for (int i = 0; i < bs; i++) {
            PetscScalar dx = 0;
            for (int k = 0; k < bs; k++) dx += d((o + i) * bs + k) * u[k];
            x(o + i) += dx;
            const PetscScalar ri = s(o + i) - omega * t(o + i);
            r(o + i)             = ri;
            p(o + i)             = ri + beta * (p(o + i) - omega * v(o + i));
            acc[0] += ri * r0(o + i);
            acc[1] += ri * ri;
          }
        });
        TeamSumStore<2>(m, acc, out);
      });
}

/* x, r, p with the alpha the last UpdateS used (held in device memory) and the host's omega and beta */
PetscErrorCode PBFUpdate(PBFWork W, PetscScalar omega, PetscScalar beta)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PBCGSF_Update, 0, 0, 0, 0));
  if (W->pc == GS_PC_PBJACOBI)
    GSCallKokkos(UpdateBlocks(W, omega, beta));
  else
    GSCallKokkos(ByPC<GS_PC_APPLY, GS_PC_JACOBI>(W->pc, [&](auto pc) { Update<decltype(pc)::value>(W, omega, beta); }));
  W->launches++;
  PetscCall(PetscLogFlops(12.0 * W->n));
  PetscCall(PetscLogEventEnd(PBCGSF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device scalars: the work for PBFSpMVDot3Final(), PBFUpdateDevice() and PBFReduceSlot() (one process, a fused
   SpMV, PCNONE or PCJACOBI) */
PetscErrorCode PBFWorkSetDeviceScalars(PBFWork W)
{
  PetscFunctionBegin;
  PetscCheck(W->pc == GS_PC_NONE || W->pc == GS_PC_JACOBI, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device scalars need PCNONE or PCJACOBI");
  GSCallKokkos(W->ds.Ensure(*W, 3, PBF_NSUMS));
  PetscCall(W->ds.ready.Create());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s = r - alpha v at column j, with UpdateS's arithmetic, and M^{-1} s as Gather forms it: SpMVDot3S gathers it */
template <bool Jacobi> struct GatherS {
  DView<PetscScalar>                 r, v, d;
  PetscScalar                        alpha;
  KOKKOS_INLINE_FUNCTION PetscScalar S(const PetscInt j) const
  {
    return r(j) - alpha * v(j);
  }
  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt j) const
  {
    return Jacobi ? d(j) * S(j) : S(j);
  }
};

/* UpdateS folded into SpMVDot3Final: each team sums alpha from the partials as UpdateS does, forms s of a row's
   columns from r and v as it gathers them, stores s and t of its rows and their four sums, and the last team
   finishes the iteration (FinishSums). One kernel and one vector pass (s is not read back) less than UpdateS and
   SpMVDot3Final, for a second gathered vector. */
template <bool Blk, bool Jacobi> static void SpMVDot3S(PBFWork W, const CSR &A, int slot)
{
  const DView<PetscScalar>                       r = W->r, v = W->v, d = W->dinv, s = W->s, t = W->t, r0 = W->r0, a = W->alpha, sc = W->ds.scal, part = W->partials;
  const DView<unsigned>                          done = W->ds.done;
  const Kokkos::View<PetscScalar *, PinnedSpace> hs   = W->ds.hsums;
  const int                                      L = W->lu, so = PBF_NSUMS * slot;
  const size_t                                   scr = FinishScratch(W, A);

  static_assert(SLOT_T == SLOT_S + 1, "SpMVDot3S stores <s,s> and the three sums of t as four consecutive slots");
  TeamFor(
      "PipeBCGSF::SpMVDot3S", SpMVPolicy(W, A, scr), KOKKOS_LAMBDA(const Member &m) {
        const Scratch         buf(m.team_scratch(0), scr);
        PetscScalar           ss[1] = {0}, acc[3] = {0, 0, 0};
        const GatherS<Jacobi> g{r, v, d, TeamAlpha(m, buf, part.data() + SLOT_R * (size_t)L, part.data() + SLOT_A * (size_t)L, L)};
        if (m.league_rank() == 0 && m.team_rank() == 0) OneLane(m, [&]() { a(0) = g.alpha; });
        ForEachRowProduct<Blk>(m, A, g, [&](const PetscInt row, const PetscScalar ti) {
          const PetscScalar si = g.S(row);
          OneLane(m, [&]() {
            s(row) = si;
            t(row) = ti;
          });
          ss[0] += si * si;
          acc[0] += ti * si;
          acc[1] += ti * ti;
          acc[2] += ti * r0(row);
        });
        const PetscScalar all[4] = {ss[0], acc[0], acc[1], acc[2]};
        if (TeamSumStoreLast<4>(m, buf, all, part.data() + SLOT_S * (size_t)L, &done(0))) FinishSums(m, buf, part.data(), L, hs, so, sc, done);
      });
}

/* SpMVDot3 whose last team finishes the iteration's sums into slot 0 or 1 and the Update's omega and beta; formS: with
   UpdateS folded in (SpMVDot3S) */
PetscErrorCode PBFSpMVDot3Final(PBFWork W, GSDeviceMat A, PetscInt slot, PetscBool formS)
{
  const bool jacobi = W->pc == GS_PC_JACOBI;

  PetscFunctionBegin;
  PetscCall(CheckStage(W, A, nullptr, nullptr));
  PetscCheck(W->ds.scal.data() && (slot == 0 || slot == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Call PBFWorkSetDeviceScalars() first; slot %" PetscInt_FMT " must be 0 or 1", slot);
  PetscCall(PetscLogEventBegin(PBCGSF_SpMVDot, 0, 0, 0, 0));
  GSCallKokkos(ByStorage(A->csr, [&](auto blk) {
    constexpr bool Blk = decltype(blk)::value;
    if (formS && jacobi)
      SpMVDot3S<Blk, true>(W, A->csr, (int)slot);
    else if (formS)
      SpMVDot3S<Blk, false>(W, A->csr, (int)slot);
    else if (jacobi)
      SpMVDot3<Blk, Gather<true>, true>(W, A->csr, Gather<true>{W->s, W->dinv}, (int)slot);
    else
      SpMVDot3<Blk, Gather<false>, true>(W, A->csr, Gather<false>{W->s, W->dinv}, (int)slot);
  }));
  PetscCall(W->ds.ready.Record(slot));
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * A->val.extent(0) + (formS ? 10.0 : 6.0) * W->n));
  PetscCall(PetscLogEventEnd(PBCGSF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Update with the device's omega and beta (x, r, p stay when SpMVDot3Final found a reason to stop) */
PetscErrorCode PBFUpdateDevice(PBFWork W)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PBCGSF_Update, 0, 0, 0, 0));
  GSCallKokkos(ByPC<GS_PC_JACOBI>(W->pc, [&](auto pc) { Update<decltype(pc)::value, true>(W, 0, 0); }));
  W->launches++;
  PetscCall(PetscLogFlops(12.0 * W->n));
  PetscCall(PetscLogEventEnd(PBCGSF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The PBF_NSUMS sums of slot 0 or 1, once its SpMVDot3Final has finished (later kernels may still run) */
PetscErrorCode PBFReduceSlot(PBFWork W, PetscInt slot, PetscScalar sums[PBF_NSUMS])
{
  PetscFunctionBegin;
  PetscCall(W->ds.Read(W, PBCGSF_Reduce, slot, PBF_NSUMS, sums));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One copy of every slot to the host; each sum in team order */
PetscErrorCode PBFReduce(PBFWork W, PetscScalar sums[PBF_NSUMS])
{
  const int          L = W->lu;
  const PetscScalar *h = W->hpartials.data();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PBCGSF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(SyncCopy(W->hpartials, W->partials));
  W->transfers++;
  SumPartials(h, PBF_NSUMS, L, sums);
  PetscCall(PetscLogEventEnd(PBCGSF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
