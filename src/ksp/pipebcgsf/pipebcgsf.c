/* KSPPIPEBCGSF: pipelined BiCGStab with fused kernels (Algorithm 4 of Rupp et al., 2016). With
   beta_i = -<A s_i, r0*> / <A p_i, r0*> and ||r_{i+1}||^2 = <s,s> - 2 omega <s,As> + omega^2 <As,As>, an iteration is
   four kernels and one device-to-host copy on one process with a gpustream operator; see pipebcgsfimpl.h. */
#include "pipebcgsfimpl.h"
#include "../common/base.h"
#include "../common/rightpc.h"

typedef struct {
  GSKSPBase base;
  PBFWork   work;
  PetscBool fused; /* the SpMVs run fused on the device (one-process gpustream operator) */
  PetscBool halo;  /* the SpMVs run fused on the device with the halo exchange (several processes, gpustream) */
  PetscInt  confirmations;
  PetscInt  replace_every, replacements; /* r = b - A x every this many iterations (0: never) */
  PetscBool devscalars, ranahead;        /* option; the last solve computed omega and beta on the device */
  PetscBool sinspmv, sinspmvset, folded; /* UpdateS folded into SpMVDot3: option, whether given, last solve's */
} KSP_PIPEBCGSF;

/* Whether a solve runs ahead with device scalars (KSPPIPEBCGSFSolveAhead_Private()) */
static PetscBool KSPPIPEBCGSFAhead_Private(KSP_PIPEBCGSF *bf, PetscMPIInt size)
{
  return (PetscBool)(bf->devscalars && bf->fused && size == 1 && (bf->base.pc == GS_PC_NONE || bf->base.pc == GS_PC_JACOBI) && !bf->replace_every);
}

/* Every device allocation of a solve with n local unknowns: the device copy of a gpustream operator (*dA NULL when it
   streams), the work vectors and the device scalars' buffers where the solve runs ahead. KSPSetUp() makes them, so
   that a failed allocation surfaces there, before KSPSolve() locks b (PETSc keeps that lock when a solver fails
   inside); KSPSolve() calls it again, which allocates only what changed since. Jacobi, and point-block Jacobi with
   blocks of up to PBF_MAX_BS rows on one process, are fused. */
static PetscErrorCode KSPPIPEBCGSFAllocate_Private(KSP ksp, GSKSPOperators *o)
{
  KSP_PIPEBCGSF  *bf   = (KSP_PIPEBCGSF *)ksp->data;
  const PetscBool none = (PetscBool)(o->pc == GS_PC_NONE), jacobi = (PetscBool)(o->pc == GS_PC_JACOBI), pbjacobi = (PetscBool)(o->pc == GS_PC_PBJACOBI && o->bs <= PBF_MAX_BS);
  GSKSPPC         pc;

  PetscFunctionBegin;
  /* the device SpMVs apply no preconditioner but a fused (point-block) Jacobi: other PCs take the host path; a
     streamed matrix has no whole device CSR: MatMult() */
  bf->fused = (PetscBool)(o->dA && o->size == 1 && (none || jacobi || pbjacobi));
  bf->halo  = (PetscBool)(o->dA && o->size > 1 && (none || jacobi));
  if (none)
    pc = GS_PC_NONE;
  else if ((bf->fused || bf->halo) && (jacobi || (pbjacobi && o->bs == 1)))
    pc = GS_PC_JACOBI;
  else if (bf->fused && pbjacobi)
    pc = GS_PC_PBJACOBI;
  else
    pc = GS_PC_APPLY;
  if (GSKSPWorkStale(ksp, o->n, pc, pc == GS_PC_PBJACOBI ? o->bs : 1, PETSC_FALSE)) {
    PetscCall(PBFWorkDestroy(&bf->work));
    PetscCall(GSAllOK(PetscObjectComm((PetscObject)ksp), PBFWorkCreate(o->n, pc, &bf->work))); /* may fail on one process */
    PetscCall(GSKSPSetWork(ksp, PBFWorkBase(bf->work), o->n, pc, pc == GS_PC_PBJACOBI ? o->bs : 1));
  }
  PetscCall(GSAllOK(PetscObjectComm((PetscObject)ksp), PBFWorkReserve(bf->work, o->bs, KSPPIPEBCGSFAhead_Private(bf, o->size))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's own part of KSPReset() (GSKSPReset() resets the base after it) */
static PetscErrorCode KSPReset_PIPEBCGSF(KSP ksp)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PBFWorkDestroy(&bf->work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host path of an SpMV: y = A M^{-1} x through PCApply() and MatMult(), M^{-1} x kept for the x update */
static PetscErrorCode KSPPIPEBCGSFHostSpMV_Private(KSP ksp, Mat Amat, PBFVec in, PBFVec inh, PBFVec out)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  Vec            X = ksp->work[0], XH = ksp->work[1], Y = ksp->work[2];

  PetscFunctionBegin;
  if (bf->base.pc != GS_PC_APPLY) {
    PetscCall(GSKSPHostMult(ksp, Amat, in, X, out, Y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSWorkStore(PBFWorkBase(bf->work), in, X));
  PetscCall(PCApply(ksp->pc, X, XH));
  PetscCall(GSWorkLoad(PBFWorkBase(bf->work), inh, XH));
  PetscCall(KSP_MatMult(ksp, Amat, XH, Y));
  PetscCall(GSWorkLoad(PBFWorkBase(bf->work), out, Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPPIPEBCGSFReduce_Private(KSP ksp, PetscScalar s[PBF_NSUMS])
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PBFReduce(bf->work, s));
  if (bf->base.size > 1) {
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, PBF_NSUMS, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
    bf->base.allreduces++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the sums of an iteration say before its Update: 0 go on, 1 s = 0 (x + alpha M^{-1} p solves the system), or
   a reason to stop set in ksp->reason (breakdown, NaN or Inf) */
static PetscInt KSPPIPEBCGSFCheck_Private(KSP ksp, const PetscScalar s[PBF_NSUMS])
{
  if (PetscIsInfOrNanScalar(s[PBF_RR0]) || PetscIsInfOrNanScalar(s[PBF_SS]) || PetscIsInfOrNanScalar(s[PBF_TT]) || PetscIsInfOrNanScalar(s[PBF_TS])) {
    if (s[PBF_VR0] != 0.0 && s[PBF_RR0] != 0.0) { /* not a breakdown: the data is not finite */
      ksp->reason = KSP_DIVERGED_NANORINF;
      return 0;
    }
  }
  if (s[PBF_RR0] == 0.0 || s[PBF_VR0] == 0.0) { /* <r,r0*> = 0 or <Ap,r0*> = 0 */
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    return 0;
  }
  if (s[PBF_SS] == 0.0) return 1;
  if (s[PBF_TT] == 0.0 || s[PBF_TS] == 0.0) ksp->reason = KSP_DIVERGED_BREAKDOWN; /* omega = 0 */
  return 0;
}

/* The norm after iteration i's Update, its monitors and convergence test; a convergence the norm formula reports is
   confirmed with <r,r>, which that Update summed */
static PetscErrorCode KSPPIPEBCGSFConverged_Private(KSP ksp, PetscInt i, PetscScalar s[PBF_NSUMS], PetscScalar omega)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  PetscReal      dp = PetscSqrtReal(PetscAbsReal(PetscRealPart(s[PBF_SS] - 2.0 * omega * s[PBF_TS] + omega * omega * s[PBF_TT])));

  PetscFunctionBegin;
  ksp->its   = i + 1;
  ksp->rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : dp;
  PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
  PetscCall(KSPMonitor(ksp, i + 1, ksp->rnorm));
  PetscCall((*ksp->converged)(ksp, i + 1, ksp->rnorm, &ksp->reason, ksp->cnvP));
  if (ksp->reason > 0 && ksp->normtype != KSP_NORM_NONE) {
    PetscCall(KSPPIPEBCGSFReduce_Private(ksp, s));
    ksp->rnorm  = PetscSqrtReal(PetscAbsReal(PetscRealPart(s[PBF_RR])));
    ksp->reason = KSP_CONVERGED_ITERATING;
    PetscCall((*ksp->converged)(ksp, i + 1, ksp->rnorm, &ksp->reason, ksp->cnvP));
    bf->confirmations++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The SpMVs and s of an iteration run ahead, its sums to slot `slot`: SpMVDot1, UpdateS, SpMVDot3Final (UpdateS
   inside SpMVDot3Final when folded) */
static PetscErrorCode KSPPIPEBCGSFLaunchAhead_Private(PBFWork work, PetscBool folded, GSDeviceMat dA, PetscInt slot)
{
  PetscFunctionBegin;
  PetscCall(PBFSpMVDot1(work, dA, NULL, NULL));
  if (!folded) PetscCall(PBFUpdateS(work, PETSC_FALSE, 0.0));
  PetscCall(PBFSpMVDot3Final(work, dA, slot, folded));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One process, fused SpMVs, PCNONE or PCJACOBI: omega and beta stay on the device, so the next iteration's SpMVDot1,
   UpdateS and SpMVDot3 (which move neither x, r nor p) are queued before the host reads this iteration's sums and
   runs its monitors and tests while the device works; the Update follows once the host has accepted the iteration.
   Returns the iterations done. */
static PetscErrorCode KSPPIPEBCGSFSolveAhead_Private(KSP ksp, GSDeviceMat dA, PetscInt *its)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  PetscScalar    s[PBF_NSUMS];
  PetscInt       i, l0, t0, c0, l1;
  PetscBool      tested;

  PetscFunctionBegin;
  PetscCall(PBFWorkSetDeviceScalars(bf->work));
  if (ksp->max_it > 0) {
    PetscCall(KSPPIPEBCGSFLaunchAhead_Private(bf->work, bf->folded, dA, 0));
    PetscCall(PBFUpdateDevice(bf->work));
  }
  for (i = 0;; i++) {
    if (i == ksp->max_it) {
      ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    PetscCall(GSWorkGetCounts(PBFWorkBase(bf->work), &l0, &t0, &c0));
    if (i + 1 < ksp->max_it) PetscCall(KSPPIPEBCGSFLaunchAhead_Private(bf->work, bf->folded, dA, (i + 1) % 2));
    PetscCall(PBFReduceSlot(bf->work, i % 2, s));
    tested = PETSC_FALSE;
    if (KSPPIPEBCGSFCheck_Private(ksp, s)) { /* s = 0: the Update made x exact, r = 0 */
      ksp->its    = i + 1;
      ksp->rnorm  = 0.0;
      ksp->reason = KSP_CONVERGED_ATOL;
    } else if (!ksp->reason) {
      PetscCall(KSPPIPEBCGSFConverged_Private(ksp, i, s, s[PBF_TS] / s[PBF_TT]));
      tested = PETSC_TRUE;
    }
    if (ksp->reason) { /* counted as the default loop counts */
      PetscCall(GSWorkGetCounts(PBFWorkBase(bf->work), &l1, &t0, &c0));
      bf->base.discarded = l1 - l0;
      if (tested) i++;
      break;
    }
    if (i + 1 < ksp->max_it) PetscCall(PBFUpdateDevice(bf->work));
  }
  *its = i;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r0 = b - A x0, on the host unless x0 = 0 (right preconditioning: x is the solution itself); r0* = p0 = r0, their
   sums, and ||r0||. x is written back at the end, so a zero x0 is never set on the PETSc vector. */
static PetscErrorCode KSPPIPEBCGSFStart_Private(KSP ksp, Mat Amat, PetscReal *dp)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  GSWork         W  = PBFWorkBase(bf->work);

  PetscFunctionBegin;
  PetscCall(GSKSPLoadResidual(ksp, Amat, PBF_R, PBF_X, ksp->work[2]));
  PetscCall(GSWorkNorm(W, PBF_R, PetscObjectComm((PetscObject)ksp), dp));
  for (PBFVec v = PBF_R0; v <= PBF_P; v = (PBFVec)(v + 1)) PetscCall(GSWorkCopy(W, v, PBF_R));
  PetscCall(PBFRDot(bf->work));
  bf->base.solving      = PETSC_TRUE;
  bf->confirmations     = 0;
  bf->replacements      = 0;
  bf->base.gap.truenorm = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Residual replacement: r = b - A x, and p = r + beta (p - omega v) moved by the same correction so that it stays
   built on the new r (replacing r alone slowed the convergence on Pe-100 convection-diffusion); the sums of r need
   redoing */
static PetscErrorCode KSPPIPEBCGSFReplace_Private(KSP ksp, Mat Amat)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  GSWork         W  = PBFWorkBase(bf->work);
  Vec            X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[2], D = ksp->work[0], P = ksp->work[1];

  PetscFunctionBegin;
  PetscCall(GSWorkStore(W, PBF_X, X));
  PetscCall(KSP_MatMult(ksp, Amat, X, R));
  PetscCall(VecAYPX(R, -1.0, B));
  PetscCall(GSWorkStore(W, PBF_R, D));
  PetscCall(VecAYPX(D, -1.0, R));
  PetscCall(GSWorkStore(W, PBF_P, P));
  PetscCall(VecAXPY(P, 1.0, D));
  PetscCall(GSWorkLoad(W, PBF_R, R));
  PetscCall(GSWorkLoad(W, PBF_P, P));
  PetscCall(PBFRDot(bf->work));
  bf->replacements++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Iteration i of the loop with the host's scalars: v = A M^{-1} p and <v,r0*>; s = r - alpha v and <s,s>;
   t = A M^{-1} s and its three sums (on several processes dB and halo split each SpMV around the halo exchange);
   the Update, a replacement, the norm and the tests. stop: the loop ends at iteration i (x solves the system
   exactly, or a breakdown) */
static PetscErrorCode KSPPIPEBCGSFIterate_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscInt i, PetscBool *stop)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  PetscScalar    s[PBF_NSUMS], omega, beta;

  PetscFunctionBegin;
  *stop = PETSC_TRUE;
  if (bf->fused || bf->halo)
    PetscCall(PBFSpMVDot1(bf->work, dA, dB, halo));
  else {
    PetscCall(KSPPIPEBCGSFHostSpMV_Private(ksp, Amat, PBF_P, PBF_PH, PBF_V));
    PetscCall(PBFDot1(bf->work));
  }
  if (bf->base.size > 1) { /* alpha needs the global sums first: a second synchronization point */
    PetscCall(KSPPIPEBCGSFReduce_Private(ksp, s));
    PetscCall(PBFUpdateS(bf->work, PETSC_TRUE, s[PBF_VR0] != 0.0 ? s[PBF_RR0] / s[PBF_VR0] : 0.0));
  } else
    PetscCall(PBFUpdateS(bf->work, PETSC_FALSE, 0.0));
  if (bf->fused || bf->halo)
    PetscCall(PBFSpMVDot3(bf->work, dA, dB, halo));
  else {
    PetscCall(KSPPIPEBCGSFHostSpMV_Private(ksp, Amat, PBF_S, PBF_SH, PBF_T));
    PetscCall(PBFDot3(bf->work));
  }
  PetscCall(KSPPIPEBCGSFReduce_Private(ksp, s));
  if (KSPPIPEBCGSFCheck_Private(ksp, s)) {    /* s = 0: x + alpha M^{-1} p solves the system exactly */
    PetscCall(PBFUpdate(bf->work, 0.0, 0.0)); /* alpha: the one UpdateS used, in device memory */
    ksp->its    = i + 1;
    ksp->rnorm  = 0.0;
    ksp->reason = KSP_CONVERGED_ATOL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  omega = s[PBF_TS] / s[PBF_TT];
  beta  = -s[PBF_TR0] / s[PBF_VR0];
  PetscCall(PBFUpdate(bf->work, omega, beta));
  if (bf->replace_every && (i + 1) % bf->replace_every == 0) PetscCall(KSPPIPEBCGSFReplace_Private(ksp, Amat));
  PetscCall(KSPPIPEBCGSFConverged_Private(ksp, i, s, omega)); /* the norm formula cancels near convergence: confirmed with <r,r> */
  *stop = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_PIPEBCGSF(KSP ksp)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  GSKSPOperators o;
  Vec            X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[2];
  PetscReal      dp;
  PetscInt       i = 0;
  PetscBool      stop;

  PetscFunctionBegin;
  PetscCall(GSKSPSolveBegin(ksp, &o));
  PetscCall(KSPPIPEBCGSFStart_Private(ksp, o.Amat, &dp));
  ksp->its   = 0;
  ksp->rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : dp;
  PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
  PetscCall(KSPMonitor(ksp, 0, ksp->rnorm));
  PetscCall((*ksp->converged)(ksp, 0, ksp->rnorm, &ksp->reason, ksp->cnvP));
  PetscCall(GSKSPIterationsBegin(ksp));
  PetscCall(PetscLogEventBegin(PBCGSF_Iteration, ksp, 0, 0, 0));
  bf->ranahead = KSPPIPEBCGSFAhead_Private(bf, bf->base.size);
  bf->folded   = bf->sinspmvset ? bf->sinspmv : (PetscBool)(bf->base.n <= (bf->base.pc == GS_PC_JACOBI ? PBF_FOLD_ROWS_JACOBI : PBF_FOLD_ROWS));
  if (bf->ranahead && !ksp->reason) PetscCall(KSPPIPEBCGSFSolveAhead_Private(ksp, o.dA, &i));
  for (; !ksp->reason; i++) {
    if (i == ksp->max_it) {
      ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    PetscCall(KSPPIPEBCGSFIterate_Private(ksp, o.Amat, o.dA, o.dB, o.halo, i, &stop));
    if (stop) break;
  }
  PetscCall(PetscLogEventEnd(PBCGSF_Iteration, ksp, 0, 0, 0));
  PetscCall(GSKSPIterationsEnd(ksp, i));
  PetscCall(GSKSPSolveEnd(ksp, PETSC_TRUE));
  if (bf->base.gap.check && ksp->reason > 0 && ksp->normtype != KSP_NORM_NONE) { /* right preconditioning: ||b - A x|| */
    PetscCall(KSP_MatMult(ksp, o.Amat, X, R));
    PetscCall(VecAYPX(R, -1.0, B));
    PetscCall(VecNorm(R, NORM_2, &bf->base.gap.truenorm));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_PIPEBCGSF(KSP ksp, PetscViewer viewer)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  fused kernels on Kokkos %s\n", GSExecutionSpace()));
  PetscCall(GSRightPCView(ksp, viewer, "KSPBCGS"));
  if (bf->replace_every)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replacement every %" PetscInt_FMT " %s (%" PetscInt_FMT " in the last solve)\n", bf->replace_every, GSNoun(bf->replace_every, "iteration", "iterations"), bf->replacements));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  no residual replacement\n"));
  PetscCall(GSResidualGapView(&bf->base.gap, ksp, viewer));
  if (!bf->work || !bf->base.passes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(
      PetscViewerASCIIPrintf(viewer, "  SpMV: %s; preconditioner: %s\n",
                             bf->fused ? "fused gpustream device kernels" : (bf->halo ? "fused gpustream device kernels, the halo exchange overlapping the diagonal block" : "MatMult of the operator, vectors staged through the host"),
                             bf->base.pc == GS_PC_JACOBI ? "jacobi fused into the kernels" : (bf->base.pc == GS_PC_PBJACOBI ? "point-block jacobi fused into the kernels" : (bf->base.pc == GS_PC_NONE ? "none" : "applied on the host to p and s"))));
  PetscCall(GSKSPViewCounts(ksp, viewer));
  if (bf->ranahead)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  omega and beta computed on the device, the host testing convergence while the next SpMVs run; %" PetscInt_FMT " %s begun after the last iteration %s dropped\n", bf->base.discarded,
                                     GSNoun(bf->base.discarded, "launch", "launches"), GSNoun(bf->base.discarded, "was", "were")));
  if (bf->ranahead)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  s = r - alpha v %s (-ksp_pipebcgsf_s_in_spmv %s)\n", bf->folded ? "formed inside the second SpMV (s of each column from r and v)" : "formed by its own kernel before the second SpMV",
                                     bf->sinspmvset ? (bf->sinspmv ? "true" : "false") : "auto"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  convergence claims of the norm formula checked with <r,r> in the last solve: %" PetscInt_FMT "\n", bf->confirmations));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_PIPEBCGSF(KSP ksp, GSOptionItems PetscOptionsObject)
{
  KSP_PIPEBCGSF *bf = (KSP_PIPEBCGSF *)ksp->data;
  PetscBool      set;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipebcgsf_device_scalars", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipebcgsf_s_in_spmv", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_pipebcgsf_replace_every", GS_OPTION_INT, NULL, 0));
  PetscCall(PetscOptionsBool("-ksp_pipebcgsf_device_scalars", "omega and beta on the device, the host testing convergence while the next iteration's SpMVs run (one process, gpustream, PCNONE or PCJACOBI)", "KSPPIPEBCGSF", bf->devscalars,
                             &bf->devscalars, NULL));
  PetscCall(PetscOptionsBool("-ksp_pipebcgsf_s_in_spmv",
                             "With device scalars, s = r - alpha v formed inside the second SpMV: three kernels an iteration (default: up to " PetscStringize(PBF_FOLD_ROWS) " local rows, " PetscStringize(PBF_FOLD_ROWS_JACOBI) " with Jacobi)",
                             "KSPPIPEBCGSF", bf->sinspmv, &bf->sinspmv, &set));
  bf->sinspmvset = (PetscBool)(bf->sinspmvset || set);
  PetscCall(GSKSPOptionsIntAtLeast(ksp, PetscOptionsObject, "-ksp_pipebcgsf_replace_every", "Replace the recursive residual by b - A x every this many iterations (0: never)", 0, "0 (never) or positive", &bf->replace_every, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   KSPPIPEBCGSF - KSPPIPEBCGSF = "pipebcgsf" - Pipelined BiCGStab with fused GPU kernels.

   Algorithm 4 of Rupp et al.: beta = -<A s, r0*> / <A p, r0*> lets all vector updates of an iteration share one
   kernel, and the residual norm comes from the SpMVs' inner products. On one process with a `MATGPUSTREAM` operator
   an iteration is four kernels (three where s is formed inside the second SpMV) and one device-to-host copy of all
   the partial sums.

   Options Database Keys:
+  -ksp_type pipebcgsf - selects this method
.  -ksp_norm_type <unpreconditioned,none> - the norm of the true residual (right preconditioning)
.  -ksp_pipebcgsf_device_scalars <true> - omega and beta on the device, convergence tested while the next SpMVs run
.  -ksp_pipebcgsf_s_in_spmv <bool> - with device scalars, s = r - alpha v formed inside the second SpMV
.  -ksp_pipebcgsf_replace_every <0> - replace r by b - A x every N iterations (0: never)
.  -ksp_pipebcgsf_check_true_residual <true> - compute b - A x once at convergence
-  -ksp_pipebcgsf_residual_gap_factor <10> - report a true residual this many times the recursive one

   Level: intermediate

   Notes:
   Right preconditioning only, as `KSPPIPEBCGS`: a left or symmetric side, or a preconditioned or natural norm, is
   refused (`PETSC_ERR_SUP`). `PCJACOBI` and, on one process, `PCPBJACOBI` are fused into the kernels; any other PC is
   applied on the host to p and s each iteration, and any other `Mat` works through `MatMult()`. Breakdowns end with
   `KSP_DIVERGED_BREAKDOWN`. README.md describes the kernels, device scalars and the several-process path.

   References:
.  * - K. Rupp, J. Weinbub, A. Jüngel, T. Grasser, Pipelined iterative solvers with kernel fusion for graphics processing units

.seealso: `KSPBCGS`, `KSPPIPEBCGS`, `KSPPIPECGFUSED`, `MATGPUSTREAM`, `KSPCreate()`, `KSPSetType()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_PIPEBCGSF(KSP ksp)
{
  static const GSKSPOps      ops      = {{"KSPPIPEBCGSF", "KSP pipelined BiCGStab with fused kernels options", PC_RIGHT, "KSPBCGS", "pipebcgsf", PBF_X, KSPPIPEBCGSFAllocate_Private, 3},
                                         {KSPSolve_PIPEBCGSF, KSPView_PIPEBCGSF, KSPSetFromOptions_PIPEBCGSF, KSPReset_PIPEBCGSF, NULL, NULL, NULL}};
  static const KSP_PIPEBCGSF defaults = {.devscalars = PETSC_TRUE, .sinspmv = PETSC_TRUE};

  PetscFunctionBegin;
  PetscCall(GSKSPCreate(ksp, &ops, sizeof(defaults), &defaults));
  PetscFunctionReturn(PETSC_SUCCESS);
}
