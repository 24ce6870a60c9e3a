#include "base.h"
#include "pcblocks.h"
#include "rightpc.h"

PetscErrorCode GSKSPCreate(KSP ksp, const GSKSPOps *ops, size_t size, const void *defaults)
{
  GSKSPBase *base;

  PetscFunctionBegin;
  PetscCall(PetscMalloc(size, &base));
  PetscCall(PetscMemcpy(base, defaults, size));
  ksp->data = (void *)base;
  base->ops = ops;
  base->x   = ops->kind.x;
  if (ops->kind.gap) {
    PetscCall(GSResidualGapInit(&base->gap, ops->kind.gap));
    PetscCall(KSPConvergedReasonViewSet(ksp, GSResidualGapReasonView, &base->gap, NULL));
  }
  if (ops->kind.side == PC_LEFT) {
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 2));
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 2));
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 2));
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  } else {
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_RIGHT, 2));
    PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_RIGHT, 1));
    PetscCall(GSRightPCCreate(ksp));
  }
#if defined(GPUSTREAM_PETSC_KSP_GUESS_NOT_READ)
  ksp->guess_not_read = PETSC_TRUE; /* a zero initial guess is never read: x is written at the end */
#endif
  ksp->ops->setup          = GSKSPSetUp;
  ksp->ops->solve          = ops->f.solve;
  ksp->ops->destroy        = GSKSPDestroy;
  ksp->ops->view           = GSKSPView;
  ksp->ops->reset          = GSKSPReset;
  ksp->ops->buildsolution  = ops->f.buildsolution ? ops->f.buildsolution : GSKSPBuildSolution;
  ksp->ops->matsolve       = ops->f.matsolve;
  ksp->ops->setfromoptions = GSKSPSetFromOptions;
  ksp->setupnewmatrix      = PETSC_TRUE; /* GSKSPSetUp() for each new operator */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPSetUp(KSP ksp)
{
  GSKSPBase     *base = (GSKSPBase *)ksp->data;
  GSKSPOperators o;
  Mat            Amat;
  PetscBool      set;
  PetscInt       n;

  PetscFunctionBegin;
  PetscCall(KSPGetOperatorsSet(ksp, &set, NULL));
  if (set) {
    PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
    PetscCall(MatGetLocalSize(Amat, NULL, &n));
    PetscCall(GSKSPGetOperators(ksp, n, &o));
    PetscCall((*base->ops->kind.allocate)(ksp, &o));
  }
  if (ksp->setupstage == KSP_SETUP_NEW) PetscCall(KSPSetWorkVecs(ksp, base->ops->kind.nwork));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPView(KSP ksp, PetscViewer viewer)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;
  PetscBool  isascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (isascii) PetscCall((*base->ops->f.view)(ksp, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPSetFromOptions(KSP ksp, GSOptionItems PetscOptionsObject)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, base->ops->kind.title);
  PetscCall((*base->ops->f.setfromoptions)(ksp, PetscOptionsObject));
  if (base->ops->kind.gap) PetscCall(GSResidualGapSetFromOptions(&base->gap, ksp, PetscOptionsObject));
  if (base->ops->kind.side == PC_RIGHT) PetscCall(GSRightPCSetFromOptions(ksp, PetscOptionsObject, base->ops->kind.name, base->ops->kind.twin));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPOptionsIntAtLeast(KSP ksp, GSOptionItems PetscOptionsObject, const char name[], const char text[], PetscInt min, const char what[], PetscInt *value, PetscBool *set)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;
  PetscInt   v;
  PetscBool  flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsInt(name, text, base->ops->kind.name, *value, &v, &flg));
  if (flg) {
    GSOptionsCheck(PetscOptionsObject, v >= min, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-%s%s must be %s, not %" PetscInt_FMT, GSPrefix((PetscObject)ksp), name + 1, what, v);
    *value = v;
  }
  if (set) *set = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's reason view (the true residual check) leaves with it: a change of type frees its context */
PetscErrorCode GSKSPDestroy(KSP ksp)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  if (base->ops->kind.gap) PetscCall(GSResidualGapReasonViewRemove(ksp, &base->gap));
  if (base->ops->f.destroy) PetscCall((*base->ops->f.destroy)(ksp));
  PetscCall(GSKSPReset(ksp));
  PetscCall(KSPDestroyDefault(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPReset(KSP ksp)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  PetscCall((*base->ops->f.reset)(ksp));
  base->work    = NULL;
  base->n       = 0;
  base->dinvmat = NULL;
  base->passes  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPGetOperators(KSP ksp, PetscInt n, GSKSPOperators *o)
{
  PetscBool gs, jacobi, pbjacobi, none;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(o, sizeof(*o)));
  o->n = n;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &o->size));
  PetscCall(PCGetOperators(ksp->pc, &o->Amat, &o->Pmat));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->Amat, MATGPUSTREAM, &gs));
  if (gs) PetscCall(MatGPUStreamGetDeviceMat(o->Amat, &o->dA, &o->dB, &o->halo));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCPBJACOBI, &pbjacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(MatGetBlockSize(o->Pmat, &o->bs));
  o->pc = none ? GS_PC_NONE : (jacobi ? GS_PC_JACOBI : (pbjacobi ? GS_PC_PBJACOBI : GS_PC_APPLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool GSKSPWorkStale(KSP ksp, PetscInt n, GSKSPPC pc, PetscInt bs, PetscBool other)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  if (base->work && base->n == n && base->pc == pc && base->bs == bs && !other) return PETSC_FALSE;
  base->work    = NULL;
  base->n       = 0;
  base->dinvmat = NULL;
  return PETSC_TRUE;
}

PetscErrorCode GSKSPSetWork(KSP ksp, GSWork work, PetscInt n, GSKSPPC pc, PetscInt bs)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  base->work = work;
  base->n    = n;
  base->pc   = pc;
  base->bs   = bs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* D^{-1} from the PC applied to vectors of ones (GSPCGetInverseBlocks()), when the kernels fuse (point-block) Jacobi
   and Pmat or its state changed since */
static PetscErrorCode GSKSPSetInverseDiagonal(KSP ksp, Mat Pmat)
{
  GSKSPBase       *base = (GSKSPBase *)ksp->data;
  PetscObjectState state;
  PetscScalar     *blk;

  PetscFunctionBegin;
  if (base->pc != GS_PC_JACOBI && base->pc != GS_PC_PBJACOBI) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectStateGet((PetscObject)Pmat, &state));
  if (base->dinvmat == Pmat && base->dinvstate == state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSPCGetInverseBlocks(ksp->pc, base->bs, ksp->work[0], ksp->work[1], &blk));
  PetscCall(GSWorkSetBlocks(base->work, base->bs, blk));
  PetscCall(PetscFree(blk));
  base->dinvmat   = Pmat;
  base->dinvstate = state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPSolveBegin(KSP ksp, GSKSPOperators *o)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;
  PetscInt   n;

  PetscFunctionBegin;
  PetscCheck(!ksp->transpose_solve, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s has no transpose solve", base->ops->kind.name);
  base->logged = GSLoggedCopies();
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &base->size));
  /* the device allocations for the solve's vectors: KSPSetUp() made them, and any that changed since are made now */
  PetscCall(VecGetLocalSize(ksp->vec_sol, &n));
  PetscCall(GSKSPGetOperators(ksp, n, o));
  PetscCall((*base->ops->kind.allocate)(ksp, o));
  PetscCall(GSKSPSetInverseDiagonal(ksp, o->Pmat));
  base->allreduces = 0;
  base->discarded  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPIterationsBegin(KSP ksp)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  PetscCall(GSWorkGetCounts(base->work, &base->l0, &base->t0, &base->c0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPIterationsEnd(KSP ksp, PetscInt passes)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;
  PetscInt   l1, t1, c1;

  PetscFunctionBegin;
  PetscCall(GSWorkGetCounts(base->work, &l1, &t1, &c1));
  base->passes    = passes;
  base->launches  = l1 - base->l0 - base->discarded;
  base->transfers = t1 - base->t0;
  base->copies    = c1 - base->c0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPSolveEnd(KSP ksp, PetscBool store)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  if (store && base->solving) PetscCall(GSWorkStore(base->work, base->x, ksp->vec_sol));
  base->solving    = PETSC_FALSE;
  base->hostcopies = (PetscInt)(GSLoggedCopies() - base->logged);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Monitors that need x mid-solve (-ksp_monitor_true_residual) get the device iterate */
PetscErrorCode GSKSPBuildSolution(KSP ksp, Vec v, Vec *V)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  if (base->solving) PetscCall(GSWorkStore(base->work, base->x, ksp->vec_sol));
  if (v) {
    PetscCall(VecCopy(ksp->vec_sol, v));
    if (V) *V = v;
  } else if (V)
    *V = ksp->vec_sol;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPViewCounts(KSP ksp, PetscViewer viewer)
{
  GSKSPBase   *base = (GSKSPBase *)ksp->data;
  const double l = (double)base->launches / (double)base->passes, t = (double)base->transfers / (double)base->passes, c = (double)base->copies / (double)base->passes;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  per iteration: %.3g %s, %.3g %s, %.3g %s\n", l, GSNounReal(l, 3, "kernel launch", "kernel launches"), t, GSNounReal(t, 3, "device-to-host reduction", "device-to-host reductions"), c,
                                   GSNounReal(c, 3, "vector copy", "vector copies")));
  PetscCall(GSHostCopiesView(viewer, base->hostcopies));
  if (base->size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "  MPI_Allreduce calls per iteration: %.3g\n", (double)base->allreduces / (double)base->passes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPHostResidual(KSP ksp, Mat A, Vec X, Vec B, Vec R)
{
  PetscFunctionBegin;
  if (ksp->guess_zero) {
    PetscCall(VecSet(X, 0.0));
    PetscCall(VecCopy(B, R));
  } else {
    PetscCall(KSP_MatMult(ksp, A, X, R));
    PetscCall(VecAYPX(R, -1.0, B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPLoadResidual(KSP ksp, Mat A, PetscInt r, PetscInt x, Vec R)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  if (ksp->guess_zero) {
    PetscCall(GSWorkLoad(base->work, r, ksp->vec_rhs));
    PetscCall(GSWorkZero(base->work, x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(KSP_MatMult(ksp, A, ksp->vec_sol, R));
  PetscCall(VecAYPX(R, -1.0, ksp->vec_rhs));
  PetscCall(GSWorkLoad(base->work, r, R));
  PetscCall(GSWorkLoad(base->work, x, ksp->vec_sol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPHostMult(KSP ksp, Mat A, PetscInt in, Vec X, PetscInt out, Vec Y)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  PetscCall(GSWorkStore(base->work, in, X));
  PetscCall(KSP_MatMult(ksp, A, X, Y));
  PetscCall(GSWorkLoad(base->work, out, Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}
