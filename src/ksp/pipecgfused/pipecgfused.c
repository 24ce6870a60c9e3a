/* KSPPIPECGFUSED: pipelined CG with fused kernels (Algorithm 2 of Rupp, Tillet, Rudolf, Weinbub, Morhammer, Grasser,
   Juengel, Selberherr, "Pipelined Iterative Solvers with Kernel Fusion for Graphics Processing Units", 2016).

   The iteration vectors live on the device for the whole solve; b and x cross once each way per solve. Each
   iteration is two kernels and one device-to-host copy: Update (x, r, p and the sums of <r,z> and the norm), SpMVDot
   (w = A p and the sums of <p,w>, <w,D^{-1}w>) and Reduce; or one kernel, Step, doing both. With z = D^{-1} r,
   A-conjugacy gives <r_{i+1}, z_{i+1}> = alpha_i^2 <w_i, D^{-1} w_i> - <r_i, z_i>, so beta_i is known before r_{i+1}
   exists. */
#include "pipecgfusedimpl.h"
#include "../common/base.h"
#include "../common/pcblocks.h"

typedef struct {
  GSKSPBase base;
  PCGFWork  work;
  PetscBool fusedspmv;  /* last solve ran the SpMV on the device (gpustream operator) */
  PetscBool devscalars; /* alpha and beta computed on the device, the host one iteration behind (option) */
  PetscInt  onekernel;  /* with device scalars, Update and SpMV in one kernel an iteration: 0 never, 1 always, 2 auto */
  PetscBool stepped;    /* the last solve ran so */
  PetscBool ranahead;   /* the last solve ran so (devscalars, and the solve was eligible) */
  PetscBool ahead;      /* while iterating ahead: iteration k+1 is begun, x_{k+1} in the making (base.x: PCGF_XPREV) */
  /* attainable accuracy */
  PetscInt  replace_every; /* replace r by b - A x every this many iterations (0: never) */
  PetscBool replace_auto;  /* replace when the estimated residual gap crosses sqrt(eps) ||r|| */
  PetscBool overlap;       /* Ghysels-Vanroose with the sums in an MPI_Iallreduce behind the SpMV */
  PetscInt  replacements;  /* in the last solve */
  PetscInt  refuted;       /* auto: convergence claims of the recursive residual that the true one refuted */
  /* the last KSPMatSolve: columns, whether they ran together in the block kernels, its counts */
  PetscInt  blockcolumns, blockpasses, blocklaunches, blocktransfers, blockcopies;
  PetscBool blockfused;
  PCGFBlock block; /* its device blocks, kept for the next KSPMatSolve of the same sizes */
  PetscInt  blockn, blockk;
  GSKSPPC   blockpc;
} KSP_PIPECGFUSED;

/* Whether a and b, both nonzero, differ in sign: as KSPCG, <r,z> or <p,Ap> changing sign between two iterations is an
   indefinite PC or operator, while a definite one of either sign (the negated Laplacian) converges */
static PetscBool KSPPIPECGFUSEDSignChange_Private(PetscScalar a, PetscScalar b)
{
  return (PetscBool)((PetscRealPart(a) < 0.0 && PetscRealPart(b) > 0.0) || (PetscRealPart(a) > 0.0 && PetscRealPart(b) < 0.0));
}

/* Whether a solve on size processes takes the overlapped recurrences: on one process there is no reduction to hide,
   and the default ones move half the vector bytes */
static PetscBool KSPPIPECGFUSEDOverlaps_Private(KSP_PIPECGFUSED *cg, PetscMPIInt size)
{
  return (PetscBool)(cg->overlap && size > 1);
}

/* The PC as the kernels see it and point-block Jacobi's block size. Point-block Jacobi is fused on one process for
   blocks of up to PCGF_MAX_BS rows; elsewhere it is applied on the host like any PC. With a null space on the operator
   the PC goes through KSP_PCApply(), which projects it out of z and q, so z stays clear of it. */
static PetscErrorCode KSPPIPECGFUSEDPCKind_Private(KSP ksp, const GSKSPOperators *o, GSKSPPC *pc)
{
  const PetscBool pbjacobi = (PetscBool)(o->pc == GS_PC_PBJACOBI && o->size == 1 && o->bs <= PCGF_MAX_BS);
  MatNullSpace    nsp;

  PetscFunctionBegin;
  PetscCall(MatGetNullSpace(o->Amat, &nsp));
  if (nsp)
    *pc = GS_PC_APPLY;
  else if (o->pc == GS_PC_JACOBI || (pbjacobi && o->bs == 1))
    *pc = GS_PC_JACOBI;
  else if (pbjacobi)
    *pc = GS_PC_PBJACOBI;
  else
    *pc = o->pc == GS_PC_NONE ? GS_PC_NONE : GS_PC_APPLY;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a solve runs ahead with device scalars (KSPPIPECGFUSEDSolveAhead_Private()), given the resident device
   matrix dA (NULL: none) */
static PetscBool KSPPIPECGFUSEDAhead_Private(KSP_PIPECGFUSED *cg, PetscMPIInt size, GSDeviceMat dA, GSKSPPC pc)
{
  return (PetscBool)(cg->devscalars && size == 1 && dA && (pc == GS_PC_NONE || pc == GS_PC_JACOBI) && !cg->replace_every && !cg->replace_auto);
}

/* Whether a solve that runs ahead takes one kernel an iteration for n local rows */
static PetscBool KSPPIPECGFUSEDStepped_Private(KSP_PIPECGFUSED *cg, PetscInt n)
{
  return (PetscBool)(cg->onekernel == 1 || (cg->onekernel == 2 && n <= PCGF_ONE_KERNEL_ROWS));
}

/* Every device allocation of a solve with n local unknowns: the device copy of a gpustream operator (*dA NULL when it
   streams), the work vectors, and what the solve's path needs (device scalars, one kernel an iteration, the
   overlapped variant's vectors, the norms of automatic replacement). KSPSetUp() makes them, so that a failed
   allocation surfaces there, before KSPSolve() locks b (PETSc keeps that lock when a solver fails inside); KSPSolve()
   calls it again, which allocates only what changed since. KSPMatSolve() solves in its own block work. */
static PetscErrorCode KSPPIPECGFUSEDAllocate_Private(KSP ksp, GSKSPOperators *o)
{
  KSP_PIPECGFUSED *cg   = (KSP_PIPECGFUSED *)ksp->data;
  MPI_Comm         comm = PetscObjectComm((PetscObject)ksp);
  PetscBool        ahead, overlap = (PetscBool)(KSPPIPECGFUSEDOverlaps_Private(cg, o->size) && !cg->replace_every && !cg->replace_auto);
  GSKSPPC          pc = GS_PC_NONE;

  PetscFunctionBegin;
  PetscCall(KSPPIPECGFUSEDPCKind_Private(ksp, o, &pc));
  if (GSKSPWorkStale(ksp, o->n, pc, pc == GS_PC_PBJACOBI ? o->bs : 1, PETSC_FALSE)) {
    PetscCall(PCGFWorkDestroy(&cg->work));
    PetscCall(GSAllOK(comm, PCGFWorkCreate(o->n, pc, &cg->work))); /* may fail on one process */
    PetscCall(GSKSPSetWork(ksp, PCGFWorkBase(cg->work), o->n, pc, pc == GS_PC_PBJACOBI ? o->bs : 1));
  }
  ahead = KSPPIPECGFUSEDAhead_Private(cg, o->size, o->dA, pc);
  PetscCall(GSAllOK(comm, PCGFWorkReserve(cg->work, o->bs, (PetscBool)(cg->replace_auto && !KSPPIPECGFUSEDOverlaps_Private(cg, o->size)), ahead, (PetscBool)(ahead && KSPPIPECGFUSEDStepped_Private(cg, o->n)), overlap)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's own part of KSPReset() (GSKSPReset() resets the base after it) */
static PetscErrorCode KSPReset_PIPECGFUSED(KSP ksp)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PCGFWorkDestroy(&cg->work));
  PetscCall(PCGFBlockDestroy(&cg->block));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The norm the KSP tests, of the true residual b - A x, on the host */
static PetscErrorCode KSPPIPECGFUSEDTrueNorm_Private(KSP ksp, Mat Amat, PetscReal *norm)
{
  Vec         R = ksp->work[0], Z = ksp->work[1];
  PetscScalar rz;

  PetscFunctionBegin;
  PetscCall(KSP_MatMult(ksp, Amat, ksp->vec_sol, R));
  PetscCall(VecAYPX(R, -1.0, ksp->vec_rhs));
  switch (ksp->normtype) {
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(R, NORM_2, norm));
    break;
  case KSP_NORM_PRECONDITIONED:
    PetscCall(PCApply(ksp->pc, R, Z));
    PetscCall(VecNorm(Z, NORM_2, norm));
    break;
  default: /* natural */
    PetscCall(PCApply(ksp->pc, R, Z));
    PetscCall(VecDot(R, Z, &rz));
    *norm = PetscSqrtReal(PetscAbsScalar(rz));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Automatic residual replacement (-ksp_pipecgfused_replace auto), after van der Vorst and Ye (SISC 22(5), 2000)
   and Cools et al. (SIMAX 39(1), 2018) whose estimates KSPPIPECGRR implements. In Rupp et al.'s recurrences only x
   and r are updated by recurrence (w = A p is recomputed every iteration), so the gap f_k = b - A x_k - r_k grows by
   the rounding of x_k = x_{k-1} + alpha p_{k-1}, of r_k = r_{k-1} - alpha w_{k-1} and of the SpMV w_{k-1} = fl(A p_{k-1})
   and nothing amplifies it:
     ||f_k|| <= d_k = d_{k-1} + eps (||A|| (||x_{k-1}|| + (2 + nz) |alpha| ||p_{k-1}||) + ||r_{k-1}|| + 2 |alpha| ||w_{k-1}||)
   with ||A|| = ||A||_inf (bounds ||A||_2 and || |A| ||_2 for a symmetric A) and nz the nonzeros per row. After a
   replacement at x, d restarts from d0 = eps (nz ||A|| ||x|| + ||b||), the rounding of b - A x itself. The norms
   come from the Update's own reduction. r is replaced when d exceeds sqrt(eps) ||r_k|| (the recursive residual may
   then no longer tell the true one within sqrt(eps) relative) and 1.1 d0, and ||r_k|| has dropped by sqrt(eps)
   since r was last replaced (or since r_0). The last condition stands for van der Vorst and Ye's "d crosses
   sqrt(eps) ||r|| from below": this norm-wise bound is so pessimistic (1e8 times the true gap on the jump problem
   of the tests, where ||A|| ||x|| is 1e10 ||b||) that it is above sqrt(eps) ||r|| from the first iterations, and
   after a reset it crosses again within a few, which replaced r dozens of times per solve. A convergence
   that the recursive residual claims without a replacement since is checked against the true residual (as the
   check at convergence would anyway); a refuted claim replaces r and restarts (p = z: the true r then differs from
   the recursive one by more than r itself, and keeping the old direction stalls CG for thousands of iterations on
   the jump problem of the tests), unless the true residual did not
   halve since the previous refuted claim: the tolerance is then below the attainable accuracy, and the solve stops
   with KSP_DIVERGED_BREAKDOWN and says so under -ksp_converged_reason. */
typedef struct {
  PetscReal anorm, nz, nb, d, d0, rprev, rlast, tnprev;
  PetscBool anormest; /* no MatNorm() on the operator: ||A|| >= max ||w|| / ||p|| seen so far */
} PCGFAuto;

static PetscErrorCode KSPPIPECGFUSEDAutoInit_Private(KSP ksp, Mat Amat, PCGFAuto *e)
{
  PetscBool has;
  PetscReal nx = 0;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(e, sizeof(*e)));
  PetscCall(MatHasOperation(Amat, MATOP_NORM, &has));
  if (has) PetscCall(MatNorm(Amat, NORM_INFINITY, &e->anorm));
  e->anormest = (PetscBool)!has;
  e->nz       = 1;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)Amat, &has, MATGPUSTREAM, MATSEQAIJ, MATMPIAIJ, ""));
  if (has) { /* their nonzero count, else 1 */
    MatInfo  info;
    PetscInt N;
    PetscCall(MatGetInfo(Amat, MAT_GLOBAL_SUM, &info));
    PetscCall(MatGetSize(Amat, &N, NULL));
    if (N) e->nz = PetscMax(1, PetscCeilReal(info.nz_used / N));
  }
  PetscCall(VecNorm(ksp->vec_rhs, NORM_2, &e->nb));
  if (!ksp->guess_zero) PetscCall(VecNorm(ksp->vec_sol, NORM_2, &nx));
  e->d0 = e->d = PETSC_MACHINE_EPSILON * (e->nz * e->anorm * nx + e->nb);
  e->tnprev    = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a replacement, with the x it was computed from on the host */
static PetscErrorCode KSPPIPECGFUSEDAutoReset_Private(PCGFAuto *e, Vec X)
{
  PetscReal nx;

  PetscFunctionBegin;
  PetscCall(VecNorm(X, NORM_2, &nx));
  e->d0 = e->d = PETSC_MACHINE_EPSILON * (e->nz * e->anorm * nx + e->nb);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The iteration's estimate from its reduced sums (alpha: the step that made x_k and r_k); true: replace next */
static PetscBool KSPPIPECGFUSEDAutoUpdate_Private(PCGFAuto *e, PetscInt k, PetscBool replaced, PetscScalar alpha, const PetscScalar s[])
{
  const PetscReal rn = PetscSqrtReal(PetscAbsReal(s[PCGF_RR])), pn = PetscSqrtReal(PetscAbsReal(s[PCGF_PP])), wn = PetscSqrtReal(PetscAbsReal(s[PCGF_WW]));
  const PetscReal xn = PetscSqrtReal(PetscAbsReal(s[PCGF_XX])), a = PetscAbsScalar(alpha), tol = PETSC_SQRT_MACHINE_EPSILON;
  PetscBool       cross;

  if (e->anormest && pn > 0) e->anorm = PetscMax(e->anorm, wn / pn);
  if (k > 0 && !replaced) e->d += PETSC_MACHINE_EPSILON * (e->anorm * (xn + (2 + e->nz) * a * pn) + e->rprev + 2 * a * wn);
  if (k == 0 || replaced) e->rlast = rn;
  cross    = (PetscBool)(k > 0 && !replaced && e->d > tol * rn && e->d > 1.1 * e->d0 && rn <= tol * e->rlast);
  e->rprev = rn;
  return cross;
}

/* The recursive residual claims convergence at iteration k: the true residual confirms it, or r is replaced next
   iteration, or the solve stops at the attainable accuracy */
static PetscErrorCode KSPPIPECGFUSEDAutoCheck_Private(KSP ksp, Mat Amat, PCGFAuto *e, PetscInt k, PetscBool *replace)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  PetscReal        tn;

  PetscFunctionBegin;
  if (ksp->normtype == KSP_NORM_NONE) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSWorkStore(PCGFWorkBase(cg->work), PCGF_X, ksp->vec_sol));
  PetscCall(KSPPIPECGFUSEDTrueNorm_Private(ksp, Amat, &tn));
  ksp->reason = KSP_CONVERGED_ITERATING;
  PetscCall((*ksp->converged)(ksp, k, tn, &ksp->reason, ksp->cnvP));
  if (ksp->reason > 0) {
    cg->base.gap.truenorm = tn; /* the check at convergence, done */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  cg->refuted++;
  PetscCall(PetscInfo(ksp, "iteration %" PetscInt_FMT ": convergence claimed with the true residual norm %g\n", k, (double)tn));
  if (e->tnprev >= 0 && tn > 0.5 * e->tnprev) {
    ksp->reason          = KSP_DIVERGED_BREAKDOWN;
    cg->base.gap.stalled = tn;
  } else if (!ksp->reason) {
    e->tnprev = tn;
    *replace  = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the iteration loop (base.passes of them): its counts, x back to the host, the true residual check */
static PetscErrorCode KSPPIPECGFUSEDFinish_Private(KSP ksp, Mat Amat)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventEnd(PCGF_Iterations, ksp, 0, 0, 0));
  PetscCall(GSKSPIterationsEnd(ksp, cg->base.passes));
  PetscCall(GSKSPSolveEnd(ksp, PETSC_TRUE));
  if (cg->base.gap.check && ksp->reason > 0 && ksp->normtype != KSP_NORM_NONE && cg->base.gap.truenorm < 0) PetscCall(KSPPIPECGFUSEDTrueNorm_Private(ksp, Amat, &cg->base.gap.truenorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ghysels and Vanroose's pipelined CG (the recurrences of KSPPIPECG) with all vector updates in one kernel: the sums
   of an iteration travel in one MPI_Iallreduce while m = M^{-1} w and n = A m are computed */
/* The set-up (r, u, w, m, n on the host, then loaded) is left out of the iterations' counts (GSKSPIterationsBegin())
   and of the iterations event, as in the default loop */
static PetscErrorCode KSPPIPECGFUSEDSolveOverlap_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo)
{
  KSP_PIPECGFUSED *cg   = (KSP_PIPECGFUSED *)ksp->data;
  MPI_Comm         comm = PetscObjectComm((PetscObject)ksp);
  Vec              X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[0], U = ksp->work[1], W = ksp->work[2], M = ksp->work[3], N = ksp->work[4];
  PetscScalar      s[PCGF_NSUMS], gamma, delta, gammaold = 1, alpha = 0, alphaold = 1, beta, den, denold = 1;
  PetscReal        dp;
  PetscInt         i;

  PetscFunctionBegin;
  PetscCall(PCGFWorkSetOverlap(cg->work));
  /* r = b - A x, u = M^{-1} r, w = A u, their sums, m = M^{-1} w and n = A m on the host, once */
  PetscCall(GSKSPHostResidual(ksp, Amat, X, B, R));
  PetscCall(KSP_PCApply(ksp, R, U));
  PetscCall(KSP_MatMult(ksp, Amat, U, W));
  PetscCall(VecDot(R, U, &gamma));
  PetscCall(VecDot(W, U, &delta));
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    PetscCall(VecNorm(U, NORM_2, &dp));
    break;
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(R, NORM_2, &dp));
    break;
  case KSP_NORM_NATURAL:
    dp = PetscSqrtReal(PetscAbsScalar(gamma));
    break;
  default:
    dp = 0.0;
  }
  ksp->its   = 0;
  ksp->rnorm = dp;
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, 0, dp));
  PetscCall((*ksp->converged)(ksp, 0, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) { /* no iteration: an empty event, which the caller ends */
    PetscCall(GSKSPIterationsBegin(ksp));
    PetscCall(PetscLogEventBegin(PCGF_Iterations, ksp, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(KSP_PCApply(ksp, W, M));
  PetscCall(KSP_MatMult(ksp, Amat, M, N));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_X, X));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_R, R));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_U, U));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_W, W));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_M, M));
  PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_N, N));
  for (PCGFVec v = PCGF_Z; v <= PCGF_S; v = (PCGFVec)(v + 1))
    if (v == PCGF_Z || v == PCGF_Q || v == PCGF_S) PetscCall(GSWorkSetVec(PCGFWorkBase(cg->work), v, NULL));
  PetscCall(GSWorkSetVec(PCGFWorkBase(cg->work), PCGF_P, NULL));
  cg->base.solving = PETSC_TRUE;
  PetscCall(GSKSPIterationsBegin(ksp));
  PetscCall(PetscLogEventBegin(PCGF_Iterations, ksp, 0, 0, 0));

  for (i = 0;; i++) {
    if (i > 0) {
      dp         = ksp->normtype == KSP_NORM_NATURAL ? PetscSqrtReal(PetscAbsScalar(gamma)) : (ksp->normtype == KSP_NORM_NONE ? 0.0 : PetscSqrtReal(PetscAbsReal(s[PCGF_NRM])));
      ksp->its   = i;
      ksp->rnorm = dp;
      PetscCall(KSPLogResidualHistory(ksp, dp));
      PetscCall(KSPMonitor(ksp, i, dp));
      PetscCall((*ksp->converged)(ksp, i, dp, &ksp->reason, ksp->cnvP));
      if (ksp->reason) break;
    }
    if (PetscIsInfOrNanScalar(gamma) || PetscIsInfOrNanScalar(delta)) {
      ksp->reason = KSP_DIVERGED_NANORINF;
      break;
    }
    if (i == ksp->max_it) {
      ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    if (gamma == 0.0) { /* exactly zero residual */
      ksp->reason = KSP_CONVERGED_ATOL;
      break;
    }
    if (i > 0 && KSPPIPECGFUSEDSignChange_Private(gamma, gammaold)) {
      ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
      break;
    }
    beta = i ? gamma / gammaold : 0.0;
    den  = i ? delta - beta / alphaold * gamma : delta; /* <p, A p> */
    if (den == 0.0 || (i > 0 && KSPPIPECGFUSEDSignChange_Private(den, denold))) {
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
      break;
    }
    denold = den;
    alpha  = gamma / den;
    PetscCall(PCGFOverlapUpdate(cg->work, alpha, beta, ksp->normtype));
    PetscCall(PCGFReduce(cg->work, s));
    {
      MPI_Request req = MPI_REQUEST_NULL;
      if (cg->base.size > 1) {
        PetscCallMPI(MPI_Iallreduce(MPI_IN_PLACE, s, PCGF_NSUMS, MPIU_SCALAR, MPIU_SUM, comm, &req));
        cg->base.allreduces++;
      }
      if (cg->base.pc == GS_PC_APPLY) { /* m = M^{-1} w on the host */
        PetscCall(GSWorkStore(PCGFWorkBase(cg->work), PCGF_W, W));
        PetscCall(KSP_PCApply(ksp, W, M));
        PetscCall(GSWorkLoad(PCGFWorkBase(cg->work), PCGF_M, M));
      }
      if (dA)
        PetscCall(PCGFSpMVN(cg->work, dA, dB, halo));
      else
        PetscCall(GSKSPHostMult(ksp, Amat, PCGF_M, M, PCGF_N, N));
      PetscCallMPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    gammaold = gamma;
    alphaold = alpha;
    gamma    = s[PCGF_RZ];
    delta    = s[PCGF_PW];
  }
  cg->base.passes = i + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The monitored norm from an iteration's sums */
static PetscReal KSPPIPECGFUSEDNorm_Private(KSPNormType normtype, const PetscScalar s[])
{
  switch (normtype) {
  case KSP_NORM_PRECONDITIONED:
  case KSP_NORM_UNPRECONDITIONED:
    return PetscSqrtReal(PetscAbsReal(s[PCGF_NRM]));
  case KSP_NORM_NATURAL:
    return PetscSqrtReal(PetscAbsReal(s[PCGF_RZ]));
  default:
    return 0.0;
  }
}

/* Iteration k's norm from its sums, to the history, the monitors and the convergence test; NaN or Inf in <r,z> stops */
static PetscErrorCode KSPPIPECGFUSEDTest_Private(KSP ksp, PetscInt k, const PetscScalar s[])
{
  PetscFunctionBegin;
  ksp->its   = k;
  ksp->rnorm = KSPPIPECGFUSEDNorm_Private(ksp->normtype, s);
  PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
  PetscCall(KSPMonitor(ksp, k, ksp->rnorm));
  PetscCall((*ksp->converged)(ksp, k, ksp->rnorm, &ksp->reason, ksp->cnvP));
  if (!ksp->reason && PetscIsInfOrNanScalar(s[PCGF_RZ])) ksp->reason = KSP_DIVERGED_NANORINF;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reasons to stop that the sums of iteration k give once the convergence test has passed over them; prev: the
   sums of iteration k-1 (k > 0). As KSPCG: <r,z> changing sign is an indefinite PC, <p,Ap> changing sign or 0 an
   indefinite operator */
static void KSPPIPECGFUSEDBreakdown_Private(KSP ksp, PetscInt k, const PetscScalar s[], const PetscScalar prev[])
{
  if (k == ksp->max_it)
    ksp->reason = KSP_DIVERGED_ITS;
  else if (s[PCGF_RZ] == 0.0)
    ksp->reason = KSP_CONVERGED_ATOL; /* exactly zero residual */
  else if (k > 0 && KSPPIPECGFUSEDSignChange_Private(s[PCGF_RZ], prev[PCGF_RZ]))
    ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
  else if (PetscIsInfOrNanScalar(s[PCGF_PW]) || PetscIsInfOrNanScalar(s[PCGF_WDW]))
    ksp->reason = KSP_DIVERGED_NANORINF;
  else if (s[PCGF_PW] == 0.0 || (k > 0 && KSPPIPECGFUSEDSignChange_Private(s[PCGF_PW], prev[PCGF_PW])))
    ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
}

/* Queues iteration k of the device-scalar loop: Update and SpMV (one kernel with -ksp_pipecgfused_one_kernel, else
   two), their sums to slot k % 2; the Update alone for k = max_it, after which no SpMV is needed */
static PetscErrorCode KSPPIPECGFUSEDIterate_Private(KSP ksp, GSDeviceMat dA, PetscInt k)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;

  PetscFunctionBegin;
  if (k < ksp->max_it && cg->stepped)
    PetscCall(PCGFStep(cg->work, dA, ksp->normtype, k % 2));
  else {
    PetscCall(PCGFUpdateDevice(cg->work, ksp->normtype));
    if (k < ksp->max_it) PetscCall(PCGFSpMVDotFinal(cg->work, dA, k % 2));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One process, a resident gpustream matrix, PCNONE or PCJACOBI: alpha and beta stay on the device, so iteration k+1
   is queued before the host reads iteration k's sums, and the device never waits for the host's convergence test.
   Iteration k+1, begun when k turns out to be the last, is dropped (x_k is kept in the other x buffer). */
static PetscErrorCode KSPPIPECGFUSEDSolveAhead_Private(KSP ksp, GSDeviceMat dA)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  PetscScalar      s[PCGF_NSUMS], prev[PCGF_NSUMS];
  PetscInt         k, l0, t0, c0, l1;

  PetscFunctionBegin;
  PetscCall(PCGFWorkSetDeviceScalars(cg->work));
  cg->stepped = KSPPIPECGFUSEDStepped_Private(cg, cg->base.n);
  if (cg->stepped) PetscCall(PCGFWorkSetStep(cg->work));
  PetscCall(KSPPIPECGFUSEDIterate_Private(ksp, dA, 0));
  for (k = 0;; k++) {
    PetscCall(GSWorkGetCounts(PCGFWorkBase(cg->work), &l0, &t0, &c0));
    cg->ahead  = (PetscBool)(k < ksp->max_it);
    cg->base.x = cg->ahead ? PCGF_XPREV : PCGF_X;
    if (cg->ahead) PetscCall(KSPPIPECGFUSEDIterate_Private(ksp, dA, k + 1));
    if (k < ksp->max_it)
      PetscCall(PCGFReduceSlot(cg->work, k % 2, s));
    else
      PetscCall(PCGFReduce(cg->work, s)); /* the last Update has no SpMVDot after it */
    PetscCall(KSPPIPECGFUSEDTest_Private(ksp, k, s));
    if (!ksp->reason) KSPPIPECGFUSEDBreakdown_Private(ksp, k, s, prev);
    if (ksp->reason) break;
    PetscCall(PetscArraycpy(prev, s, PCGF_NSUMS));
  }
  if (cg->ahead) { /* drop iteration k+1 */
    PetscCall(PCGFWorkRevertX(cg->work));
    PetscCall(GSWorkGetCounts(PCGFWorkBase(cg->work), &l1, &t0, &c0));
    cg->base.discarded = l1 - l0;
    cg->ahead          = PETSC_FALSE;
    cg->base.x         = PCGF_X;
  }
  cg->base.passes = k + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x on the host, once; then everything moves to the device. x is written back at the end, so a zero x0
   is never set on the PETSc vector. */
static PetscErrorCode KSPPIPECGFUSEDStart_Private(KSP ksp, Mat Amat, PCGFAuto *est)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  GSWork           W  = PCGFWorkBase(cg->work);
  Vec              B = ksp->vec_rhs, R = ksp->work[0], Q = ksp->work[2];

  PetscFunctionBegin;
  PetscCall(GSKSPLoadResidual(ksp, Amat, PCGF_R, PCGF_X, R));
  if (cg->base.pc == GS_PC_APPLY) { /* z = M^{-1} r; its recurrence then needs q = M^{-1} w every iteration */
    PetscCall(KSP_PCApply(ksp, ksp->guess_zero ? B : R, Q));
    PetscCall(GSWorkLoad(W, PCGF_Z, Q));
    PetscCall(GSWorkSetVec(W, PCGF_Q, NULL));
  }
  PetscCall(GSWorkSetVec(W, PCGF_P, NULL));
  PetscCall(GSWorkSetVec(W, PCGF_W, NULL));
  PetscCall(PCGFWorkSetNorms(cg->work, cg->replace_auto));
  if (cg->replace_auto) PetscCall(KSPPIPECGFUSEDAutoInit_Private(ksp, Amat, est));
  cg->base.solving = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Residual replacement at iteration k: x_k first (with the last alpha), then r_k = b - A x_k, then p_k = z_k + beta
   p_{k-1} with the classical beta = <r_k,z_k> / <r_{k-1},z_{k-1}> (rzold; 0 to restart): the recurrence for beta
   assumes r_k = r_{k-1} - alpha w_{k-1}, which the replacement breaks by as much as r_k itself late in the solve */
static PetscErrorCode KSPPIPECGFUSEDReplace_Private(KSP ksp, Mat Amat, PetscScalar alpha, PetscScalar rzold, PetscBool restart, PCGFAuto *est)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  GSWork           W  = PCGFWorkBase(cg->work);
  Vec              X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[0], Q = ksp->work[2];
  PetscScalar      s[PCGF_NALL];

  PetscFunctionBegin;
  PetscCall(PCGFUpdateX(cg->work, alpha));
  PetscCall(GSWorkStore(W, PCGF_X, X));
  PetscCall(KSP_MatMult(ksp, Amat, X, R));
  PetscCall(VecAYPX(R, -1.0, B));
  PetscCall(GSWorkLoad(W, PCGF_R, R));
  if (cg->base.pc == GS_PC_APPLY) {
    PetscCall(KSP_PCApply(ksp, R, Q));
    PetscCall(GSWorkLoad(W, PCGF_Z, Q));
  }
  PetscCall(PCGFSums(cg->work, KSP_NORM_NONE));
  PetscCall(PCGFReduce(cg->work, s));
  if (cg->base.size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, PCGF_NSUMS, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
  PetscCall(PCGFUpdate(cg->work, 0.0, restart ? 0.0 : s[PCGF_RZ] / rzold, ksp->normtype));
  if (cg->replace_auto) PetscCall(KSPPIPECGFUSEDAutoReset_Private(est, X));
  cg->replacements++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* w = A p and the SpMV stage's sums: fused on the device (dA), else through MatMult() on the host; with a PC applied
   on the host, q = M^{-1} w there too, and the sums from w and q */
static PetscErrorCode KSPPIPECGFUSEDSpMVStage_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  GSWork           Wk = PCGFWorkBase(cg->work);
  /* P (host staging of p) shares its work vector with R, which the stage never needs */
  Vec P = ksp->work[0], W = ksp->work[1], Q = ksp->work[2];

  PetscFunctionBegin;
  if (dA)
    PetscCall(PCGFSpMVDot(cg->work, dA, dB, halo));
  else
    PetscCall(GSKSPHostMult(ksp, Amat, PCGF_P, P, PCGF_W, W));
  if (cg->base.pc == GS_PC_APPLY) { /* q = M^{-1} w on the host */
    if (dA) PetscCall(GSWorkStore(Wk, PCGF_W, W));
    PetscCall(KSP_PCApply(ksp, W, Q));
    PetscCall(GSWorkLoad(Wk, PCGF_Q, Q));
  }
  if (!dA || cg->base.pc == GS_PC_APPLY) PetscCall(PCGFDot(cg->work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_PIPECGFUSED(KSP ksp)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  GSKSPOperators   o;
  PetscScalar      s[PCGF_NALL], prev[PCGF_NSUMS], alpha = 0, beta = 0, rzold = 1;
  PetscInt         k, nsums = cg->replace_auto ? PCGF_NALL : PCGF_NSUMS;
  PCGFAuto         est;
  PetscBool        replace = PETSC_FALSE, restart = PETSC_FALSE, replaced;

  PetscFunctionBegin;
  PetscCall(GSKSPSolveBegin(ksp, &o));
  cg->fusedspmv         = (PetscBool)(o.dA != NULL); /* a streamed matrix has no whole device CSR: MatMult() */
  cg->replacements      = 0;
  cg->refuted           = 0;
  cg->base.gap.truenorm = -1;
  cg->base.gap.stalled  = -1;
  if (cg->overlap) {
    const char *pre = GSPrefix((PetscObject)ksp);
    PetscCheck(!cg->replace_every, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "-%sksp_pipecgfused_replace_every needs -%sksp_pipecgfused_overlap_reduction 0", pre, pre);
    PetscCheck(!cg->replace_auto, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "-%sksp_pipecgfused_replace auto needs -%sksp_pipecgfused_overlap_reduction 0", pre, pre);
  }
  if (KSPPIPECGFUSEDOverlaps_Private(cg, o.size)) {
    PetscCall(KSPPIPECGFUSEDSolveOverlap_Private(ksp, o.Amat, o.dA, o.dB, o.halo));
    PetscCall(KSPPIPECGFUSEDFinish_Private(ksp, o.Amat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(KSPPIPECGFUSEDStart_Private(ksp, o.Amat, &est));
  PetscCall(GSKSPIterationsBegin(ksp));
  PetscCall(PetscLogEventBegin(PCGF_Iterations, ksp, 0, 0, 0));
  ksp->its     = 0;
  cg->ranahead = KSPPIPECGFUSEDAhead_Private(cg, cg->base.size, o.dA, cg->base.pc);
  if (cg->ranahead) {
    PetscCall(KSPPIPECGFUSEDSolveAhead_Private(ksp, o.dA));
    PetscCall(KSPPIPECGFUSEDFinish_Private(ksp, o.Amat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (k = 0;; k++) {
    /* Update makes x_k, r_k, p_k; SpMVDot makes w_k = A p_k, unless no iteration can follow */
    replaced = (PetscBool)(replace || (cg->replace_every && k > 0 && k % cg->replace_every == 0));
    replace  = PETSC_FALSE;
    if (replaced) {
      PetscCall(KSPPIPECGFUSEDReplace_Private(ksp, o.Amat, alpha, rzold, restart, &est));
      restart = PETSC_FALSE;
    } else
      PetscCall(PCGFUpdate(cg->work, alpha, beta, ksp->normtype));
    if (k < ksp->max_it) PetscCall(KSPPIPECGFUSEDSpMVStage_Private(ksp, o.Amat, o.dA, o.dB, o.halo));
    PetscCall(PCGFReduce(cg->work, s));
    if (cg->base.size > 1) { /* the iteration's only global synchronization: every sum in one message */
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, (PetscMPIInt)nsums, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
      cg->base.allreduces++;
    }
    if (cg->replace_auto) replace = KSPPIPECGFUSEDAutoUpdate_Private(&est, k, replaced, alpha, s);

    PetscCall(KSPPIPECGFUSEDTest_Private(ksp, k, s));
    if (ksp->reason > 0 && cg->replace_auto && !replaced) PetscCall(KSPPIPECGFUSEDAutoCheck_Private(ksp, o.Amat, &est, k, &replace));
    restart = replace;
    if (!ksp->reason) KSPPIPECGFUSEDBreakdown_Private(ksp, k, s, prev);
    if (ksp->reason) break;
    PetscCall(PetscArraycpy(prev, s, PCGF_NSUMS));
    rzold = s[PCGF_RZ];
    alpha = s[PCGF_RZ] / s[PCGF_PW];
    beta  = alpha * alpha * s[PCGF_WDW] / s[PCGF_RZ] - 1.0;
  }
  cg->base.passes = k + 1;
  PetscCall(KSPPIPECGFUSEDFinish_Private(ksp, o.Amat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPMatSolve column by column (one KSPSolve() each): the KSP reports the slowest column, or the first that failed,
   as the block kernels do */
static PetscErrorCode KSPPIPECGFUSEDMatSolveColumns_Private(KSP ksp, Mat B, Mat X, PetscInt k)
{
  PetscInt           maxits = 0;
  KSPConvergedReason worst  = KSP_CONVERGED_ITERATING;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    Vec b, x;
    PetscCall(MatDenseGetColumnVecRead(B, j, &b));
    PetscCall(MatDenseGetColumnVecWrite(X, j, &x));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(MatDenseRestoreColumnVecWrite(X, j, &x));
    PetscCall(MatDenseRestoreColumnVecRead(B, j, &b));
    if (worst >= 0 && (ksp->reason < 0 || ksp->its >= maxits)) worst = ksp->reason;
    maxits = PetscMax(maxits, ksp->its);
  }
  if (k) {
    ksp->its    = maxits;
    ksp->reason = worst;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The block work for n rows, k columns and the PC pc (kept from the last KSPMatSolve of the same sizes), D^{-1}, and
   R = B - A X on the host (X = 0 unless the guess is nonzero); then everything on the device. With a PC applied on the
   host, Z = M^{-1} R, and the host blocks Wh and Qh of W and Q = M^{-1} W. */
static PetscErrorCode KSPPIPECGFUSEDMatSolveStart_Private(KSP ksp, Mat Amat, Mat B, Mat X, PetscInt n, PetscInt k, GSKSPPC pc, Mat *Wh, Mat *Qh)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  Mat              R  = NULL; /* B - A X for a nonzero guess */
  GSWork           W;

  PetscFunctionBegin;
  if (cg->block && (cg->blockn != n || cg->blockk != k || cg->blockpc != pc)) PetscCall(PCGFBlockDestroy(&cg->block));
  if (!cg->block) {
    PetscCall(PCGFBlockCreate(n, k, pc, &cg->block));
    cg->blockn  = n;
    cg->blockk  = k;
    cg->blockpc = pc;
  }
  W = PCGFBlockBase(cg->block);
  if (pc == GS_PC_JACOBI) {
    PetscScalar *d;
    PetscCall(GSPCGetInverseBlocks(ksp->pc, 1, ksp->work[0], ksp->work[1], &d));
    PetscCall(GSWorkSetVec(W, PCGF_DINV, d));
    PetscCall(PetscFree(d));
  }
  if (ksp->guess_zero)
    PetscCall(MatZeroEntries(X));
  else {
    PetscCall(MatMatMult(Amat, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
    PetscCall(MatAYPX(R, -1.0, B, SAME_NONZERO_PATTERN));
  }
  PetscCall(GSWorkTransferDense(W, PCGF_R, R ? R : B, PETSC_TRUE));
  PetscCall(GSWorkTransferDense(W, PCGF_X, X, PETSC_TRUE));
  if (pc == GS_PC_APPLY) { /* Z = M^{-1} R; its recurrence then needs Q = M^{-1} W every iteration */
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, Wh));
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, Qh));
    PetscCall(PCMatApply(ksp->pc, R ? R : B, *Qh));
    PetscCall(GSWorkTransferDense(W, PCGF_Z, *Qh, PETSC_TRUE));
    PetscCall(GSWorkSetVec(W, PCGF_Q, NULL));
  }
  PetscCall(MatDestroy(&R));
  PetscCall(GSWorkSetVec(W, PCGF_P, NULL));
  PetscCall(GSWorkSetVec(W, PCGF_W, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Iteration it of the block solve from every column's sums: which columns are done (their norm meets the
   tolerances; dp0: the norms of iteration 0), the largest norm to the history and the monitors, and a reason to stop
   (NaN or Inf, all done, the iteration limit) */
static PetscErrorCode KSPPIPECGFUSEDBlockTest_Private(KSP ksp, PetscInt k, PetscInt it, const PetscScalar sums[], PetscReal dp0[], PetscBool done[])
{
  PetscBool all = PETSC_TRUE, nan = PETSC_FALSE;
  PetscReal dpmax = 0;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar *sj = sums + j * PCGF_NSUMS;
    const PetscReal    dp = ksp->normtype == KSP_NORM_NONE ? 0.0 : PetscSqrtReal(PetscAbsReal(PetscRealPart(sj[PCGF_NRM])));
    if (PetscIsInfOrNanScalar(sj[PCGF_RZ]) || PetscIsInfOrNanScalar(sj[PCGF_NRM])) nan = PETSC_TRUE;
    if (it == 0) dp0[j] = dp;
    if (!done[j] && ksp->normtype != KSP_NORM_NONE && (dp <= PetscMax(ksp->rtol * dp0[j], ksp->abstol) || sj[PCGF_RZ] == 0.0)) done[j] = PETSC_TRUE;
    all   = (PetscBool)(all && done[j]);
    dpmax = PetscMax(dpmax, dp);
  }
  ksp->its   = it;
  ksp->rnorm = dpmax;
  PetscCall(KSPLogResidualHistory(ksp, dpmax));
  PetscCall(KSPMonitor(ksp, it, dpmax)); /* before the reason is set, as in the single solves */
  if (nan)
    ksp->reason = KSP_DIVERGED_NANORINF;
  else if (all)
    ksp->reason = KSP_CONVERGED_RTOL;
  else if (it == ksp->max_it)
    ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every column's alpha and beta for the next iteration from its sums (prev: those of the iteration before), 0 for the
   columns done; a breakdown of any column stops the solve, as KSPCG's tests */
static void KSPPIPECGFUSEDBlockNext_Private(KSP ksp, PetscInt k, PetscInt it, const PetscScalar sums[], const PetscScalar prev[], const PetscBool done[], PetscScalar alpha[], PetscScalar beta[])
{
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar *sj = sums + j * PCGF_NSUMS;
    if (done[j]) { /* frozen */
      alpha[j] = beta[j] = 0;
      continue;
    }
    if (it > 0 && KSPPIPECGFUSEDSignChange_Private(sj[PCGF_RZ], prev[j * PCGF_NSUMS + PCGF_RZ]))
      ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
    else if (sj[PCGF_PW] == 0.0 || (it > 0 && KSPPIPECGFUSEDSignChange_Private(sj[PCGF_PW], prev[j * PCGF_NSUMS + PCGF_PW])))
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
    else {
      alpha[j] = sj[PCGF_RZ] / sj[PCGF_PW];
      beta[j]  = alpha[j] * alpha[j] * sj[PCGF_WDW] / sj[PCGF_RZ] - 1.0;
    }
  }
}

/* Several right-hand sides: all columns advance together in the block kernels when the operator is a gpustream
   matrix (resident, or streamed: each subdivision then serves every column), with one MPI_Allreduce
   of every column's sums per iteration on several processes; otherwise (and with a null space) one KSPSolve() per
   column. PCNONE and PCJACOBI are fused; any other PC is applied on the host to all columns at once (PCMatApply()),
   with W copied to the host and Q = M^{-1} W back once per iteration, and Z follows its recurrence on the device.
   Column j stops moving (alpha_j = beta_j = 0) once its norm meets the tolerances; the KSP converges when all
   columns have. The monitor sees the largest norm of the columns. */
static PetscErrorCode KSPMatSolve_PIPECGFUSED(KSP ksp, Mat B, Mat X)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  GSKSPOperators   o;
  MatNullSpace     nsp;
  GSStreamPlan     plan = NULL;
  PetscBool        gs;
  GSKSPPC          pc;
  PetscInt         n, k, ldb, ldx, it, l0, t0, c0, l1, t1, c1;
  PCGFBlock        blk;
  Mat              Wh = NULL, Qh = NULL; /* W and Q = M^{-1} W staged on the host */
  PetscScalar     *sums, *alpha, *beta, *prev;
  PetscReal       *dp0;
  PetscBool       *done;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(B, &n, NULL));
  PetscCall(GSKSPGetOperators(ksp, n, &o));
  PetscCall(MatGetNullSpace(o.Amat, &nsp));
  PetscCall(PetscObjectTypeCompare((PetscObject)o.Amat, MATGPUSTREAM, &gs));
  if (gs && !o.dA) PetscCall(MatGPUStreamGetStreamPlan(o.Amat, &plan));
  PetscCall(MatGetSize(B, NULL, &k));
  cg->blockcolumns = k;
  cg->blockfused   = (PetscBool)((o.dA || plan) && !nsp && ksp->normtype != KSP_NORM_NATURAL);
  if (!cg->blockfused) {
    PetscCall(KSPPIPECGFUSEDMatSolveColumns_Private(ksp, B, X, k));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(X, &ldx));
  PetscCheck(ldb == n && ldx == n, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPMatSolve with KSPPIPECGFUSED needs dense matrices without padding (leading dimension %" PetscInt_FMT ")", n);
  pc = o.pc == GS_PC_PBJACOBI ? GS_PC_APPLY : o.pc; /* the block kernels fuse Jacobi alone */
  PetscCall(KSPPIPECGFUSEDMatSolveStart_Private(ksp, o.Amat, B, X, n, k, pc, &Wh, &Qh));
  blk = cg->block;
  PetscCall(PetscMalloc6(k * PCGF_NSUMS, &sums, k * PCGF_NSUMS, &prev, k, &alpha, k, &beta, k, &dp0, k, &done));
  for (PetscInt j = 0; j < k; j++) {
    alpha[j] = beta[j] = 0;
    done[j]            = PETSC_FALSE;
  }
  PetscCall(GSWorkGetCounts(PCGFBlockBase(blk), &l0, &t0, &c0));
  ksp->reason = KSP_CONVERGED_ITERATING;
  PetscCall(PetscLogEventBegin(PCGF_Iterations, ksp, 0, 0, 0));
  for (it = 0;; it++) {
    PetscCall(PCGFBlockUpdate(blk, alpha, beta, ksp->normtype));
    if (it < ksp->max_it) {
      PetscCall(PCGFBlockSpMVDot(blk, o.dA, o.dB, o.halo, plan));
      if (pc == GS_PC_APPLY) { /* Q = M^{-1} W for all columns on the host, frozen ones too (their alpha is 0) */
        PetscCall(GSWorkTransferDense(PCGFBlockBase(blk), PCGF_W, Wh, PETSC_FALSE));
        PetscCall(PCMatApply(ksp->pc, Wh, Qh));
        PetscCall(GSWorkTransferDense(PCGFBlockBase(blk), PCGF_Q, Qh, PETSC_TRUE));
        PetscCall(PCGFBlockDot(blk));
      }
    }
    PetscCall(PCGFBlockReduce(blk, sums));
    if (o.size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, (PetscMPIInt)(k * PCGF_NSUMS), MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
    PetscCall(KSPPIPECGFUSEDBlockTest_Private(ksp, k, it, sums, dp0, done));
    if (ksp->reason) break;
    KSPPIPECGFUSEDBlockNext_Private(ksp, k, it, sums, prev, done, alpha, beta);
    if (ksp->reason) break;
    PetscCall(PetscArraycpy(prev, sums, k * PCGF_NSUMS));
  }
  PetscCall(PetscLogEventEnd(PCGF_Iterations, ksp, 0, 0, 0));
  PetscCall(GSWorkGetCounts(PCGFBlockBase(blk), &l1, &t1, &c1));
  cg->blockpasses    = it + 1;
  cg->blocklaunches  = l1 - l0;
  cg->blocktransfers = t1 - t0;
  cg->blockcopies    = c1 - c0;
  PetscCall(GSWorkTransferDense(PCGFBlockBase(blk), PCGF_X, X, PETSC_FALSE));
  PetscCall(MatDestroy(&Wh));
  PetscCall(MatDestroy(&Qh));
  PetscCall(PetscFree6(sums, prev, alpha, beta, dp0, done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_PIPECGFUSED(KSP ksp, PetscViewer viewer)
{
  KSP_PIPECGFUSED *cg = (KSP_PIPECGFUSED *)ksp->data;
  PetscMPIInt      size;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  fused kernels on Kokkos %s\n", GSExecutionSpace()));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  if (KSPPIPECGFUSEDOverlaps_Private(cg, size))
    PetscCall(PetscViewerASCIIPrintf(viewer, "  Ghysels-Vanroose recurrences: the sums of an iteration in one MPI_Iallreduce overlapping M^{-1} w and the SpMV\n"));
  else if (cg->overlap)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  Rupp et al.'s recurrences: -ksp_pipecgfused_overlap_reduction has no reduction to overlap on one process\n"));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  Rupp et al.'s recurrences: the sums of an iteration in one reduction after the SpMV\n"));
  if (cg->replace_auto)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replacement: automatic, when the estimated gap crosses sqrt(eps) ||r||; convergence claims checked against the true residual\n"));
  else if (cg->replace_every)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replacement every %" PetscInt_FMT " %s\n", cg->replace_every, GSNoun(cg->replace_every, "iteration", "iterations")));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  no residual replacement\n"));
  PetscCall(GSResidualGapView(&cg->base.gap, ksp, viewer));
  if (cg->blockcolumns) {
    if (cg->blockfused) {
      const double l = (double)cg->blocklaunches / (double)cg->blockpasses, t = (double)cg->blocktransfers / (double)cg->blockpasses, c = (double)cg->blockcopies / (double)cg->blockpasses;
      PetscCall(PetscViewerASCIIPrintf(viewer, "  last KSPMatSolve: %" PetscInt_FMT " %s in the block kernels, %" PetscInt_FMT " %s, %.3g %s and %.3g %s per iteration\n", cg->blockcolumns, GSNoun(cg->blockcolumns, "column", "columns together"),
                                       cg->blockpasses - 1, GSNoun(cg->blockpasses - 1, "iteration", "iterations"), l, GSNounReal(l, 3, "kernel launch", "kernel launches"), t,
                                       GSNounReal(t, 3, "device-to-host reduction", "device-to-host reductions")));
      if (cg->blockpc == GS_PC_APPLY) PetscCall(PetscViewerASCIIPrintf(viewer, "  last KSPMatSolve: preconditioner applied on the host to all columns at once (PCMatApply), %.3g %s per iteration\n", c, GSNounReal(c, 3, "block copy", "block copies")));
    } else
      PetscCall(PetscViewerASCIIPrintf(viewer, "  last KSPMatSolve: %" PetscInt_FMT " %s\n", cg->blockcolumns, GSNoun(cg->blockcolumns, "column solved", "columns solved one by one")));
  }
  if (!cg->work) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscLogDouble vbytes, pbytes;
    PetscCall(PCGFWorkGetMemory(cg->work, &vbytes, &pbytes));
    if (cg->base.pc == GS_PC_APPLY)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner applied on the host each iteration (z by recurrence, q = M^{-1} w)\n"));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner fused into the kernels: %s\n", cg->base.pc == GS_PC_JACOBI ? "jacobi" : (cg->base.pc == GS_PC_PBJACOBI ? "point-block jacobi" : "none")));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  device memory: work vectors %.6g MB, reduction buffer %.6g KB\n", vbytes / 1048576.0, pbytes / 1024.0));
  }
  if (cg->base.passes) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  SpMV: %s\n", cg->fusedspmv ? "fused gpustream device kernel" : "MatMult of the operator, vectors staged through the host"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt_FMT " %s, %" PetscInt_FMT " %s and %" PetscInt_FMT " %s in %" PetscInt_FMT " %s (0 to %" PetscInt_FMT ")\n", cg->base.launches,
                                     GSNoun(cg->base.launches, "kernel launch", "kernel launches"), cg->base.transfers, GSNoun(cg->base.transfers, "device-to-host reduction", "device-to-host reductions"), cg->base.copies,
                                     GSNoun(cg->base.copies, "vector copy", "vector copies"), cg->base.passes, GSNoun(cg->base.passes, "iteration", "iterations"), cg->base.passes - 1));
    PetscCall(GSKSPViewCounts(ksp, viewer));
    if (cg->ranahead) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  alpha and beta computed on the device, the host one iteration behind; %" PetscInt_FMT " %s of an iteration begun after the last %s dropped\n", cg->base.discarded,
                                       GSNoun(cg->base.discarded, "launch", "launches"), GSNoun(cg->base.discarded, "was", "were")));
      if (cg->stepped) PetscCall(PetscViewerASCIIPrintf(viewer, "  one kernel per iteration: the Update fused into the SpMV (the new p of each column formed from the old r, w, p)\n"));
    }
    if (cg->replace_every) PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replaced %" PetscInt_FMT " %s in the last solve\n", cg->replacements, GSNoun(cg->replacements, "time", "times")));
    if (cg->replace_auto)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replaced %" PetscInt_FMT " %s in the last solve, %" PetscInt_FMT " of them after a convergence claim the true residual refuted\n", cg->replacements, GSNoun(cg->replacements, "time", "times"),
                                       cg->refuted));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_PIPECGFUSED(KSP ksp, GSOptionItems PetscOptionsObject)
{
  KSP_PIPECGFUSED         *cg      = (KSP_PIPECGFUSED *)ksp->data;
  static const char *const modes[] = {"never", "every", "auto"};
  static const char *const onek[]  = {"never", "always", "auto"};
  PetscInt                 mode    = cg->replace_auto ? 2 : (cg->replace_every ? 1 : 0);
  PetscBool                set, mset;
  const char              *pre = GSPrefix((PetscObject)ksp);

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipecgfused_replace", GS_OPTION_LIST, modes, 3));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipecgfused_replace_every", GS_OPTION_INT, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipecgfused_overlap_reduction", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipecgfused_device_scalars", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipecgfused_one_kernel", GS_OPTION_LIST, onek, 3));
  PetscCall(PetscOptionsEList("-ksp_pipecgfused_replace", "Residual replacement: never, every N iterations (N from -ksp_pipecgfused_replace_every), or auto", "KSPPIPECGFUSED", modes, 3, modes[mode], &mode, &mset));
  PetscCall(GSKSPOptionsIntAtLeast(ksp, PetscOptionsObject, "-ksp_pipecgfused_replace_every", "Replace the recursive residual by b - A x every this many iterations (0: never)", 0, "0 (never) or positive", &cg->replace_every, &set));
  if (set && cg->replace_every) cg->replace_auto = PETSC_FALSE;
  if (mset) {
    GSOptionsCheck(PetscOptionsObject, mode == 1 || !set || !cg->replace_every, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-%sksp_pipecgfused_replace %s contradicts -%sksp_pipecgfused_replace_every %" PetscInt_FMT, pre, modes[mode],
                   pre, cg->replace_every);
    GSOptionsCheck(PetscOptionsObject, mode != 1 || cg->replace_every, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_WRONG, "-%sksp_pipecgfused_replace every needs -%sksp_pipecgfused_replace_every N with N > 0", pre, pre);
    cg->replace_auto = (PetscBool)(mode == 2);
    if (mode != 1) cg->replace_every = 0;
  }
  PetscCall(PetscOptionsBool("-ksp_pipecgfused_overlap_reduction", "Ghysels-Vanroose pipelining: the sums in an MPI_Iallreduce behind the SpMV", "KSPPIPECGFUSED", cg->overlap, &cg->overlap, NULL));
  PetscCall(PetscOptionsBool("-ksp_pipecgfused_device_scalars", "alpha and beta on the device, the host testing convergence one iteration behind (one process, gpustream, PCNONE or PCJACOBI)", "KSPPIPECGFUSED", cg->devscalars, &cg->devscalars, NULL));
  PetscCall(PetscOptionsEList("-ksp_pipecgfused_one_kernel", "With device scalars, the Update fused into the SpMV, one kernel an iteration: never, always, or auto (up to " PetscStringize(PCGF_ONE_KERNEL_ROWS) " local rows)", "KSPPIPECGFUSED", onek,
                              3, onek[cg->onekernel], &cg->onekernel, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   KSPPIPECGFUSED - KSPPIPECGFUSED = "pipecgfused" - Pipelined conjugate gradient with fused GPU kernels.

   An iteration is two Kokkos kernels, the vector updates and the SpMV each with the first stage of their inner
   products, and one device-to-host copy of the partial sums; on one process with a resident `MATGPUSTREAM` operator,
   up to 2e6 local rows, one kernel. The vectors stay on the device from the start of `KSPSolve()` to its end.

   Options Database Keys:
+  -ksp_type pipecgfused - selects this method
.  -ksp_norm_type <preconditioned,unpreconditioned,natural,none> - the norm monitored and tested
.  -ksp_pipecgfused_replace <never,every,auto> - residual replacement: never, every N iterations, or automatic
.  -ksp_pipecgfused_replace_every <0> - replace r by b - A x every N iterations (0: never); alone it selects every
.  -ksp_pipecgfused_overlap_reduction <false> - Ghysels and Vanroose's recurrences, the sums overlapping the SpMV (on several processes)
.  -ksp_pipecgfused_device_scalars <true> - alpha and beta on the device, convergence tested one iteration behind
.  -ksp_pipecgfused_one_kernel <auto,never,always> - with device scalars, the update fused into the SpMV kernel
.  -ksp_pipecgfused_check_true_residual <true> - compute b - A x once at convergence
-  -ksp_pipecgfused_residual_gap_factor <10> - report a true residual this many times the recursive one

   Level: intermediate

   Notes:
   Left preconditioning. `PCNONE`, `PCJACOBI` and, on one process, `PCPBJACOBI` are fused into the kernels; any other
   PC is applied on the host once per iteration. Any other `Mat` than `MATGPUSTREAM` works through `MatMult()`.
   `KSPMatSolve()` advances all columns together. Device scalars, the one-kernel iteration, residual replacement and
   breakdowns are described in README.md.

   References:
+  * - K. Rupp, J. Weinbub, A. Jüngel, T. Grasser, Pipelined iterative solvers with kernel fusion for graphics processing units
.  * - P. Ghysels, W. Vanroose, Hiding global synchronization latency in the preconditioned conjugate gradient algorithm
-  * - S. Cools et al., Analyzing the effect of local rounding error propagation on the maximal attainable accuracy of the pipelined conjugate gradient method

.seealso: `KSPCG`, `KSPPIPECG`, `KSPPIPECGRR`, `MATGPUSTREAM`, `KSPCreate()`, `KSPSetType()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_PIPECGFUSED(KSP ksp)
{
  static const GSKSPOps        ops      = {{"KSPPIPECGFUSED", "KSP pipelined CG with fused kernels options", PC_LEFT, NULL, "pipecgfused", PCGF_X, KSPPIPECGFUSEDAllocate_Private, 5},
                                           {KSPSolve_PIPECGFUSED, KSPView_PIPECGFUSED, KSPSetFromOptions_PIPECGFUSED, KSPReset_PIPECGFUSED, NULL, NULL, KSPMatSolve_PIPECGFUSED}};
  static const KSP_PIPECGFUSED defaults = {.devscalars = PETSC_TRUE, .onekernel = 2};

  PetscFunctionBegin;
  PetscCall(GSKSPCreate(ksp, &ops, sizeof(defaults), &defaults));
  PetscFunctionReturn(PETSC_SUCCESS);
}
