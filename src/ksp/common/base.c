#include "base.h"
#include "pcblocks.h"
#include "rightpc.h"

PetscErrorCode GSKSPCreate(KSP ksp, size_t size, PCSide side, const GSKSPOps *ops)
{
  GSKSPBase *base;

  PetscFunctionBegin;
  PetscCall(PetscCalloc(size, &base));
  ksp->data = (void *)base;
  base->ops = ops;
  if (side == PC_LEFT) {
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
  ksp->ops->solve          = ops->solve;
  ksp->ops->destroy        = ops->destroy;
  ksp->ops->view           = ops->view;
  ksp->ops->reset          = ops->reset;
  ksp->ops->buildsolution  = ops->buildsolution ? ops->buildsolution : GSKSPBuildSolution;
  ksp->ops->matsolve       = ops->matsolve;
  ksp->ops->setfromoptions = ops->setfromoptions;
  ksp->setupnewmatrix      = PETSC_TRUE; /* GSKSPSetUp() for each new operator */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPSetUp(KSP ksp)
{
  GSKSPBase  *base = (GSKSPBase *)ksp->data;
  Mat         Amat, Pmat;
  GSDeviceMat dA, dB;
  GSHalo      halo;
  PetscBool   set;
  PetscInt    n;

  PetscFunctionBegin;
  PetscCall(KSPGetOperatorsSet(ksp, &set, NULL));
  if (set) {
    PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
    PetscCall(MatGetLocalSize(Amat, NULL, &n));
    PetscCall((*base->ops->allocate)(ksp, Amat, Pmat, n, &dA, &dB, &halo));
  }
  if (ksp->setupstage == KSP_SETUP_NEW) PetscCall(KSPSetWorkVecs(ksp, base->ops->nwork));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPResetBase(KSP ksp)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  base->work    = NULL;
  base->n       = 0;
  base->dinvmat = NULL;
  base->passes  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPGetDeviceOperator(KSP ksp, Mat Amat, GSDeviceMat *dA, GSDeviceMat *dB, GSHalo *halo)
{
  PetscBool gs;

  PetscFunctionBegin;
  *dA   = NULL;
  *dB   = NULL;
  *halo = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)Amat, MATGPUSTREAM, &gs));
  if (gs) PetscCall(MatGPUStreamGetDeviceMat(Amat, dA, dB, halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSKSPGetPC(KSP ksp, Mat Pmat, GSKSPPC *pc, PetscInt *bs)
{
  PetscBool jacobi, pbjacobi, none;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCPBJACOBI, &pbjacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(MatGetBlockSize(Pmat, bs));
  *pc = none ? GS_PC_NONE : (jacobi ? GS_PC_JACOBI : (pbjacobi ? GS_PC_PBJACOBI : GS_PC_APPLY));
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

PetscErrorCode GSKSPSolveBegin(KSP ksp, Mat *Amat, Mat *Pmat, GSDeviceMat *dA, GSDeviceMat *dB, GSHalo *halo)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;
  PetscInt   n;

  PetscFunctionBegin;
  PetscCheck(!ksp->transpose_solve, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s has no transpose solve", base->ops->name);
  base->logged = GSLoggedCopies();
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &base->size));
  PetscCall(PCGetOperators(ksp->pc, Amat, Pmat));
  /* the device allocations for the solve's vectors: KSPSetUp() made them, and any that changed since are made now */
  PetscCall(VecGetLocalSize(ksp->vec_sol, &n));
  PetscCall((*base->ops->allocate)(ksp, *Amat, *Pmat, n, dA, dB, halo));
  PetscCall(GSKSPSetInverseDiagonal(ksp, *Pmat));
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

PetscErrorCode GSKSPHostMult(KSP ksp, Mat A, PetscInt in, Vec X, PetscInt out, Vec Y)
{
  GSKSPBase *base = (GSKSPBase *)ksp->data;

  PetscFunctionBegin;
  PetscCall(GSWorkStore(base->work, in, X));
  PetscCall(KSP_MatMult(ksp, A, X, Y));
  PetscCall(GSWorkLoad(base->work, out, Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}
