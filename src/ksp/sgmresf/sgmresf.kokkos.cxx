/* Fused kernels of KSPSGMRESF on the default Kokkos execution space (see sgmresfimpl.h). Every kernel runs with
   the same launch shape (one thread per row or entry, a fixed number of teams in a grid-stride loop), so a thread
   owns the same rows in every pass and rereads only what it wrote itself; each reduction leaves one partial sum per
   team in its own slot of one device buffer. Inner products against the basis go in chunks of CH sums, one team
   reduction per chunk, through one reused scratch buffer. */
#include <cmath>
#include <stdexcept>
#include "devicemat.hpp"
#include "../common/work.hpp"
#include "sgmresfimpl.h"

using namespace gpustream;

namespace
{
constexpr int CH = 8; /* sums per team reduction */
/* teams per multiprocessor (WavePol, 64 registers; Normalize takes 123 unbounded): measured faster than 3 (80
   registers) on an H200 once the basis loops load 8 columns at a time, and 3 faster than 2 or unbounded kernels with
   MaxTeams() teams (docs/design-measurements.md) */
constexpr int SGFTeamsPerSM = 4;

using Basis = Kokkos::View<PetscScalar **, Kokkos::LayoutLeft, Mem>;
} // namespace

/* partials: pass 1 (np slots: 0 <w,w>, j <v_j,w>; delayed: the pairs of PairDots()), pass 2 (np slots: 0 <w',w'>,
   j <v_j,w'>), then the SGF_NREC record; np rounds 2m up to whole chunks */
struct _n_SGFWork : _n_GSWork {
  /* the kernels take blocks of any size */
  _n_SGFWork(PetscInt n, PetscInt m, GSKSPPC pc, PetscInt bs) : m(m), np((int)(CH * ((2 * m + CH - 1) / CH))) /* the delayed refinement's 2(k-1) sums and 2 more */
  {
    Init("SGMRESF", n, pc, std::numeric_limits<int>::max(), WaveTeams(TeamThreads(), SGFTeamsPerSM));
    this->bs = pc == GS_PC_PBJACOBI ? (int)bs : 1;
    V        = Basis("SGMRESF::basis", n, m + 1);
    x        = DView<PetscScalar>("SGMRESF::x", pc == GS_PC_APPLY ? 0 : n);
    b        = DView<PetscScalar>("SGMRESF::b", pc == GS_PC_APPLY ? 0 : n);
    dinv     = DView<PetscScalar>("SGMRESF::dinv", pc == GS_PC_JACOBI ? n : (pc == GS_PC_PBJACOBI ? n * bs : 0));
    u        = DView<PetscScalar>("SGMRESF::u", n);
    R        = DView<PetscScalar>("SGMRESF::R", (size_t)(m + 1) * (m + 1));
    given    = DView<PetscScalar>("SGMRESF::given", (size_t)np + 1);
    fin      = DView<PetscScalar>("SGMRESF::finished", 2 * (size_t)np);
    fdone    = DView<unsigned>("SGMRESF::teamsdone", 1);
    hR       = Kokkos::View<PetscScalar *, PinnedSpace>("SGMRESF::hR", (size_t)(m + 1) * (m + 1));
    SetTeams(lu);
  }
  /* teams of every kernel (one partial sum each), which size the partial-sum buffers */
  void SetTeams(int teams)
  {
    const size_t size = (size_t)2 * np * teams + SGF_NREC;
    lu                = teams;
    partials          = DView<PetscScalar>("SGMRESF::partials", size);
    hpartials         = Kokkos::View<PetscScalar *, PinnedSpace>("SGMRESF::hpartials", size);
    hxi               = Kokkos::View<PetscScalar *, PinnedSpace>("SGMRESF::hxi", 2 * ((size_t)teams + SGF_NREC));
  }
  DView<PetscScalar> Vector(PetscInt v) override;
  bool               Has(PetscInt v) const override
  {
    return v >= SGF_X && v - SGF_COLUMN(0) <= m;
  }
  PetscInt                                 m = 0;
  Basis                                    V;
  DView<PetscScalar>                       x, b, u;
  DView<PetscScalar>                       t;     /* several processes: the SpMV's input, or A x (allocated on first use) */
  DView<PetscScalar>                       R;     /* (m+1) x (m+1), column-major; R(j,k) for 1 <= j <= k <= m */
  DView<PetscScalar>                       given; /* sums reduced by the host, or the coefficients of the x update */
  DView<PetscScalar>                       fin;   /* each pass's sums finished on the device (np each), by its last team */
  DView<unsigned>                          fdone; /* teams of the running kernel done, for its last team */
  Kokkos::View<PetscScalar *, PinnedSpace> hR;
  Kokkos::View<PetscScalar *, PinnedSpace> hxi;             /* two slots of xi partials and record, so one can be read while the next is written */
  int                                      np = CH, xs = 0; /* xs: the slot of hxi the last xi went to */
  SlotEvents                               done;            /* recorded after each slot's kernel: the host waits for it alone */
};

PetscErrorCode SGFWorkCreate(PetscInt n, PetscInt m, GSKSPPC pc, PetscInt bs, SGFWork *work)
{
  PetscFunctionBegin;
  PetscCheck(pc != GS_PC_PBJACOBI || (bs >= 1 && n % bs == 0), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Blocks of size %" PetscInt_FMT " for %" PetscInt_FMT " rows", bs, n);
  PetscCall(GSWorkNew(work, n, m, pc, bs));
  PetscCall((*work)->done.Create());
  PetscFunctionReturn(PETSC_SUCCESS);
}

GS_WORK_INTERFACE(SGFWork, SGFWorkBase, SGFWorkDestroy)

/* The record of a step, after the two passes in the partials buffer */
static PetscScalar *Record(SGFWork W)
{
  return W->partials.data() + (size_t)2 * W->np * W->lu;
}

/* Where the kernel that computes xi of step s stores its partials (one per team) and the step's record after them:
   slot s % 2 of the pinned hxi, read by the host after that kernel (SGFReduceXiBegin/End). Written by the kernel, not
   copied after it: a copy between two kernels kept the next one from being launched dependent (kokkosimpl.hpp), and
   cost its own time in the stream */
static PetscScalar *XiSlot(SGFWork W, int slot)
{
  W->xs = slot;
  return W->hxi.data() + (size_t)slot * ((size_t)W->lu + SGF_NREC);
}

/* Team 0's thread 0 copies the record rec, complete (from this team's thread 0 or an earlier kernel), after the lu
   partials at hx */
KOKKOS_INLINE_FUNCTION void StoreRecord(const Member &t, const PetscScalar *rec, PetscScalar *hx)
{
  if (t.league_rank() == 0)
    OneThread(t, [&]() {
      for (int i = 0; i < SGF_NREC; i++) hx[t.league_size() + i] = rec[i];
    });
}

/* Column j of the basis as a 1D view (LayoutLeft: contiguous) */
static DView<PetscScalar> Column(SGFWork W, PetscInt j)
{
  return DView<PetscScalar>(W->V.data() + (size_t)j * W->V.stride(1), W->n);
}

DView<PetscScalar> _n_SGFWork::Vector(PetscInt v)
{
  DView<PetscScalar> *all[] = {&x, &b, &dinv, &u};

  if (v >= SGF_COLUMN(0)) {
    PetscInt j = v - SGF_COLUMN(0);
    if (j > m) throw std::out_of_range("SGFWork: column " + std::to_string(j) + " of a basis of " + std::to_string(m + 1));
    return Column(this, j);
  }
  return *all[v];
}

/* Up to np + 1 scalars from the host: sums the next kernel takes as given, or the coefficients of UpdateSolution */
PetscErrorCode SGFWorkSetGiven(SGFWork W, PetscInt cnt, const PetscScalar a[])
{
  PetscFunctionBegin;
  PetscCheck(cnt >= 0 && cnt <= W->np + 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " given values for room of %d", cnt, W->np + 1);
  GSCallKokkos(SyncCopy(Kokkos::subview(W->given, std::make_pair((size_t)0, (size_t)cnt)), HostUnmanaged<const PetscScalar>(a, cnt)));
  W->transfers++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Teams of every kernel (one partial sum each): sizes the partial-sum buffers. The unit tests set several on a host
   backend, where one team is the default, to exercise the sums across teams. */
PetscErrorCode SGFWorkSetTeams(SGFWork W, PetscInt teams)
{
  PetscFunctionBegin;
  PetscCheck(teams >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " teams", teams);
  GSCallKokkos(W->SetTeams((int)teams));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device bytes of the basis and of everything else */
PetscErrorCode SGFWorkGetMemory(SGFWork W, PetscLogDouble *basis, PetscLogDouble *other)
{
  PetscFunctionBegin;
  *basis = (PetscLogDouble)W->V.span() * sizeof(PetscScalar);
  *other = (PetscLogDouble)(W->x.span() + W->b.span() + W->dinv.span() + W->u.span() + W->R.span() + W->given.span() + W->fin.span() + W->partials.span()) * sizeof(PetscScalar);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Scratch: the reduction buffer (CH * team size) and the team's second-stage sums (np), with room for alignment */
static WavePol<SGFTeamsPerSM> Policy(SGFWork W)
{
  return WavePol<SGFTeamsPerSM>(W->lu, W->tu).set_scratch_size(0, Kokkos::PerTeam(((size_t)CH * W->tu + W->np + 2 * CH) * sizeof(PetscScalar)));
}

/* A kernel of the work: f(t, buf, H) in each team t, buf the reduction buffer (CH scalars a thread) and H the room for
   the team's sums of a pass */
template <class F> static void SGFKernel(SGFWork W, const char *name, const F &f)
{
  const int np = W->np;

  TeamFor(
      name, Policy(W), KOKKOS_LAMBDA(const Member &t) {
        const Scratch buf(t.team_scratch(0), CH * t.team_size()), H(t.team_scratch(0), np);
        f(t, buf, H);
      });
}

/* k must be a step of the cycle from first on (what: "Iteration", ...) */
static PetscErrorCode CheckStep(SGFWork W, PetscInt k, PetscInt first, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(k >= first && k <= W->m, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s %" PetscInt_FMT " of a cycle of %" PetscInt_FMT, what, k, W->m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{
/* M^{-1} V(:,col) gathered inside the SpMV: Jacobi scales each entry; point-block Jacobi applies row j of its block's
   inverse, stored row by row (d(j * bs + c) = D_b^{-1}(j mod bs, c)) */
template <GSKSPPC PC> struct ColumnGather {
  Basis                              V;
  DView<PetscScalar>                 d;
  int                                col;
  PetscInt                           bs;
  KOKKOS_INLINE_FUNCTION PetscScalar operator()(const PetscInt j) const
  {
    if (PC == GS_PC_JACOBI) return d(j) * V(j, col);
    if (PC == GS_PC_PBJACOBI) {
      const PetscInt b0 = j - j % bs;
      PetscScalar    s  = 0;
      for (PetscInt c = 0; c < bs; c++) s += d(j * bs + c) * V(b0 + c, col);
      return s;
    }
    return V(j, col);
  }
};

/* Partials of the sums c0 .. c0+CH-1 of column k against the basis: sum 0 is <w,w>, sum j > 0 is <v_j,w>
   (columns j < k only; the rest of the chunk stays 0), over the rows visit(f) gives this thread */
template <class Visit> KOKKOS_INLINE_FUNCTION void DotChunkBy(const Member &t, const Scratch &buf, const Basis &V, int k, int c0, const Visit &visit, PetscScalar *out)
{
  PetscScalar acc[CH] = {};
  const int   nc      = k - c0 < CH ? k - c0 : CH;
  visit([&](const PetscInt i) {
    /* the row's loads first, unrolled to CH with nc as a predicate, so they wait for memory together: a loop to nc
       issued each load after the previous product, far below the copy rate */
    PetscScalar q[CH];
#pragma unroll
    for (int c = 0; c < CH; c++) q[c] = c < nc ? V(i, c0 + c == 0 ? k : c0 + c) : 0;
    const PetscScalar wi = V(i, k);
#pragma unroll
    for (int c = 0; c < CH; c++)
      if (c < nc) acc[c] += q[c] * wi;
  });
  TeamSumStoreIn<CH>(t, buf, acc, out);
}

/* DotChunkBy() over ForEachIndex()'s rows, in kernels that wrote column k in an earlier kernel */
KOKKOS_INLINE_FUNCTION void DotChunk(const Member &t, const Scratch &buf, const Basis &V, int k, int c0, PetscInt n, PetscScalar *out)
{
  DotChunkBy(
      t, buf, V, k, c0, [&](const auto &f) { ForEachIndex(t, n, f); }, out);
}

/* The sums 0..cnt-1 of a pass into the team's scratch H: finished by the last team of the kernel before (fin) or
   reduced by the host (given) */
KOKKOS_INLINE_FUNCTION void LoadSums(const Member &t, const Scratch &H, const PetscScalar *sums, int cnt)
{
  for (int c = t.team_rank(); c < cnt; c += t.team_size()) OneLane(t, [&]() { H(c) = sums[c]; });
  t.team_barrier();
}

/* H(c) = sum over the L teams of the partials p[c * L + l], c < cnt, in a fixed order: on CUDA warp w sums c = w,
   w + 8, ... (its lanes taking l = lane, lane + 32, ..., the loads of four rounds and of all its sums issued before
   their adds, then a butterfly of shuffles), so the up to 30 sums of a pass cost a few trips to L2 rather than two a
   chunk of 8 with two barriers (the last team's serial finish was a visible part of an iteration at 1e5 rows) */
KOKKOS_INLINE_FUNCTION void WarpSums(const Member &t, const Scratch &H, const PetscScalar *p, int L, int cnt)
{
#if defined(__CUDA_ARCH__)
  constexpr int S = 4, R = 4; /* sums a warp does at once, rounds of lanes loaded at once */
  const int     tid = threadIdx.y * blockDim.x + threadIdx.x, nw = blockDim.x * blockDim.y / 32, w = tid / 32, lane = tid % 32;
  for (int c0 = w; c0 < cnt; c0 += S * nw) {
    PetscScalar a[S] = {};
    for (int l0 = lane; l0 < L; l0 += 32 * R) {
      PetscScalar q[S][R];
#  pragma unroll
      for (int s = 0; s < S; s++)
#  pragma unroll
        for (int r = 0; r < R; r++) q[s][r] = c0 + s * nw < cnt && l0 + 32 * r < L ? LoadL2(p + (size_t)(c0 + s * nw) * L + l0 + 32 * r) : 0;
#  pragma unroll
      for (int s = 0; s < S; s++)
#  pragma unroll
        for (int r = 0; r < R; r++) a[s] += q[s][r];
    }
#  pragma unroll
    for (int s = 0; s < S; s++) {
      a[s] = WarpAllSum(a[s]);
      if (lane == 0 && c0 + s * nw < cnt) H(c0 + s * nw) = a[s];
    }
  }
#else
  OneThread(t, [&]() {
    for (int c = 0; c < cnt; c++) {
      PetscScalar a = 0;
      for (int l = 0; l < L; l++) a += LoadL2(p + (size_t)c * L + l);
      H(c) = a;
    }
  });
#endif
  t.team_barrier();
}

/* After a kernel stored its partials of sums 0..cnt-1 (p, L teams): its last team to finish sums them into fin,
   where the next kernel reads them instead of each of its teams summing all partials again */
KOKKOS_INLINE_FUNCTION void FinishPass(const Member &t, const Scratch &H, const PetscScalar *p, int L, int cnt, PetscScalar *fin, unsigned *fdone)
{
  if (!LastTeam(t, fdone)) return;
  WarpSums(t, H, p, L, cnt);
  OneThread(t, [&]() {
    for (int c = 0; c < cnt; c++) fin[c] = H(c);
    *fdone = 0;
  });
}

/* s[c] += coef(c, j) V(i, j) for j0 <= j < j1 and c < NC, in the order of j, with the loads of 8 columns issued before
   their products, the last few a column at a time: one column at a time throughout waited for memory every few
   columns (OrthogonalizeDelayed read its columns well below the copy rate) */
template <int NC, class C> KOKKOS_INLINE_FUNCTION void AddColumns(const Basis &V, const PetscInt i, const int j0, const int j1, const C &coef, PetscScalar (&s)[NC])
{
  constexpr int U = 8;
  int           j = j0;
  for (; j + U <= j1; j += U) {
    PetscScalar v[U];
#pragma unroll
    for (int q = 0; q < U; q++) v[q] = V(i, j + q);
#pragma unroll
    for (int q = 0; q < U; q++)
#pragma unroll
      for (int c = 0; c < NC; c++) s[c] += coef(c, j + q) * v[q];
  }
  for (; j < j1; j++) {
    const PetscScalar v = V(i, j);
    for (int c = 0; c < NC; c++) s[c] += coef(c, j) * v;
  }
}

/* AddColumns with the last batch masked instead of a column at a time: OrthogonalizeDelayed measured faster with it,
   the ifneeded Orthogonalize (8 sums in registers) slower, and one function doing both by a template flag made
   OrthogonalizeDelayed slower (H200; docs/design-measurements.md) */
template <int NC, class C> KOKKOS_INLINE_FUNCTION void AddColumnsMasked(const Basis &V, const PetscInt i, const int j0, const int j1, const C &coef, PetscScalar (&s)[NC])
{
  constexpr int U = 8;
  for (int j = j0; j < j1; j += U) {
    PetscScalar v[U];
#pragma unroll
    for (int q = 0; q < U; q++) v[q] = j + q < j1 ? V(i, j + q) : 0;
#pragma unroll
    for (int q = 0; q < U; q++)
      if (j + q < j1)
#pragma unroll
        for (int c = 0; c < NC; c++) s[c] += coef(c, j + q) * v[q];
  }
}

/* Calls f(valid, row) for the rows ForEachOwnedRow<Blk> gives this thread (units: rows, or block rows of ebs rows);
   on CUDA every lane of a warp takes the same number of calls, valid false past the end, for the shuffles of
   PairDots() */
template <class F> KOKKOS_INLINE_FUNCTION void ForEachOwnedRowSync(const Member &t, PetscInt units, int ebs, const F &f)
{
  const PetscInt stride = (PetscInt)t.league_size() * t.team_size(), first = (PetscInt)t.league_rank() * t.team_size() + t.team_rank();
#if defined(__CUDA_ARCH__)
  for (PetscInt u = first; __any_sync(0xffffffffu, u < units); u += stride)
#else
  for (PetscInt u = first; u < units; u += stride)
#endif
    for (int e = 0; e < ebs; e++) f(u < units, u * ebs + e);
}

#if defined(__CUDA_ARCH__)
/* One stage of Butterfly16(): H values left, the lanes with bit O keep the upper half and send the lower */
template <int H, int O> __device__ inline void ButterflyStage(PetscScalar *v, int lane)
{
  const bool up = lane & O;
#  pragma unroll
  for (int q = 0; q < H; q++) {
    const PetscScalar send = up ? v[q] : v[q + H], keep = up ? v[q + H] : v[q];
    v[q] = keep + __shfl_xor_sync(0xffffffffu, send, O);
  }
}

/* The warp's sums of 16 values (a reduce-scatter: 16 shuffles for 16 sums instead of 5 each): lane l gets the sum
   over the 32 lanes of value l / 2, in a fixed order */
__device__ inline PetscScalar Butterfly16(PetscScalar (&v)[16], int lane)
{
  ButterflyStage<8, 16>(v, lane);
  ButterflyStage<4, 8>(v, lane);
  ButterflyStage<2, 4>(v, lane);
  ButterflyStage<1, 2>(v, lane);
  return v[0] + __shfl_xor_sync(0xffffffffu, v[0], 1);
}
#endif

/* The delayed refinement's pairs of inner products over the rows rows() gives this thread (with x's entry there): a_j =
   <v_j, x> at slot j - 1 and b_j = <v_j, y> at slot nc + j - 1, 1 <= j <= nc, y = V(:,nc); one partial per team and slot at
   out[slot * L + league rank]. On CUDA each row is read once for all sums: per 32 rows a warp sums 8 columns' 16
   products with one butterfly, each lane keeping one sum, so 32 columns cost one team reduction; elsewhere chunks
   of CH sums reread the rows. */
template <class Rows> KOKKOS_INLINE_FUNCTION void PairDots(const Member &t, const Scratch &buf, const Basis &V, int nc, const Rows &rows, PetscScalar *out)
{
  const int L = t.league_size();
#if defined(__CUDA_ARCH__)
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, lane = tid % 32, w = tid / 32, nw = blockDim.x * blockDim.y / 32;
  for (int j0 = 1; j0 <= nc; j0 += 32) {
    PetscScalar acc[4] = {0, 0, 0, 0};
    rows([&](const bool valid, const PetscInt i, const PetscScalar x) {
      /* the lanes reconverge before the shuffles: without it CUDA 13's code for these loops left wrong sums at the first
         delayed step (sgmresf without a PC broke down there) */
      __syncwarp();
      const PetscScalar y = valid ? V(i, nc) : 0;
#  pragma unroll
      for (int g = 0; g < 4; g++) {
        if (j0 + 8 * g > nc) break; /* the same in every lane */
        PetscScalar v[16];
#  pragma unroll
        for (int q = 0; q < 8; q++) {
          const int         j = j0 + 8 * g + q;
          const PetscScalar c = valid && j <= nc ? V(i, j) : 0;
          v[q]                = c * x;
          v[8 + q]            = c * y;
        }
        acc[g] += Butterfly16(v, lane);
      }
    });
    t.team_barrier(); /* buf's earlier readers */
    if (lane % 2 == 0)
#  pragma unroll
      for (int g = 0; g < 4; g++) buf(w * 64 + g * 16 + lane / 2) = acc[g];
    t.team_barrier();
    if (tid < 64) {
      const int g = tid / 16, q = tid % 16, j = j0 + 8 * g + q % 8;
      if (j <= nc) {
        PetscScalar s = 0;
        for (int v = 0; v < nw; v++) s += buf(v * 64 + tid);
        out[(size_t)((q < 8 ? 0 : nc) + j - 1) * L + t.league_rank()] = s;
      }
    }
  }
#else
  for (int c0 = 0; c0 < 2 * nc; c0 += CH) {
    PetscScalar acc[CH] = {};
    rows([&](const bool valid, const PetscInt i, const PetscScalar x) {
      if (!valid) return;
      for (int c = 0; c < CH && c0 + c < 2 * nc; c++) {
        const int s = c0 + c, j = s < nc ? s + 1 : s - nc + 1;
        acc[c] += V(i, j) * (s < nc ? x : V(i, nc));
      }
    });
    TeamSumStoreIn<CH>(t, buf, acc, out + (size_t)c0 * L);
  }
#endif
}

/* The delayed refinement's coefficients, from PairDots()'s sums of iteration k = nc + 1 in H (a_j at j - 1, b_j at
   nc + j - 1): v_{k-1} = (y - sum_{j<nc} b_j v_j) / rho with rho^2 = b_nc - sum b_j^2, and <v_{k-1}, x> = (a_nc -
   sum b_j a_j) / rho, left in H(2 nc + 1) with 1 / rho in H(2 nc). write: also R(1:k-2, k-1) += b, R(k-1, k-1) = rho,
   the record of step k-1 (||w_{k-1}||^2 as ||y||^2 plus its first pass's coefficients squared) and R(1:k-1, k), the
   first pass of w_k = A M^{-1} v_{k-1}: with x = A M^{-1} y and A M^{-1} v_j = sum_{i<=j+1} R(i,j+1) v_i, it is
   (g - d) / rho, g = <v_i, x> and d_i = sum_{j >= i-1} R(i,j+1) b_j. */
KOKKOS_INLINE_FUNCTION void DelayedCoefficients(const Member &t, const Scratch &H, int nc, const DView<PetscScalar> &R, int ld, PetscScalar *rec, bool write)
{
  PetscScalar *const Rn = R.data() + (size_t)nc * ld; /* column nc: R(1:k-2, k-1) */
  /* from hh = sum b_j^2, ab = sum b_j a_j and ww = ||w_{k-1}||^2: 1 / rho, <v_{k-1}, x>, and with write R(k-1,k-1)
     and step k-1's record */
  const auto scalars = [&](const PetscScalar hh, const PetscScalar ab, const PetscScalar ww) {
    const PetscScalar rho2 = H(2 * nc - 1) - hh, rho = rho2 >= 0 ? sqrt(rho2) : (rho2 < 0 ? 0 : rho2), inv = rho > 0 ? 1 / rho : 0;
    H(2 * nc)     = inv;
    H(2 * nc + 1) = (H(nc - 1) - ab) * inv;
    if (write) {
      Rn[nc]               = rho;
      rec[SGF_REC_RKK]     = rho;
      rec[SGF_REC_REFINED] = 1;
      rec[SGF_REC_WW]      = ww;
    }
  };
  /* R(i, k) = (g_i - d_i) / rho */
  const auto firstpass = [&](const int i, const PetscScalar d) { R(i + (size_t)(nc + 1) * ld) = ((i < nc ? H(i - 1) : H(2 * nc + 1)) - d) * H(2 * nc); };
#if defined(__CUDA_ARCH__)
  /* A warp's lanes take the j of each sum and the i of R(:,k), so each costs one trip to R: one thread's loops took a
     trip per j, the read-add-store of R(:,k-1) one after the other (the finish grew with k, to a large part of the
     kernel at small sizes) */
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, lane = tid % 32, w = tid / 32, nw = blockDim.x * blockDim.y / 32;
  if (w == 0) {
    PetscScalar hh = 0, ab = 0, ww = 0;
    for (int j = lane; j < nc - 1; j += 32) {
      const PetscScalar b = H(nc + j);
      hh += b * b;
      ab += b * H(j);
      if (write) {
        const PetscScalar r = Rn[j + 1];
        ww += r * r;
        Rn[j + 1] = r + b;
      }
    }
    hh = WarpAllSum(hh);
    ab = WarpAllSum(ab);
    ww = WarpAllSum(ww);
    if (lane == 0) scalars(hh, ab, H(2 * nc - 1) + ww);
  }
  t.team_barrier();
  if (write)
    for (int i = 1 + w; i <= nc; i += nw) {
      PetscScalar d = 0;
      for (int j = (i > 1 ? i - 1 : 1) + lane; j < nc; j += 32) d += R(i + (size_t)(j + 1) * ld) * H(nc + j - 1);
      d = WarpAllSum(d);
      if (lane == 0) firstpass(i, d);
    }
#else
  OneThread(t, [&]() {
    PetscScalar hh = 0, ab = 0, ww = H(2 * nc - 1);
    for (int j = 0; j < nc - 1; j++) {
      hh += H(nc + j) * H(nc + j);
      ab += H(nc + j) * H(j);
      ww += Rn[j + 1] * Rn[j + 1];
    }
    if (write)
      for (int j = 0; j < nc - 1; j++) Rn[j + 1] += H(nc + j);
    scalars(hh, ab, ww);
  });
  t.team_barrier();
  if (write)
    for (int i = 1 + t.team_rank(); i <= nc; i += t.team_size())
      OneLane(t, [&]() {
        PetscScalar d = 0;
        for (int j = i > 1 ? i - 1 : 1; j < nc; j++) d += R(i + (size_t)(j + 1) * ld) * H(nc + j - 1);
        firstpass(i, d);
      });
#endif
}

/* After PairDots(): the kernel's last team sums the 2 nc pairs, derives the coefficients and leaves them in fin for
   OrthogonalizeDelayed (2 nc + 2 values, H's layout) */
KOKKOS_INLINE_FUNCTION void FinishDelayed(const Member &t, const Scratch &H, const PetscScalar *p, int nc, const DView<PetscScalar> &R, int ld, PetscScalar *rec, PetscScalar *fin, unsigned *fdone)
{
  if (!LastTeam(t, fdone)) return;
  WarpSums(t, H, p, t.league_size(), 2 * nc);
  DelayedCoefficients(t, H, nc, R, ld, rec, true);
  for (int c = t.team_rank(); c < 2 * nc + 2; c += t.team_size()) OneLane(t, [&]() { fin[c] = H(c); });
  OneThread(t, [&]() { *fdone = 0; });
}
} // namespace

/* Calls f(pc, blk) for the work's fused preconditioner and A's storage */
template <class F> static void ByFusedPC(SGFWork W, const CSR &A, const F &f)
{
  ByPC<GS_PC_JACOBI, GS_PC_PBJACOBI>(W->pc, [&](auto pc) { ByStorage(A, [&](auto blk) { f(pc, blk); }); });
}

template <GSKSPPC PC, bool Blk> static void SpMVDot(SGFWork W, const CSR &A, int k, PetscScalar scale)
{
  const Basis            V = W->V;
  const ColumnGather<PC> g{W->V, W->dinv, k - 1, W->bs};
  PetscScalar *const out = W->partials.data(), *const fin = W->fin.data();
  unsigned *const fdone = W->fdone.data();
  const int       L = W->lu, np = W->np;

  TeamFor(
      "SGMRESF::SpMVDot", Policy(W), KOKKOS_LAMBDA(const Member &t) {
        const Scratch buf(t.team_scratch(0), CH * t.team_size()), H(t.team_scratch(0), np);
        PetscScalar   acc[CH] = {};
        const int     nc      = k < CH ? k : CH;
        ForEachRowProduct<Blk>(t, A, g, [&](const PetscInt row, const PetscScalar sum) {
          const PetscScalar wi = scale * sum;
          V(row, k)            = wi;
          acc[0] += wi * wi;
          for (int c = 1; c < nc; c++) acc[c] += V(row, c) * wi;
        });
        TeamSumStoreIn<CH>(t, buf, acc, out);
        /* over the rows this thread's products wrote: column k is not complete before the kernel ends */
        for (int c0 = CH; c0 < k; c0 += CH)
          DotChunkBy(
              t, buf, V, k, c0, [&](const auto &f) { ForEachOwnedRow<Blk>(t, A, f); }, out + (size_t)c0 * L);
        FinishPass(t, H, out, L, k, fin, fdone);
      });
}

/* w = V(:,k) = scale A M^{-1} V(:,k-1); partials <w,w>, <v_j,w> for 1 <= j < k */
PetscErrorCode SGFSpMVDot(SGFWork W, GSDeviceMat A, PetscInt k, PetscScalar scale)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCall(CheckStep(W, k, 1, "Iteration"));
  PetscCheck(W->pc != GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "A PC applied on the host has no fused SpMV");
  PetscCall(GSWorkLaunch(W, SGMRESF_SpMVDot, 2.0 * A->val.extent(0) + 2.0 * k * W->n, [&] { ByFusedPC(W, A->csr, [&](auto pc, auto blk) { SpMVDot<decltype(pc)::value, decltype(blk)::value>(W, A->csr, (int)k, scale); }); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <GSKSPPC PC, bool Blk> static void SpMVDotDelayed(SGFWork W, const CSR &A, int k)
{
  const Basis              V = W->V;
  const ColumnGather<PC>   g{W->V, W->dinv, k - 1, W->bs};
  const DView<PetscScalar> R = W->R;
  PetscScalar *const out = W->partials.data(), *const fin = W->fin.data(), *const rec = Record(W);
  unsigned *const fdone = W->fdone.data();
  const int       np = W->np, nc = k - 1, ld = (int)W->m + 1, ebs = Blk ? (int)A.bs : 1;
  const PetscInt  units = A.m / ebs;

  TeamFor(
      "SGMRESF::SpMVDotDelayed", Policy(W), KOKKOS_LAMBDA(const Member &t) {
        const Scratch buf(t.team_scratch(0), CH * t.team_size()), H(t.team_scratch(0), np);
#if defined(__CUDA_ARCH__)
        constexpr bool fuse = !Blk; /* each row's sums right after its product, x and y still in registers and L1 */
#else
        constexpr bool fuse = false; /* PairDots revisits the rows once per chunk of sums there */
#endif
        if (fuse)
          PairDots(
              t, buf, V, nc,
              [&](const auto &f) {
                ForEachOwnedRowSync(t, units, 1, [&](const bool valid, const PetscInt i) {
                  const PetscScalar x = valid ? RowProduct<false>(t, A, g, i) : 0;
                  if (valid) OneLane(t, [&]() { V(i, k) = x; });
                  f(valid, i, x);
                });
              },
              out);
        else {
          ForEachRowProduct<Blk>(t, A, g, [&](const PetscInt row, const PetscScalar sum) { OneLane(t, [&]() { V(row, k) = sum; }); });
          /* over the rows this thread's products wrote: column k is not complete before the kernel ends */
          PairDots(
              t, buf, V, nc, [&](const auto &f) { ForEachOwnedRowSync(t, units, ebs, [&](const bool valid, const PetscInt i) { f(valid, i, valid ? V(i, k) : 0); }); }, out);
        }
        FinishDelayed(t, H, out, nc, R, ld, rec, fin, fdone);
      });
}

/* Delayed refinement, iteration k >= 2: column k-1 holds w'_{k-1} (one pass); V(:,k) = A M^{-1} w'_{k-1} and the pairs
   <v_j, V(:,k)>, <v_j, w'_{k-1}> for 1 <= j < k (v_{k-1} standing for w'_{k-1}); the last team derives the coefficients
   of OrthogonalizeDelayed, R(:,k-1) and R(:,k)'s first pass, and step k-1's record */
PetscErrorCode SGFSpMVDotDelayed(SGFWork W, GSDeviceMat A, PetscInt k)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCall(CheckStep(W, k, 2, "Delayed iteration"));
  PetscCheck(W->pc != GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "A PC applied on the host has no fused SpMV");
  PetscCall(GSWorkLaunch(W, SGMRESF_SpMVDot, 2.0 * A->val.extent(0) + 4.0 * (k - 1) * W->n, [&] { ByFusedPC(W, A->csr, [&](auto pc, auto blk) { SpMVDotDelayed<decltype(pc)::value, decltype(blk)::value>(W, A->csr, (int)k); }); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SpMVDotDelayed's pairs of a column k computed elsewhere (host path), finished as there; without finish (several
   processes) the host reduces them and hands them to OrthogonalizeDelayed, which derives the coefficients itself */
PetscErrorCode SGFDotDelayed(SGFWork W, PetscInt k, PetscBool finish)
{
  const Basis              V = W->V;
  const DView<PetscScalar> R = W->R;
  PetscScalar *const out = W->partials.data(), *const fin = finish ? W->fin.data() : nullptr, *const rec = Record(W);
  unsigned *const fdone = W->fdone.data();
  const PetscInt  n     = W->n;
  const int       nc = (int)k - 1, ld = (int)W->m + 1;

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 2, "Delayed iteration"));
  PetscCall(GSWorkLaunch(W, SGMRESF_SpMVDot, 4.0 * (k - 1) * W->n, [&] {
    SGFKernel(
        W, "SGMRESF::DotDelayed", KOKKOS_LAMBDA(const Member &t, const Scratch &buf, const Scratch &H) {
          PairDots(
              t, buf, V, nc, [&](const auto &f) { ForEachOwnedRowSync(t, n, 1, [&](const bool valid, const PetscInt i) { f(valid, i, valid ? V(i, nc + 1) : 0); }); }, out);
          if (fin) FinishDelayed(t, H, out, nc, R, ld, rec, fin, fdone);
        });
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Delayed refinement, iteration k >= 2, with the coefficients of the last team of SpMVDotDelayed or DotDelayed (or,
   given, derived by every team from the host's sums, team 0 writing R and the record): v_{k-1} = (w'_{k-1} -
   sum_{j<k-1} b_j v_j) / rho into column k-1, w'_k = (V(:,k) - sum_{j<k} g_j v_j) / rho into column k, and the
   partials of xi_{k-1} = <r0, v_{k-1}> */
PetscErrorCode SGFOrthogonalizeDelayed(SGFWork W, PetscInt k, PetscBool given)
{
  const Basis              V   = W->V;
  const DView<PetscScalar> R   = W->R;
  const PetscScalar *const src = given ? W->given.data() : W->fin.data();
  PetscScalar *const       xi  = XiSlot(W, (int)(k - 1) % 2);
  PetscScalar *const       rec = Record(W);
  const PetscInt           n   = W->n;
  const int                kk = (int)k, nc = kk - 1, ld = (int)W->m + 1;

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 2, "Delayed iteration"));
  PetscCall(GSWorkLaunch(W, SGMRESF_Update, 4.0 * k * W->n, [&] {
    SGFKernel(
        W, "SGMRESF::OrthogonalizeDelayed", KOKKOS_LAMBDA(const Member &t, const Scratch &buf, const Scratch &H) {
          LoadSums(t, H, src, given ? 2 * nc : 2 * nc + 2);
          if (given) DelayedCoefficients(t, H, nc, R, ld, rec, t.league_rank() == 0);
          const PetscScalar inv = H(2 * nc), gl = H(2 * nc + 1);
          PetscScalar       acc[1] = {0};
          /* the last rows first, after SpMVDotDelayed went forward, and before the next one: each kernel starts on the
             columns the one before left in L2 (measured faster on an H200 than both forward or the SpMV reversed;
             docs/design-measurements.md) */
          ForEachIndex<true>(t, n, [&](const PetscInt i) {
            const PetscScalar y = V(i, nc), w = V(i, kk), r0 = V(i, 0); /* in flight with the first columns */
            PetscScalar       s[2] = {0, 0};
            const auto        b_a  = [&](const int c, const int j) { return H(c ? j - 1 : nc + j - 1); }; /* b_j, then a_j */
            AddColumnsMasked(V, i, 1, nc, b_a, s);
            const PetscScalar vk = (y - s[0]) * inv, wk = (w - s[1] - gl * vk) * inv;
            V(i, nc) = vk;
            V(i, kk) = wk;
            acc[0] += r0 * vk;
          });
          TeamSumStoreIn<1>(t, buf, acc, xi);
          StoreRecord(t, rec, xi);
        });
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scratch vector t of several processes' device SpMVs */
static DView<PetscScalar> &Temp(SGFWork W)
{
  if (W->t.extent(0) != (size_t)W->n) W->t = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("SGMRESF::t"), W->n);
  return W->t;
}

/* Several processes: y = A x, the blocks of A checked against the work's size */
static PetscErrorCode SpMVHalo(SGFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H, const DView<PetscScalar> &x, const DView<PetscScalar> &y)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n && B->csr.m == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix blocks of %" PetscInt_FMT " rows for vectors of size %" PetscInt_FMT, A->csr.m, W->n);
  PetscCall(DeviceSpMV(A, B, H, x, nullptr, y, &W->launches));
  PetscCall(PetscLogFlops(2.0 * (A->val.extent(0) + B->val.extent(0))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several processes: w = V(:,k) = A (scale D^{-1} V(:,k-1)) on the device with the halo exchange (SGFDot then forms
   its partials); the first stage of SGFSpMVDot without the fusion, which needs the whole matrix */
PetscErrorCode SGFSpMVHalo(SGFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H, PetscInt k, PetscScalar scale)
{
  DView<PetscScalar> x = Column(W, k - 1);

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 1, "Iteration"));
  PetscCheck(W->pc == GS_PC_NONE || W->pc == GS_PC_JACOBI, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The device SpMV of several processes applies no preconditioner or Jacobi");
  PetscCall(PetscLogEventBegin(SGMRESF_SpMVDot, 0, 0, 0, 0));
  if (W->pc == GS_PC_JACOBI || scale != 1.0) {
    GSCallKokkos(ScaledInput("SGMRESF::ScaleColumn", W->dinv, scale, x, W->t));
    x = W->t;
    W->launches++;
  }
  PetscCall(SpMVHalo(W, A, B, H, x, Column(W, k)));
  PetscCall(PetscLogEventEnd(SGMRESF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SpMVDot's partials of a column k computed elsewhere (host path) */
PetscErrorCode SGFDot(SGFWork W, PetscInt k)
{
  const Basis        V   = W->V;
  PetscScalar *const out = W->partials.data(), *const fin = W->fin.data();
  unsigned *const fdone = W->fdone.data();
  const PetscInt  n     = W->n;
  const int       L = W->lu, kk = (int)k;

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 1, "Iteration"));
  PetscCall(GSWorkLaunch(W, SGMRESF_SpMVDot, 2.0 * k * W->n, [&] {
    SGFKernel(
        W, "SGMRESF::Dot", KOKKOS_LAMBDA(const Member &t, const Scratch &buf, const Scratch &H) {
          for (int c0 = 0; c0 < kk; c0 += CH) DotChunk(t, buf, V, kk, c0, n, out + (size_t)c0 * L);
          FinishPass(t, H, out, L, kk, fin, fdone);
        });
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R(j,k) = <v_j,w> (finished by SpMVDot's or Dot's last team, or given); w' = w - sum_j R(j,k) v_j; partials <w',w'> and, when
   refining, <v_j,w'>. given: the host reduced the sums and decided the refinement (refine is never or always). */
PetscErrorCode SGFOrthogonalize(SGFWork W, PetscInt k, SGFRefine refine, PetscBool given)
{
  const Basis              V     = W->V;
  const DView<PetscScalar> R     = W->R;
  const PetscScalar *const g     = given ? W->given.data() : W->fin.data();
  PetscScalar *const       p2    = W->partials.data() + (size_t)W->np * W->lu;
  PetscScalar *const       rec   = Record(W);
  PetscScalar *const       fin2  = W->fin.data() + W->np;
  unsigned *const          fdone = W->fdone.data();
  const PetscInt           n     = W->n;
  const int                L = W->lu, kk = (int)k, ld = (int)W->m + 1;

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 2, "Orthogonalization in iteration"));
  PetscCheck(!given || refine != SGF_REFINE_IFNEEDED, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Given sums come with the refinement decided");
  PetscCall(GSWorkLaunch(W, SGMRESF_Update, (refine == SGF_REFINE_NEVER ? 2.0 : 4.0) * k * W->n, [&] {
    SGFKernel(
        W, "SGMRESF::Orthogonalize", KOKKOS_LAMBDA(const Member &t, const Scratch &buf, const Scratch &H) {
          LoadSums(t, H, g, kk);
          PetscScalar hh = 0;
          for (int j = 1; j < kk; j++) hh += H(j) * H(j);
          const bool ref = refine == SGF_REFINE_ALWAYS || (refine == SGF_REFINE_IFNEEDED && SGF_REFINE_NEEDED(H(0), hh));
          if (t.league_rank() == 0)
            OneThread(t, [&]() {
              for (int j = 1; j < kk; j++) R(j + (size_t)kk * ld) = H(j);
              rec[SGF_REC_REFINED] = ref ? 1 : 0;
              rec[SGF_REC_WW]      = H(0);
            });
          PetscScalar acc[CH] = {};
          const int   nc      = ref ? (kk < CH ? kk : CH) : 1;
          ForEachIndex(t, n, [&](const PetscInt i) {
            PetscScalar wi[1] = {V(i, kk)};
            const auto  minus = [&](int, const int j) { return -H(j); }; /* wi + (-H(j)) v_j: wi - H(j) v_j, bitwise */
            AddColumns(V, i, 1, kk, minus, wi);
            V(i, kk) = wi[0];
            acc[0] += wi[0] * wi[0];
            for (int c = 1; c < nc; c++) acc[c] += V(i, c) * wi[0];
          });
          TeamSumStoreIn<CH>(t, buf, acc, p2);
          if (ref)
            for (int c0 = CH; c0 < kk; c0 += CH) DotChunk(t, buf, V, kk, c0, n, p2 + (size_t)c0 * L);
          FinishPass(t, H, p2, L, ref ? kk : 1, fin2, fdone);
        });
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R2 = <v_j,w'> when iteration k refined (R(:,k) += R2); R(k,k) = sqrt(<w',w'> - |R2|^2); v_k = (w' - V R2) / R(k,k);
   partial <r0, v_k>. A non-positive norm leaves v_k = 0 and R(k,k) = 0 (the host sees a breakdown); NaN stays NaN.
   close: the delayed refinement's last step of a cycle, column k holding w'_k with R2 from Dot (pass 1): always
   refined, and the record's <w,w> taken as <w',w'> plus the first pass's coefficients squared. */
PetscErrorCode SGFNormalize(SGFWork W, PetscInt k, PetscBool given, PetscBool close)
{
  const Basis              V   = W->V;
  const DView<PetscScalar> R   = W->R;
  const PetscScalar *const g   = given ? W->given.data() : W->fin.data() + (k == 1 || close ? 0 : W->np);
  PetscScalar *const       xi  = XiSlot(W, (int)k % 2);
  PetscScalar *const       rec = Record(W);
  const PetscInt           n   = W->n;
  const int                kk = (int)k, ld = (int)W->m + 1;
  const bool               cl = close && k > 1;

  PetscFunctionBegin;
  PetscCall(CheckStep(W, k, 1, "Iteration"));
  PetscCall(GSWorkLaunch(W, SGMRESF_Update, 3.0 * W->n, [&] {
    SGFKernel(
        W, "SGMRESF::Normalize", KOKKOS_LAMBDA(const Member &t, const Scratch &buf, const Scratch &H) {
          const bool ref = kk > 1 && (cl || rec[SGF_REC_REFINED] != 0);
          LoadSums(t, H, g, ref ? kk : 1);
          PetscScalar nrm2 = H(0);
          if (ref)
            for (int j = 1; j < kk; j++) nrm2 -= H(j) * H(j);
          const PetscScalar rkk = nrm2 >= 0 ? sqrt(nrm2) : (nrm2 < 0 ? 0 : nrm2), inv = rkk > 0 ? 1 / rkk : 0;
          if (t.league_rank() == 0)
            OneThread(t, [&]() {
              PetscScalar ww = H(0);
              for (int j = 1; cl && j < kk; j++) ww += R(j + (size_t)kk * ld) * R(j + (size_t)kk * ld);
              if (ref)
                for (int j = 1; j < kk; j++) R(j + (size_t)kk * ld) += H(j);
              R(kk + (size_t)kk * ld) = rkk;
              rec[SGF_REC_RKK]        = rkk;
              if (kk == 1 || cl) {
                rec[SGF_REC_REFINED] = cl ? 1 : 0;
                rec[SGF_REC_WW]      = ww;
              }
            });
          PetscScalar acc[1] = {0};
          ForEachIndex(t, n, [&](const PetscInt i) {
            PetscScalar wi[1] = {V(i, kk)};
            const auto  minus = [&](int, const int j) { return -H(j); };
            if (ref) AddColumns(V, i, 1, kk, minus, wi);
            const PetscScalar vi = rkk > 0 ? wi[0] * inv : (rkk == 0 ? 0 : rkk);
            V(i, kk)             = vi;
            acc[0] += V(i, 0) * vi;
          });
          TeamSumStoreIn<1>(t, buf, acc, xi);
          StoreRecord(t, rec, xi);
        });
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r0 = V(:,0) = b - A x; partial <r0,r0> in xi slot 0 (no record) */
template <bool Blk> static void Residual(SGFWork W, const CSR &A)
{
  const Basis              V = W->V;
  const DView<PetscScalar> x = W->x, b = W->b;
  PetscScalar *const       xi = XiSlot(W, 0);

  TeamFor(
      "SGMRESF::Residual", Policy(W), KOKKOS_LAMBDA(const Member &t) {
        const Scratch buf(t.team_scratch(0), CH * t.team_size());
        PetscScalar   acc[1] = {0};
        ForEachRowProduct<Blk>(t, A, x, [&](const PetscInt row, const PetscScalar ax) {
          const PetscScalar ri = b(row) - ax;
          V(row, 0)            = ri;
          acc[0] += ri * ri;
        });
        TeamSumStoreIn<1>(t, buf, acc, xi);
      });
}

PetscErrorCode SGFResidual(SGFWork W, GSDeviceMat A)
{
  PetscFunctionBegin;
  PetscCheck(A->csr.m == W->n && A->csr.n == W->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix of size %" PetscInt_FMT " x %" PetscInt_FMT " for vectors of size %" PetscInt_FMT, A->csr.m, A->csr.n, W->n);
  PetscCheck(W->pc != GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The solution lives on the host with a PC applied there");
  PetscCall(PetscLogEventBegin(SGMRESF_SpMVDot, 0, 0, 0, 0));
  GSCallKokkos(ByStorage(A->csr, [&](auto blk) { Residual<decltype(blk)::value>(W, A->csr); }));
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * A->val.extent(0) + 3.0 * W->n));
  PetscCall(PetscLogEventEnd(SGMRESF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several processes: V(:,0) = b - A x with the halo exchange, and this process's partials of ||b - A x||^2 where
   SGFResidual() leaves them */
PetscErrorCode SGFResidualHalo(SGFWork W, GSDeviceMat A, GSDeviceMat B, GSHalo H)
{
  PetscFunctionBegin;
  PetscCheck(W->pc != GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The solution lives on the host with a PC applied there");
  PetscCall(PetscLogEventBegin(SGMRESF_SpMVDot, 0, 0, 0, 0));
  PetscCall(SpMVHalo(W, A, B, H, W->x, Temp(W)));
  {
    const Basis              V = W->V;
    const DView<PetscScalar> b = W->b, ax = W->t;
    PetscScalar *const       xi = XiSlot(W, 0);
    const PetscInt           n  = W->n;
    GSCallKokkos(TeamFor(
        "SGMRESF::ResidualHalo", Policy(W), KOKKOS_LAMBDA(const Member &t) {
          PetscScalar acc[1] = {0};
          ForEachIndex(t, n, [&](const PetscInt i) {
            const PetscScalar ri = b(i) - ax(i);
            V(i, 0)              = ri;
            acc[0] += ri * ri;
          });
          TeamSumStoreIn<1>(t, Scratch(t.team_scratch(0), CH * t.team_size()), acc, xi);
        }));
  }
  W->launches++;
  PetscCall(PetscLogFlops(3.0 * W->n));
  PetscCall(PetscLogEventEnd(SGMRESF_SpMVDot, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <GSKSPPC PC> static void UpdateSolution(SGFWork W, int kk, bool tou)
{
  const Basis              V = W->V;
  const DView<PetscScalar> x = W->x, d = W->dinv, u = W->u;
  const PetscScalar *const c = W->given.data();
  const PetscInt           n = W->n;

  TeamFor(
      "SGMRESF::UpdateSolution", Policy(W), KOKKOS_LAMBDA(const Member &t) {
        ForEachIndex(t, n, [&](const PetscInt i) {
          PetscScalar ui[1] = {0};
          const auto  coef  = [&](int, const int j) { return c[j]; };
          AddColumns(V, i, 0, kk, coef, ui);
          if (tou)
            u(i) = ui[0];
          else
            x(i) += PC == GS_PC_JACOBI ? d(i) * ui[0] : ui[0];
        });
      });
}

/* x += D_b^{-1} u block by block (point-block Jacobi: u complete first, its block's entries come from other threads) */
static void AddBlocks(SGFWork W)
{
  const DView<PetscScalar> x = W->x, d = W->dinv, u = W->u;
  const PetscInt           n = W->n, bs = W->bs;

  TeamFor(
      "SGMRESF::AddBlocks", Policy(W), KOKKOS_LAMBDA(const Member &t) {
        ForEachIndex(t, n, [&](const PetscInt i) {
          const PetscInt b0 = i - i % bs;
          PetscScalar    s  = 0;
          for (PetscInt c = 0; c < bs; c++) s += d(i * bs + c) * u(b0 + c);
          x(i) += s;
        });
      });
}

/* u = sum_{j<kk} c_j V(:,j), the coefficients uploaded by SGFWorkSetGiven(); tou: into SGF_U (the host applies M^{-1}),
   else x += M^{-1} u with Jacobi, point-block Jacobi (through u: a second launch) or no PC */
PetscErrorCode SGFUpdateSolution(SGFWork W, PetscInt kk, PetscBool tou)
{
  PetscFunctionBegin;
  PetscCheck(kk >= 0 && kk <= W->m, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " columns of a basis of %" PetscInt_FMT, kk, W->m + 1);
  PetscCheck(tou || W->pc != GS_PC_APPLY, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The solution lives on the host with a PC applied there");
  PetscCall(PetscLogEventBegin(SGMRESF_Update, 0, 0, 0, 0));
  if (W->pc == GS_PC_JACOBI)
    GSCallKokkos(UpdateSolution<GS_PC_JACOBI>(W, (int)kk, tou));
  else if (W->pc == GS_PC_PBJACOBI && !tou) {
    GSCallKokkos(UpdateSolution<GS_PC_NONE>(W, (int)kk, true));
    GSCallKokkos(AddBlocks(W));
    W->launches++;
  } else
    GSCallKokkos(UpdateSolution<GS_PC_NONE>(W, (int)kk, tou));
  W->launches++;
  PetscCall(PetscLogFlops(2.0 * kk * W->n));
  PetscCall(PetscLogEventEnd(SGMRESF_Update, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One copy of the first cnt slots of a pass to the host; each sum in team order */
PetscErrorCode SGFReduceDots(SGFWork W, SGFPass pass, PetscInt cnt, PetscScalar sums[])
{
  const int          L   = W->lu;
  const size_t       off = pass == SGF_PASS1 ? 0 : (size_t)W->np * L, len = (size_t)cnt * L;
  const PetscScalar *h = W->hpartials.data() + off;

  PetscFunctionBegin;
  PetscCheck(cnt >= 0 && cnt <= W->np, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " sums of %d", cnt, W->np);
  PetscCall(PetscLogEventBegin(SGMRESF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(SyncCopy(Kokkos::subview(W->hpartials, std::make_pair(off, off + len)), Kokkos::subview(W->partials, std::make_pair(off, off + len))));
  W->transfers++;
  SumPartials(h, (int)cnt, L, sums);
  PetscCall(PetscLogEventEnd(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Marks the end of the kernel that stored xi's partials (or Residual's <r0,r0>) and its record into host slot `slot`
   (XiSlot()): on a device it passes behind the kernels already launched, without blocking the host, which can launch
   the next ones */
PetscErrorCode SGFReduceXiBegin(SGFWork W, PetscInt slot)
{
  PetscFunctionBegin;
  PetscCheck(slot == W->xs, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The last kernel stored xi in slot %d, not %" PetscInt_FMT, W->xs, slot);
  PetscCall(PetscLogEventBegin(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscCall(W->done.Record(slot));
  W->transfers++;
  PetscCall(PetscLogEventEnd(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Waits for that kernel alone (not for kernels launched after it) and sums the partials in team order */
PetscErrorCode SGFReduceXiEnd(SGFWork W, PetscInt slot, PetscScalar *xi, PetscScalar rec[SGF_NREC])
{
  const int          L   = W->lu;
  const size_t       len = (size_t)L + SGF_NREC;
  const PetscScalar *h   = W->hxi.data() + slot * len;

  PetscFunctionBegin;
  PetscCheck(slot == 0 || slot == 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Slot %" PetscInt_FMT " of 2", slot);
  PetscCall(PetscLogEventBegin(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscCall(W->done.Wait(slot));
  *xi = 0;
  for (int i = 0; i < L; i++) *xi += h[i];
  for (int i = 0; i < SGF_NREC; i++) rec[i] = h[L + i];
  PetscCall(PetscLogEventEnd(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Both at once, on the slot the last kernel stored xi in */
PetscErrorCode SGFReduceXi(SGFWork W, PetscScalar *xi, PetscScalar rec[SGF_NREC])
{
  PetscFunctionBegin;
  PetscCall(SGFReduceXiBegin(W, W->xs));
  PetscCall(SGFReduceXiEnd(W, W->xs, xi, rec));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R from the host (the unit tests' chains) */
PetscErrorCode SGFWorkSetR(SGFWork W, const PetscScalar R[])
{
  PetscFunctionBegin;
  PetscCall(PetscArraycpy(W->hR.data(), R, (W->m + 1) * (W->m + 1)));
  GSCallKokkos(SyncCopy(W->R, W->hR));
  W->transfers++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The (m+1) x (m+1) column-major R to the host */
PetscErrorCode SGFGetR(SGFWork W, PetscScalar R[])
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(SGMRESF_Reduce, 0, 0, 0, 0));
  GSCallKokkos(SyncCopy(W->hR, W->R));
  W->transfers++;
  PetscCall(PetscArraycpy(R, W->hR.data(), (W->m + 1) * (W->m + 1)));
  PetscCall(PetscLogEventEnd(SGMRESF_Reduce, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
