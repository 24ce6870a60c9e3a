/* Fused kernels of KSPPIPECGFUSED on the default Kokkos execution space (see pipecgfusedimpl.h). Each reduction
   writes one partial sum per team into a device buffer; Reduce() copies the partials of the whole iteration to
   pinned host memory at once and sums them there in a fixed order, so results do not vary from run to run. */
#include "devicemat.hpp"
#include "../common/work.hpp"
#include "pipecgfusedimpl.h"

#include <utility>

using namespace gpustream;

static void EnsurePartials(PCGFWork, int);

/* partials: [Update: nu x lu][SpMVDot or Dot: 2 x ls][off-diagonal: 2 x lb] */
struct _n_PCGFWork : _n_GSWork {
  _n_PCGFWork(PetscInt n, GSKSPPC pc)
  {
    Init("PipeCGFused", n, pc, PCGF_MAX_BS, FusedTeams(TeamThreads()));
    x    = DView<PetscScalar>("PipeCGFused::x", n);
    r    = DView<PetscScalar>("PipeCGFused::r", n);
    p    = DView<PetscScalar>("PipeCGFused::p", n);
    w    = DView<PetscScalar>("PipeCGFused::w", n);
    dinv = DView<PetscScalar>("PipeCGFused::dinv", pc == GS_PC_JACOBI ? n : 0);
    z    = DView<PetscScalar>("PipeCGFused::z", pc == GS_PC_APPLY ? n : 0);
    q    = DView<PetscScalar>("PipeCGFused::q", pc == GS_PC_APPLY ? n : 0);
    EnsurePartials(this, MaxTeams(TeamThreads())); /* the most teams SpMVShape() gives an SpMV */
  }
  DView<PetscScalar> Vector(PetscInt v) override
  {
    DView<PetscScalar> *all[] = {&x, &r, &p, &w, &dinv, &z, &q, &u, &m, &nv, &s, &xalt};
    return *all[v];
  }
  bool Has(PetscInt v) const override
  {
    return v >= PCGF_X && v <= PCGF_XPREV;
  }
  DView<PetscScalar> x, r, p, w;
  DView<PetscScalar> z, q;        /* z = M^{-1} r by recurrence and q = M^{-1} w, for PCs applied on the host */
  DView<PetscScalar> u, m, nv, s; /* the overlapped variant's u = M^{-1} r, m = M^{-1} w, n = A m, s */
  int                nu = 2;      /* sums of an Update: 2, or 6 with the norms (PCGFWorkSetNorms()) */
  int                ls = 0;      /* teams of the last SpMVDot/Dot, 0 if none since Reduce */
  int                lb = 0;      /* teams of the last off-diagonal kernel (several ranks) */
  /* device scalars (PCGFWorkSetDeviceScalars()): alpha and beta of the next Update, the count of SpMVDot's teams done,
     the finished sums of the last two iterations; the other x the Update writes */
  DeviceScalars      ds;
  DView<PetscScalar> xalt;
  /* one kernel per iteration (PCGFWorkSetStep()): the other r, p and w that Step writes; the vectors the last
     UpdateDevice (1: x) or Step (4) moved to their other buffers; the direction of the next Step's rows */
  DView<PetscScalar> ralt, palt, walt;
  int                moved = 0;
  bool               rev   = false;
};

/* Room for the partial sums of an Update and of SpMV-stage kernels with `teams` teams in all */
static void EnsurePartials(PCGFWork W, int teams)
{
  const size_t need = (size_t)W->nu * W->lu + 2 * (size_t)PetscMax(W->lu, teams);
  if (W->partials.extent(0) >= need) return;
  if (!W->partials.data()) { /* a new buffer; growing keeps the Update's partial sums already written */
    W->partials  = DView<PetscScalar>("PipeCGFused::partials", need);
    W->hpartials = Kokkos::View<PetscScalar *, PinnedSpace>("PipeCGFused::hpartials", need);
  } else {
    Kokkos::resize(W->partials, need);
    Kokkos::resize(W->hpartials, need);
  }
}

/* The buffers of device scalars (PCGFWorkSetDeviceScalars()), of Step (PCGFWorkSetStep()) and of the overlapped
   variant (PCGFWorkSetOverlap()), made once */
static void EnsureScalars(PCGFWork W)
{
  W->ds.Ensure(*W, 2, PCGF_NSUMS);
  if (W->xalt.extent(0) != (size_t)W->n) W->xalt = DView<PetscScalar>("PipeCGFused::xalt", W->n);
}

static void EnsureStep(PCGFWork W)
{
  for (auto v : {&W->ralt, &W->palt, &W->walt})
    if (v->extent(0) != (size_t)W->n) *v = DView<PetscScalar>("PipeCGFused::alt", W->n);
}

static void EnsureOverlap(PCGFWork W)
{
  for (auto v : {&W->u, &W->m, &W->nv, &W->s, &W->z, &W->q})
    if (v->extent(0) != (size_t)W->n) *v = DView<PetscScalar>("PipeCGFused::overlap", W->n);
}

PetscErrorCode PCGFWorkCreate(PetscInt n, GSKSPPC pc, PCGFWork *work)
{
  PetscFunctionBegin;
  PetscCall(GSWorkNew(work, n, pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Threads per team and teams of the vector kernels (Update, Dot), for experiments and benchmarks */
PetscErrorCode PCGFWorkSetLaunchShape(PCGFWork W, PetscInt team, PetscInt league)
{
  PetscFunctionBegin;
  PetscCheck(team > 0 && !(team & (team - 1)) && team <= 256 && (OnDevice() || team == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "Team size %" PetscInt_FMT " must be a power of two up to 256, the fused kernels' launch bound (1 on host backends)", team);
  PetscCheck(league > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "League size %" PetscInt_FMT " must be positive", league);
  W->tu = (int)team;
  W->lu = (int)league;
  W->ls = 0;
  GSCallKokkos(EnsurePartials(W, W->lu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything a solve would otherwise allocate when its steps first run: point-block Jacobi's blocks (of size bs), the
   partial sums with the norms, the device scalars and Step's buffers, the overlapped variant's vectors */
PetscErrorCode PCGFWorkReserve(PCGFWork W, PetscInt bs, PetscBool norms, PetscBool scalars, PetscBool step, PetscBool overlap)
{
  PetscFunctionBegin;
  GSCallKokkos({
    W->ReserveBlocks(bs);
    if (norms) {
      const int nu = W->nu;
      W->nu        = 2 + PCGF_NALL - PCGF_XX;
      EnsurePartials(W, MaxTeams(TeamThreads()));
      W->nu = nu;
    }
    if (scalars) EnsureScalars(W);
    if (step) EnsureStep(W);
    if (overlap) EnsureOverlap(W);
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

GS_WORK_INTERFACE(PCGFWork, PCGFWorkBase, PCGFWorkDestroy)

PetscErrorCode PCGFWorkGetMemory(PCGFWork W, PetscLogDouble *vecbytes, PetscLogDouble *partialbytes)
{
  PetscFunctionBegin;
  *vecbytes =
      (PetscLogDouble)((W->x.span() + W->r.span() + W->p.span() + W->w.span() + W->dinv.span() + W->z.span() + W->q.span() + W->u.span() + W->m.span() + W->nv.span() + W->s.span() + W->xalt.span() + W->ralt.span() + W->palt.span() + W->walt.span()) *
                       sizeof(PetscScalar));
  *partialbytes = (PetscLogDouble)(W->partials.span() * sizeof(PetscScalar));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Update's sums of ||x||^2, ||p||^2, ||w||^2 and ||r||^2 on or off (automatic residual replacement) */
PetscErrorCode PCGFWorkSetNorms(PCGFWork W, PetscBool on)
{
  PetscFunctionBegin;
  W->nu = on ? 2 + PCGF_NALL - PCGF_XX : 2;
  W->ls = W->lb = 0;
  GSCallKokkos(EnsurePartials(W, MaxTeams(TeamThreads())));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Update with point-block Jacobi: a thread per block of rows, since z needs the block's new r */
template <KSPNormType Norm, bool Norms> static void UpdateBlocks(PCGFWork W, PetscScalar alpha, PetscScalar beta)
{
  constexpr int            NS = Norms ? 6 : 2;
  const DView<PetscScalar> x = W->x, r = W->r, p = W->p, w = W->w, d = W->dinv;
  PetscScalar *const       out = W->partials.data();
  const int                bs  = W->bs;
  const PetscInt           nb  = W->n / bs;

  TeamFor(
      "PipeCGFused::UpdateBlocks", W->FusedPolicy(NS), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[NS] = {};
        /* last blocks first: see SpMVDot() */
        ForEachIndex<true>(t, nb, [&](const PetscInt b) {
          const PetscInt o = b * bs;
          PetscScalar    rb[PCGF_MAX_BS];
          for (int k = 0; k < bs; k++) rb[k] = r(o + k) - alpha * w(o + k);
          for (int i = 0; i < bs; i++) {
            PetscScalar zi = 0;
            for (int k = 0; k < bs; k++) zi += d((o + i) * bs + k) * rb[k];
            const PetscScalar pi = p(o + i), xi = x(o + i);
            x(o + i) = xi + alpha * pi;
            r(o + i) = rb[i];
            p(o + i) = zi + beta * pi;
            acc[0] += rb[i] * zi;
            NormAdd<Norm>(acc[1], rb[i], zi);
            if constexpr (Norms) {
              const PetscScalar wi = w(o + i);
              acc[2] += xi * xi;
              acc[3] += pi * pi;
              acc[4] += wi * wi;
              acc[5] += rb[i] * rb[i];
            }
          }
        });
        TeamSumStore<NS>(t, acc, out);
      });
}

/* Dev: alpha and beta come from the device (W->ds.scal, SpMVDot's last team) and x moves to the other buffer */
template <GSKSPPC PC, KSPNormType Norm, bool Norms, bool Dev = false> static void Update(PCGFWork W, PetscScalar alpha_, PetscScalar beta_)
{
  constexpr int            NS = Norms ? 6 : 2;
  const DView<PetscScalar> x = W->x, xo = Dev ? W->xalt : W->x, r = W->r, p = W->p, w = W->w, d = W->dinv, z = W->z, q = W->q, sc = W->ds.scal;
  PetscScalar *const       out = W->partials.data();
  const PetscInt           n   = W->n;

  if constexpr (PC == GS_PC_PBJACOBI) {
    UpdateBlocks<Norm, Norms>(W, alpha_, beta_);
    return;
  }
  TeamFor(
      Dev ? "PipeCGFused::UpdateDev" : "PipeCGFused::Update", W->FusedPolicy(NS), KOKKOS_LAMBDA(const Member &t) {
        const PetscScalar alpha = Dev ? sc(0) : alpha_, beta = Dev ? sc(1) : beta_;
        PetscScalar       acc[NS] = {};
        /* last rows first: see SpMVDot() */
        ForEachIndex<true>(t, n, [&](const PetscInt i) {
          const PetscScalar pi = p(i), wi = w(i), xi = LoadOnce(x(i)); /* x: no kernel reads it soon */
          const PetscScalar ri = r(i) - alpha * wi;
          const PetscScalar zi = PC == GS_PC_JACOBI ? d(i) * ri : (PC == GS_PC_APPLY ? z(i) - alpha * q(i) : ri);
          if (PC == GS_PC_APPLY) z(i) = zi;
          StoreOnce(xo(i), xi + alpha * pi);
          r(i) = ri;
          p(i) = zi + beta * pi;
          acc[0] += ri * zi;
          NormAdd<Norm>(acc[1], ri, zi);
          if constexpr (Norms) {
            acc[2] += xi * xi;
            acc[3] += pi * pi;
            acc[4] += wi * wi;
            acc[5] += ri * ri;
          }
        });
        TeamSumStore<NS>(t, acc, out);
      });
}

/* Calls f(pc) for the work's preconditioner, any the kernels fuse or take from the host (GS_PC_...) */
template <class F> static void ByWorkPC(PCGFWork W, const F &f)
{
  ByPC<GS_PC_JACOBI, GS_PC_PBJACOBI, GS_PC_APPLY>(W->pc, f);
}

/* Calls f(std::integral_constant<bool, jacobi>()): whether the SpMV kernels weigh w by Jacobi's D^{-1} */
template <class F> static void ByJacobi(PCGFWork W, const F &f)
{
  if (W->dinv.extent(0))
    f(std::true_type());
  else
    f(std::false_type());
}

PetscErrorCode PCGFUpdate(PCGFWork W, PetscScalar alpha, PetscScalar beta, KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  GSCallKokkos(ByWorkPC(W, [&](auto pc) {
    ByNorm(normtype, [&](auto norm) {
      if (W->nu > 2)
        Update<decltype(pc)::value, decltype(norm)::value, true>(W, alpha, beta);
      else
        Update<decltype(pc)::value, decltype(norm)::value, false>(W, alpha, beta);
    });
  }));
  W->launches++;
  PetscCall(PetscLogFlops((W->nu > 2 ? 18.0 : 10.0) * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scratch scalars of the kernels that may finish an iteration: the two sums a thread they always had (the
   multiprocessors' L1 cache gets what their shared memory leaves, TeamCarveout), and FinishIteration's reduction of
   four sums with TeamSumStoreLast's flag */
static size_t FinishScratch(const LaunchShape &s)
{
  return PetscMax(2 * (size_t)s.team, SumScratch(4, s.team, s.vlen));
}

/* The last team of a final kernel (device scalars): the iteration's sums from the Update's two partial sums of lu teams
   (pu) and the SpMV's two of ls teams (ps), in team order, to slot so of the pinned hs, and the next alpha and beta to
   sc. The four loads of an index go out together (pu's and ps's in separate loops took more trips to L2), and
   the four sums take one team reduction (buf: SumScratch(4, ...) scalars) */
KOKKOS_INLINE_FUNCTION void FinishIteration(const Member &t, const Scratch &buf, const PetscScalar *pu, int lu, const PetscScalar *ps, int ls, const Kokkos::View<PetscScalar *, PinnedSpace> &hs, int so, const DView<PetscScalar> &sc,
                                            const DView<unsigned> &done)
{
  PetscScalar tot[4] = {0, 0, 0, 0};
  for (int l = t.team_rank(); l < lu || l < ls; l += t.team_size()) {
    const PetscScalar u0 = l < lu ? LoadL2(pu + l) : 0, u1 = l < lu ? LoadL2(pu + lu + l) : 0;
    const PetscScalar s0 = l < ls ? LoadL2(ps + l) : 0, s1 = l < ls ? LoadL2(ps + ls + l) : 0;
    tot[0] += u0;
    tot[1] += u1;
    tot[2] += s0;
    tot[3] += s1;
  }
  TeamSumAllIn<4>(t, buf, tot);
  OneThread(t, [&]() {
    const PetscScalar alpha = tot[PCGF_PW] != 0 ? tot[PCGF_RZ] / tot[PCGF_PW] : 0;
    for (int k = 0; k < 4; k++) hs(so + k) = tot[k];
    sc(0)   = alpha; /* as the host loop computes them; a breakdown stops it before they are used */
    sc(1)   = tot[PCGF_RZ] != 0 ? alpha * alpha * tot[PCGF_WDW] / tot[PCGF_RZ] - 1 : 0;
    done(0) = 0;
  });
}

/* w = A p and the two sums. Split (several ranks): A is the diagonal block and rows with entries in the off-diagonal
   block (browptr) are left to OffDiagDot, which finishes their w and adds their sums. The Updates take their rows last
   first and this kernel first first, so that each starts on the vectors the other left in L2 (measured faster on an
   H200 than both forward; docs/design-measurements.md). Final (one process, device scalars): the last team to finish sums
   every team's partials of this kernel and of the Update before it, in a fixed order, writes the four sums to slot
   `slot` of the pinned W->ds.hsums and the next alpha and beta to W->ds.scal, so the next Update needs nothing from
   the host */
template <bool Jacobi, bool Split, bool Final, bool Blk> static void SpMVDot(PCGFWork W, const CSR &A, const LaunchShape &s, const DView<const PetscInt> &browptr, int slot = 0)
{
  const DView<PetscScalar>                       p = W->p, w = W->w, d = W->dinv, sc = W->ds.scal, part = W->partials;
  const DView<unsigned>                          done = W->ds.done;
  const Kokkos::View<PetscScalar *, PinnedSpace> hs   = W->ds.hsums;
  const int                                      lu = W->lu, nu = W->nu, so = PCGF_NSUMS * slot;
  PetscScalar *const                             out = W->partials.data() + (size_t)nu * lu;
  const size_t                                   scr = FinishScratch(s);

  TeamFor(
      Split ? "PipeCGFused::SpMVDotInterior" : (Final ? "PipeCGFused::SpMVDotFinal" : "PipeCGFused::SpMVDot"), FusedPol(s.league, s.team, s.vlen).set_scratch_size(0, Kokkos::PerTeam(scr * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        const Scratch buf(t.team_scratch(0), scr);
        PetscScalar   acc[2] = {0, 0};
        ForEachRowProduct<Blk>(t, A, p, [&](const PetscInt row, const PetscScalar wi) {
          if (!Split || browptr(row + 1) == browptr(row)) { /* loads before the store, which they could alias */
            acc[0] += p(row) * wi;
            acc[1] += Jacobi ? wi * d(row) * wi : wi * wi;
          }
          OneLane(t, [&]() { w(row) = wi; });
        });
        if (!Final) /* not constexpr: nvcc lambdas cannot first-capture inside one */
          TeamSumStoreIn<2>(t, buf, acc, out);
        else if (TeamSumStoreLast<2>(t, buf, acc, out, &done(0)))
          FinishIteration(t, buf, part.data(), lu, out, t.league_size(), hs, so, sc, done);
      });
}

/* The rows with off-diagonal entries (B's row list): w += B g with the ghost values g, and their two sums */
template <bool Jacobi> static void OffDiagDot(PCGFWork W, const GSDeviceMat B, const DView<PetscScalar> &g, int teams)
{
  const DView<PetscScalar> p = W->p, w = W->w, d = W->dinv;
  const DView<PetscInt>    rows = B->nzrows;
  const CSR                b    = B->csr;
  const PetscInt           nb   = (PetscInt)rows.extent(0);
  PetscScalar *const       out  = W->partials.data() + (size_t)W->nu * W->lu + 2 * W->ls;

  TeamFor(
      "PipeCGFused::OffDiagDot", W->FusedPolicy(2, teams), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2] = {0, 0};
        ForEachIndex(t, nb, [&](const PetscInt k) {
          const PetscInt    row = rows(k);
          const PetscScalar wi  = RowSum<false>(b, g, row, w(row));
          w(row)                = wi;
          acc[0] += p(row) * wi;
          acc[1] += Jacobi ? wi * d(row) * wi : wi * wi;
        });
        TeamSumStore<2>(t, acc, out);
      });
}

/* w = A p and the two sums with point-block Jacobi: a thread (and its lanes) per block of rows */
template <bool Blk> static void SpMVDotBlocks(PCGFWork W, const CSR &A, const LaunchShape &s)
{
  const DView<PetscScalar> p = W->p, w = W->w, d = W->dinv;
  PetscScalar *const       out = W->partials.data() + (size_t)W->nu * W->lu;
  const int                bs  = W->bs;

  TeamFor(
      "PipeCGFused::SpMVDotBlocks", FusedPol(s.league, s.team, s.vlen).set_scratch_size(0, Kokkos::PerTeam(2 * s.team * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[2] = {0, 0};
        ForEachBlockRowProduct<PCGF_MAX_BS, Blk>(t, A, p, bs, [&](const PetscInt b, const PetscScalar(&wb)[PCGF_MAX_BS]) {
          const PetscInt o = b * bs;
          OneLane(t, [&]() {
            for (int i = 0; i < bs; i++) w(o + i) = wb[i];
          });
          for (int i = 0; i < bs; i++) {
            PetscScalar q = 0;
            for (int k = 0; k < bs; k++) q += d((o + i) * bs + k) * wb[k];
            acc[0] += p(o + i) * wb[i];
            acc[1] += wb[i] * q;
          }
        });
        TeamSumStore<2>(t, acc, out);
      });
}

/* SpMVDot for the work's D^{-1} and A's storage */
template <bool Split, bool Final> static void SpMVDotFor(PCGFWork W, const CSR &A, const LaunchShape &s, const DView<const PetscInt> &browptr, int slot = 0)
{
  ByJacobi(W, [&](auto jacobi) { ByStorage(A, [&](auto blk) { SpMVDot<decltype(jacobi)::value, Split, Final, decltype(blk)::value>(W, A, s, browptr, slot); }); });
}

PetscErrorCode PCGFSpMVDot(PCGFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  const LaunchShape s = FusedShape(A->shape);

  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n && (!H || B->csr.m == W->n), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCall(PetscLogEventBegin(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscCheck(W->pc != GS_PC_PBJACOBI || !H, PETSC_COMM_SELF, PETSC_ERR_SUP, "Point-block Jacobi is fused on one process only");
  if (!H) {
    GSCallKokkos(EnsurePartials(W, s.league));
    if (W->pc == GS_PC_PBJACOBI)
      GSCallKokkos(ByStorage(A->csr, [&](auto blk) { SpMVDotBlocks<decltype(blk)::value>(W, A->csr, s); }));
    else
      GSCallKokkos((SpMVDotFor<false, false>(W, A->csr, s, A->csr.rowptr)));
    W->ls = s.league;
    W->launches++;
  } else { /* the diagonal block runs while the ghost values travel; then only the rows that need them */
    const PetscInt nb    = (PetscInt)B->nzrows.extent(0);
    const int      teams = (int)PetscMin((nb + W->tu - 1) / W->tu, (PetscInt)FusedTeams(W->tu));
    PetscInt       gathers;

    PetscCall(HaloBegin(H, W->p, &gathers));
    GSCallKokkos(EnsurePartials(W, s.league + teams));
    GSCallKokkos((SpMVDotFor<true, false>(W, A->csr, s, B->csr.rowptr)));
    W->ls = s.league;
    PetscCall(HaloEnd(H));
    if (teams) GSCallKokkos(ByJacobi(W, [&](auto jacobi) { OffDiagDot<decltype(jacobi)::value>(W, B, HaloGhosts(H), teams); }));
    W->lb = teams;
    W->launches += gathers + 1 + (teams > 0);
  }
  PetscCall(PetscLogFlops(2.0 * (A->val.extent(0) + (B ? B->val.extent(0) : 0)) + 5.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <GSKSPPC PC> static void Dot(PCGFWork W)
{
  const DView<PetscScalar> p = W->p, w = W->w, d = W->dinv, q = W->q;
  PetscScalar *const       out = W->partials.data() + (size_t)W->nu * W->lu;
  const int                bs  = W->bs;

  if constexpr (PC == GS_PC_PBJACOBI) {
    IndexSums<2>(
        *W, "PipeCGFused::DotBlocks", W->n / bs, out, KOKKOS_LAMBDA(const PetscInt b, PetscScalar(&acc)[2]) {
          BlockApply(d, bs, b, w, [&](const PetscInt i, const PetscScalar dw) {
            acc[0] += p(i) * w(i);
            acc[1] += w(i) * dw;
          });
        });
    return;
  }
  IndexSums<2>(
      *W, "PipeCGFused::Dot", W->n, out, KOKKOS_LAMBDA(const PetscInt i, PetscScalar(&acc)[2]) {
        const PetscScalar wi = w(i);
        acc[0] += p(i) * wi;
        acc[1] += PC == GS_PC_JACOBI ? wi * d(i) * wi : (PC == GS_PC_APPLY ? wi * q(i) : wi * wi);
      });
}

PetscErrorCode PCGFDot(PCGFWork W)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Dot, 0, 0, 0, 0));
  GSCallKokkos(EnsurePartials(W, W->lu));
  GSCallKokkos(ByWorkPC(W, [&](auto pc) { Dot<decltype(pc)::value>(W); }));
  W->ls = W->lu;
  W->lb = 0; /* its sums replace those of an SpMVDot before it */
  W->launches++;
  PetscCall(PetscLogFlops(5.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Dot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <GSKSPPC PC, KSPNormType Norm> static void Sums(PCGFWork W)
{
  const DView<PetscScalar> r = W->r, d = W->dinv, z = W->z;
  PetscScalar *const       out = W->partials.data();
  const int                bs  = W->bs;

  if constexpr (PC == GS_PC_PBJACOBI) {
    IndexSums<2>(
        *W, "PipeCGFused::SumsBlocks", W->n / bs, out, KOKKOS_LAMBDA(const PetscInt b, PetscScalar(&acc)[2]) {
          BlockApply(d, bs, b, r, [&](const PetscInt i, const PetscScalar zi) {
            acc[0] += r(i) * zi;
            NormAdd<Norm>(acc[1], r(i), zi);
          });
        });
    return;
  }
  IndexSums<2>(
      *W, "PipeCGFused::Sums", W->n, out, KOKKOS_LAMBDA(const PetscInt i, PetscScalar(&acc)[2]) {
        const PetscScalar ri = r(i), zi = PC == GS_PC_JACOBI ? d(i) * ri : (PC == GS_PC_APPLY ? z(i) : ri);
        acc[0] += ri * zi;
        NormAdd<Norm>(acc[1], ri, zi);
      });
}

PetscErrorCode PCGFUpdateX(PCGFWork W, PetscScalar alpha)
{
  const DView<PetscScalar> x = W->x, p = W->p;
  const PetscInt           n = W->n;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  GSCallKokkos(TeamFor(
      "PipeCGFused::UpdateX", FusedPol(W->lu, W->tu), KOKKOS_LAMBDA(const Member &t) { ForEachIndex(t, n, [&](const PetscInt i) { x(i) += alpha * p(i); }); }));
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Overwrites the Update's partial sums with those of the current r */
PetscErrorCode PCGFSums(PCGFWork W, KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  GSCallKokkos(ByWorkPC(W, [&](auto pc) { ByNorm(normtype, [&](auto norm) { Sums<decltype(pc)::value, decltype(norm)::value>(W); }); }));
  W->launches++;
  PetscCall(PetscLogFlops(4.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCGFReduce(PCGFWork W, PetscScalar sums[])
{
  const size_t       len = (size_t)W->nu * W->lu + 2 * ((size_t)W->ls + W->lb);
  const PetscScalar *h   = W->hpartials.data();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(SyncCopy(Kokkos::subview(W->hpartials, std::make_pair((size_t)0, len)), Kokkos::subview(W->partials, std::make_pair((size_t)0, len))));
  W->transfers++;
  /* each kernel's block holds its first sum for every team, then its second */
  const int    lu = W->lu, ls = W->ls, lb = W->lb;
  const size_t s0 = (size_t)W->nu * lu, b0 = s0 + 2 * (size_t)ls;
  for (int k = 0; k < PCGF_NSUMS + W->nu - 2; k++) sums[k] = 0;
  for (int i = 0; i < lu; i++) sums[PCGF_RZ] += h[i];
  for (int i = 0; i < lu; i++) sums[PCGF_NRM] += h[lu + i];
  for (int k = 2; k < W->nu; k++) /* the norms */
    for (int i = 0; i < lu; i++) sums[PCGF_XX + k - 2] += h[(size_t)k * lu + i];
  for (int i = 0; i < ls; i++) sums[PCGF_PW] += h[s0 + i];
  for (int i = 0; i < ls; i++) sums[PCGF_WDW] += h[s0 + ls + i];
  for (int i = 0; i < lb; i++) sums[PCGF_PW] += h[b0 + i];
  for (int i = 0; i < lb; i++) sums[PCGF_WDW] += h[b0 + lb + i];
  W->ls = W->lb = 0;
  PetscCall(PetscLogEventEnd(PCGF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device scalars: the work for PCGFUpdateDevice(), PCGFSpMVDotFinal() and PCGFReduceSlot() (one process, PCNONE or
   PCJACOBI, no norms in the Update), with alpha = beta = 0 for the first Update */
PetscErrorCode PCGFWorkSetDeviceScalars(PCGFWork W)
{
  PetscFunctionBegin;
  PetscCheck(W->pc == GS_PC_NONE || W->pc == GS_PC_JACOBI, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device scalars need PCNONE or PCJACOBI");
  PetscCheck(W->nu == 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "Device scalars need an Update without the norms");
  GSCallKokkos({
    EnsureScalars(W);
    SyncCopy(W->ds.scal, PetscScalar(0));
  });
  W->moved = 0;
  PetscCall(W->ds.ready.Create());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Update with the device's alpha and beta; x is written to the other buffer, which becomes x */
PetscErrorCode PCGFUpdateDevice(PCGFWork W, KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  GSCallKokkos(ByPC<GS_PC_JACOBI>(W->pc, [&](auto pc) { ByNorm(normtype, [&](auto norm) { Update<decltype(pc)::value, decltype(norm)::value, false, true>(W, 0, 0); }); }));
  std::swap(W->x, W->xalt);
  W->moved = 1;
  W->launches++;
  PetscCall(PetscLogFlops(10.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x (and after a Step r, p and w) back to the buffers before the last PCGFUpdateDevice() or PCGFStep() (an iteration
   begun before the host knew to stop) */
PetscErrorCode PCGFWorkRevertX(PCGFWork W)
{
  PetscFunctionBegin;
  PetscCheck(W->moved, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "No UpdateDevice or Step to revert");
  std::swap(W->x, W->xalt);
  if (W->moved == 4) {
    std::swap(W->r, W->ralt);
    std::swap(W->p, W->palt);
    std::swap(W->w, W->walt);
    W->rev = !W->rev;
  }
  W->moved = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SpMVDot (one process) whose last team finishes the iteration's sums into slot 0 or 1 and the next alpha, beta */
PetscErrorCode PCGFSpMVDotFinal(PCGFWork W, GSDeviceMat A, PetscInt slot)
{
  const LaunchShape s = FusedShape(A->shape);

  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCheck(W->ds.scal.data() && (slot == 0 || slot == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Call PCGFWorkSetDeviceScalars() first; slot %" PetscInt_FMT " must be 0 or 1", slot);
  PetscCall(PetscLogEventBegin(PCGF_SpMVDot, 0, 0, 0, 0));
  GSCallKokkos(EnsurePartials(W, s.league));
  GSCallKokkos((SpMVDotFor<false, true>(W, A->csr, s, A->csr.rowptr, (int)slot)));
  PetscCall(W->ds.ready.Record(slot));
  W->ls = 0; /* nothing left for Reduce() */
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * A->val.extent(0) + 5.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* p_k(j) = D^{-1} (r_{k-1}(j) - alpha w_{k-1}(j)) + beta p_{k-1}(j), the Update's arithmetic, from the vectors of
   iteration k-1: Step gathers the new p of a row's columns through it and stores its own rows' */
template <bool Jacobi> struct NextP {
  DView<PetscScalar>                 r, w, p, d;
  PetscScalar                        alpha, beta;
  KOKKOS_INLINE_FUNCTION PetscScalar R(const PetscInt j) const
  {
    return r(j) - alpha * w(j);
  }
  KOKKOS_INLINE_FUNCTION PetscScalar P(const PetscInt j, const PetscScalar rj) const
  {
    return (Jacobi ? d(j) * rj : rj) + beta * p(j);
  }
  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt j) const
  {
    return P(j, R(j));
  }
};

/* One iteration in one kernel (one process): the Update with the device's alpha and beta and w = A p, the new p of
   the columns gathered from the old r, w and p (NextP); x, r, p and w go to their other buffers, since other rows
   still read the old ones. The last team finishes the four sums into slot `slot` and the next alpha and beta, as
   SpMVDotFinal. Against Update + SpMVDotFinal: one pass less (p is not read back) and one kernel boundary less. Rev:
   the rows last first, alternated between iterations so that each starts on the rows the previous one wrote last. */
template <bool Jacobi, KSPNormType Norm, bool Blk, bool Rev> static void Step(PCGFWork W, const CSR &A, const LaunchShape &s, int slot)
{
  const DView<PetscScalar>                       x = W->x, r = W->r, p = W->p, w = W->w, d = W->dinv, xn = W->xalt, rn = W->ralt, pn = W->palt, wn = W->walt, sc = W->ds.scal, part = W->partials;
  const DView<unsigned>                          done = W->ds.done;
  const Kokkos::View<PetscScalar *, PinnedSpace> hs   = W->ds.hsums;
  const int                                      so   = PCGF_NSUMS * slot;
  const size_t                                   scr  = FinishScratch(s);

  TeamFor(
      "PipeCGFused::Step", FusedPol(s.league, s.team, s.vlen).set_scratch_size(0, Kokkos::PerTeam(scr * sizeof(PetscScalar))), KOKKOS_LAMBDA(const Member &t) {
        const Scratch       buf(t.team_scratch(0), scr);
        const NextP<Jacobi> g{r, w, p, d, sc(0), sc(1)};
        const int           L      = t.league_size();
        PetscScalar         acc[2] = {0, 0}, dot[2] = {0, 0}; /* the Update's sums, the SpMV's */
        ForEachRowProduct<Blk, Rev>(t, A, g, [&](const PetscInt row, const PetscScalar wi) {
          const PetscScalar xi = LoadOnce(x(row)), pi = p(row), ri = g.R(row), zi = Jacobi ? d(row) * ri : ri, pk = g.P(row, ri);
          OneLane(t, [&]() {
            StoreOnce(xn(row), xi + g.alpha * pi);
            rn(row) = ri;
            pn(row) = pk;
            wn(row) = wi;
          });
          acc[0] += ri * zi;
          NormAdd<Norm>(acc[1], ri, zi);
          dot[0] += pk * wi;
          dot[1] += Jacobi ? wi * d(row) * wi : wi * wi;
        });
        const PetscScalar all[4] = {acc[0], acc[1], dot[0], dot[1]}; /* at part[k L + team]: the Update's, then the SpMV's */
        if (TeamSumStoreLast<4>(t, buf, all, part.data(), &done(0))) FinishIteration(t, buf, part.data(), L, part.data() + 2 * (size_t)L, L, hs, so, sc, done);
      });
}

/* The other r, p and w of PCGFStep() (after PCGFWorkSetDeviceScalars()) */
PetscErrorCode PCGFWorkSetStep(PCGFWork W)
{
  PetscFunctionBegin;
  PetscCheck(W->ds.scal.data(), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Call PCGFWorkSetDeviceScalars() first");
  GSCallKokkos(EnsureStep(W));
  W->rev = false;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Update and SpMVDotFinal in one kernel: x, r, p, w move to their other buffers; the sums go to slot `slot` */
PetscErrorCode PCGFStep(PCGFWork W, GSDeviceMat A, KSPNormType normtype, PetscInt slot)
{
  const LaunchShape s = FusedShape(A->shape);

  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCheck(W->ralt.extent(0) == (size_t)W->n && (slot == 0 || slot == 1), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Call PCGFWorkSetStep() first; slot %" PetscInt_FMT " must be 0 or 1", slot);
  PetscCheck(W->nu == 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "One kernel per iteration forms no norms for residual replacement");
  PetscCall(PetscLogEventBegin(PCGF_Step, 0, 0, 0, 0));
  GSCallKokkos(EnsurePartials(W, 2 * s.league)); /* four sums a team */
  GSCallKokkos(ByJacobi(W, [&](auto jacobi) {
    ByStorage(A->csr, [&](auto blk) {
      ByNorm(normtype, [&](auto norm) {
        constexpr bool        J = decltype(jacobi)::value, B = decltype(blk)::value;
        constexpr KSPNormType N = decltype(norm)::value;
        if (W->rev)
          Step<J, N, B, true>(W, A->csr, s, (int)slot);
        else
          Step<J, N, B, false>(W, A->csr, s, (int)slot);
      });
    });
  }));
  PetscCall(W->ds.ready.Record(slot));
  std::swap(W->x, W->xalt);
  std::swap(W->r, W->ralt);
  std::swap(W->p, W->palt);
  std::swap(W->w, W->walt);
  W->moved = 4;
  W->rev   = !W->rev;
  W->ls    = 0;
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * A->val.extent(0) + 15.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Step, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The PCGF_NSUMS sums of slot 0 or 1, once its SpMVDotFinal has finished (later kernels may still run) */
PetscErrorCode PCGFReduceSlot(PCGFWork W, PetscInt slot, PetscScalar sums[])
{
  PetscFunctionBegin;
  PetscCall(W->ds.Read(W, PCGF_Reduce, slot, PCGF_NSUMS, sums));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vectors of the overlapped variant (and z, q, which every PC then needs) */
PetscErrorCode PCGFWorkSetOverlap(PCGFWork W)
{
  PetscFunctionBegin;
  PetscCheck(W->pc != GS_PC_PBJACOBI, PETSC_COMM_SELF, PETSC_ERR_SUP, "The overlapped variant applies point-block Jacobi on the host");
  GSCallKokkos(EnsureOverlap(W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <GSKSPPC PC, KSPNormType Norm> static void OverlapUpdate(PCGFWork W, PetscScalar alpha, PetscScalar beta)
{
  const DView<PetscScalar> x = W->x, r = W->r, u = W->u, w = W->w, m = W->m, nv = W->nv, z = W->z, q = W->q, p = W->p, s = W->s, d = W->dinv;
  PetscScalar *const       out = W->partials.data();
  const PetscInt           n   = W->n;
  const int                L   = W->lu;

  TeamFor(
      "PipeCGFused::OverlapUpdate", W->FusedPolicy(4), KOKKOS_LAMBDA(const Member &t) {
        PetscScalar acc[4] = {0, 0, 0, 0};
        ForEachIndex(t, n, [&](const PetscInt i) {
          const PetscScalar zi = nv(i) + beta * z(i), qi = m(i) + beta * q(i), pi = u(i) + beta * p(i), si = w(i) + beta * s(i);
          const PetscScalar ui = u(i) - alpha * qi, wi = w(i) - alpha * zi, ri = r(i) - alpha * si;
          z(i) = zi;
          q(i) = qi;
          p(i) = pi;
          s(i) = si;
          x(i) += alpha * pi;
          u(i) = ui;
          w(i) = wi;
          r(i) = ri;
          if (PC != GS_PC_APPLY) m(i) = PC == GS_PC_JACOBI ? d(i) * wi : wi;
          acc[0] += ri * ui;
          NormAdd<Norm>(acc[1], ri, ui);
          acc[2] += wi * ui;
        });
        /* gamma and the norm where an Update puts <r,z> and the norm, delta where an SpMVDot puts <p,w> */
        TeamSumAll<4>(t, acc);
        if (t.team_rank() == 0)
          OneLane(t, [&]() {
            out[t.league_rank()]         = acc[0];
            out[L + t.league_rank()]     = acc[1];
            out[2 * L + t.league_rank()] = acc[2];
            out[3 * L + t.league_rank()] = acc[3];
          });
      });
}

PetscErrorCode PCGFOverlapUpdate(PCGFWork W, PetscScalar alpha, PetscScalar beta, KSPNormType normtype)
{
  PetscFunctionBegin;
  PetscCheck(W->nu == 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "The overlapped variant forms no norms for residual replacement");
  PetscCall(PetscLogEventBegin(PCGF_Update, 0, 0, 0, 0));
  GSCallKokkos(ByPC<GS_PC_JACOBI, GS_PC_APPLY>(W->pc, [&](auto pc) { ByNorm(normtype, [&](auto norm) { OverlapUpdate<decltype(pc)::value, decltype(norm)::value>(W, alpha, beta); }); }));
  W->ls = W->lu; /* Reduce reads delta (and a zero) from the SpMV stage's place */
  W->lb = 0;
  W->launches++;
  PetscCall(PetscLogFlops(24.0 * W->n));
  PetscCall(PetscLogEventEnd(PCGF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* n = A m; on several ranks the diagonal block runs while the ghost values of m travel */
PetscErrorCode PCGFSpMVN(PCGFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCall(PetscLogEventBegin(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscCall(DeviceSpMV(A, B, H, W->m, nullptr, W->nv, &W->launches));
  PetscCall(PetscLogFlops(2.0 * (A->val.extent(0) + (B ? B->val.extent(0) : 0))));
  PetscCall(PetscLogEventEnd(PCGF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
