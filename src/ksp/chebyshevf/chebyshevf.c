/* KSPCHEBYSHEVF: Chebyshev iteration of the first kind with each step in one device kernel, for smoothers (PCMG,
   PCGAMG levels) and as a solver. The eigenvalue estimate is PETSc's (the same noisy right-hand side, written on the
   device, and the same estimator KSP), so the iterations are KSPCHEBYSHEV's. */
#include <petsc/private/kspimpl.h>
#include "chebyshevfimpl.h"

/* How a step runs: its product in the step's kernel (one process, a resident gpustream operator), MatMult() then the
   step's kernel, or PETSc's vector operations and PCApply() (any PC, any vectors) */
typedef enum { CHEBF_FUSE_AUTO, CHEBF_FUSE_SPMV, CHEBF_FUSE_UPDATE, CHEBF_FUSE_NONE } ChebFFuse;
static const char *const ChebFFuses[] = {"auto", "spmv", "update", "none", "ChebFFuse", "CHEBF_FUSE_", NULL};

typedef struct {
  PetscReal        emin, emax;         /* given (KSPChebyshevSetEigenvalues()); 0: estimated */
  PetscReal        emin_est, emax_est; /* the estimate's extremes, before the transform */
  PetscReal        tform[4];           /* emin = tform[0] min + tform[1] max, emax = tform[2] min + tform[3] max */
  PetscInt         eststeps;
  PetscBool        usenoisy;
  ChebFFuse        fuse;
  KSP              kspest;
  PetscObjectId    amatid, pmatid; /* the operators of the last estimate */
  PetscObjectState amatstate, pmatstate;
  Vec              dinv; /* D^{-1} of a fused Jacobi, from the PC applied to ones */
  Mat              dinvmat;
  PetscObjectState dinvstate;
  PetscObjectId    dinvpc;
  ChebFFuse        used; /* how the last solve's steps ran */
  PetscInt         nest; /* estimates made */
} KSP_CHEBYSHEVF;

static PetscErrorCode KSPChebyshevFEigenvalues_Private(KSP ksp, PetscReal *emax, PetscReal *emin)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  if (cf->emax != 0 && cf->emin != 0) {
    *emax = cf->emax;
    *emin = cf->emin;
  } else {
    *emax = cf->tform[2] * cf->emin_est + cf->tform[3] * cf->emax_est;
    *emin = cf->tform[0] * cf->emin_est + cf->tform[1] * cf->emax_est;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPChebyshevSetEigenvalues_CHEBYSHEVF(KSP ksp, PetscReal emax, PetscReal emin)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(emax > emin || (emax == 0 && emin == 0), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "Maximum eigenvalue must be larger than minimum: max %g min %g", (double)emax, (double)emin);
  PetscCheck(emax * emin > 0.0 || (emax == 0 && emin == 0), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "Both eigenvalues must be of the same sign: max %g min %g", (double)emax, (double)emin);
  cf->emax = emax;
  cf->emin = emin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The estimator KSP, as KSPCHEBYSHEV makes it: options prefix <prefix>esteig_, eigenvalues computed, the Chebyshev
   KSP's PC, eststeps iterations */
static PetscErrorCode KSPChebyshevFCreateEstimator_Private(KSP ksp)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  if (cf->kspest) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)ksp), &cf->kspest));
  PetscCall(KSPSetErrorIfNotConverged(cf->kspest, ksp->errorifnotconverged));
  PetscCall(PetscObjectIncrementTabLevel((PetscObject)cf->kspest, (PetscObject)ksp, 1));
  /* PetscObject...OptionsPrefix(), not KSPSet...OptionsPrefix(): the PC's prefix stays */
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)cf->kspest, ((PetscObject)ksp)->prefix));
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)cf->kspest, "esteig_"));
  PetscCall(KSPSetSkipPCSetFromOptions(cf->kspest, PETSC_TRUE));
  PetscCall(KSPSetComputeEigenvalues(cf->kspest, PETSC_TRUE));
  /* GMRES breaks down iterating past a zero norm: the convergence test stays */
  PetscCall(KSPSetTolerances(cf->kspest, 1.e-12, PETSC_DEFAULT, PETSC_DEFAULT, cf->eststeps));
  cf->amatid    = 0;
  cf->pmatid    = 0;
  cf->amatstate = -1;
  cf->pmatstate = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPChebyshevEstEigSet_CHEBYSHEVF(KSP ksp, PetscReal a, PetscReal b, PetscReal c, PetscReal d)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  if (a == 0 && b == 0 && c == 0 && d == 0) {
    PetscCall(KSPDestroy(&cf->kspest));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (a >= 0) cf->tform[0] = a;
  if (b >= 0) cf->tform[1] = b;
  if (c >= 0) cf->tform[2] = c;
  if (d >= 0) cf->tform[3] = d;
  cf->emin = cf->emax = 0;
  PetscCall(KSPChebyshevFCreateEstimator_Private(ksp));
  cf->amatstate = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPChebyshevEstEigSetUseNoisy_CHEBYSHEVF(KSP ksp, PetscBool use)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  cf->usenoisy = use;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPChebyshevEstEigGetKSP_CHEBYSHEVF(KSP ksp, KSP *kspest)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  *kspest = cf->kspest;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether v's array is where the kernels run: device memory, or any memory on a host backend */
static PetscErrorCode VecOnExec_Private(Vec v, PetscBool *on)
{
  GSVecArray a;

  PetscFunctionBegin;
  PetscCall(GSVecGetArray(v, GS_ACCESS_READ, &a));
  *on = (PetscBool)(a.device || !GSOnDevice());
  PetscCall(GSVecRestoreArray(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's noisy right-hand side (KSPSetNoisy_Private(): the same values), on the device where B's array is */
static PetscErrorCode KSPChebyshevFNoisy_Private(Mat A, Vec B)
{
  GSVecArray   a;
  PetscInt     n, istart;
  MatNullSpace nullsp = NULL;

  PetscFunctionBegin;
  PetscCall(MatGetNullSpace(A, &nullsp));
  PetscCall(VecGetOwnershipRange(B, &istart, NULL));
  PetscCall(VecGetLocalSize(B, &n));
  PetscCall(GSVecGetArray(B, GS_ACCESS_WRITE, &a));
  if (a.device || !GSOnDevice()) {
    PetscErrorCode ierr = ChebFNoisy(n, istart, a.array);
    PetscCall(GSVecRestoreArray(B, &a));
    PetscCall(ierr);
  } else {
    for (PetscInt i = 0; i < n; i++) a.array[i] = ChebFNoisy_Ref(istart + i);
    PetscCall(GSVecRestoreArray(B, &a));
  }
  if (nullsp) PetscCall(MatNullSpaceRemove(nullsp, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetUp_CHEBYSHEVF(KSP ksp)
{
  KSP_CHEBYSHEVF    *cf = (KSP_CHEBYSHEVF *)ksp->data;
  Mat                Amat, Pmat;
  PetscObjectId      amatid, pmatid;
  PetscObjectState   amatstate, pmatstate;
  PetscBool          isset, flg;
  Vec                B;
  KSPConvergedReason reason;
  PetscInt           n, neig;
  PetscReal         *re, *im, min = PETSC_MAX_REAL, max = PETSC_MIN_REAL;

  PetscFunctionBegin;
  PetscCall(KSPSetWorkVecs(ksp, 3));
  if (cf->emin != 0 && cf->emax != 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPChebyshevFCreateEstimator_Private(ksp));
  PetscCall(KSPGetOperators(ksp, &Amat, &Pmat));
  PetscCall(MatIsSPDKnown(Pmat, &isset, &flg));
  if (isset && flg) {
    const char *prefix;
    PetscCall(KSPGetOptionsPrefix(cf->kspest, &prefix));
    PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, prefix, "-ksp_type", &flg));
    if (!flg) PetscCall(KSPSetType(cf->kspest, KSPCG));
  }
  PetscCall(PetscObjectGetId((PetscObject)Amat, &amatid));
  PetscCall(PetscObjectGetId((PetscObject)Pmat, &pmatid));
  PetscCall(PetscObjectStateGet((PetscObject)Amat, &amatstate));
  PetscCall(PetscObjectStateGet((PetscObject)Pmat, &pmatstate));
  if (amatid == cf->amatid && pmatid == cf->pmatid && amatstate == cf->amatstate && pmatstate == cf->pmatstate) PetscFunctionReturn(PETSC_SUCCESS);

  PetscCall(KSPSetPC(cf->kspest, ksp->pc));
  if (cf->usenoisy) {
    B = ksp->work[1];
    PetscCall(KSPChebyshevFNoisy_Private(Amat, B));
  } else {
    PetscCheck(ksp->vec_rhs, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s must estimate the eigenvalues with a noisy right-hand side when it has no right-hand side (-%sksp_chebyshevf_esteig_noisy)", ((PetscObject)ksp)->type_name,
               GSPrefix((PetscObject)ksp));
    B = ksp->work[1]; /* a copy: a PC's pre-solve may change the right-hand side */
    PetscCall(VecCopy(ksp->vec_rhs, B));
  }
  if (ksp->setfromoptionscalled && !cf->kspest->setfromoptionscalled) PetscCall(KSPSetFromOptions(cf->kspest));
  PetscCall(KSPSolve(cf->kspest, B, ksp->work[0]));
  PetscCall(KSPGetConvergedReason(cf->kspest, &reason));
  if (reason == KSP_DIVERGED_PC_FAILED) {
    PetscInt       its;
    PCFailedReason pcreason;

    PetscCall(KSPGetIterationNumber(cf->kspest, &its));
#if PETSC_VERSION_GE(3, 20, 0)
    if (ksp->normtype == KSP_NORM_NONE) PetscCall(PCReduceFailedReason(ksp->pc));
#endif
    PetscCall(PCGetFailedReason(ksp->pc, &pcreason));
    ksp->reason = KSP_DIVERGED_PC_FAILED;
    PetscCall(PetscInfo(ksp, "Eigen estimator failed: %s %s at iteration %" PetscInt_FMT "\n", KSPConvergedReasons[reason], PCFailedReasons[pcreason], its));
    PetscFunctionReturn(PETSC_SUCCESS);
  } else if (reason < 0 && reason != KSP_DIVERGED_ITS)
    PetscCall(PetscInfo(ksp, "Eigen estimator failed %s, using estimates anyway\n", KSPConvergedReasons[reason]));
  PetscCall(KSPGetIterationNumber(cf->kspest, &n));
  PetscCall(PetscMalloc2(n, &re, n, &im));
  PetscCall(KSPComputeEigenvalues(cf->kspest, n, re, im, &neig));
  for (PetscInt i = 0; i < neig; i++) {
    min = PetscMin(min, re[i]);
    max = PetscMax(max, re[i]);
  }
  PetscCall(PetscFree2(re, im));
  PetscCall(PetscInfo(ksp, "Eigen estimate min/max = %g %g\n", (double)min, (double)max));
  cf->emin_est  = min;
  cf->emax_est  = max;
  cf->amatid    = amatid;
  cf->pmatid    = pmatid;
  cf->amatstate = amatstate;
  cf->pmatstate = pmatstate;
  cf->nest++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How this solve's steps run (ChebFFuse), with the device matrix for CHEBF_FUSE_SPMV and D^{-1} (NULL: none) for the
   fused steps; the option's choice where it can be had, else the most fused one that can */
static PetscErrorCode KSPChebyshevFPlan_Private(KSP ksp, Mat Amat, Mat Pmat, ChebFFuse *how, GSDeviceMat *dA, Vec *dinv)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;
  PetscBool       jacobi, none, gs, on[2];
  PetscMPIInt     size;

  PetscFunctionBegin;
  *dA   = NULL;
  *dinv = NULL;
  *how  = CHEBF_FUSE_NONE;
  if (cf->fuse == CHEBF_FUSE_NONE) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(VecOnExec_Private(ksp->vec_rhs, &on[0]));
  PetscCall(VecOnExec_Private(ksp->vec_sol, &on[1]));
  if (!(jacobi || none) || !on[0] || !on[1]) PetscFunctionReturn(PETSC_SUCCESS);
  *how = CHEBF_FUSE_UPDATE;
  if (jacobi) { /* D^{-1} from the PC itself (its own options hold), again when Pmat or the PC changed */
    PetscObjectState state;
    PetscObjectId    pcid;
    PetscCall(PetscObjectStateGet((PetscObject)Pmat, &state));
    PetscCall(PetscObjectGetId((PetscObject)ksp->pc, &pcid));
    if (!cf->dinv) PetscCall(VecDuplicate(ksp->vec_rhs, &cf->dinv));
    if (cf->dinvmat != Pmat || cf->dinvstate != state || cf->dinvpc != pcid) {
      PetscCall(VecSet(ksp->work[2], 1.0));
      PetscCall(PCApply(ksp->pc, ksp->work[2], cf->dinv));
      cf->dinvmat   = Pmat;
      cf->dinvstate = state;
      cf->dinvpc    = pcid;
    }
    *dinv = cf->dinv;
  }
  if (cf->fuse == CHEBF_FUSE_UPDATE) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)Amat, MATGPUSTREAM, &gs));
  if (size == 1 && gs) PetscCall(MatGPUStreamGetDeviceMat(Amat, dA, NULL, NULL));
  if (*dA) *how = CHEBF_FUSE_SPMV;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x and z = D^{-1} r for the iterate X, then Y = c1 Y + c2 X + c3 z (Y NULL: none) and the norm's sum;
   X NULL: a zero iterate. R and Z: work vectors of the unfused steps. */
static PetscErrorCode KSPChebyshevFStep_Private(KSP ksp, ChebFFuse how, Mat Amat, GSDeviceMat dA, Vec dinv, Vec X, Vec Y, PetscScalar c1, PetscScalar c2, PetscScalar c3, PetscReal *rnorm)
{
  Vec       b = ksp->vec_rhs, R = ksp->work[1], Z = ksp->work[2];
  ChebFNorm norm = ksp->normtype == KSP_NORM_NONE ? CHEBF_NORM_NONE : (ksp->normtype == KSP_NORM_PRECONDITIONED ? CHEBF_NORM_Z : CHEBF_NORM_R);

  PetscFunctionBegin;
  if (rnorm) *rnorm = 0;
  if (how == CHEBF_FUSE_NONE) { /* PETSc's vector operations */
    if (X) {
      PetscCall(KSP_MatMult(ksp, Amat, X, R));
      PetscCall(VecAYPX(R, -1.0, b));
    } else
      PetscCall(VecCopy(b, R));
    PetscCall(KSP_PCApply(ksp, R, Z));
    if (norm != CHEBF_NORM_NONE) PetscCall(VecNorm(norm == CHEBF_NORM_Z ? Z : R, NORM_2, rnorm));
    if (!Y) PetscFunctionReturn(PETSC_SUCCESS);
    if (!X)
      PetscCall(VecAXPBY(Y, c3, c1, Z));
    else if (c1 == 0 && c2 == 1)
      PetscCall(VecWAXPY(Y, c3, Z, X));
    else {
      if (c1 == 0) PetscCall(VecSet(Y, 0.0));
      PetscCall(VecAXPBYPCZ(Y, c2, c3, c1, X, Z));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (how == CHEBF_FUSE_SPMV && (norm != CHEBF_NORM_NONE || !X)) how = CHEBF_FUSE_UPDATE; /* the norm's reduction, or no product */
  {
    Vec            v[5]      = {b, dinv ? dinv : b, X ? X : b, Y ? Y : b, R};
    const GSAccess access[5] = {GS_ACCESS_READ, GS_ACCESS_READ, GS_ACCESS_READ, c1 != 0 ? GS_ACCESS_READWRITE : GS_ACCESS_WRITE, GS_ACCESS_READ};
    GSVecArray     a[5];
    PetscReal      sum = 0;
    PetscErrorCode ierr;
    PetscInt       n, nv = (how == CHEBF_FUSE_UPDATE && X) ? 5 : 4;
    PetscBool      ydup = (PetscBool)(!Y || Y == b || Y == dinv || Y == X); /* never: Y is its own vector */

    PetscCheck(!ydup, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The step's output must be a vector of its own");
    if (how == CHEBF_FUSE_UPDATE && X) PetscCall(KSP_MatMult(ksp, Amat, X, R));
    PetscCall(VecGetLocalSize(b, &n));
    PetscCall(PetscLogEventBegin(CHEBF_Step, ksp, 0, 0, 0));
    PetscCall(GSVecGetArrays(nv, v, access, a));
    ierr = ChebFStep(n, how == CHEBF_FUSE_SPMV ? dA : NULL, nv == 5 ? a[4].array : NULL, a[0].array, dinv ? a[1].array : NULL, X ? a[2].array : NULL, a[3].array, c1, c2, c3, norm, &sum);
    PetscCall(GSVecRestoreArrays(nv, v, a));
    PetscCall(ierr);
    PetscCall(PetscLogEventEnd(CHEBF_Step, ksp, 0, 0, 0));
    if (norm != CHEBF_NORM_NONE) {
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
      *rnorm = PetscSqrtReal(sum);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A residual norm with no update: the unfused step's vectors, or a step into the work vector Z with c3 = 0 */
static PetscErrorCode KSPChebyshevFNorm_Private(KSP ksp, ChebFFuse how, Mat Amat, GSDeviceMat dA, Vec dinv, Vec X, PetscReal *rnorm)
{
  PetscFunctionBegin;
  PetscCall(KSPChebyshevFStep_Private(ksp, how, Amat, dA, dinv, X, how == CHEBF_FUSE_NONE ? NULL : ksp->work[2], 0, 0, 0, rnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPChebyshevFMonitor_Private(KSP ksp, PetscInt i, PetscReal rnorm, PetscBool test)
{
  PetscFunctionBegin;
  KSPCheckNorm(ksp, rnorm);
  PetscCall(PetscObjectSAWsTakeAccess((PetscObject)ksp));
  ksp->rnorm = rnorm;
  PetscCall(PetscObjectSAWsGrantAccess((PetscObject)ksp));
  PetscCall(KSPLogResidualHistory(ksp, rnorm));
  PetscCall(KSPMonitor(ksp, i, rnorm));
  if (test) PetscCall((*ksp->converged)(ksp, i, rnorm, &ksp->reason, ksp->cnvP));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPCHEBYSHEV's first kind: x_1 = x_0 + s D^{-1} r_0, x_{k+1} = (1 - w_k) x_{k-1} + w_k x_k + w_k s D^{-1} r_k, one
   step each. x_{k+1} overwrites x_{k-1} in place (each row reads only its own), so two vectors hold the iterates;
   with a norm the step also sums r_k's, whose test may keep x_k. */
static PetscErrorCode KSPSolve_CHEBYSHEVF(KSP ksp)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;
  PetscReal       emax, emin, rnorm = 0;
  PetscScalar     scale, alpha, mu, omegaprod, omega, c[3];
  Mat             Amat, Pmat;
  Vec             sol = ksp->vec_sol, cur, prev, dinv;
  GSDeviceMat     dA;
  ChebFFuse       how;
  PetscBool       diagonalscale;
  PetscInt        i;

  PetscFunctionBegin;
  PetscCall(PCGetDiagonalScale(ksp->pc, &diagonalscale));
  PetscCheck(!diagonalscale, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "Krylov method %s does not support diagonal scaling", ((PetscObject)ksp)->type_name);
  PetscCheck(!ksp->transpose_solve, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s has no transpose solve", ((PetscObject)ksp)->type_name);
  PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
  PetscCall(KSPChebyshevFEigenvalues_Private(ksp, &emax, &emin));
  PetscCheck(emax > emin && emax * emin > 0 && !PetscIsInfOrNanReal(emax) && !PetscIsInfOrNanReal(emin), PetscObjectComm((PetscObject)ksp), PETSC_ERR_CONV_FAILED,
             "%s has no usable eigenvalue bounds: min %g, max %g (-%sksp_chebyshevf_eigenvalues, or the estimate's -%sesteig_ksp_view)", ((PetscObject)ksp)->type_name, (double)emin, (double)emax, GSPrefix((PetscObject)ksp),
             GSPrefix((PetscObject)ksp));
  PetscCall(KSPChebyshevFPlan_Private(ksp, Amat, Pmat, &how, &dA, &dinv));
  cf->used = how == CHEBF_FUSE_SPMV && ksp->normtype != KSP_NORM_NONE ? CHEBF_FUSE_UPDATE : how; /* a norm keeps the product out */

  PetscCall(PetscObjectSAWsTakeAccess((PetscObject)ksp));
  ksp->its    = 0;
  ksp->reason = KSP_CONVERGED_ITERATING;
  PetscCall(PetscObjectSAWsGrantAccess((PetscObject)ksp));
  scale     = 2.0 / (emax + emin);
  alpha     = 1.0 - scale * emin;
  mu        = 1.0 / alpha;
  omegaprod = 2.0 / alpha;
  c[0]      = 1.0;
  c[1]      = mu;
  cur       = sol;
  prev      = ksp->work[0];
  if (ksp->max_it == 0) { /* a V(0,x) cycle: no step, the norm if asked */
    if (ksp->normtype != KSP_NORM_NONE) {
      PetscCall(KSPChebyshevFNorm_Private(ksp, how, Amat, dA, dinv, ksp->guess_zero ? NULL : sol, &rnorm));
      PetscCall(KSPChebyshevFMonitor_Private(ksp, 0, rnorm, PETSC_TRUE));
    }
    if (!ksp->reason) ksp->reason = KSP_DIVERGED_ITS;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* step 0: x_1 = x_0 + s D^{-1} r_0 into the second vector, r_0's norm tested first; a zero x_0 (KSPSolve() set it)
     is not read */
  PetscCall(KSPChebyshevFStep_Private(ksp, how, Amat, dA, dinv, ksp->guess_zero ? NULL : sol, prev, 0, 1, scale, &rnorm));
  if (ksp->normtype != KSP_NORM_NONE) {
    PetscCall(KSPChebyshevFMonitor_Private(ksp, 0, rnorm, PETSC_TRUE));
    if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  }
  cur      = ksp->work[0];
  prev     = sol;
  ksp->its = 1;
  for (i = 1; i < ksp->max_it; i++) {
    Vec t;
    ksp->its++;
    c[2]         = 2.0 * mu * c[1] - c[0];
    omega        = omegaprod * c[1] / c[2];
    ksp->vec_sol = cur;
    PetscCall(KSPChebyshevFStep_Private(ksp, how, Amat, dA, dinv, cur, prev, 1.0 - omega, omega, omega * scale, &rnorm));
    if (ksp->normtype != KSP_NORM_NONE) {
      PetscCall(KSPChebyshevFMonitor_Private(ksp, i, rnorm, PETSC_TRUE));
      if (ksp->reason) break; /* x_k, in cur */
    }
    t    = cur;
    cur  = prev;
    prev = t;
    c[0] = c[1];
    c[1] = c[2];
  }
  ksp->vec_sol = sol;
  if (!ksp->reason) {
    if (ksp->normtype != KSP_NORM_NONE) {
      PetscCall(KSPChebyshevFNorm_Private(ksp, how, Amat, dA, dinv, cur, &rnorm));
      PetscCall(KSPChebyshevFMonitor_Private(ksp, i, rnorm, PETSC_TRUE));
      if (!ksp->reason) ksp->reason = KSP_DIVERGED_ITS;
    } else
      ksp->reason = KSP_CONVERGED_ITS;
  }
  if (cur != sol) PetscCall(VecCopy(cur, sol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_CHEBYSHEVF(KSP ksp, PetscViewer viewer)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;
  PetscBool       iascii;
  PetscReal       emax, emin;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  Chebyshev polynomial of the first kind, each step one kernel on Kokkos %s\n", GSExecutionSpace()));
  PetscCall(KSPChebyshevFEigenvalues_Private(ksp, &emax, &emin));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  eigenvalue targets used: min %g, max %g\n", (double)emin, (double)emax));
  if (cf->kspest && !(cf->emin != 0 && cf->emax != 0)) {
    PetscCall(
        PetscViewerASCIIPrintf(viewer, "  eigenvalues estimated via %s: min %g, max %g (%" PetscInt_FMT " %s)\n", ((PetscObject)cf->kspest)->type_name, (double)cf->emin_est, (double)cf->emax_est, cf->nest, GSNoun(cf->nest, "estimate", "estimates")));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  eigenvalues estimated using %s with transform: [%g %g; %g %g]\n", ((PetscObject)cf->kspest)->type_name, (double)cf->tform[0], (double)cf->tform[1], (double)cf->tform[2], (double)cf->tform[3]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %s right-hand side for the estimate%s (-ksp_chebyshevf_esteig_noisy), %" PetscInt_FMT " steps (-ksp_chebyshevf_esteig_steps)\n", cf->usenoisy ? "noisy" : "the solve's",
                                     cf->usenoisy ? (GSOnDevice() ? ", written on the device" : ", written by a kernel") : "", cf->eststeps));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(KSPView(cf->kspest, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  steps: -ksp_chebyshevf_fuse %s; the last solve's %s\n", ChebFFuses[cf->fuse],
                                   cf->used == CHEBF_FUSE_SPMV ? "fused the product, residual, Jacobi and update in one kernel"
                                                               : (cf->used == CHEBF_FUSE_UPDATE ? "ran MatMult, then residual, Jacobi and update in one kernel" : "ran PETSc's vector operations and PCApply")));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_CHEBYSHEVF(KSP ksp, GSOptionItems PetscOptionsObject)
{
  KSP_CHEBYSHEVF *cf         = (KSP_CHEBYSHEVF *)ksp->data;
  PetscReal       eminmax[2] = {0., 0.}, tform[4] = {PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE};
  PetscInt        neig = 2, nest = 4, steps = cf->eststeps;
  PetscBool       flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP Chebyshev with fused kernels options");
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_chebyshevf_fuse", GS_OPTION_LIST, ChebFFuses, 4));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_chebyshevf_esteig_noisy", GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, "-ksp_chebyshevf_esteig_steps", GS_OPTION_INT, NULL, 0));
  PetscCall(PetscOptionsEnum("-ksp_chebyshevf_fuse", "How each step runs: its product fused in (spmv), MatMult then one kernel (update), PETSc's vector operations (none); auto: the most fused that applies", "KSPCHEBYSHEVF", ChebFFuses,
                             (PetscEnum)cf->fuse, (PetscEnum *)&cf->fuse, NULL));
  PetscCall(PetscOptionsInt("-ksp_chebyshevf_esteig_steps", "Iterations of the eigenvalue estimate", "KSPCHEBYSHEVF", steps, &steps, &flg));
  if (flg) {
    GSOptionsCheck(PetscOptionsObject, steps > 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-%sksp_chebyshevf_esteig_steps must be positive, not %" PetscInt_FMT, GSPrefix((PetscObject)ksp), steps);
    cf->eststeps = steps;
    if (cf->kspest) PetscCall(KSPSetTolerances(cf->kspest, 1.e-12, PETSC_DEFAULT, PETSC_DEFAULT, steps));
  }
  PetscCall(PetscOptionsRealArray("-ksp_chebyshevf_eigenvalues", "Extreme eigenvalues min,max (no estimate)", "KSPChebyshevSetEigenvalues", eminmax, &neig, &flg));
  if (flg) {
    GSOptionsCheck(PetscOptionsObject, neig == 2, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-%sksp_chebyshevf_eigenvalues: give two values, min and max", GSPrefix((PetscObject)ksp));
    GSOptionsCheck(PetscOptionsObject, eminmax[1] > eminmax[0] && eminmax[0] * eminmax[1] > 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-%sksp_chebyshevf_eigenvalues: min %g and max %g must have the same sign, max > min",
                   GSPrefix((PetscObject)ksp), (double)eminmax[0], (double)eminmax[1]);
    PetscCall(KSPChebyshevSetEigenvalues_CHEBYSHEVF(ksp, eminmax[1], eminmax[0]));
  }
  PetscCall(PetscOptionsRealArray("-ksp_chebyshevf_esteig", "Estimate the eigenvalues, then use this transform a,b,c,d (emin = a min + b max, emax = c min + d max)", "KSPChebyshevEstEigSet", tform, &nest, &flg));
  if (flg) {
    GSOptionsCheck(PetscOptionsObject, nest == 0 || nest == 2 || nest == 4, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-%sksp_chebyshevf_esteig: give 0, 2 or 4 values, not %" PetscInt_FMT, GSPrefix((PetscObject)ksp), nest);
    if (nest == 2)
      PetscCall(KSPChebyshevEstEigSet_CHEBYSHEVF(ksp, PETSC_DECIDE, tform[0], PETSC_DECIDE, tform[1]));
    else
      PetscCall(KSPChebyshevEstEigSet_CHEBYSHEVF(ksp, tform[0], tform[1], tform[2], tform[3]));
  }
  PetscCall(PetscOptionsBool("-ksp_chebyshevf_esteig_noisy", "Estimate with PETSc's noisy right-hand side (written on the device), else the solve's", "KSPChebyshevEstEigSetUseNoisy", cf->usenoisy, &cf->usenoisy, NULL));
  if (!(cf->emin != 0 && cf->emax != 0)) {
    PetscCall(KSPChebyshevFCreateEstimator_Private(ksp));
    PetscCall(KSPSetFromOptions(cf->kspest));
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_CHEBYSHEVF(KSP ksp)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  if (cf->kspest) PetscCall(KSPReset(cf->kspest));
  PetscCall(VecDestroy(&cf->dinv));
  cf->dinvmat = NULL;
  cf->amatid  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_CHEBYSHEVF(KSP ksp)
{
  KSP_CHEBYSHEVF *cf = (KSP_CHEBYSHEVF *)ksp->data;

  PetscFunctionBegin;
  PetscCall(KSPDestroy(&cf->kspest));
  PetscCall(VecDestroy(&cf->dinv));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevSetEigenvalues_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigSet_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigSetUseNoisy_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigGetKSP_C", NULL));
  PetscCall(KSPDestroyDefault(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   KSPCHEBYSHEVF - KSPCHEBYSHEVF = "chebyshevf" - Chebyshev iteration with each step in one GPU kernel, for the
   smoothers of `PCMG` and `PCGAMG`.

   `KSPCHEBYSHEV`'s polynomial of the first kind: x_1 = x_0 + s D^{-1} r_0, then
   x_{k+1} = (1 - w_k) x_{k-1} + w_k x_k + w_k s D^{-1} r_k. With `PCJACOBI` or `PCNONE` and the vectors on the device
   each step is one kernel: on one process with a resident `MATGPUSTREAM` operator the product, the residual, the
   Jacobi scaling and the update of the iterate in one pass over the matrix (`KSPCHEBYSHEV` makes five passes over
   the vectors a step), else `MatMult()` followed by one kernel for the rest. The eigenvalue bounds are estimated as
   `KSPCHEBYSHEV` estimates them: the same estimator `KSP` (options prefix esteig_, `KSPCG` for an operator known to
   be SPD, else `KSPGMRES`), the same noisy right-hand side, written on the device instead of the host, and the same
   transform, so that the iterations match `KSPCHEBYSHEV`'s; again after each change of the operators.

   Options Database Keys:
+  -ksp_type chebyshevf - selects this method (`-mg_levels_ksp_type chebyshevf` for the smoothers of `PCMG` and `PCGAMG`)
.  -ksp_chebyshevf_eigenvalues <emin,emax> - the bounds, no estimate
.  -ksp_chebyshevf_esteig <a,b,c,d> - the estimate's transform: emin = a min + b max, emax = c min + d max (0,0.1,0,1.1)
.  -ksp_chebyshevf_esteig_steps <10> - iterations of the estimate
.  -ksp_chebyshevf_esteig_noisy <true> - the noisy right-hand side for the estimate, else the solve's
-  -ksp_chebyshevf_fuse <auto,spmv,update,none> - how a step runs: the product in the step's kernel, `MatMult()` then
   one kernel, or PETSc's vector operations (any PC and any vectors); auto: the most fused that applies

   Level: intermediate

   Notes:
   The `KSPChebyshevSetEigenvalues()`, `KSPChebyshevEstEigSet()`, `KSPChebyshevEstEigSetUseNoisy()` and
   `KSPChebyshevEstEigGetKSP()` calls work on it. Preconditioned, unpreconditioned and no norm (a smoother's), left
   preconditioning; a norm adds one reduction a step and keeps the product out of the step's kernel. Any other PC is
   applied with `PCApply()` through PETSc's vector operations. `PCGAMG` hands its smoothed-aggregation estimate to
   `KSPCHEBYSHEV` alone: this type always estimates. The fourth-kind polynomials of `KSPCHEBYSHEV` are not offered.

.seealso: `KSPCHEBYSHEV`, `KSPChebyshevSetEigenvalues()`, `KSPChebyshevEstEigSet()`, `PCMG`, `PCGAMG`, `MATGPUSTREAM`, `KSPPIPECGFUSED`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_CHEBYSHEVF(KSP ksp)
{
  KSP_CHEBYSHEVF *cf;

  PetscFunctionBegin;
  PetscCall(PetscNew(&cf));
  ksp->data = (void *)cf;
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_RIGHT, 1));
  cf->tform[0]        = 0.0;
  cf->tform[1]        = 0.1;
  cf->tform[2]        = 0.0;
  cf->tform[3]        = 1.1;
  cf->eststeps        = 10;
  cf->usenoisy        = PETSC_TRUE;
  cf->fuse            = CHEBF_FUSE_AUTO;
  cf->used            = CHEBF_FUSE_AUTO;
  cf->amatstate       = -1;
  cf->pmatstate       = -1;
  ksp->setupnewmatrix = PETSC_TRUE;

  ksp->ops->setup          = KSPSetUp_CHEBYSHEVF;
  ksp->ops->solve          = KSPSolve_CHEBYSHEVF;
  ksp->ops->destroy        = KSPDestroy_CHEBYSHEVF;
  ksp->ops->buildsolution  = KSPBuildSolutionDefault;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  ksp->ops->setfromoptions = KSPSetFromOptions_CHEBYSHEVF;
  ksp->ops->view           = KSPView_CHEBYSHEVF;
  ksp->ops->reset          = KSPReset_CHEBYSHEVF;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevSetEigenvalues_C", KSPChebyshevSetEigenvalues_CHEBYSHEVF));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigSet_C", KSPChebyshevEstEigSet_CHEBYSHEVF));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigSetUseNoisy_C", KSPChebyshevEstEigSetUseNoisy_CHEBYSHEVF));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPChebyshevEstEigGetKSP_C", KSPChebyshevEstEigGetKSP_CHEBYSHEVF));
  PetscFunctionReturn(PETSC_SUCCESS);
}
