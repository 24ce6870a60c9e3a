/* KSPSGMRESF: pipelined simpler GMRES(m) with fused kernels (Algorithm 6 of Rupp et al., 2016; Walker and Zhou's
   simpler GMRES). The residual is never updated inside a cycle: xi_k = <r0, v_k> gives the residual norm of every
   iteration, and the small triangular system is solved on the host once per cycle; see sgmresfimpl.h. */
#include "sgmresfimpl.h"
#include "../common/base.h"
#include "../common/rightpc.h"

/* The squared relative residual below which rho^2 - sum xi_i^2 is too close to its rounding (a few epsilon rho^2 on
   the tests) to go on: a relative residual of 4.7e-7 */
#define SGF_FLOOR (1e3 * PETSC_MACHINE_EPSILON)

static const char *const SGFRefineTypes[] = {"never", "ifneeded", "always", "delayed", "SGFRefine", "SGF_REFINE_", NULL};

/* The last solve's counts: iterations first in a cycle and later ones, and their launches; cycles, refined
   orthogonalizations, happy breakdowns, convergence claims checked and rejected, cycles ended at the rounding floor */
typedef struct {
  PetscInt first, later, lfirst, llater, cycles, refinements, breakdowns, confirmations, rejections, floors;
} KSPSGMRESFCounts;

typedef struct {
  GSKSPBase        base;
  SGFWork          work;
  PetscInt         m, workm;         /* restart; the restart the work was sized for */
  PetscInt         teams, workteams; /* -ksp_sgmresf_teams (0: automatic); what the work was made with */
  SGFRefine        refine;
  PetscBool        fused;                     /* x and the SpMVs on the device: a resident gpustream operator; one process fuses the SpMV with its sums */
  PetscScalar     *R, *xi, *y, *sums;         /* host copies: R ((m+1)^2), xi and y (m+1), reduced sums (np + 1) */
  PetscScalar      sxi[2], srec[2][SGF_NREC]; /* xi and the record of the last two steps */
  PetscReal        rho, rho0;                 /* norms of the cycle's r0 and of the solve's */
  PetscInt         kk;                        /* columns of the current cycle ready for the solution */
  Vec              soltemp;                   /* KSPBuildSolution() into no vector, mid-cycle */
  KSPSGMRESFCounts c;
  PetscBool        confirm; /* a convergence the estimate claims is checked with b - A x */
} KSP_SGMRESF;

/* Every device allocation of a solve with n local unknowns: the device copy of a gpustream operator (*dA, where the
   SpMVs run fused on the device; else NULL), and the work, sized for the restart. KSPSetUp() makes them, so that a
   failed allocation surfaces there, before KSPSolve() locks b (PETSc keeps that lock when a solver fails inside);
   KSPSolve() calls it again, which allocates only what changed since. */
static PetscErrorCode KSPSGMRESFAllocate_Private(KSP ksp, GSKSPOperators *o)
{
  KSP_SGMRESF *sg   = (KSP_SGMRESF *)ksp->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)ksp);
  GSKSPPC      pc;
  PetscInt     bs;

  PetscFunctionBegin;
  /* the device SpMVs apply no preconditioner but a fused (point-block) Jacobi, the point blocks on one process:
     other PCs take the host path, which keeps x on the host and applies M^{-1} there; a streamed matrix has no
     whole device CSR: MatMult() */
  sg->fused = (PetscBool)(o->dA && (o->pc == GS_PC_NONE || o->pc == GS_PC_JACOBI || (o->pc == GS_PC_PBJACOBI && o->size == 1)));
  if (!sg->fused) {
    o->dA   = NULL;
    o->dB   = NULL;
    o->halo = NULL;
  }
  pc = sg->fused ? o->pc : GS_PC_APPLY;
  bs = pc == GS_PC_PBJACOBI ? o->bs : 1;
  if (GSKSPWorkStale(ksp, o->n, pc, bs, (PetscBool)(sg->workm != sg->m || sg->workteams != sg->teams))) {
    const PetscInt np = 8 * ((2 * sg->m + 7) / 8) + 1; /* the work's sums (the delayed refinement's 2(k-1) pairs) and one more */
    PetscCall(SGFWorkDestroy(&sg->work));
    PetscCall(GSAllOK(comm, SGFWorkCreate(o->n, sg->m, pc, bs, &sg->work))); /* may fail on one process */
    if (sg->teams) PetscCall(GSAllOK(comm, SGFWorkSetTeams(sg->work, sg->teams)));
    PetscCall(GSKSPSetWork(ksp, SGFWorkBase(sg->work), o->n, pc, bs));
    sg->workteams = sg->teams;
    sg->workm     = sg->m;
    PetscCall(PetscFree4(sg->R, sg->xi, sg->y, sg->sums));
    PetscCall(PetscMalloc4((sg->m + 1) * (sg->m + 1), &sg->R, sg->m + 1, &sg->xi, sg->m + 1, &sg->y, np, &sg->sums));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's own part of KSPReset() (GSKSPReset() resets the base after it) */
static PetscErrorCode KSPReset_SGMRESF(KSP ksp)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(SGFWorkDestroy(&sg->work));
  PetscCall(PetscFree4(sg->R, sg->xi, sg->y, sg->sums));
  PetscCall(VecDestroy(&sg->soltemp));
  PetscCall(PetscMemzero(&sg->c, sizeof(sg->c)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Host sums of a stage, over all processes: one MPI_Allreduce */
static PetscErrorCode KSPSGMRESFAllreduce_Private(KSP ksp, PetscInt cnt, PetscScalar s[])
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (sg->base.size > 1) {
    PetscMPIInt c;
    PetscCall(PetscMPIIntCast(cnt, &c));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, c, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
    sg->base.allreduces++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Several processes: the first cnt sums of a pass over all processes (one MPI_Allreduce) in sg->sums, handed to the
   next kernel */
static PetscErrorCode KSPSGMRESFGiveSums_Private(KSP ksp, SGFPass pass, PetscInt cnt)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(SGFReduceDots(sg->work, pass, cnt, sg->sums));
  PetscCall(KSPSGMRESFAllreduce_Private(ksp, cnt, sg->sums));
  PetscCall(SGFWorkSetGiven(sg->work, cnt, sg->sums));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Column k = scale A M^{-1} V(:,k-1) on the host path: through PCApply() and MatMult() (it applies every PC there) */
static PetscErrorCode KSPSGMRESFHostSpMV_Private(KSP ksp, Mat Amat, PetscInt k, PetscScalar scale)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;
  Vec          X = ksp->work[0], XH = ksp->work[1], Y = ksp->work[2];

  PetscFunctionBegin;
  PetscCall(GSWorkStore(SGFWorkBase(sg->work), SGF_COLUMN(k - 1), X));
  PetscCall(KSP_PCApply(ksp, X, XH));
  PetscCall(KSP_MatMult(ksp, Amat, XH, Y));
  if (scale != 1.0) PetscCall(VecScale(Y, scale));
  PetscCall(GSWorkLoad(SGFWorkBase(sg->work), SGF_COLUMN(k), Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* xi and the record of the step just computed, stored in host memory by its kernel: awaited later on the fused path of one
   process (KSPSGMRESFFinish_Private() waits for it), else reduced at once */
static PetscErrorCode KSPSGMRESFSendXi_Private(KSP ksp, PetscInt step)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (sg->fused && sg->base.size == 1)
    PetscCall(SGFReduceXiBegin(sg->work, step % 2));
  else { /* the allreduce needs the host anyway */
    PetscCall(SGFReduceXi(sg->work, &sg->sxi[step % 2], sg->srec[step % 2]));
    PetscCall(KSPSGMRESFAllreduce_Private(ksp, 1, &sg->sxi[step % 2]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Delayed refinement, iteration k >= 2: column k from w'_{k-1}, then v_{k-1} and w'_k; step k-1's xi and record */
static PetscErrorCode KSPSGMRESFLaunchDelayed_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscInt k)
{
  KSP_SGMRESF *sg    = (KSP_SGMRESF *)ksp->data;
  PetscBool    given = (PetscBool)(sg->base.size > 1);

  PetscFunctionBegin;
  if (sg->fused && !given)
    PetscCall(SGFSpMVDotDelayed(sg->work, dA, k));
  else {
    if (sg->fused)
      PetscCall(SGFSpMVHalo(sg->work, dA, dB, halo, k, 1.0));
    else
      PetscCall(KSPSGMRESFHostSpMV_Private(ksp, Amat, k, 1.0));
    PetscCall(SGFDotDelayed(sg->work, k, (PetscBool)!given));
    if (given) PetscCall(KSPSGMRESFGiveSums_Private(ksp, SGF_PASS1, 2 * (k - 1))); /* every team derives the coefficients from them */
  }
  PetscCall(SGFOrthogonalizeDelayed(sg->work, k, given));
  PetscCall(KSPSGMRESFSendXi_Private(ksp, k - 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Delayed refinement, the cycle's last step k: the second pass and the normalization of w'_k, and its xi */
static PetscErrorCode KSPSGMRESFClose_Private(KSP ksp, PetscInt k)
{
  KSP_SGMRESF *sg    = (KSP_SGMRESF *)ksp->data;
  PetscBool    given = (PetscBool)(sg->base.size > 1);

  PetscFunctionBegin;
  if (k > 1) PetscCall(SGFDot(sg->work, k)); /* the first iteration's SpMVDot or Dot left <w,w> */
  if (given) PetscCall(KSPSGMRESFGiveSums_Private(ksp, SGF_PASS1, k));
  PetscCall(SGFNormalize(sg->work, k, given, PETSC_TRUE));
  PetscCall(KSPSGMRESFSendXi_Private(ksp, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Classical Gram-Schmidt on column k as it stands (refined now, if at all), its normalization and xi_k to the host */
static PetscErrorCode KSPSGMRESFOrthonormalize_Private(KSP ksp, PetscInt k)
{
  KSP_SGMRESF *sg    = (KSP_SGMRESF *)ksp->data;
  PetscBool    given = (PetscBool)(sg->base.size > 1);

  PetscFunctionBegin;
  if (k > 1) {
    SGFRefine refine = sg->refine;
    if (given) { /* the first stage's global sums, and the refinement decided from them as the device would */
      PetscScalar hh = 0, *s = sg->sums;
      PetscCall(KSPSGMRESFGiveSums_Private(ksp, SGF_PASS1, k));
      for (PetscInt j = 1; j < k; j++) hh += s[j] * s[j];
      if (refine == SGF_REFINE_IFNEEDED) refine = SGF_REFINE_NEEDED(s[0], hh) ? SGF_REFINE_ALWAYS : SGF_REFINE_NEVER;
    }
    PetscCall(SGFOrthogonalize(sg->work, k, refine, given));
    if (given) PetscCall(KSPSGMRESFGiveSums_Private(ksp, SGF_PASS2, refine == SGF_REFINE_ALWAYS ? k : 1));
  } else if (given)
    PetscCall(KSPSGMRESFGiveSums_Private(ksp, SGF_PASS1, 1));
  PetscCall(SGFNormalize(sg->work, k, given, PETSC_FALSE));
  PetscCall(KSPSGMRESFSendXi_Private(ksp, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launches Arnoldi step k of the cycle: v_k and R(:,k) on the device, then xi_k and Normalize's record to
   the host, left in flight on the fused path (KSPSGMRESFFinish_Private() waits for it). With the delayed refinement,
   iteration k (w'_k, and v_{k-1} with step k-1's xi and record; the first iteration only computes column 1). */
static PetscErrorCode KSPSGMRESFLaunch_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscInt k)
{
  KSP_SGMRESF *sg    = (KSP_SGMRESF *)ksp->data;
  PetscScalar  scale = k == 1 ? 1.0 / sg->rho : 1.0;
  PetscBool    given = (PetscBool)(sg->base.size > 1), delayed = (PetscBool)(sg->refine == SGF_REFINE_DELAYED);
  PetscInt     l1, l2, t1, c1;

  PetscFunctionBegin;
  PetscCall(GSWorkGetCounts(SGFWorkBase(sg->work), &l1, &t1, &c1));
  if (delayed && k > 1)
    PetscCall(KSPSGMRESFLaunchDelayed_Private(ksp, Amat, dA, dB, halo, k));
  else {
    if (sg->fused && !given)
      PetscCall(SGFSpMVDot(sg->work, dA, k, scale));
    else if (sg->fused) { /* the device SpMV with the halo exchange, then the partials its sums need */
      PetscCall(SGFSpMVHalo(sg->work, dA, dB, halo, k, scale));
      PetscCall(SGFDot(sg->work, k));
    } else {
      PetscCall(KSPSGMRESFHostSpMV_Private(ksp, Amat, k, scale));
      PetscCall(SGFDot(sg->work, k));
    }
    if (!delayed) PetscCall(KSPSGMRESFOrthonormalize_Private(ksp, k));
  }
  PetscCall(GSWorkGetCounts(SGFWorkBase(sg->work), &l2, &t1, &c1));
  if (k == 1) {
    sg->c.first++;
    sg->c.lfirst += l2 - l1;
  } else {
    sg->c.later++;
    sg->c.llater += l2 - l1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* xi_k and Normalize's record of step k on the host */
static PetscErrorCode KSPSGMRESFFinish_Private(KSP ksp, PetscInt k, PetscScalar *xi, PetscScalar rec[SGF_NREC])
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (sg->fused && sg->base.size == 1) PetscCall(SGFReduceXiEnd(sg->work, k % 2, &sg->sxi[k % 2], sg->srec[k % 2]));
  *xi = sg->sxi[k % 2];
  for (int i = 0; i < SGF_NREC; i++) rec[i] = sg->srec[k % 2][i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = R^{-1} xi on the first kk columns (R copied from the device), then the coefficients of [r0/rho, v_1 .. v_{kk-1}]
   uploaded for UpdateSolution */
static PetscErrorCode KSPSGMRESFCoefficients_Private(KSP ksp, PetscInt kk)
{
  KSP_SGMRESF   *sg = (KSP_SGMRESF *)ksp->data;
  const PetscInt ld = sg->m + 1;

  PetscFunctionBegin;
  PetscCall(SGFGetR(sg->work, sg->R));
  for (PetscInt i = kk; i >= 1; i--) {
    PetscScalar t = sg->xi[i];
    for (PetscInt j = i + 1; j <= kk; j++) t -= sg->R[i + j * ld] * sg->y[j];
    sg->y[i] = t / sg->R[i + i * ld];
  }
  for (PetscInt j = 0; j < kk; j++) sg->sums[j] = j ? sg->y[j + 1] : sg->y[1] / sg->rho;
  PetscCall(SGFWorkSetGiven(sg->work, kk, sg->sums));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x += M^{-1} [r0/rho, v_1 .. v_{kk-1}] y: on the device (fused), or u on the device and M^{-1} u added on the host */
static PetscErrorCode KSPSGMRESFUpdateSolution_Private(KSP ksp, PetscInt kk)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (!kk) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPSGMRESFCoefficients_Private(ksp, kk));
  if (sg->fused)
    PetscCall(SGFUpdateSolution(sg->work, kk, PETSC_FALSE));
  else {
    PetscCall(SGFUpdateSolution(sg->work, kk, PETSC_TRUE));
    PetscCall(GSWorkStore(SGFWorkBase(sg->work), SGF_U, ksp->work[0]));
    PetscCall(KSP_PCApply(ksp, ksp->work[0], ksp->work[1]));
    PetscCall(VecAXPY(ksp->vec_sol, 1.0, ksp->work[1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r0 = b - A x into column 0 and its norm: on the device (fused), else on the host */
static PetscErrorCode KSPSGMRESFResidual_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscReal *rho)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (sg->fused) {
    PetscScalar rr, rec[SGF_NREC];
    if (sg->base.size == 1)
      PetscCall(SGFResidual(sg->work, dA));
    else
      PetscCall(SGFResidualHalo(sg->work, dA, dB, halo));
    PetscCall(SGFReduceXi(sg->work, &rr, rec));
    PetscCall(KSPSGMRESFAllreduce_Private(ksp, 1, &rr));
    *rho = PetscSqrtReal(PetscAbsReal(PetscRealPart(rr)));
    if (PetscIsInfOrNanScalar(rr)) *rho = PetscRealPart(rr);
  } else {
    Vec R = ksp->work[2];
    PetscCall(KSP_MatMult(ksp, Amat, ksp->vec_sol, R));
    PetscCall(VecAYPX(R, -1.0, ksp->vec_rhs));
    PetscCall(VecNorm(R, NORM_2, rho));
    PetscCall(GSWorkLoad(SGFWorkBase(sg->work), SGF_COLUMN(0), R));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solve is over: its counts, and x in ksp->vec_sol. Called before the last monitor call, which comes with the
   reason set, as in KSPGMRESCycle(): KSPBuildSolution() then (PETSc 3.21.2 and later) gives ksp->vec_sol without
   asking the type, so it must hold the final x by then. */
static PetscErrorCode KSPSGMRESFEnd_Private(KSP ksp)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (!sg->base.solving) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!sg->kk, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The solution lacks %" PetscInt_FMT " columns of the cycle", sg->kk);
  PetscCall(GSKSPIterationsEnd(ksp, sg->c.first + sg->c.later));
  PetscCall(GSKSPSolveEnd(ksp, sg->fused));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The last monitor call of the solve: ksp->reason is set and x is final */
static PetscErrorCode KSPSGMRESFMonitorLast_Private(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPSGMRESFEnd_Private(ksp));
  PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
  PetscCall(KSPMonitor(ksp, ksp->its, ksp->rnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r0 = b - A x0 (right preconditioning: x is the solution itself) and rho = ||r0||: on the device when fused and
   x0 = 0, where x is written back at the end, so a zero x0 is never set on the PETSc vector; else on the host */
static PetscErrorCode KSPSGMRESFStart_Private(KSP ksp, Mat Amat, PetscReal *rho)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;
  GSWork       W  = SGFWorkBase(sg->work);
  Vec          X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[2];

  PetscFunctionBegin;
  if (sg->fused && ksp->guess_zero) {
    PetscCall(GSWorkZero(W, SGF_X));
    PetscCall(GSWorkLoad(W, SGF_B, B));
    PetscCall(GSWorkCopy(W, SGF_COLUMN(0), SGF_B));
    PetscCall(GSWorkNorm(W, SGF_B, PetscObjectComm((PetscObject)ksp), rho));
  } else {
    PetscCall(GSKSPHostResidual(ksp, Amat, X, B, R));
    PetscCall(VecNorm(R, NORM_2, rho));
    if (sg->fused) {
      PetscCall(GSWorkLoad(W, SGF_X, X));
      PetscCall(GSWorkLoad(W, SGF_B, B));
    }
    PetscCall(GSWorkLoad(W, SGF_COLUMN(0), R));
  }
  sg->rho0         = *rho;
  sg->base.solving = PETSC_TRUE;
  sg->kk           = 0;
  PetscCall(PetscMemzero(&sg->c, sizeof(sg->c)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step k of the cycle, launched (with the delayed refinement, step k+1 too, or the cycle's close) unless an earlier
   call did, then xi_k and its record; on the fused path of one process the next iteration goes to the device before
   step k's xi is read, so that the device does not wait for the host's convergence test, and it is dropped if the
   cycle ends at k (*launched: the steps launched so far) */
static PetscErrorCode KSPSGMRESFStep_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscInt k, PetscBool atfloor, PetscInt *launched, PetscScalar *xi, PetscScalar rec[SGF_NREC])
{
  KSP_SGMRESF *sg      = (KSP_SGMRESF *)ksp->data;
  PetscBool    delayed = (PetscBool)(sg->refine == SGF_REFINE_DELAYED);

  PetscFunctionBegin;
  if (*launched < k) {
    PetscCall(KSPSGMRESFLaunch_Private(ksp, Amat, dA, dB, halo, k));
    *launched = k;
  }
  if (delayed) { /* step k's xi and record come with iteration k+1, or with the cycle's close */
    if (k < sg->m && *launched < k + 1) {
      PetscCall(KSPSGMRESFLaunch_Private(ksp, Amat, dA, dB, halo, k + 1));
      *launched = k + 1;
    } else if (k == sg->m)
      PetscCall(KSPSGMRESFClose_Private(ksp, k));
  }
  if (sg->fused && sg->base.size == 1 && *launched < sg->m && !atfloor && ksp->its + *launched - k + (delayed ? 0 : 1) < ksp->max_it) {
    PetscCall(KSPSGMRESFLaunch_Private(ksp, Amat, dA, dB, halo, *launched + 1));
    (*launched)++;
  }
  PetscCall(KSPSGMRESFFinish_Private(ksp, k, xi, rec));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The iterations of a cycle from r0 of norm rho, the residual norm estimated from the xi; they end at the restart, a
   reason to stop, NaN or Inf (*nan), a happy breakdown (*breakdown), or the rounding floor of the estimate. *last:
   the solve's last iteration was reported to no monitor yet. */
static PetscErrorCode KSPSGMRESFCycle_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscReal rho, PetscBool *breakdown, PetscBool *nan, PetscBool *last)
{
  KSP_SGMRESF *sg       = (KSP_SGMRESF *)ksp->data;
  PetscReal    rr       = rho * rho;
  PetscInt     launched = 0;
  PetscBool    atfloor  = PETSC_FALSE;

  PetscFunctionBegin;
  *breakdown = *nan = *last = PETSC_FALSE;
  for (PetscInt k = 1; k <= sg->m && !ksp->reason; k++) {
    PetscScalar xi = 0, rec[SGF_NREC] = {0};
    PetscReal   rkk, a, rn;

    if (ksp->its >= ksp->max_it) {
      ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    PetscCall(KSPSGMRESFStep_Private(ksp, Amat, dA, dB, halo, k, atfloor, &launched, &xi, rec));
    if (rec[SGF_REC_REFINED] != 0.0) sg->c.refinements++;
    rkk = PetscRealPart(rec[SGF_REC_RKK]);
    if (PetscIsInfOrNanScalar(xi) || PetscIsInfOrNanReal(rkk) || PetscIsInfOrNanScalar(rec[SGF_REC_WW])) {
      *nan = PETSC_TRUE;
      break;
    }
    /* happy breakdown: A M^{-1} v_{k-1} lies in the span of v_1..v_{k-1} to rounding; the first k-1 columns hold
       the solution */
    if (rkk <= 100.0 * PETSC_MACHINE_EPSILON * PetscSqrtReal(PetscAbsReal(PetscRealPart(rec[SGF_REC_WW])))) {
      *breakdown = PETSC_TRUE;
      sg->c.breakdowns++;
      ksp->its++;
      break;
    }
    if (atfloor) break; /* the step after the floor did not break down: the cycle ends without it */
    sg->xi[k] = xi;
    sg->kk    = k;
    /* ||r_k||^2 = ||r_{k-1}||^2 - xi_k^2, factored so that it stays accurate as the residual drops */
    rn = PetscSqrtReal(rr);
    a  = PetscAbsReal(PetscRealPart(xi));
    rr = PetscMax((rn - a) * (rn + a), 0.0);
    ksp->its++;
    ksp->rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : PetscSqrtReal(rr);
    PetscCall((*ksp->converged)(ksp, ksp->its, ksp->rnorm, &ksp->reason, ksp->cnvP));
    /* below about sqrt(epsilon) rho the estimate is rounding, and columns after it would make R nearly singular:
       one more step tells an invariant Krylov space (a happy breakdown) from rounding, which ends the cycle, the
       next one starting from the true residual */
    atfloor = (PetscBool)(!ksp->reason && k < sg->m && rr <= SGF_FLOOR * rho * rho);
    if (atfloor) sg->c.floors++;
    /* as KSPGMRESCycle(): the last iteration of a cycle that restarts is reported with the true residual, and so is
       a convergence claim that the true residual checks; the last iteration of the solve once x is updated */
    if (ksp->reason > 0 && sg->confirm && ksp->normtype != KSP_NORM_NONE) continue;
    if (ksp->reason || ksp->its >= ksp->max_it)
      *last = PETSC_TRUE;
    else if (k < sg->m && !atfloor) {
      PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
      PetscCall(KSPMonitor(ksp, ksp->its, ksp->rnorm));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a cycle (x updated) that the solve goes on from, or a breakdown or convergence claim to test: the true
   residual, its norm rho for the next cycle, and the test of a happy breakdown or of the claim */
static PetscErrorCode KSPSGMRESFRestart_Private(KSP ksp, Mat Amat, GSDeviceMat dA, GSDeviceMat dB, GSHalo halo, PetscBool breakdown, PetscReal *rho)
{
  KSP_SGMRESF *sg      = (KSP_SGMRESF *)ksp->data;
  PetscBool    claimed = (PetscBool)(ksp->reason > 0 && sg->confirm && ksp->normtype != KSP_NORM_NONE);

  PetscFunctionBegin;
  if (breakdown || !ksp->reason || claimed) PetscCall(KSPSGMRESFResidual_Private(ksp, Amat, dA, dB, halo, rho));
  if (breakdown) {
    /* exact to rounding unless the operator is singular: test the true residual */
    ksp->rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : *rho;
    PetscCall((*ksp->converged)(ksp, ksp->its, ksp->rnorm, &ksp->reason, ksp->cnvP));
    if (ksp->reason <= 0) ksp->reason = (ksp->normtype == KSP_NORM_NONE || *rho <= PETSC_SQRT_MACHINE_EPSILON * sg->rho0) ? KSP_CONVERGED_HAPPY_BREAKDOWN : KSP_DIVERGED_BREAKDOWN;
    PetscCall(KSPSGMRESFMonitorLast_Private(ksp));
  } else if (claimed) {
    /* rho^2 - sum xi_i^2 cancels below about sqrt(epsilon) rho: the true residual decides, and a rejected claim
       restarts from it */
    sg->c.confirmations++;
    ksp->reason = KSP_CONVERGED_ITERATING;
    ksp->rnorm  = *rho;
    PetscCall((*ksp->converged)(ksp, ksp->its, ksp->rnorm, &ksp->reason, ksp->cnvP));
    if (!ksp->reason) {
      sg->c.rejections++;
      if (ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
    }
    if (ksp->reason) PetscCall(KSPSGMRESFMonitorLast_Private(ksp)); /* else the next cycle reports it */
  }
  if (!ksp->reason && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_SGMRESF(KSP ksp)
{
  KSP_SGMRESF   *sg = (KSP_SGMRESF *)ksp->data;
  GSKSPOperators o;
  PetscReal      rho;
  PetscBool      breakdown, nan, last;

  PetscFunctionBegin;
  PetscCall(GSKSPSolveBegin(ksp, &o));
  PetscCall(KSPSGMRESFStart_Private(ksp, o.Amat, &rho));
  ksp->its    = 0;
  ksp->reason = KSP_CONVERGED_ITERATING;
  PetscCall(GSKSPIterationsBegin(ksp));
  PetscCall(PetscLogEventBegin(SGMRESF_Iteration, ksp, 0, 0, 0));
  while (!ksp->reason) {
    /* as KSPGMRESCycle(): the norm of the cycle's true residual is logged, monitored and tested */
    sg->rho    = rho;
    ksp->rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : rho;
    PetscCall(KSPLogResidualHistory(ksp, ksp->rnorm));
    PetscCall(KSPMonitor(ksp, ksp->its, ksp->rnorm));
    if (rho == 0.0) {
      ksp->reason = KSP_CONVERGED_ATOL;
      break;
    }
    PetscCall((*ksp->converged)(ksp, ksp->its, ksp->rnorm, &ksp->reason, ksp->cnvP));
    if (ksp->reason) break;
    sg->c.cycles++;
    PetscCall(KSPSGMRESFCycle_Private(ksp, o.Amat, o.dA, o.dB, o.halo, rho, &breakdown, &nan, &last));
    PetscCall(KSPSGMRESFUpdateSolution_Private(ksp, sg->kk));
    sg->kk = 0;
    if (nan) {
      ksp->reason = KSP_DIVERGED_NANORINF;
      break;
    }
    if (!ksp->reason && !breakdown && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS; /* no restart to prepare */
    if (last) {
      PetscCall(KSPSGMRESFMonitorLast_Private(ksp));
      break;
    }
    PetscCall(KSPSGMRESFRestart_Private(ksp, o.Amat, o.dA, o.dB, o.halo, breakdown, &rho));
  }
  PetscCall(KSPSGMRESFEnd_Private(ksp));
  PetscCall(PetscLogEventEnd(SGMRESF_Iteration, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solution at the current iteration: the cycle's x plus M^{-1} of the current cycle's columns, as
   KSPBuildSolution_GMRES() */
static PetscErrorCode KSPBuildSolution_SGMRESF(KSP ksp, Vec v, Vec *V)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  if (!v && sg->base.solving && sg->kk) {
    if (!sg->soltemp) PetscCall(VecDuplicate(ksp->vec_sol, &sg->soltemp));
    v = sg->soltemp;
  }
  if (v) {
    if (sg->base.solving && sg->fused)
      PetscCall(GSWorkStore(SGFWorkBase(sg->work), SGF_X, v));
    else
      PetscCall(VecCopy(ksp->vec_sol, v));
    if (sg->base.solving && sg->kk) {
      PetscCall(KSPSGMRESFCoefficients_Private(ksp, sg->kk));
      PetscCall(SGFUpdateSolution(sg->work, sg->kk, PETSC_TRUE));
      PetscCall(GSWorkStore(SGFWorkBase(sg->work), SGF_U, ksp->work[0]));
      PetscCall(KSP_PCApply(ksp, ksp->work[0], ksp->work[1]));
      PetscCall(VecAXPY(v, 1.0, ksp->work[1]));
    }
    if (V) *V = v;
  } else {
    if (sg->base.solving && sg->fused) PetscCall(GSWorkStore(SGFWorkBase(sg->work), SGF_X, ksp->vec_sol));
    if (V) *V = ksp->vec_sol;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_SGMRESF(KSP ksp, PetscViewer viewer)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  restart=%" PetscInt_FMT ", classical Gram-Schmidt, refinement %s; fused kernels on Kokkos %s\n", sg->m, SGFRefineTypes[sg->refine], GSExecutionSpace()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  a convergence the estimate claims is %s\n", sg->confirm ? "confirmed with the true residual" : "not checked"));
  PetscCall(GSRightPCView(ksp, viewer, "KSPGMRES"));
  if (!sg->work) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscLogDouble basis, other;
    PetscCall(SGFWorkGetMemory(sg->work, &basis, &other));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  device memory: Krylov basis %" PetscInt_FMT " x %" PetscInt_FMT " in one 2D view (column-major) %g MB, other vectors and sums %g MB\n", sg->base.n, sg->workm + 1, basis / 1048576.0, other / 1048576.0));
  }
  if (!sg->c.first) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  SpMV: %s; preconditioner: %s\n",
                                   sg->fused ? (sg->base.size == 1 ? "fused gpustream device kernels" : "gpustream device kernels, the halo exchange overlapping the diagonal block") : "MatMult of the operator, vectors staged through the host",
                                   sg->base.pc == GS_PC_JACOBI ? "jacobi fused into the kernels" : (sg->base.pc == GS_PC_PBJACOBI ? "point-block jacobi fused into the kernels" : (sg->base.pc == GS_PC_NONE ? "none" : "applied on the host"))));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  kernel launches: %.3g in the first iteration of a cycle, %.3g in later ones; %.3g per iteration with the cycle ends\n", (double)sg->c.lfirst / (double)sg->c.first,
                                   sg->c.later ? (double)sg->c.llater / (double)sg->c.later : 0.0, (double)sg->base.launches / (double)(sg->c.first + sg->c.later)));
  {
    const double t = (double)sg->base.transfers / (double)(sg->c.first + sg->c.later), c = (double)sg->base.copies / (double)(sg->c.first + sg->c.later);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  per iteration: %.3g %s (sums, R, coefficients), %.3g %s\n", t, GSNounReal(t, 3, "small host-device transfer", "small host-device transfers"), c, GSNounReal(c, 3, "vector copy", "vector copies")));
  }
  PetscCall(GSHostCopiesView(viewer, sg->base.hostcopies));
  if (sg->base.size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "  MPI_Allreduce calls per iteration: %.3g\n", (double)sg->base.allreduces / (double)(sg->c.first + sg->c.later)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt_FMT " %s, %" PetscInt_FMT " %s, %" PetscInt_FMT " %s, %" PetscInt_FMT " %s, %" PetscInt_FMT " rejected, %" PetscInt_FMT " %s at the estimate's rounding floor\n", sg->c.cycles,
                                   GSNoun(sg->c.cycles, "cycle", "cycles"), sg->c.refinements, GSNoun(sg->c.refinements, "refined orthogonalization", "refined orthogonalizations"), sg->c.breakdowns,
                                   GSNoun(sg->c.breakdowns, "happy breakdown", "happy breakdowns"), sg->c.confirmations, GSNoun(sg->c.confirmations, "convergence claim checked", "convergence claims checked"), sg->c.rejections, sg->c.floors,
                                   GSNoun(sg->c.floors, "cycle ended", "cycles ended")));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_SGMRESF(KSP ksp, GSOptionItems PetscOptionsObject)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;
  PetscInt     r;
  PetscBool    set;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_gmres_restart", GS_OPTION_INT, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_sgmresf_cgs_refinement", GS_OPTION_LIST, SGFRefineTypes, 4));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_sgmresf_check_true_residual", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_sgmresf_teams", GS_OPTION_INT, NULL, 0));
  PetscCall(GSKSPOptionsIntAtLeast(ksp, PetscOptionsObject, "-ksp_gmres_restart", "Number of Krylov vectors before a restart", 1, "positive", &sg->m, NULL));
  r = sg->refine;
  PetscCall(PetscOptionsEList("-ksp_sgmresf_cgs_refinement", "Second classical Gram-Schmidt pass", "KSPSGMRESF", SGFRefineTypes, 4, SGFRefineTypes[sg->refine], &r, &set));
  if (set) sg->refine = (SGFRefine)r;
  PetscCall(PetscOptionsBool("-ksp_sgmresf_check_true_residual", "Confirm a convergence the estimate claims with the true residual", "KSPSGMRESF", sg->confirm, &sg->confirm, NULL));
  PetscCall(GSKSPOptionsIntAtLeast(ksp, PetscOptionsObject, "-ksp_sgmresf_teams", "Teams of 256 threads of every kernel (0: 4 per multiprocessor, at most one per 256 rows)", 0, "0 (automatic) or positive", &sg->teams, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPGMRESSetRestart() works on this type too */
static PetscErrorCode KSPGMRESSetRestart_SGMRESF(KSP ksp, PetscInt m)
{
  KSP_SGMRESF *sg = (KSP_SGMRESF *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(m >= 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "Restart must be positive, not %" PetscInt_FMT, m);
  sg->m = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_SGMRESF(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetRestart_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   KSPSGMRESF - KSPSGMRESF = "sgmresf" - Pipelined simpler GMRES(m) with fused GPU kernels.

   Algorithm 6 of Rupp et al.: Walker and Zhou's simpler GMRES with classical Gram-Schmidt, whose residual norm is
   known after every iteration (monitors and the convergence test run per iteration). On one process with a
   `MATGPUSTREAM` operator an iteration is two kernels with the default delayed refinement (three otherwise): the SpMV
   fused with the inner products against the basis, then the Gram-Schmidt update; then one device-to-host copy,
   which the host waits for only after it has launched the next iteration.

   Options Database Keys:
+  -ksp_type sgmresf - selects this method
.  -ksp_gmres_restart <30> - the number of Krylov vectors before a restart (also `KSPGMRESSetRestart()`)
.  -ksp_sgmresf_cgs_refinement <delayed,never,ifneeded,always> - the second classical Gram-Schmidt pass
.  -ksp_norm_type <unpreconditioned,none> - the norm of the true residual (right preconditioning)
.  -ksp_sgmresf_check_true_residual <true> - confirm a convergence the estimate claims with b - A x
-  -ksp_sgmresf_teams <0> - teams of every kernel (0: four per multiprocessor, at most one per 256 rows)

   Level: intermediate

   Notes:
   Right preconditioning only, unlike `KSPGMRES`'s default: a left or symmetric side, or a preconditioned or natural
   norm, is refused (`PETSC_ERR_SUP`). `PCJACOBI` and `PCPBJACOBI` are fused into the kernels; any other PC is applied
   on the host to every basis vector. 'delayed' refines each vector in the next iteration, which reads the basis
   anyway; it keeps the iteration counts of `KSPGMRES` with refine_ifneeded. README.md describes the refinements,
   the true-residual check and breakdowns.

   References:
+  * - K. Rupp, J. Weinbub, A. Jüngel, T. Grasser, Pipelined iterative solvers with kernel fusion for graphics processing units
.  * - H. F. Walker, L. Zhou, A simpler GMRES
-  * - D. Bielich et al., Low-synch Gram-Schmidt with delayed reorthogonalization for Krylov solvers

.seealso: `KSPGMRES`, `KSPPGMRES`, `KSPPIPEBCGSF`, `KSPPIPECGFUSED`, `MATGPUSTREAM`, `KSPCreate()`, `KSPSetType()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_SGMRESF(KSP ksp)
{
  static const GSKSPOps    ops      = {{"KSPSGMRESF", "KSP simpler GMRES with fused kernels options", PC_RIGHT, "KSPGMRES", NULL, SGF_X, KSPSGMRESFAllocate_Private, 3},
                                       {KSPSolve_SGMRESF, KSPView_SGMRESF, KSPSetFromOptions_SGMRESF, KSPReset_SGMRESF, KSPDestroy_SGMRESF, KSPBuildSolution_SGMRESF, NULL}};
  static const KSP_SGMRESF defaults = {.m = 30, .refine = SGF_REFINE_DELAYED, .confirm = PETSC_TRUE};

  PetscFunctionBegin;
  PetscCall(GSKSPCreate(ksp, &ops, sizeof(defaults), &defaults));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetRestart_C", KSPGMRESSetRestart_SGMRESF));
  PetscFunctionReturn(PETSC_SUCCESS);
}
