/* MATSOLVERGPUSTREAM: ILU(0) and ICC(0) of a sequential gpustream matrix with the numeric factorization and both
   triangular solves on the device (factor.kokkos.cxx: Kokkos-Kernels' spiluk and sptrsv), where the plugin is built with
   Kokkos-Kernels; LU and ILU the device cannot factor (fill, orderings, shifted pivots) factored on the host and solved
   on the device. The factor is MATSOLVERPETSC's host factor (aijreaders.c), whose operations these replace where the
   device does the work and which does it where it does not (see MatFactorHostReason_Private()). */
#include <petsc/private/matimpl.h>
#include "../../stream/streamimpl.h"

#if defined(GPUSTREAM_HAVE_KOKKOSKERNELS)

const char *const GSTriBackends[] = {"auto", "kokkoskernels", "cusparse", "jacobi", "GSTriBackend", "GS_TRI_BACKEND_", NULL};

typedef struct {
  MatFactorType    ftype;
  GSTriBackend     backend;   /* -mat_gpustream_trisolve */
  PetscInt         sweeps;    /* -mat_gpustream_trisolve_sweeps, for jacobi */
  PetscInt         fsweeps;   /* -mat_gpustream_factor_sweeps: fixed-point sweeps of the numeric factorization (0: spiluk's) */
  PetscInt         onekernel; /* -mat_gpustream_trisolve_one_kernel: 1 on, 0 off, -1 auto (not given) */
  GSTriFactor      tri;       /* the device factors; NULL where the host factors */
  GSTriFactor      htri;      /* the host factor's L and U on the device, for its solves there */
  GSTriFactor      solver;    /* the one the device solves use: tri or htri */
  PetscBool        devsolves; /* a host factorization's solves go to the device (MatFactorHostSolves_Private()) */
  IS               row, col;  /* the orderings of the host's symbolic factorization */
  const char      *host;      /* why the host factors (NULL: the device does) */
  char             why[128];  /* room for a reason with numbers */
  PetscBool        hostsymbolic;
  PetscBool        ondevice; /* the last numeric factorization is the device's */
  PetscInt         numeric;  /* numeric factorizations so far */
  PetscInt         shifted;  /* those the host did because a pivot asked for PETSc's shift */
  PetscObjectState nzstate;  /* the matrix's nonzero state at the symbolic factorization */
  PetscErrorCode (*hostilu)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*hostlu)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*hosticc)(Mat, Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*view)(Mat, PetscViewer);
  struct _MatOps hostops; /* the host factor's operations after its symbolic phase */
} Mat_GSFactor;

static PetscErrorCode MatView_GSFactor(Mat, PetscViewer);

static PetscErrorCode MatFactorGetSolverType_GPUStream(Mat F, MatSolverType *type)
{
  PetscFunctionBegin;
  *type = MATSOLVERGPUSTREAM;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_GSFactor(Mat F)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;

  PetscFunctionBegin;
  F->ops->destroy = fs->destroy;
  PetscCall(GSTriFactorDestroy(&fs->tri));
  PetscCall(GSTriFactorDestroy(&fs->htri));
  PetscCall(ISDestroy(&fs->row));
  PetscCall(ISDestroy(&fs->col));
  PetscCall(PetscFree(F->spptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatFactorGetSolverType_C", NULL));
  PetscCall((*F->ops->destroy)(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolve_GSFactor_Private(Mat F, Vec b, Vec x, GSTriSolve mode)
{
  Mat_GSFactor  *fs        = (Mat_GSFactor *)F->spptr;
  Vec            v[2]      = {b, x};
  const GSAccess access[2] = {GS_ACCESS_READ, GS_ACCESS_WRITE};
  GSVecArray     a[2];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(GSVecGetArrays(2, v, access, a));
  ierr = GSTriFactorSolve(fs->solver, mode, a[0].array, a[1].array, a[0].device);
  PetscCall(GSVecRestoreArrays(2, v, a)); /* also after a failed solve: the vectors are not left locked */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solves of the factor's operations, one for each mode. ICC's symmetric application (PCApplySymmetricLeft/Right)
   has its halves, with PETSc's factor U^T D U written as L D L^T (U = D L^T): forward (U^T D^(1/2))^-1 b, backward
   (D^(1/2) U)^-1 b */
#  define GS_FACTOR_SOLVE(fn, mode)                                                                                                                                                                                                                      \
    static PetscErrorCode fn(Mat F, Vec b, Vec x)                                                                                                                                                                                                        \
    {                                                                                                                                                                                                                                                    \
      PetscFunctionBegin;                                                                                                                                                                                                                                \
      PetscCall(MatSolve_GSFactor_Private(F, b, x, mode));                                                                                                                                                                                               \
      PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                \
    }
GS_FACTOR_SOLVE(MatSolve_GSFactor, GS_TRI_SOLVE)
GS_FACTOR_SOLVE(MatSolveTranspose_GSFactor, GS_TRI_TRANSPOSE)
GS_FACTOR_SOLVE(MatForwardSolve_GSFactor, GS_TRI_FORWARD)
GS_FACTOR_SOLVE(MatBackwardSolve_GSFactor, GS_TRI_BACKWARD)

static PetscErrorCode MatGetInfo_GSFactor(Mat F, MatInfoType flag, MatInfo *info)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;
  PetscCount    nnzL, nnzU;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  PetscCall(GSTriFactorGetInfo(fs->tri, &nnzL, &nnzU, NULL, NULL, NULL));
  /* as PETSc's host factors count them: L's strict lower part with U (ILU), U alone (ICC) */
  info->nz_used = info->nz_allocated = (PetscLogDouble)(fs->ftype == MAT_FACTOR_ICC ? nnzU : nnzL - F->rmap->n + nnzU);
  info->block_size                   = 1.0;
  info->assemblies                   = 1.0;
  info->fill_ratio_given             = F->info.fill_ratio_given;
  info->fill_ratio_needed            = F->info.fill_ratio_needed;
  info->factor_mallocs               = F->info.factor_mallocs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operations of a factor that read its factors: the device's after a device numeric factorization; the host
   factor's, which its symbolic and numeric phases set, around and after a host one */
#  define GS_FACTOR_SOLVE_OPS(X) X(solve) X(solvetranspose) X(solveadd) X(solvetransposeadd) X(matsolve) X(matsolvetranspose) X(forwardsolve) X(backwardsolve) X(getinfo) X(getinertia)

/* The solves of the factor on the device, with solver: the device's own factors (tri: ICC's halves too, and their
   getinfo), or the host factor's moved there (htri: its getinfo stays the host's) */
static void MatFactorSolveOps_Private(Mat F, GSTriFactor solver)
{
  Mat_GSFactor   *fs  = (Mat_GSFactor *)F->spptr;
  const PetscBool own = (PetscBool)(solver == fs->tri);

  fs->solver                = solver;
  F->ops->solve             = MatSolve_GSFactor;
  F->ops->solvetranspose    = MatSolveTranspose_GSFactor;
  F->ops->solveadd          = NULL; /* MatSolveAdd() and MatMatSolve() then go through MatSolve() */
  F->ops->solvetransposeadd = NULL;
  F->ops->matsolve          = NULL;
  F->ops->matsolvetranspose = NULL;
  if (!own) return;
  F->ops->forwardsolve  = fs->ftype == MAT_FACTOR_ICC ? MatForwardSolve_GSFactor : NULL;
  F->ops->backwardsolve = fs->ftype == MAT_FACTOR_ICC ? MatBackwardSolve_GSFactor : NULL;
  F->ops->getinfo       = MatGetInfo_GSFactor;
  F->ops->getinertia    = NULL;
}

static PetscErrorCode MatFactorDeviceOps_Private(Mat F)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;

  PetscFunctionBegin;
  fs->ondevice = PETSC_TRUE;
  MatFactorSolveOps_Private(F, fs->tri);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host factor's numeric phase, between its operations and ours */
static PetscErrorCode MatFactorHostNumeric_Private(Mat F, Mat A, const MatFactorInfo *info)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;

  PetscFunctionBegin;
#  define GS_FROM_HOST(op) F->ops->op = fs->hostops.op;
#  define GS_TO_HOST(op)   fs->hostops.op = F->ops->op;
  GS_FACTOR_SOLVE_OPS(GS_FROM_HOST)
  if (fs->ftype == MAT_FACTOR_ICC)
    PetscCall((*fs->hostops.choleskyfactornumeric)(F, A, info));
  else
    PetscCall((*fs->hostops.lufactornumeric)(F, A, info));
  GS_FACTOR_SOLVE_OPS(GS_TO_HOST)
#  undef GS_FROM_HOST
#  undef GS_TO_HOST
  fs->ondevice = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a numeric factorization of the host's: its L and U to the device, whose solves then serve (its getinfo stays
   the host's), where its layout is the one the device factor reads; else the host solves */
static PetscErrorCode MatFactorHostSolves_Private(Mat F)
{
  Mat_GSFactor   *fs = (Mat_GSFactor *)F->spptr;
  const PetscInt *ia, *ja, *r = NULL, *c = NULL;
  PetscScalar    *a;
  PetscMemType    mtype;
  PetscInt        n;
  PetscBool       ok = PETSC_FALSE, idr = PETSC_TRUE, idc = PETSC_TRUE;
  MatInfo         info;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  if (!fs->devsolves) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetInfo(F, MAT_LOCAL, &info));
  PetscCall(MatSeqAIJGetCSRAndMemType(F, &ia, &ja, &a, &mtype)); /* its raw arrays: an inode factor gives no MatGetRowIJ() */
  n = F->rmap->n;
  if (fs->row) PetscCall(ISIdentity(fs->row, &idr));
  if (fs->col) PetscCall(ISIdentity(fs->col, &idc));
  if (!idr) PetscCall(ISGetIndices(fs->row, &r));
  if (!idc) PetscCall(ISGetIndices(fs->col, &c));
  ierr = GSTriFactorSetHost(&fs->htri, n, (PetscInt)info.nz_used, ia, ja, a, r, c, fs->backend, &ok);
  if (!ierr && ok && fs->backend == GS_TRI_BACKEND_JACOBI) ierr = GSTriFactorSetSweeps(fs->htri, fs->sweeps);
  if (!ierr && ok && fs->onekernel >= 0) ierr = GSTriFactorSetOneKernel(fs->htri, (PetscBool)(fs->onekernel > 0));
  if (r) PetscCall(ISRestoreIndices(fs->row, &r));
  if (c) PetscCall(ISRestoreIndices(fs->col, &c));
  PetscCall(ierr);
  if (!ok) {
    PetscCall(PetscInfo(F, "The host factor is not laid out as the device factor reads it: its solves stay on the host\n"));
    fs->devsolves = PETSC_FALSE;
    PetscCall(GSTriFactorDestroy(&fs->htri));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  MatFactorSolveOps_Private(F, fs->htri);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric phase of a factor the host factors: PETSc's, then its solves to the device where they go there */
static PetscErrorCode MatFactorNumericHost_GSFactor(Mat F, Mat A, const MatFactorInfo *info)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;

  PetscFunctionBegin;
  PetscCall(MatFactorHostNumeric_Private(F, A, info));
  fs->numeric++;
  PetscCall(MatFactorHostSolves_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host factor's symbolic phase (natural ordering), where a numeric factorization needs the host after a device
   symbolic one; its operations are kept for the factorizations the host does, and ours stay in place */
static PetscErrorCode MatFactorHostSymbolic_Private(Mat F, Mat A, const MatFactorInfo *info)
{
  Mat_GSFactor  *fs = (Mat_GSFactor *)F->spptr;
  IS             is;
  struct _MatOps ours = *F->ops;

  PetscFunctionBegin;
  if (fs->hostsymbolic) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(ISCreateStride(PETSC_COMM_SELF, A->rmap->n, 0, 1, &is));
  PetscCall(ISSetIdentity(is));
  if (fs->ftype == MAT_FACTOR_ICC)
    PetscCall((*fs->hosticc)(F, A, is, info));
  else
    PetscCall((*fs->hostilu)(F, A, is, is, info));
  PetscCall(ISDestroy(&is));
  fs->hostops      = *F->ops;
  *F->ops          = ours;
  fs->hostsymbolic = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device's numeric factorization; where a pivot asks for PETSc's shift (-pc_factor_shift_type) the host factors
   this time, as PETSc would (it shifts only where a pivot fails its test), and a zero pivot without a shift is PETSc's
   MAT_FACTOR_NUMERIC_ZEROPIVOT */
static PetscErrorCode MatFactorNumeric_GSFactor(Mat F, Mat A, const MatFactorInfo *info)
{
  Mat_GSFactor      *fs    = (Mat_GSFactor *)F->spptr;
  const PetscReal    shift = info->shifttype;
  const GSPivotTest  test  = shift == (PetscReal)MAT_SHIFT_NONZERO ? GS_PIVOT_ABS_ROWSUM : (shift == (PetscReal)MAT_SHIFT_POSITIVE_DEFINITE ? GS_PIVOT_REAL_ROWSUM : GS_PIVOT_ABS);
  const PetscScalar *a;
  PetscBool          device;
  PetscInt           row;
  PetscReal          pivot;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCheck(A->nonzerostate == fs->nzstate, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The nonzero pattern of the matrix changed since its symbolic factorization: factor it symbolically again");
  PetscCall(MatGPUStreamGetFactorValues(A, &a, &device));
  ierr = GSTriFactorNumeric(fs->tri, a, device, test, info->zeropivot, &row, &pivot);
  PetscCall(MatGPUStreamRestoreFactorValues(A, &a, device));
  PetscCall(ierr);
  F->assembled    = PETSC_TRUE;
  F->preallocated = PETSC_TRUE;
  fs->numeric++;
  if (row >= 0 && shift != (PetscReal)MAT_SHIFT_NONE) {
    PetscCall(PetscInfo(A, "Pivot %g of row %" PetscInt_FMT " asks for the shift (%s): the host factors\n", (double)pivot, row, MatFactorShiftTypes[(int)shift]));
    PetscCall(MatFactorHostSymbolic_Private(F, A, info));
    PetscCall(MatFactorHostNumeric_Private(F, A, info));
    PetscCall(MatFactorHostSolves_Private(F)); /* natural ordering, as the device's */
    fs->shifted++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (row >= 0) { /* as MatPivotCheck_none() */
    PetscCheck(!A->erroriffailure, PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "Zero pivot row %" PetscInt_FMT " value %g tolerance %g", row, (double)pivot, (double)info->zeropivot);
    PetscCall(PetscInfo(A, "Detected zero pivot in factorization in row %" PetscInt_FMT " value %g tolerance %g\n", row, (double)pivot, (double)info->zeropivot));
    F->factorerrortype             = MAT_FACTOR_NUMERIC_ZEROPIVOT;
    F->factorerror_zeropivot_value = pivot;
    F->factorerror_zeropivot_row   = row;
  }
  PetscCall(MatFactorDeviceOps_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Why the host factors A (NULL: the device can). The device factors ILU(0) and ICC(0) in the natural ordering of a
   gpustream matrix whose rows all have their diagonal entry (PETSc's ILU(0) refuses other matrices). */
static PetscErrorCode MatFactorHostReason_Private(Mat F, Mat A, IS row, IS col, const MatFactorInfo *info, const char **why)
{
  PetscBool identity = PETSC_TRUE;

  PetscFunctionBegin;
  *why = NULL;
  if (((Mat_GSFactor *)F->spptr)->ftype == MAT_FACTOR_LU)
    *why = "LU, whose fill the device does not compute";
  else if (info->levels > 0)
    *why = "levels of fill above 0";
  else if (info->usedt)
    *why = "a drop tolerance";
#  if defined(GPUSTREAM_PETSC_FACTORINFO_ON_HOST)
  else if (info->factoronhost || info->solveonhost)
    *why = "-pc_factor_mat_factor_on_host or -pc_factor_mat_solve_on_host";
#  endif
  else if (!MatGPUStreamHasDeviceData(A))
    *why = "a matrix without its device data";
  if (*why) PetscFunctionReturn(PETSC_SUCCESS);
  if (row) PetscCall(ISIdentity(row, &identity));
  if (identity && col) PetscCall(ISIdentity(col, &identity));
  if (!identity) *why = "an ordering other than natural";
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the solves of a factorization the host makes go to the device: LU and ILU (PETSc's layout of its factors,
   which the device reads; not ICC and Cholesky, nor ILU with a drop tolerance), unless the solves are asked for on the
   host or the matrix has no device data (a streamed matrix) */
static PetscErrorCode MatFactorHostSolvesAllowed_Private(Mat F, Mat A, const MatFactorInfo *info, PetscBool *devsolves)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;

  PetscFunctionBegin;
  *devsolves = (PetscBool)((fs->ftype == MAT_FACTOR_LU || fs->ftype == MAT_FACTOR_ILU) && !info->usedt && MatGPUStreamHasDeviceData(A));
#  if defined(GPUSTREAM_PETSC_FACTORINFO_ON_HOST)
  if (info->solveonhost) *devsolves = PETSC_FALSE;
#  endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a row of the CSR (ia, ja; columns sorted) lacks its diagonal entry */
static PetscBool MissingDiagonal(PetscInt n, const PetscInt ia[], const PetscInt ja[])
{
  for (PetscInt i = 0; i < n; i++) {
    PetscInt lo = ia[i], hi = ia[i + 1];
    while (lo < hi) {
      const PetscInt mid = lo + (hi - lo) / 2;
      if (ja[mid] < i)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ia[i + 1] || ja[lo] != i) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

static PetscErrorCode MatFactorSymbolic_GSFactor(Mat F, Mat A, IS row, IS col, const MatFactorInfo *info)
{
  Mat_GSFactor   *fs = (Mat_GSFactor *)F->spptr;
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;
  PetscLogDouble  work, budget;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(GSTriFactorDestroy(&fs->tri));
  PetscCheck(!fs->hostsymbolic, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The factor was factored symbolically already: get a new one with MatGetFactor()");
  /* read here, as MATSOLVERMUMPS reads its options, with the factor's prefix (the PC's) */
  PetscOptionsBegin(PetscObjectComm((PetscObject)F), ((PetscObject)F)->prefix, "MATSOLVERGPUSTREAM options", "Mat");
  PetscCall(PetscOptionsEnum("-mat_gpustream_trisolve", "Triangular solves on the device: auto (cuSPARSE's SpSV in CUDA builds where it loads, else Kokkos-Kernels' sptrsv), kokkoskernels, cusparse, jacobi (sweeps)", "MATSOLVERGPUSTREAM",
                             GSTriBackends, (PetscEnum)fs->backend, (PetscEnum *)&fs->backend, NULL));
  PetscCall(PetscOptionsInt("-mat_gpustream_trisolve_sweeps", "Jacobi sweeps per triangular solve (-mat_gpustream_trisolve jacobi)", "MATSOLVERGPUSTREAM", fs->sweeps, &fs->sweeps, NULL));
  PetscCall(PetscOptionsInt("-mat_gpustream_factor_sweeps", "Fixed-point sweeps of the numeric ILU(0)/ICC(0) factorization (Chow and Patel); 0: exact, Kokkos-Kernels' spiluk", "MATSOLVERGPUSTREAM", fs->fsweeps, &fs->fsweeps, NULL));
  {
    PetscBool one = (PetscBool)(fs->onekernel > 0), set;
    PetscCall(PetscOptionsBool("-mat_gpustream_trisolve_one_kernel", "Both exact triangular solves in one kernel of one team where the factor fits its shared memory (default: for small factors with many levels on a device)", "MATSOLVERGPUSTREAM",
                               one, &one, &set));
    if (set) fs->onekernel = one ? 1 : 0;
  }
  PetscOptionsEnd();
  PetscCheck(fs->sweeps > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_trisolve_sweeps %" PetscInt_FMT ": give at least 1", ((PetscObject)F)->prefix ? ((PetscObject)F)->prefix : "", fs->sweeps);
  PetscCheck(fs->fsweeps >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_factor_sweeps %" PetscInt_FMT ": give 0 (exact) or more", ((PetscObject)F)->prefix ? ((PetscObject)F)->prefix : "", fs->fsweeps);
  PetscCall(MatFactorHostReason_Private(F, A, row, col, info, &fs->host));
  if (!fs->host) {
    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
    if (MissingDiagonal(n, ia, ja)) fs->host = "a row without its diagonal entry"; /* PETSc's ILU(0) refuses it */
    ierr = fs->host ? PETSC_SUCCESS : GSTriFactorCreate(n, ia, ja, (PetscBool)(fs->ftype == MAT_FACTOR_ICC), fs->backend, &fs->tri);
    if (!ierr && fs->tri && fs->backend == GS_TRI_BACKEND_JACOBI) ierr = GSTriFactorSetSweeps(fs->tri, fs->sweeps);
    if (!ierr && fs->tri) ierr = GSTriFactorSetFactorSweeps(fs->tri, fs->fsweeps);
    if (!ierr && fs->tri && fs->onekernel >= 0) ierr = GSTriFactorSetOneKernel(fs->tri, (PetscBool)(fs->onekernel > 0));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCall(ierr);
  }
  if (fs->tri) {
    PetscCall(GSTriFactorGetInfo(fs->tri, NULL, NULL, NULL, NULL, &work));
    PetscCall(GSStreamDefaultBudget(&budget));
    if (work > budget) {
      PetscCall(PetscSNPrintf(fs->why, sizeof(fs->why), "Kokkos-Kernels 3 would allocate %.4g MB at each numeric factorization, above the %.4g MB of device memory free", work / 1048576.0, budget / 1048576.0));
      fs->host = fs->why;
      PetscCall(GSTriFactorDestroy(&fs->tri));
    }
  }
  if (fs->host) {
    PetscCall(MatFactorHostSolvesAllowed_Private(F, A, info, &fs->devsolves));
    PetscCall(PetscInfo(A, "%s factored on the host (PETSc's): %s; solved on the %s\n", MatFactorTypes[fs->ftype], fs->host, fs->devsolves ? "device" : "host"));
    if (fs->ftype == MAT_FACTOR_ICC)
      PetscCall((*fs->hosticc)(F, A, row, info));
    else if (fs->ftype == MAT_FACTOR_LU)
      PetscCall((*fs->hostlu)(F, A, row, col, info));
    else
      PetscCall((*fs->hostilu)(F, A, row, col, info));
    if (row) PetscCall(PetscObjectReference((PetscObject)row));
    if (col) PetscCall(PetscObjectReference((PetscObject)col));
    PetscCall(ISDestroy(&fs->row));
    PetscCall(ISDestroy(&fs->col));
    fs->row          = row;
    fs->col          = col;
    fs->hostsymbolic = PETSC_TRUE;
    fs->hostops      = *F->ops;
    F->ops->view     = MatView_GSFactor;
    F->ops->destroy  = MatDestroy_GSFactor;
    if (fs->devsolves) {
      if (fs->ftype == MAT_FACTOR_ICC)
        fs->devsolves = PETSC_FALSE;
      else
        F->ops->lufactornumeric = MatFactorNumericHost_GSFactor;
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  fs->nzstate               = A->nonzerostate;
  F->info.fill_ratio_given  = info->fill;
  F->info.fill_ratio_needed = 1.0;
  F->info.factor_mallocs    = 0;
  if (fs->ftype == MAT_FACTOR_ICC)
    F->ops->choleskyfactornumeric = MatFactorNumeric_GSFactor;
  else
    F->ops->lufactornumeric = MatFactorNumeric_GSFactor;
  F->ops->getinfo = MatGetInfo_GSFactor;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactorSymbolic_GSFactor(Mat F, Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatFactorSymbolic_GSFactor(F, A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactorSymbolic_GSFactor(Mat F, Mat A, IS perm, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatFactorSymbolic_GSFactor(F, A, perm, perm, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_GSFactor(Mat F, PetscViewer viewer)
{
  Mat_GSFactor *fs = (Mat_GSFactor *)F->spptr;
  PetscBool     isascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (fs->tri && isascii) {
    PetscCount     nnzL, nnzU;
    PetscInt       levels;
    PetscLogDouble bytes;
    PetscCall(GSTriFactorGetInfo(fs->tri, &nnzL, &nnzU, &levels, &bytes, NULL));
    const char     *solver = GSTriFactorSolverName(fs->tri);
    const PetscBool kk     = (PetscBool)(strstr(solver, "sptrsv") != NULL);
    char            sw[64] = "", fac[96] = "Kokkos-Kernels' spiluk";
    if (GSTriFactorGetSweeps(fs->tri) > 0) PetscCall(PetscSNPrintf(sw, sizeof(sw), " (%" PetscInt_FMT " a triangle)", GSTriFactorGetSweeps(fs->tri)));
    if (GSTriFactorGetFactorSweeps(fs->tri) > 0) PetscCall(PetscSNPrintf(fac, sizeof(fac), "%" PetscInt_FMT " fixed-point sweeps (-mat_gpustream_factor_sweeps)", GSTriFactorGetFactorSweeps(fs->tri)));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %s(0) on the device (%s): %s%s, %" PetscInt_FMT " levels%s%s%s, L %" PetscCount_FMT " and U %" PetscCount_FMT " nonzeros, %.6g MB in device memory (-mat_gpustream_trisolve %s)\n",
                                     fs->ftype == MAT_FACTOR_ICC ? "ICC" : "ILU", GSExecutionSpace(), fac, kk ? (GSTriFactorGetFactorSweeps(fs->tri) > 0 ? ", Kokkos-Kernels' sptrsv" : " and sptrsv") : "", levels, kk ? "" : ", and ", kk ? "" : solver,
                                     sw, nnzL, nnzU, bytes / 1048576.0, GSTriBackends[fs->backend]));
    if (fs->shifted)
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %" PetscInt_FMT " of %" PetscInt_FMT " numeric factorizations on the host (PETSc's), where a pivot asked for the shift, the last one %s\n", fs->shifted, fs->numeric,
                                       fs->ondevice ? "on the device" : (fs->htri ? "among them, solved on the device" : "among them")));
    if (!fs->ondevice && fs->hostsymbolic && fs->view) PetscCall((*fs->view)(F, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (isascii && fs->host) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %s on the host (PETSc's) for %s\n", MatFactorTypes[fs->ftype], fs->host));
  if (isascii && fs->htri) {
    PetscCount     nnzL, nnzU;
    PetscInt       levels;
    PetscLogDouble bytes;
    PetscCall(GSTriFactorGetInfo(fs->htri, &nnzL, &nnzU, &levels, &bytes, NULL));
    char lv[64] = "";
    if (levels >= 0) PetscCall(PetscSNPrintf(lv, sizeof(lv), ", %" PetscInt_FMT " levels", levels));
    if (GSTriFactorGetSweeps(fs->htri) > 0) PetscCall(PetscSNPrintf(lv, sizeof(lv), " (%" PetscInt_FMT " a triangle)", GSTriFactorGetSweeps(fs->htri)));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: its triangular solves on the device (%s): %s%s, L %" PetscCount_FMT " and U %" PetscCount_FMT " nonzeros, %.6g MB in device memory (-mat_gpustream_trisolve %s)\n", GSExecutionSpace(),
                                     GSTriFactorSolverName(fs->htri), lv, nnzL, nnzU, bytes / 1048576.0, GSTriBackends[fs->backend]));
  } else if (isascii && fs->host && fs->hostsymbolic && fs->numeric)
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: its triangular solves on the host\n"));
  if (fs->hostsymbolic && fs->view) PetscCall((*fs->view)(F, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSOLVERGPUSTREAM's factor: MATSOLVERPETSC's host factor, whose symbolic phase decides who factors */
static PetscErrorCode MatGetFactor_GPUStream_Device(Mat A, MatFactorType ftype, Mat *F)
{
  Mat_GSFactor *fs;
  PetscMPIInt   size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1 && ftype == MAT_FACTOR_LU) { /* the LU AIJ takes on several processes (MUMPS, SuperLU_DIST ...) */
    PetscCall(MatGetFactor_GPUStream_Host(A, ftype, F));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(size == 1, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSOLVERGPUSTREAM factors a gpustream matrix on one process only; on several use -pc_type bjacobi or asm, whose blocks it factors");
  PetscCheck(ftype == MAT_FACTOR_LU || ftype == MAT_FACTOR_ILU || ftype == MAT_FACTOR_ICC, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSOLVERGPUSTREAM has no %s factorization", MatFactorTypes[ftype]);
  PetscCall(MatGetFactor_GPUStream_Host(A, ftype, F));
  PetscCall(PetscNew(&fs));
  fs->ftype     = ftype;
  fs->backend   = GS_TRI_BACKEND_AUTO;
  fs->sweeps    = GS_TRI_SWEEPS_DEFAULT;
  fs->onekernel = -1;
  fs->hostilu   = (*F)->ops->ilufactorsymbolic;
  fs->hosticc   = (*F)->ops->iccfactorsymbolic;
  fs->hostlu    = (*F)->ops->lufactorsymbolic;
  fs->destroy   = (*F)->ops->destroy;
  fs->view      = (*F)->ops->view;
  (*F)->spptr   = fs;
  if (ftype == MAT_FACTOR_ICC)
    (*F)->ops->iccfactorsymbolic = MatICCFactorSymbolic_GSFactor;
  else if (ftype == MAT_FACTOR_LU)
    (*F)->ops->lufactorsymbolic = MatILUFactorSymbolic_GSFactor; /* the same phase: LU always on the host */
  else
    (*F)->ops->ilufactorsymbolic = MatILUFactorSymbolic_GSFactor;
  (*F)->ops->destroy = MatDestroy_GSFactor;
  (*F)->ops->view    = MatView_GSFactor;
  PetscCall(PetscObjectComposeFunction((PetscObject)*F, "MatFactorGetSolverType_C", MatFactorGetSolverType_GPUStream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSOLVERGPUSTREAM - "gpustream" - ILU(0) and ICC(0) of a sequential `MATGPUSTREAM` matrix factored and solved on
   the device, and PETSc's host LU and ILU(k) solved there.

   Use `-pc_factor_mat_solver_type gpustream` (the default package of ILU, ICC and LU on such matrices). The numeric
   factorization is Kokkos-Kernels' spiluk, again on the device when the values change; a pivot that needs PETSc's
   shift, fill, or an ordering sends the factorization to the host, whose factors then go to the device for the solves.

   Options Database Keys:
.  -mat_gpustream_trisolve <auto,kokkoskernels,cusparse,jacobi> - the triangular solves: auto is cuSPARSE's SpSV in CUDA
   builds where the library loads, else Kokkos-Kernels' sptrsv, and on a device a factor small enough (at most 2048
   rows, both triangles and a vector within 40 KB, levels at least an eighth of its rows: a coarse grid's) has both
   solves in one kernel of one team; jacobi replaces each exact solve by a fixed number of Jacobi sweeps (each one
   product with the triangle, where exact solves go level by level), a fixed linear and, for ILU(0) or ICC(0) of a
   symmetric matrix, symmetric preconditioner that takes more iterations than exact solves
.  -mat_gpustream_trisolve_sweeps <5> - the sweeps of jacobi
.  -mat_gpustream_trisolve_one_kernel <bool> - both exact solves in one kernel of one team, forced on or off (where the
   factor does not fit the 40 KB the kernel stages it in, the solves stay level by level)
-  -mat_gpustream_factor_sweeps <0> - the numeric ILU(0) or ICC(0) by this many fixed-point sweeps (Chow and Patel), each
   one launch computing every entry of L and U from the last sweep's, where spiluk (0) goes level by level: the factors
   approach the exact ones with each sweep

   Level: intermediate

.seealso: `MATGPUSTREAM`, `PCILU`, `PCICC`, `PCFactorSetMatSolverType()`
M*/
PetscErrorCode MatSolverTypeRegister_GPUStreamDevice(void)
{
  PetscFunctionBegin;
  PetscCall(MatSolverTypeRegister(MATSOLVERGPUSTREAM, MATGPUSTREAM, MAT_FACTOR_LU, MatGetFactor_GPUStream_Device));
  PetscCall(MatSolverTypeRegister(MATSOLVERGPUSTREAM, MATGPUSTREAM, MAT_FACTOR_ILU, MatGetFactor_GPUStream_Device));
  PetscCall(MatSolverTypeRegister(MATSOLVERGPUSTREAM, MATGPUSTREAM, MAT_FACTOR_ICC, MatGetFactor_GPUStream_Device));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else

/* Without Kokkos-Kernels every factorization is MATSOLVERPETSC's, on the host */
PetscErrorCode MatSolverTypeRegister_GPUStreamDevice(void)
{
  PetscFunctionBegin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
