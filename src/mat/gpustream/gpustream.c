/* MATGPUSTREAM: an AIJ matrix (SeqAIJ on one rank, MPIAIJ on several) whose CSR is mirrored in device memory
   (Kokkos views) for SpMV; on several ranks the diagonal and off-diagonal blocks, plus the halo exchange.

   The host AIJ arrays stay the master copy: assembly, preallocation, MatSetValues and every AIJ operation work
   unchanged on them. The device copy is refreshed lazily, when a device operation finds that the host changed:
   the whole CSR when the nonzero pattern changed, the values alone (no reallocation) otherwise. */
#include <petsc/private/matimpl.h>
#include <petsc/private/vecimpl.h> /* VecRegisterAll(), for -mat_gpustream_vec_type */
#include <petscdevice.h>           /* PetscGetMemType() */
#include "../../stream/streamimpl.h"

/* in PETSc's aij.h and mpiaij.h, which PETSc does not install */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);

typedef struct {
  GSDeviceMat      dA, dB; /* the CSR (diagonal block) and, on several ranks, the off-diagonal block */
  GSHalo           halo;
  GSStreamPlan     plan; /* the diagonal block when it streams (then dA is NULL) */
  GSStreamOptions  opts;
  GSDeviceMPI      devicempi;                 /* -mat_gpustream_device_mpi */
  char             vectype[64];               /* -mat_gpustream_vec_type: auto or a VecType */
  PetscObjectState nzstate, state, bstate[2]; /* host states the device copy reflects (bstate: MPIAIJ's blocks) */
  /* SeqAIJ's operations that ours wrap, restored when converting back to AIJ */
  PetscErrorCode (*mult)(Mat, Vec, Vec);
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec);
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType);
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*setfromoptions)(Mat, GSOptionItems);
  PetscErrorCode (*duplicate)(Mat, MatDuplicateOption, Mat *);
  GSCreateGraphFn *creategraph;
  PetscErrorCode (*productsetfromoptions)(Mat);
  PetscErrorCode (*transpose)(Mat, MatReuse, Mat *);
  PetscErrorCode (*transposesymbolic)(Mat, Mat *);
  PetscErrorCode (*setpreallocationcoo)(Mat, PetscCount, PetscInt[], PetscInt[]);
  PetscErrorCode (*setvaluescoo)(Mat, const PetscScalar[], InsertMode);
  PetscCount ncoo; /* entries of the last MatSetPreallocationCOO() */
} Mat_GPUStream;

const char *const GSSpMVKernels[] = {"auto", "thread", "warp", "GSSpMVKernel", "GS_KERNEL_", NULL};
const char *const GSFormats[]     = {"auto", "csr", "block", "GSFormat", "GS_FORMAT_", NULL};
const char *const GSDeviceMPIs[]  = {"auto", "false", "true", "GSDeviceMPI", "GS_DEVICE_MPI_", NULL};

static PetscErrorCode MatConvert_AIJ_GPUStream(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_GPUStream_AIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatAIJToGPUStream_Private(Mat);
static PetscErrorCode MatDestroy_GPUStream(Mat);

/* Whether A is (still) a gpustream matrix. Not after a header replace inside AIJ's code (A is then another type), nor
   a duplicate made while a gpustream matrix wore its base name (AIJ's ops); nor after a header merge
   (MatHeaderMerge(), which keeps A's ops, type name and composed functions but takes the other's data): our ops
   without our data, see MatGPUStreamAdopt_Private() */
static PetscBool MatGPUStreamIsOurs_Private(Mat A)
{
  return (PetscBool)(A->ops->destroy == MatDestroy_GPUStream && A->spptr);
}

/* ierr is the result of a step that may fail on some processes only (a device allocation): every process learns
   of a failure before the collective calls that follow, which would otherwise wait forever for the failed one */
PetscErrorCode GSAllOK(MPI_Comm comm, PetscErrorCode ierr)
{
  int err = (int)ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, comm));
  PetscCall(ierr);
  PetscCheck(!err, PETSC_COMM_SELF, (PetscErrorCode)err, "Setting up the device matrix or solver failed on another process");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Copies a SeqAIJ block to the device, or only its values when the pattern is known to be the same; rowlist: keep
   the list of nonempty rows (off-diagonal blocks) */
static PetscErrorCode MatGPUStreamSyncBlock_Private(Mat S, PetscBool valuesonly, PetscBool rowlist, GSSpMVKernel kernel, PetscInt tile, GSDeviceMat *d)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *a;
  PetscInt           m;
  PetscBool          done;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayRead(S, &a));
  if (valuesonly)
    ierr = GSDeviceMatSetValues(*d, a);
  else {
    PetscCall(GSDeviceMatDestroy(d));
    PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
    ierr = GSDeviceMatCreate(m, S->cmap->n, ia, ja, a, rowlist, 1, tile, d); /* may fail to allocate: restore S first */
    if (!ierr && kernel != GS_KERNEL_AUTO) ierr = GSDeviceMatSetKernel(*d, kernel);
    PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(S, &a));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The block size of S's device storage (1: CSR), see GSFormat. Block column indices cut the bytes of a product by a
   quarter to a third at block sizes 3 and 6 (docs/performance.md); tiles, which uneven rows need, read CSR. */
static PetscErrorCode MatGPUStreamFormatBlockSize_Private(Mat S, PetscInt m, const PetscInt ia[], const PetscInt ja[], const GSStreamOptions *o, PetscInt *bs)
{
  PetscInt    rbs, cbs, bad;
  const char *pre = o->prefix ? o->prefix : "";

  PetscFunctionBegin;
  *bs = 1;
  if (o->format == GS_FORMAT_CSR) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetBlockSizes(S, &rbs, &cbs));
  if (o->format == GS_FORMAT_AUTO && (rbs < 2 || rbs > GS_MAX_FORMAT_BS || rbs != cbs || o->tile > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(rbs > 1 && rbs <= GS_MAX_FORMAT_BS && rbs == cbs, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "-%smat_gpustream_format block needs equal row and column block sizes of 2 to %d (MatSetBlockSize() or -%smat_block_size); the matrix has %" PetscInt_FMT " and %" PetscInt_FMT, pre, GS_MAX_FORMAT_BS, pre, rbs, cbs);
  PetscCheck(o->tile <= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-%smat_gpustream_format block has no tiles: leave out -%smat_gpustream_tile_size %" PetscInt_FMT " or use -%smat_gpustream_format csr", pre, pre, o->tile, pre);
  bad = GSBlockPatternRow(m, S->cmap->n, ia, ja, rbs);
  PetscCheck(bad < 0 || o->format == GS_FORMAT_AUTO, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "-%smat_gpustream_format block: local row %" PetscInt_FMT " is not made of full %" PetscInt_FMT " x %" PetscInt_FMT " blocks at aligned columns, alike in its block row; use -%smat_gpustream_format csr or auto", pre, bad, rbs, rbs, pre);
  if (bad < 0) *bs = rbs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal block (or the whole matrix) of S on the device: resident, or streamed when the options say so or, in
   auto mode, when its CSR and vectors exceed the budget. prefix: the gpustream matrix's options prefix */
static PetscErrorCode MatGPUStreamSyncDiag_Private(MPI_Comm comm, Mat S, const char prefix[], PetscBool valuesonly, Mat_GPUStream *gs)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *a;
  PetscInt           m, bs        = 1;
  PetscBool          done, stream = (PetscBool)(gs->opts.mode == GS_STREAM_STREAM);
  GSStreamOptions    o      = gs->opts;
  PetscLogDouble     budget = gs->opts.budget, need;
  int                over;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  o.prefix = prefix; /* for the option names of the errors below */
  if (valuesonly) {
    if (gs->plan) {
      PetscCall(MatSeqAIJGetArrayRead(S, &a));
      PetscCall(GSStreamPlanSetValues(gs->plan, a));
      PetscCall(MatSeqAIJRestoreArrayRead(S, &a));
    } else
      PetscCall(MatGPUStreamSyncBlock_Private(S, PETSC_TRUE, PETSC_FALSE, gs->opts.kernel, gs->opts.tile, &gs->dA));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSDeviceMatDestroy(&gs->dA));
  PetscCall(GSStreamPlanDestroy(&gs->plan));
  PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
  need = GSStreamCSRBytes(m, ia[m]) + GSStreamVecBytes(m, S->cmap->n);
  if (gs->opts.mode != GS_STREAM_STREAM) { /* every process decides alike, so that they all take the same path */
    if (budget < 0) PetscCall(GSStreamDefaultBudget(&budget));
    over = need > budget;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm));
    if (gs->opts.mode == GS_STREAM_AUTO)
      stream = (PetscBool)over;
    else
      PetscCheck(!over, comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "-%smat_gpustream_mode resident: the matrix needs %g bytes of device memory on this process, the budget is %g bytes (-%smat_gpustream_max_device_bytes), and a process is over it; use -%smat_gpustream_mode auto or stream", prefix,
                 need, budget, prefix, prefix);
  }
  PetscCall(MatSeqAIJGetArrayRead(S, &a));
  /* a plan that does not fit, or an allocation that fails, fails on its own process: see GSAllOK() */
  if (stream)
    ierr = GSStreamPlanCreate(m, S->cmap->n, ia, ja, a, &o, &gs->plan);
  else {
    ierr = MatGPUStreamFormatBlockSize_Private(S, m, ia, ja, &o, &bs);
    if (!ierr) ierr = GSDeviceMatCreate(m, S->cmap->n, ia, ja, a, PETSC_FALSE, bs, gs->opts.tile, &gs->dA);
  }
  if (!ierr && gs->dA && gs->opts.kernel != GS_KERNEL_AUTO) ierr = GSDeviceMatSetKernel(gs->dA, gs->opts.kernel);
  PetscCall(MatSeqAIJRestoreArrayRead(S, &a));
  PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(GSAllOK(comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMPIAIJGetSeqAIJ() accepts only type names starting with "mpiaij" (PETSc's own subclasses are named so); ours
   is "gpustream", so it wears the base name for the call */
static PetscErrorCode MatGPUStreamGetBlocks_Private(Mat A, Mat *Ad, Mat *Ao, const PetscInt **garray)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJ));
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Brings the device side up to date with the host. assembling: called at the end of a final assembly, before PETSc's
   MatAssemblyEnd() marks A assembled and increases its state once more (the state the copy then reflects) */
static PetscErrorCode MatGPUStreamSync_Private(Mat A, PetscBool assembling)
{
  Mat_GPUStream   *gs = (Mat_GPUStream *)A->spptr;
  PetscObjectState state, bstate[2] = {0, 0};
  PetscMPIInt      size;
  Mat              Ad = NULL, Ao = NULL;
  const PetscInt  *garray = NULL;

  PetscFunctionBegin;
  PetscCheck(A->assembled || assembling, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "Not for an unassembled matrix: call MatAssemblyBegin/End() first");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (assembling) state++;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) { /* MPIAIJ's MatAXPY() changes its blocks and leaves the matrix's own state as it was; like that state,
                     the blocks' move in collective operations only, so every process decides alike */
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(PetscObjectStateGet((PetscObject)Ad, &bstate[0]));
    PetscCall(PetscObjectStateGet((PetscObject)Ao, &bstate[1]));
  }
  if ((!gs->dA && !gs->plan) || gs->nzstate != A->nonzerostate || gs->state != state || gs->bstate[0] != bstate[0] || gs->bstate[1] != bstate[1]) {
    const PetscBool valuesonly = (PetscBool)((gs->dA || gs->plan) && gs->nzstate == A->nonzerostate);

    PetscCall(PetscLogEventBegin(GPUS_MatSync, A, 0, 0, 0));
    if (size == 1)
      PetscCall(MatGPUStreamSyncDiag_Private(PETSC_COMM_SELF, A, GSPrefix((PetscObject)A), valuesonly, gs));
    else {
      PetscCall(MatGPUStreamSyncDiag_Private(PetscObjectComm((PetscObject)A), Ad, GSPrefix((PetscObject)A), valuesonly, gs));
      PetscCall(GSAllOK(PetscObjectComm((PetscObject)A), MatGPUStreamSyncBlock_Private(Ao, valuesonly, PETSC_TRUE, gs->opts.kernel, gs->opts.tile, &gs->dB)));
      if (!valuesonly) { /* collective, its allocations last */
        PetscBool   devicempi;
        const char *why;
        PetscCall(GSHaloUseDeviceMPI(gs->devicempi, GSPrefix((PetscObject)A), &devicempi, &why));
        PetscCall(GSHaloDestroy(&gs->halo));
        PetscCall(GSAllOK(PetscObjectComm((PetscObject)A), GSHaloCreate(PetscObjectComm((PetscObject)A), A->cmap->n, A->cmap->range, Ao->cmap->n, garray, devicempi, &gs->halo)));
      }
    }
    gs->nzstate   = A->nonzerostate;
    gs->state     = state;
    gs->bstate[0] = bstate[0];
    gs->bstate[1] = bstate[1];
    PetscCall(PetscLogEventEnd(GPUS_MatSync, A, 0, 0, 0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SeqAIJ's and MPIAIJ's assembly ends, as the first matrix of each converted to gpustream had them */
static PetscErrorCode (*MatAssemblyEndBase[2])(Mat, MatAssemblyType);

/* A final assembly ends with the device copy made or refreshed, so that a failed device allocation surfaces here,
   where no vector is locked: PETSc's MatMult() and KSPSolve() keep the read locks they took on their vectors when the
   type's operation fails inside them. After such an error the matrix is not assembled: once memory is there, assemble
   it again. Products refresh the copy when the host arrays changed since (MatScale() ...) or new options dropped it. */
static PetscErrorCode MatAssemblyEnd_GPUStream(Mat A, MatAssemblyType type)
{
  PetscBool isgs;

  PetscFunctionBegin;
  if (!MatGPUStreamIsOurs_Private(A)) { /* AIJ's data under our ops (a header merge, see MatGPUStreamAdopt_Private()) */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    PetscCall((*MatAssemblyEndBase[size > 1])(A, type));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall((*((Mat_GPUStream *)A->spptr)->assemblyend)(A, type));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs)); /* not while it wears its base name in AIJ's code */
  if (type == MAT_FINAL_ASSEMBLY && isgs) PetscCall(MatGPUStreamSync_Private(A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* For a streamed matrix *dA is NULL: kernels that need the whole CSR on the device (the solvers' fused SpMVs) then
   use MatMult() */
PetscErrorCode MatGPUStreamGetDeviceMat(Mat A, GSDeviceMat *dA, GSDeviceMat *dB, GSHalo *halo)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  *dA = gs->dA;
  if (dB) *dB = gs->dB;
  if (halo) *halo = gs->halo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUStreamGetStreamPlan(Mat A, GSStreamPlan *plan)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  *plan = gs->plan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's coordinate assembly, recording the number of entries */
static PetscErrorCode MatSetPreallocationCOO_GPUStream(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*gs->setpreallocationcoo)(A, n, i, j));
  gs->ncoo = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values in device memory are copied to the host once (AIJ's code reads them there), then the device CSR is refreshed
   from the host as after any change of values */
static PetscErrorCode MatSetValuesCOO_GPUStream(Mat A, const PetscScalar v[], InsertMode imode)
{
  Mat_GPUStream *gs    = (Mat_GPUStream *)A->spptr;
  PetscMemType   mtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  if (v && gs->ncoo) PetscCall(PetscGetMemType(v, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    PetscScalar *h;
    PetscCall(PetscMalloc1(gs->ncoo, &h));
    PetscCall(GSCopyToHost(v, h, gs->ncoo));
    PetscCall((*gs->setvaluescoo)(A, h, imode));
    PetscCall(PetscFree(h));
  } else
    PetscCall((*gs->setvaluescoo)(A, v, imode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device vectors are read and written in place (when x, y and z all have their data on the device), host vectors
   staged through the device */
static PetscErrorCode MatMultAdd_GPUStream(Mat A, Vec x, Vec z, Vec y)
{
  Mat_GPUStream     *gs        = (Mat_GPUStream *)A->spptr;
  Vec                v[3]      = {x, y, z};
  GSAccess           access[3] = {GS_ACCESS_READ, z == y ? GS_ACCESS_READWRITE : GS_ACCESS_WRITE, GS_ACCESS_READ};
  GSVecArray         a[3];
  const PetscInt     nv = (z && z != y) ? 3 : 2; /* y = A x + y: y read before it is overwritten */
  const PetscScalar *za;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(GPUS_MatMult, A, x, y, 0));
  PetscCall(GSVecGetArrays(nv, v, access, a));
  za = z ? a[nv - 1].array : NULL; /* y's own array when z is y */
  /* a failed product still gives the arrays back, so the vectors are not left locked for the error's handler */
  if (a[0].device)
    ierr = gs->plan ? GSStreamPlanMultInPlace(gs->plan, gs->dB, gs->halo, a[0].array, za, a[1].array) : GSDeviceMatMultInPlace(gs->dA, gs->dB, gs->halo, a[0].array, za, a[1].array);
  else
    ierr = gs->plan ? GSStreamPlanMult(gs->plan, gs->dB, gs->halo, a[0].array, za, a[1].array) : GSDeviceMatMult(gs->dA, gs->dB, gs->halo, a[0].array, za, a[1].array);
  PetscCall(GSVecRestoreArrays(nv, v, a));
  PetscCall(ierr);
  PetscCall(PetscLogEventEnd(GPUS_MatMult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_GPUStream(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_GPUStream(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bytes as B, kB, MB or GB (powers of 1024) */
static PetscErrorCode FormatBytes(PetscLogDouble b, char s[32])
{
  const char *unit[] = {"B", "kB", "MB", "GB", "TB"};
  int         u      = 0;

  PetscFunctionBegin;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    u++;
  }
  PetscCall(PetscSNPrintf(s, 32, "%.4g %s", b, unit[u]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the default budget is, in words */
static const char *OnDeviceBudgetName(void)
{
  PetscLogDouble b = 0;
  if (GSStreamDefaultBudget(&b)) return "unknown";
  return b >= PETSC_MAX_REAL ? "unlimited (host backend)" : "free device memory less a reserve";
}

/* How the halo's messages travel, and why */
static PetscErrorCode MatViewDeviceMPI_Private(GSDeviceMPI opt, PetscBool devicempi, PetscViewer viewer)
{
  PetscBool   use;
  const char *why;

  PetscFunctionBegin;
  PetscCall(GSHaloUseDeviceMPI(opt, NULL, &use, &why));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: halo messages %s (-mat_gpustream_device_mpi %s: %s)\n", devicempi ? "between the device buffers themselves" : "staged through pinned host buffers", GSDeviceMPIs[opt], why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan of a streamed matrix (sums and extremes over the processes) */
static PetscErrorCode MatViewStreamPlan_Private(GSStreamPlan plan, GSDeviceMat dB, GSHalo halo, GSDeviceMPI opt, MPI_Comm comm, PetscViewer viewer)
{
  GSStreamInfo   info;
  PetscInt       counts[3];
  PetscLogDouble sums[4], mins[2], maxs[3], b[2] = {0, 0};
  PetscMPIInt    size;
  char           s[3][32];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(GSStreamPlanGetInfo(plan, &info));
  if (dB) PetscCall(GSDeviceMatGetMemory(dB, &b[0], &b[1]));
  counts[0] = info.nsub;
  counts[1] = info.nresident;
  counts[2] = info.nrows_resident;
  sums[0]   = info.csrbytes;
  sums[1]   = info.residentbytes;
  sums[2]   = info.streambytes;
  sums[3]   = b[0];
  mins[0]   = info.nsub ? info.minbytes : PETSC_MAX_REAL;
  mins[1]   = info.copyrate;
  maxs[0]   = info.maxbytes;
  maxs[1]   = info.modeltime;
  maxs[2]   = (PetscLogDouble)info.tilecap;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPIU_PETSCLOGDOUBLE, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mins, 2, MPIU_PETSCLOGDOUBLE, MPI_MIN, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, maxs, 3, MPIU_PETSCLOGDOUBLE, MPI_MAX, comm));
  if (!counts[0]) mins[0] = 0;
  PetscCall(FormatBytes(sums[0], s[0]));
  PetscCall(FormatBytes(mins[0], s[1]));
  PetscCall(FormatBytes(maxs[0], s[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: streamed on %s: CSR %s in %" PetscInt_FMT " subdivisions (%s) of %s to %s\n", PetscGPUStreamExecutionSpace(), s[0], counts[0],
                                   info.automatic ? "count chosen by the model" : "-mat_gpustream_subdivisions", s[1], s[2]));
  PetscCall(FormatBytes(sums[1], s[0]));
  PetscCall(FormatBytes(sums[2], s[1]));
  PetscCall(FormatBytes(info.bufferbytes, s[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %" PetscInt_FMT " subdivisions resident (%" PetscInt_FMT " rows, %s); each product copies %s from pinned host memory through %" PetscInt_FMT " device buffers of %s, overlap %s\n", counts[1],
                                   counts[2], s[0], s[1], info.buffers, s[2], info.overlap ? "on" : "off"));
  PetscCall(FormatBytes(sums[3], s[0]));
  if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %d processes (sums over them, buffers of the first); off-diagonal blocks resident, %s\n", (int)size, s[0]));
  if (size > 1 && halo) {
    PetscInt  ns, ng, nb;
    PetscBool devicempi;
    PetscCall(GSHaloGetSizes(halo, &ns, &ng, &nb, &devicempi));
    PetscCall(MatViewDeviceMPI_Private(opt, devicempi, viewer));
  }
  if (maxs[2] > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: the subdivisions' SpMVs by tiles of up to %d entries (-mat_gpustream_tile_size)\n", (int)maxs[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: model: copy %.4g GB/s, SpMV %.4g GB/s of CSR, %.4g ms per product\n", mins[1] / 1e9, info.computerate / 1e9, maxs[1] * 1e3));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SeqAIJ's and MPIAIJ's views, as the first matrix of each converted to gpustream had them */
static PetscErrorCode (*MatViewBase[2])(Mat, PetscViewer);

static PetscErrorCode MatView_GPUStream(Mat A, PetscViewer viewer)
{
  Mat_GPUStream    *gs = (Mat_GPUStream *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  if (!MatGPUStreamIsOurs_Private(A)) { /* a plain AIJ duplicate made while a gpustream matrix wore its base name
                                            (MATIS's local matrix ...): MatDuplicate() gave it the view of the original */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    A->ops->view = MatViewBase[size > 1];
    PetscCall((*A->ops->view)(A, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(gs->view(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  if (A->assembled) {
    GSDeviceMat    dA = NULL, dB = NULL;
    GSHalo         halo = NULL;
    PetscInt       vlen, team, league, cap, ntiles, bs, sizes[3] = {0, 0, 0};
    char           kernel[160];
    PetscLogDouble bytes[2], bbytes[2] = {0, 0};
    PetscBool      devicempi = PETSC_FALSE;
    PetscMPIInt    size;
    MPI_Comm       comm = PetscObjectComm((PetscObject)A);

    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCall(MatGPUStreamGetDeviceMat(A, &dA, &dB, &halo));
    if (gs->opts.budget >= 0) {
      char b[32];
      PetscCall(FormatBytes(gs->opts.budget, b));
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: mode %s, device budget %s (-mat_gpustream_max_device_bytes)\n", GSStreamModes[gs->opts.mode], b));
    } else
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: mode %s, device budget %s\n", GSStreamModes[gs->opts.mode], OnDeviceBudgetName()));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: MatCreateVecs() gives %s vectors (-mat_gpustream_vec_type %s)%s\n", A->defaultvectype, gs->vectype, GSDeviceVecType() ? "; device arrays are read and written in place" : ""));
    if (gs->plan) PetscCall(MatViewStreamPlan_Private(gs->plan, dB, halo, gs->devicempi, comm, viewer));
    if (!dA) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league));
    PetscCall(GSDeviceMatGetMemory(dA, &bytes[0], &bytes[1]));
    if (dB) PetscCall(GSDeviceMatGetMemory(dB, &bbytes[0], &bbytes[1]));
    if (halo) PetscCall(GSHaloGetSizes(halo, &sizes[0], &sizes[1], &sizes[2], &devicempi));
    bytes[0] += bbytes[0];
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bytes, 2, MPIU_PETSCLOGDOUBLE, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sizes, 3, MPIU_INT, MPI_SUM, comm));
    PetscCall(GSDeviceMatGetBlockSize(dA, &bs));
    if (bs > 1)
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR with block column indices (%" PetscInt_FMT " x %" PetscInt_FMT " blocks, -mat_gpustream_format %s) %.6g MB in device memory (+ %.6g MB staging for host vectors)\n",
                                       PetscGPUStreamExecutionSpace(), bs, bs, GSFormats[gs->opts.format], bytes[0] / 1048576.0, bytes[1] / 1048576.0));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR %.6g MB in device memory (+ %.6g MB staging for host vectors)\n", PetscGPUStreamExecutionSpace(), bytes[0] / 1048576.0, bytes[1] / 1048576.0));
    if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %d processes; each product exchanges %" PetscInt_FMT " ghost values in %" PetscInt_FMT " messages in all\n", (int)size, sizes[1], sizes[2] / 2));
    if (size > 1) PetscCall(MatViewDeviceMPI_Private(gs->devicempi, devicempi, viewer));
    PetscCall(GSDeviceMatGetTileSize(dA, &cap, &ntiles));
    /* a warp asked for on a host backend runs one lane per row, as every kernel there does */
    PetscCall(PetscSNPrintf(kernel, sizeof(kernel), "%s (-mat_gpustream_kernel %s%s%s)", vlen > 1 ? "warp per row" : "thread per row", GSSpMVKernels[gs->opts.kernel],
                            gs->opts.kernel == GS_KERNEL_WARP && !PetscGPUStreamOnDevice() ? ": one lane per row on the host backend " : "", gs->opts.kernel == GS_KERNEL_WARP && !PetscGPUStreamOnDevice() ? PetscGPUStreamExecutionSpace() : ""));
    if (cap)
      PetscCall(
          PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel %s, %" PetscInt_FMT " %s per row, by %" PetscInt_FMT " tiles of up to %" PetscInt_FMT " entries (-mat_gpustream_tile_size)\n", kernel, vlen, vlen == 1 ? "lane" : "lanes", ntiles, cap));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel %s, %" PetscInt_FMT " %s per row, %" PetscInt_FMT " %s per team, %" PetscInt_FMT " %s, no tiles\n", kernel, vlen, vlen == 1 ? "lane" : "lanes", team, team == 1 ? "row" : "rows",
                                       league, league == 1 ? "team" : "teams"));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: not assembled, nothing in device memory yet\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCGAMG builds its graph with MatCreateGraph(), whose AIJ implementation accepts only type names starting with
   "seqaij" or "mpiaij": the matrix wears its base name for the call, so the graph (a duplicate) comes out a plain
   AIJ matrix, exactly the one an AIJ operator gives */
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
static PetscErrorCode MatCreateGraph_GPUStream(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt nidx, PetscInt idx[], Mat *G)
#else
static PetscErrorCode MatCreateGraph_GPUStream(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, Mat *G)
#endif
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscMPIInt    size;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, size > 1 ? MATMPIAIJ : MATSEQAIJ));
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
  ierr = (*gs->creategraph)(A, sym, scale, filter, nidx, idx, G);
#else
  ierr = (*gs->creategraph)(A, sym, scale, filter, G);
#endif
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM)); /* also when it failed */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSOLVERPETSC's factors of a gpustream matrix are SeqAIJ's (the host arrays are a SeqAIJ): an ordinary host
   factor, which PCApply() and MatSolve() use on the host */
static PetscErrorCode MatGetFactor_GPUStream_PETSc(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*f)(Mat, MatFactorType, Mat *) = NULL;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSOLVERPETSC factors a gpustream matrix on one process only (as MATSEQAIJ); on several use -pc_type bjacobi or asm, whose blocks it factors, or -pc_type gamg");
  PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ftype, NULL, NULL, &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSOLVERPETSC has no %s factorization for MATSEQAIJ", MatFactorTypes[ftype]);
  PetscCall((*f)(A, ftype, F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSolverTypeRegister_GPUStream(void)
{
  const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBegin;
  for (int i = 0; i < 4; i++) PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATGPUSTREAM, ftypes[i], MatGetFactor_GPUStream_PETSc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCreateVecs()'s type: the one asked for, or by default the device vectors the plugin reads in place */
static PetscErrorCode MatGPUStreamSetVecType_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscBool      isauto;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(gs->vectype, "auto", &isauto));
  if (!isauto)
    PetscCall(MatSetVecType(A, gs->vectype));
  else
    PetscCall(MatSetVecType(A, GSDeviceVecType() ? GSDeviceVecType() : VECSTANDARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_GPUStream(Mat A, GSOptionItems PetscOptionsObject)
{
  Mat_GPUStream  *gs        = (Mat_GPUStream *)A->spptr;
  GSStreamOptions o         = gs->opts;
  GSDeviceMPI     devicempi = gs->devicempi;
  PetscBool       flg;
  char            vectype[64];

  PetscFunctionBegin;
  if (gs->setfromoptions) PetscCall((*gs->setfromoptions)(A, PetscOptionsObject));
  PetscCall(PetscStrncpy(vectype, gs->vectype, sizeof(vectype)));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATGPUSTREAM options");
  {
    static const struct {
      const char        *name;
      GSOptionKind       kind;
      const char *const *list;
    } checks[] = {
        {"-mat_gpustream_mode", GS_OPTION_LIST, GSStreamModes}, {"-mat_gpustream_max_device_bytes", GS_OPTION_REAL, NULL}, {"-mat_gpustream_buffers", GS_OPTION_INT, NULL},
        {"-mat_gpustream_subdivisions", GS_OPTION_INT, NULL},   {"-mat_gpustream_overlap", GS_OPTION_BOOL, NULL},          {"-mat_gpustream_kernel", GS_OPTION_LIST, GSSpMVKernels},
        {"-mat_gpustream_format", GS_OPTION_LIST, GSFormats},   {"-mat_gpustream_tile_size", GS_OPTION_INT, NULL},         {"-mat_gpustream_device_mpi", GS_OPTION_LIST, GSDeviceMPIs},
    };
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)A, checks[i].name, checks[i].kind, checks[i].list, -1)); /* the lists are enums' */
  }
  PetscCall(PetscOptionsEnum("-mat_gpustream_mode", "Device storage: auto (stream when the matrix exceeds the budget), resident, stream", "MATGPUSTREAM", GSStreamModes, (PetscEnum)o.mode, (PetscEnum *)&o.mode, NULL));
  PetscCall(PetscOptionsReal("-mat_gpustream_max_device_bytes", "Device memory the matrix may use, bytes (default: free device memory less a reserve)", "MATGPUSTREAM", o.budget, &o.budget, &flg));
  GSOptionsCheck(PetscOptionsObject, !flg || o.budget > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_max_device_bytes %g must be positive", GSPrefix((PetscObject)A), o.budget);
  PetscCall(PetscOptionsInt("-mat_gpustream_buffers", "Device buffers streamed subdivisions rotate through (at least 2)", "MATGPUSTREAM", o.buffers, &o.buffers, NULL));
  GSOptionsCheck(PetscOptionsObject, o.buffers >= 2, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_buffers %" PetscInt_FMT " must be at least 2", GSPrefix((PetscObject)A), o.buffers);
  PetscCall(PetscOptionsInt("-mat_gpustream_subdivisions", "Number of row subdivisions of a streamed matrix (default: chosen by a model)", "MATGPUSTREAM", o.subdivisions, &o.subdivisions, &flg));
  GSOptionsCheck(PetscOptionsObject, !flg || o.subdivisions >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_subdivisions %" PetscInt_FMT " must be at least 1 (leave it out for the automatic choice)",
                 GSPrefix((PetscObject)A), o.subdivisions);
  PetscCall(PetscOptionsBool("-mat_gpustream_overlap", "Overlap the copies of streamed subdivisions with the SpMVs", "MATGPUSTREAM", o.overlap, &o.overlap, NULL));
  PetscCall(PetscOptionsEnum("-mat_gpustream_kernel", "SpMV kernel: auto (from the mean row length), thread (a thread per row), warp (32 lanes per row)", "MATGPUSTREAM", GSSpMVKernels, (PetscEnum)o.kernel, (PetscEnum *)&o.kernel, NULL));
  PetscCall(PetscOptionsEnum("-mat_gpustream_format", "Device storage: auto (block column indices where the block size and pattern allow and MatMult uses no tiles), csr, block", "MATGPUSTREAM", GSFormats, (PetscEnum)o.format, (PetscEnum *)&o.format,
                             NULL));
  PetscCall(PetscOptionsInt("-mat_gpustream_tile_size", "Entries a team of MatMult's kernel stages in scratch memory before summing its rows (0: no tiles; default: chosen from the row lengths)", "MATGPUSTREAM", o.tile, &o.tile, &flg));
  GSOptionsCheck(PetscOptionsObject, !flg || (o.tile >= 0 && o.tile <= GS_MAX_TILE_SIZE), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_gpustream_tile_size %" PetscInt_FMT " must be in 0..%d (0: no tiles)",
                 GSPrefix((PetscObject)A), o.tile, GS_MAX_TILE_SIZE);
  PetscCall(PetscOptionsEnum("-mat_gpustream_device_mpi", "Halo messages between device buffers: auto (when MPI reports CUDA support, or on host backends), true, false (pinned host buffers)", "MATGPUSTREAM", GSDeviceMPIs, (PetscEnum)devicempi,
                             (PetscEnum *)&devicempi, NULL));
  {
    PetscBool      use;
    const char    *why;
    PetscErrorCode ierr = GSHaloUseDeviceMPI(devicempi, GSPrefix((PetscObject)A), &use, &why); /* true where the MPI says it cannot is an error now */
    if (ierr) PetscCall(GSOptionsAbandon(PetscOptionsObject));
    PetscCall(ierr);
  }
  PetscCall(
      PetscOptionsString("-mat_gpustream_vec_type", "Vector type MatCreateVecs() gives: auto (the GPU vectors of this PETSc that the plugin reads in place, else standard) or a VecType", "MatSetVecType", vectype, vectype, sizeof(vectype), &flg));
  if (flg) {
    PetscBool isauto;
    PetscCall(PetscStrcmp(vectype, "auto", &isauto));
    if (!isauto) {
      PetscErrorCode (*create)(Vec) = NULL;
      PetscCall(VecRegisterAll());
      PetscCall(PetscFunctionListFind(VecList, vectype, &create));
      GSOptionsCheck(PetscOptionsObject, create, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-%smat_gpustream_vec_type %s: give auto or a vector type (standard, cuda, ...)", GSPrefix((PetscObject)A), vectype);
    }
  }
  PetscOptionsHeadEnd();
  if (flg) {
    PetscCall(PetscStrncpy(gs->vectype, vectype, sizeof(gs->vectype)));
    PetscCall(MatGPUStreamSetVecType_Private(A));
  }
  if (devicempi != gs->devicempi) {
    gs->devicempi = devicempi; /* the next device operation makes a new halo */
    PetscCall(GSDeviceMatDestroy(&gs->dA));
    PetscCall(GSStreamPlanDestroy(&gs->plan));
  }
  if (o.mode != gs->opts.mode || o.budget != gs->opts.budget || o.buffers != gs->opts.buffers || o.subdivisions != gs->opts.subdivisions || o.overlap != gs->opts.overlap || o.kernel != gs->opts.kernel || o.tile != gs->opts.tile ||
      o.format != gs->opts.format) {
    gs->opts = o; /* the next device operation makes a new plan */
    PetscCall(GSDeviceMatDestroy(&gs->dA));
    PetscCall(GSStreamPlanDestroy(&gs->plan));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The base type name a gpustream matrix wears for AIJ's code: "seqaij" on one process, "mpiaij" on several */
static PetscErrorCode MatGPUStreamBaseName_Private(Mat A, MatType *name)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  *name = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's ops where a gpustream matrix has its own (from's saved ones) */
static PetscErrorCode MatGPUStreamRestoreOps_Private(Mat A, const Mat_GPUStream *from)
{
  PetscFunctionBegin;
  A->ops->mult                  = from->mult;
  A->ops->multadd               = from->multadd;
  A->ops->view                  = from->view;
  A->ops->assemblyend           = from->assemblyend;
  A->ops->destroy               = from->destroy;
  A->ops->setfromoptions        = from->setfromoptions;
  A->ops->duplicate             = from->duplicate;
  A->ops->creategraph           = from->creategraph;
  A->ops->productsetfromoptions = from->productsetfromoptions;
  A->ops->transpose             = from->transpose;
  A->ops->transposesymbolic     = from->transposesymbolic;
  { /* AIJ's coordinate assembly back where ours stands (not on a header whose functions are being destroyed) */
    PetscErrorCode (*f)(Mat, const PetscScalar[], InsertMode) = NULL;
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &f));
    if (f == MatSetValuesCOO_GPUStream) {
      PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", from->setpreallocationcoo));
      PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", from->setvaluescoo));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B, made by AIJ's code from a gpustream matrix whose data was `from` (a copy taken before: the matrix may be gone),
   becomes a gpustream matrix with from's settings (options, vector type). B is a gpustream matrix with nothing on the
   device yet, or a plain SeqAIJ or MPIAIJ one (made one in place), or a gpustream header that AIJ merged its result
   into (MatHeaderMerge(): our ops and type name, AIJ's data), whose ops become AIJ's first */
static PetscErrorCode MatGPUStreamAdopt_Private(Mat B, const Mat_GPUStream *from)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  if (B->ops->destroy == MatDestroy_GPUStream && !B->spptr) {
    MatType base;
    PetscCall(MatGPUStreamRestoreOps_Private(B, from));
    PetscCall(MatGPUStreamBaseName_Private(B, &base));
    PetscCall(PetscObjectChangeTypeName((PetscObject)B, base));
  }
  if (!MatGPUStreamIsOurs_Private(B)) PetscCall(MatAIJToGPUStream_Private(B));
  gs            = (Mat_GPUStream *)B->spptr;
  gs->opts      = from->opts;
  gs->devicempi = from->devicempi;
  PetscCall(PetscStrncpy(gs->vectype, from->vectype, sizeof(gs->vectype)));
  PetscCall(MatGPUStreamSetVecType_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's duplicate makes a gpustream matrix with the default options: it inherits ours */
static PetscErrorCode MatDuplicate_GPUStream(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*gs->duplicate)(A, op, B));
  if (MatGPUStreamIsOurs_Private(*B)) PetscCall(MatGPUStreamAdopt_Private(*B, gs)); /* not while A wears its base name */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B with B dense, all k columns in one pass over A (each streamed subdivision serves every column); on several
   processes the ghost rows of B come through the halo, a column at a time */
static PetscErrorCode MatProductNumeric_GPUStream_Dense(Mat C)
{
  Mat_Product       *product = C->product;
  Mat                A = product->A, B = product->B;
  Mat_GPUStream     *gs = (Mat_GPUStream *)A->spptr;
  const PetscScalar *b;
  PetscScalar       *c;
  PetscInt           ldb, ldc;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(PetscLogEventBegin(GPUS_MatMatMult, A, B, C, 0));
  PetscCall(MatDenseGetArrayRead(B, &b));
  PetscCall(MatDenseGetArrayWrite(C, &c));
  if (gs->plan)
    PetscCall(GSStreamPlanMultBlock(gs->plan, gs->dB, gs->halo, B->cmap->N, b, ldb, c, ldc));
  else
    PetscCall(GSDeviceMatMultBlock(gs->dA, gs->dB, gs->halo, B->cmap->N, b, ldb, c, ldc));
  PetscCall(MatDenseRestoreArrayWrite(C, &c));
  PetscCall(MatDenseRestoreArrayRead(B, &b));
  PetscCall(PetscLogEventEnd(GPUS_MatMatMult, A, B, C, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUStream_Dense(Mat C)
{
  Mat_Product *product = C->product;
  Mat          A = product->A, B = product->B;
  PetscBool    isdense;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetSizes(C, A->rmap->n, B->cmap->n, A->rmap->N, B->cmap->N));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)C, size > 1 ? MATMPIDENSE : MATSEQDENSE, &isdense));
  if (!isdense) PetscCall(MatSetType(C, size > 1 ? MATMPIDENSE : MATSEQDENSE));
  PetscCall(MatSetUp(C));
  C->ops->productsymbolic = MatProductSymbolic_GPUStream_Dense; /* MatSetType() cleared them */
  C->ops->productnumeric  = MatProductNumeric_GPUStream_Dense;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A B on the device; other products with a dense matrix (A^T B ...) as (MPI)AIJ does them, on the host arrays */
static PetscErrorCode MatProductSetFromOptions_GPUStream_Dense(Mat C)
{
  Mat_Product *product     = C->product;
  PetscErrorCode (*f)(Mat) = NULL;
  PetscMPIInt size;

  PetscFunctionBegin;
  if (product->type == MATPRODUCT_AB) {
    C->ops->productsymbolic = MatProductSymbolic_GPUStream_Dense;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)product->A), &size));
  PetscCall(PetscObjectQueryFunction((PetscObject)product->A, size > 1 ? "MatProductSetFromOptions_mpiaij_mpidense_C" : "MatProductSetFromOptions_seqaij_seqdense_C", &f));
  if (f) PetscCall((*f)(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Products with AIJ matrices (PCGAMG's A P and P^T A P; MatMatMult(), MatPtAP() ...) are AIJ's, on the host arrays.
   Their implementations check type names (MatMPIAIJGetLocalMat() ...), so in each phase the gpustream operands wear
   their base name; the result is then a plain AIJ matrix, the one AIJ operands give. was[]: which operands wear it */
static PetscErrorCode MatProductWearAIJ_Private(Mat C, PetscBool wear, PetscBool was[3])
{
  Mat_Product *product = C->product;
  Mat          X[3]    = {product->A, product->B, product->C};
  PetscMPIInt  size;

  PetscFunctionBegin;
  for (int i = 0; i < 3; i++) {
    if (!X[i]) continue;
    if (wear) {
      PetscCall(PetscObjectTypeCompare((PetscObject)X[i], MATGPUSTREAM, &was[i])); /* false for a repeated operand */
      if (!was[i]) continue;
      PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)X[i]), &size));
      PetscCall(PetscObjectChangeTypeName((PetscObject)X[i], size > 1 ? MATMPIAIJ : MATSEQAIJ));
    } else if (was[i])
      PetscCall(PetscObjectChangeTypeName((PetscObject)X[i], MATGPUSTREAM));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Calls the product phase composed on C under name, with the operands wearing their base names */
static PetscErrorCode MatProductPhaseAIJ_Private(Mat C, const char name[])
{
  PetscErrorCode (*f)(Mat) = NULL;
  PetscBool      was[3]    = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, name, &f));
  PetscCheck(f, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "Missing %s", name);
  PetscCall(MatProductWearAIJ_Private(C, PETSC_TRUE, was));
  ierr = (*f)(C);
  PetscCall(MatProductWearAIJ_Private(C, PETSC_FALSE, was)); /* also when it failed */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductNumeric_GPUStream_AIJ(Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatProductPhaseAIJ_Private(C, "MatProductNumeric_GPUStream_AIJ_C"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUStream_AIJ(Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatProductPhaseAIJ_Private(C, "MatProductSymbolic_GPUStream_AIJ_C"));
  if (C->ops->productnumeric && C->ops->productnumeric != MatProductNumeric_GPUStream_AIJ) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "MatProductNumeric_GPUStream_AIJ_C", C->ops->productnumeric));
    C->ops->productnumeric = MatProductNumeric_GPUStream_AIJ;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The symbolic phase an AIJ implementation set runs with the operands wearing their base names (and so does the
   numeric phase it sets) */
static PetscErrorCode MatProductWrapSymbolic_Private(Mat C)
{
  PetscFunctionBegin;
  if (C->ops->productsymbolic && C->ops->productsymbolic != MatProductSymbolic_GPUStream_AIJ) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "MatProductSymbolic_GPUStream_AIJ_C", C->ops->productsymbolic));
    C->ops->productsymbolic = MatProductSymbolic_GPUStream_AIJ;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatProductSetFromOptions() calls this as the operands' common op when they are all gpustream, else through the
   names "MatProductSetFromOptions_<A type>_<B type>_C" composed on the gpustream one for (MPI/Seq)AIJ partners */
static PetscErrorCode MatProductSetFromOptions_GPUStream_AIJ(Mat C)
{
  Mat_Product   *product = C->product;
  Mat            G       = product->A;
  PetscBool      isgs, was[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)G, MATGPUSTREAM, &isgs));
  if (!isgs) G = product->B;
  PetscCall(MatProductWearAIJ_Private(C, PETSC_TRUE, was));
  ierr = (*((Mat_GPUStream *)G->spptr)->productsetfromoptions)(C);
  PetscCall(MatProductWearAIJ_Private(C, PETSC_FALSE, was));
  PetscCall(ierr);
  PetscCall(MatProductWrapSymbolic_Private(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The implementation that the operands' current type names select, composed on one of them as
   "MatProductSetFromOptions_<A type>_<B type>[_<C type>]_C" (the name MatProductSetFromOptions() looks up), if any */
static PetscErrorCode MatProductSetFromOptionsByName_Private(Mat C)
{
  Mat_Product *product = C->product;
  Mat          X[3]    = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(name, "MatProductSetFromOptions", sizeof(name)));
  for (int i = 0; i < 3; i++) {
    if (!X[i]) continue;
    PetscCall(PetscStrlcat(name, "_", sizeof(name)));
    PetscCall(PetscStrlcat(name, ((PetscObject)X[i])->type_name, sizeof(name)));
  }
  PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
  for (int i = 0; i < 3 && !f; i++)
    if (X[i]) PetscCall(PetscObjectQueryFunction((PetscObject)X[i], name, &f));
  if (f) PetscCall((*f)(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Products with any other partner that AIJ's product code takes: MAIJ (PCMG's Galerkin operators on a DMDA with several
   unknowns per node), and whatever composes "MatProductSetFromOptions_seqaij_<its type>_C" or the like. MatProductSetFromOptions()
   asks the operands for "MatProductSetFromOptions_anytype_C" when nothing else served: the gpustream operands wear
   their base names, the implementation those names select is set up, and its phases run so; the result is what
   AIJ operands give. Nothing to do when no operand is named gpustream (they already wear their base names) */
static PetscErrorCode MatProductSetFromOptions_GPUStream_Any(Mat C)
{
  Mat_Product   *product = C->product;
  Mat            X[3]    = {product->A, product->B, product->C};
  PetscBool      isgs, any = PETSC_FALSE, was[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  for (int i = 0; i < 3; i++) {
    if (!X[i]) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)X[i], MATGPUSTREAM, &isgs));
    any = (PetscBool)(any || isgs);
  }
  if (!any) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatProductWearAIJ_Private(C, PETSC_TRUE, was));
  ierr = MatProductSetFromOptionsByName_Private(C);
  PetscCall(MatProductWearAIJ_Private(C, PETSC_FALSE, was));
  PetscCall(ierr);
  PetscCall(MatProductWrapSymbolic_Private(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The transpose as AIJ makes it, then a gpustream matrix with A's settings. AIJ's implementations give the transpose
   the type name of A: a "gpustream" new SeqAIJ would lose the transposed arrays, so A wears its base name for the
   call and the transpose, a plain AIJ matrix, is made a gpustream one afterwards. In place, A itself is one again
   after the call replaced its header; reused, B keeps its own settings (the values come into its host arrays and
   reach the device at its next product). Inside product phases, where A wears its base name already, the transpose
   is AIJ's, as there. */
static PetscErrorCode MatTranspose_GPUStream(Mat A, MatReuse reuse, Mat *B)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr, a = *gs, b;
  MatType        base;
  PetscBool      isgs, bgs = PETSC_FALSE;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs));
  if (!isgs) {
    PetscCall((*gs->transpose)(A, reuse, B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_REUSE_MATRIX) {
    bgs = MatGPUStreamIsOurs_Private(*B);
    if (bgs) b = *(Mat_GPUStream *)(*B)->spptr;
  }
  PetscCall(MatGPUStreamBaseName_Private(A, &base));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  ierr = (*a.transpose)(A, reuse, B);
  if (MatGPUStreamIsOurs_Private(A)) PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM)); /* also when it failed */
  PetscCall(ierr);
  if (reuse == MAT_INPLACE_MATRIX) { /* AIJ merged the transpose into A's header */
    if (!MatGPUStreamIsOurs_Private(A)) PetscCall(MatGPUStreamAdopt_Private(A, &a));
  } else if (reuse == MAT_INITIAL_MATRIX)
    PetscCall(MatGPUStreamAdopt_Private(*B, &a));
  else if (bgs && !MatGPUStreamIsOurs_Private(*B)) /* a new nonzero pattern, merged into B's header */
    PetscCall(MatGPUStreamAdopt_Private(*B, &b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatTransposeSymbolic(): the pattern of the transpose, as AIJ makes it (see MatTranspose_GPUStream()) */
static PetscErrorCode MatTransposeSymbolic_GPUStream(Mat A, Mat *B)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr, a = *gs;
  MatType        base;
  PetscBool      isgs;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs));
  if (!isgs) {
    PetscCall((*gs->transposesymbolic)(A, B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUStreamBaseName_Private(A, &base));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  ierr = (*gs->transposesymbolic)(A, B);
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM));
  PetscCall(ierr);
  PetscCall(MatGPUStreamAdopt_Private(*B, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* To MATIS (PCMG's GDSW coarse spaces, PCBDDC): AIJ's converter, which the host arrays carry ("MatConvert_seqaij_is_C",
   "MatConvert_mpiaij_is_C"), found by MatConvert() while the matrix wears its base name; the local matrices are plain
   SeqAIJ, as from an AIJ matrix. In place, the matrix is a MATIS afterwards */
static PetscErrorCode MatConvert_GPUStream_IS(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  MatType        base;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamBaseName_Private(A, &base));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  ierr = MatConvert(A, type, reuse, B);
  if (MatGPUStreamIsOurs_Private(A)) PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM)); /* also when it failed */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const MatGPUStreamProductAIJ[] = {"MatProductSetFromOptions_gpustream_seqaij_C", "MatProductSetFromOptions_gpustream_mpiaij_C", "MatProductSetFromOptions_seqaij_gpustream_C", "MatProductSetFromOptions_mpiaij_gpustream_C"};

static const char *const MatGPUStreamConverters[] = {"MatConvert_gpustream_seqaij_C", "MatConvert_gpustream_mpiaij_C", "MatConvert_seqaij_gpustream_C", "MatConvert_mpiaij_gpustream_C"};

/* Drops the device side and turns A back into a plain SeqAIJ or MPIAIJ matrix */
static PetscErrorCode MatGPUStreamToAIJ_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCall(GSDeviceMatDestroy(&gs->dA));
  PetscCall(GSDeviceMatDestroy(&gs->dB));
  PetscCall(GSStreamPlanDestroy(&gs->plan));
  PetscCall(GSHaloDestroy(&gs->halo));
  PetscCall(MatSetVecType(A, VECSTANDARD));
  PetscCall(MatGPUStreamRestoreOps_Private(A, gs));
  PetscCall(PetscFree(A->spptr));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamProductAIJ[i], NULL));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_seqdense_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_mpidense_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_gpustream_is_C", NULL));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, size > 1 ? MATMPIAIJ : MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_GPUStream(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamToAIJ_Private(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Turns a SeqAIJ or MPIAIJ matrix into a gpustream one in place; its host arrays are kept as they are */
static PetscErrorCode MatAIJToGPUStream_Private(Mat A)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCall(PetscNew(&gs));
  gs->opts.mode         = GS_STREAM_AUTO;
  gs->opts.budget       = -1;
  gs->opts.buffers      = 2;
  gs->opts.subdivisions = 0;
  gs->opts.overlap      = PETSC_TRUE;
  gs->opts.inplace      = PETSC_FALSE;
  gs->opts.kernel       = GS_KERNEL_AUTO;
  gs->opts.tile         = -1;
  gs->opts.format       = GS_FORMAT_AUTO;
  gs->devicempi         = GS_DEVICE_MPI_AUTO;
  PetscCall(PetscStrncpy(gs->vectype, "auto", sizeof(gs->vectype)));
  gs->mult                  = A->ops->mult;
  gs->multadd               = A->ops->multadd;
  gs->view                  = A->ops->view;
  gs->assemblyend           = A->ops->assemblyend;
  gs->destroy               = A->ops->destroy;
  gs->setfromoptions        = A->ops->setfromoptions;
  gs->duplicate             = A->ops->duplicate;
  gs->creategraph           = A->ops->creategraph;
  gs->productsetfromoptions = A->ops->productsetfromoptions;
  gs->transpose             = A->ops->transpose;
  gs->transposesymbolic     = A->ops->transposesymbolic;
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    if (!MatViewBase[size > 1]) MatViewBase[size > 1] = A->ops->view;
    if (!MatAssemblyEndBase[size > 1]) MatAssemblyEndBase[size > 1] = A->ops->assemblyend;
  }
  A->spptr               = gs;
  A->ops->mult           = MatMult_GPUStream;
  A->ops->multadd        = MatMultAdd_GPUStream;
  A->ops->view           = MatView_GPUStream;
  A->ops->assemblyend    = MatAssemblyEnd_GPUStream;
  A->ops->destroy        = MatDestroy_GPUStream;
  A->ops->setfromoptions = MatSetFromOptions_GPUStream;
  A->ops->duplicate      = MatDuplicate_GPUStream;
  if (gs->creategraph) A->ops->creategraph = MatCreateGraph_GPUStream;
  A->ops->productsetfromoptions = MatProductSetFromOptions_GPUStream_AIJ;
  if (gs->transpose) A->ops->transpose = MatTranspose_GPUStream;
  if (gs->transposesymbolic) A->ops->transposesymbolic = MatTransposeSymbolic_GPUStream;
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamProductAIJ[i], MatProductSetFromOptions_GPUStream_AIJ));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], i < 2 ? MatConvert_GPUStream_AIJ : MatConvert_AIJ_GPUStream));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_seqdense_C", MatProductSetFromOptions_GPUStream_Dense));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_mpidense_C", MatProductSetFromOptions_GPUStream_Dense));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", MatProductSetFromOptions_GPUStream_Any));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_gpustream_is_C", MatConvert_GPUStream_IS));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &gs->setpreallocationcoo));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &gs->setvaluescoo));
  if (gs->setpreallocationcoo && gs->setvaluescoo) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_GPUStream));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", MatSetValuesCOO_GPUStream));
  }
  PetscCall(MatGPUStreamSetVecType_Private(A));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What converting either way shares: copy into an existing matrix, or make the target (a duplicate, or A itself)
   and turn it into the new type in place */
static PetscErrorCode MatConvert_Private(Mat A, MatReuse reuse, Mat *B, PetscErrorCode (*inplace)(Mat))
{
  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *B, DIFFERENT_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX)
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  else
    *B = A;
  PetscCall((*inplace)(*B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_AIJ_GPUStream(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_Private(A, reuse, B, MatAIJToGPUStream_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_GPUStream_AIJ(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_Private(A, reuse, B, MatGPUStreamToAIJ_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATGPUSTREAM - MATGPUSTREAM = "gpustream" - A sparse matrix whose SpMV runs on a GPU through Kokkos.

   The matrix is assembled exactly like `MATAIJ` (`MatSetValues()`, `MatSeqAIJSetPreallocation()`,
   `MatMPIAIJSetPreallocation()`, `MatXAIJSetPreallocation()`, `DMCreateMatrix()` with `-dm_mat_type gpustream`): it is
   a `MATSEQAIJ` on one MPI process and a `MATMPIAIJ` on several, whose host arrays stay the master
   copy, so every AIJ operation works. The CSR arrays are mirrored in the memory of Kokkos' default execution space
   at the end of each final assembly and refreshed when the host changes: values alone when the nonzero pattern is
   the same (no reallocation), everything otherwise; a product refreshes them when the host arrays changed since
   (`MatScale()` ...). Running out of device memory is therefore an error of `MatAssemblyEnd()` (`PETSC_ERR_MEM`), after
   which the matrix is not assembled: assemble it again once memory is there. `MatMult()` and `MatMultAdd()` run on
   the device; the Krylov methods of this plugin (`KSPPIPECGFUSED`) fuse the device SpMV into their kernels and keep
   their vectors on the device.

   Level: beginner

   Notes:
   On several processes each one holds its diagonal and off-diagonal blocks on the device. A product gathers the
   values other processes need on the device (index lists built once per nonzero pattern), exchanges them with MPI,
   and runs the diagonal-block SpMV while the messages travel; the off-diagonal block follows. The messages go
   between the device buffers themselves when MPI can read device memory, chosen at run time: Open MPI is asked
   with `MPIX_Query_cuda_support()`; other MPIs cannot be asked, so auto stages them through pinned host buffers
   (and `-mat_gpustream_device_mpi true` takes the user's word). On host backends the buffers are host memory and
   MPI gets them directly unless the option is false. Each process should drive its own GPU (one process per GPU).
   `-mat_view ::ascii_info` shows the execution space, the device memory in use, the halo and the SpMV launch shape.

   Matrices larger than the device: the CSR may stream. Its rows are cut into subdivisions of about equal bytes; the
   leading ones stay in device memory as long as the budget allows, the others are copied every product from
   pinned host memory into a ring of device buffers, on their own CUDA stream, while the SpMV of the previous
   subdivision runs on another (ordered by CUDA events). A streamed product is bitwise equal to the resident one
   (same per-row summation). The streamed rows are held twice on the host, in the AIJ arrays (the master copy,
   which assembly and every AIJ operation use) and in a pinned copy refreshed when the values change: pinning the
   AIJ arrays in place (cudaHostRegister) would tie PETSc's allocations to CUDA and break when PETSc frees or
   reallocates them. With several processes each diagonal block streams and the off-diagonal blocks stay resident.
   `MatMatMult()` with a `MATSEQDENSE` or `MATMPIDENSE` matrix computes all columns in one pass over the matrix (each
   streamed subdivision serves all of them; the dense operands are staged in device memory outside the budget; on
   several processes the ghost rows come through the halo exchange, a column at a time). `MatDuplicate()` keeps the
   options.
   The fused SpMVs of `KSPPIPECGFUSED`, `KSPPIPEBCGSF` and `KSPSGMRESF` need the whole matrix on the device: on a
   streamed matrix they call `MatMult()` instead.

   Preconditioners: `PCJACOBI` and `PCPBJACOBI` are fused into the plugin's solvers; every other PC works on the host
   AIJ arrays, exactly as on `MATAIJ`, and those solvers apply it on the host. `PCLU`, `PCILU`, `PCCHOLESKY` and
   `PCICC` (`MATSOLVERPETSC`, the default; one process) build `MATSEQAIJ`'s own host factor; with no `-pc_type` the
   default is therefore `PCILU` on one process, as for `MATAIJ` (`PCBJACOBI` with ILU on several). On several
   processes `PCBJACOBI` and `PCASM` factor their blocks, plain `MATSEQAIJ` matrices. `PCGAMG` builds its graph and
   Galerkin products with AIJ's code: `MatCreateGraph()` and products with AIJ matrices (`MatMatMult()`, `MatPtAP()`)
   run while the matrix wears its base type name ("seqaij" or "mpiaij", which those implementations check), so the
   coarse operators are plain AIJ and the preconditioner is the one an AIJ operator gets (tests/kspgpustream.c
   checks PCApply() against AIJ's); the finest level's smoother multiplies on the device. So do products with any
   other partner AIJ's product code takes (MAIJ: `PCMG`'s Galerkin coarse operators on a `DMDA` with several unknowns
   per node), `MatConvert()` to `MATIS` (AIJ's converter; local matrices plain `MATSEQAIJ`) and `MatTranspose()`,
   `MatHermitianTranspose()` and `MatTransposeSymbolic()`, whose result is made a gpustream matrix with the
   options of the original (tests/mataij.c compares them with AIJ's). Other solver packages
   (`-pc_factor_mat_solver_type mumps` ...) are not registered for this type: `MatConvert()` the matrix to `MATAIJ`
   for them.

   The number of subdivisions, unless given, minimizes a model of one product: the copy rate (pinned host to device,
   measured once per process) and the SpMV rate (taken as the measured device copy rate, half of it counted as
   reads) give each subdivision a copy time and an SpMV time, plus 20 microseconds of overhead each; the resident
   SpMV overlaps the first copy, and copy k+1 overlaps SpMV k as buffers allow. Among the counts up to 512 whose
   buffers fit the budget, the least modelled time wins.

   Options Database Keys (in `MatSetFromOptions()`; a new value takes effect at the next assembly or product):
+  -mat_type gpustream - selects this type in `MatSetFromOptions()`
.  -mat_gpustream_mode <auto,resident,stream> - auto streams when the CSR and the vectors exceed the budget;
      resident errors out then
.  -mat_gpustream_max_device_bytes <bytes> - device memory the matrix may use (default: the free device memory
      less max(512 MB, 5% of it) when the matrix is set up; unlimited on host backends)
.  -mat_gpustream_buffers <2> - device buffers streamed subdivisions rotate through
.  -mat_gpustream_subdivisions <n> - number of subdivisions (default: the model's choice)
.  -mat_gpustream_overlap <true> - overlap copies with SpMVs (off: each copy completes before its SpMV)
.  -mat_gpustream_kernel <auto,thread,warp> - the SpMV kernel: a thread per row, a warp (32 lanes) per row, or auto:
      a warp when rows average 12 entries or more (measured in docs/performance.md); host backends run one lane (a
      thread) per row whatever the choice, which -mat_view ::ascii_info says when warp is asked for
.  -mat_gpustream_tile_size <n> - MatMult's kernel by tiles: each team stages the products of up to n entries (at
      most 2048) of consecutive rows in scratch memory, every thread loading at once, then sums the rows from there
      in the order the kernel above sums them (the same bits: with a warp per row, a thread sums a row of up to 32
      entries in the order of the warp's lanes, a warp a longer one); a row longer than n is cut into pieces of n
      entries summed by whole teams. 0: rows loaded directly. Default on a device: tiles of 1024 entries when a row
      is longer than 2048 entries (uneven rows: 10x faster there), of 2048 when rows average 12 entries or more and
      none exceeds 32 (the 27-point stencil: 1.8x faster), else none (a warp per row is faster on longer even rows,
      docs/performance.md)
.  -mat_gpustream_format <auto,csr,block> - device storage: CSR, or block column indices (one column index a bs x bs
      block, the values in AIJ's order) for a matrix with a block size of 2 to 6 (`MatSetBlockSize()`,
      `-mat_block_size`, a `DMDA` with several degrees of freedom) whose pattern is made of full aligned blocks, alike
      in each block row: the integers of a product shrink from 4 bytes an entry to 4 / bs^2, and the kernels read
      each block's column and x once for its bs rows. With one lane per row every row is summed in the CSR's order
      (the same bits); with several, the lanes take whole blocks. auto takes block column indices where the pattern
      allows and no tiles are asked for (docs/performance.md). Resident matrices only: streamed subdivisions stay CSR
-  -mat_gpustream_device_mpi <auto,false,true> - halo messages between device buffers (true), staged through pinned
      host buffers (false), or auto: device buffers when the MPI reports CUDA support, or on host backends; true
      is refused (`PETSC_ERR_SUP`) when the MPI reports no CUDA support

.seealso: `MatCreateGPUStream()`, `KSPPIPECGFUSED`, `MATAIJ`
M*/
PETSC_EXTERN PetscErrorCode MatCreate_GPUStream(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1)
    PetscCall(MatCreate_MPIAIJ(A));
  else
    PetscCall(MatCreate_SeqAIJ(A));
  PetscCall(MatAIJToGPUStream_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
   MatCreateGPUStream - Creates a sequential `MATGPUSTREAM` matrix, preallocated like `MatCreateSeqAIJ()`.

   Collective

   Input Parameters:
+  comm - MPI communicator of one process
.  m - number of rows
.  n - number of columns
.  nz - nonzeros per row (same for all rows), ignored if `nnz` is given
-  nnz - nonzeros in each row, or `NULL`

   Output Parameter:
.  A - the matrix

   Level: beginner

.seealso: `MATGPUSTREAM`, `MatCreateSeqAIJ()`
@*/
PetscErrorCode MatCreateGPUStream(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, n, m, n));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  PetscCall(MatSeqAIJSetPreallocation(*A, nz, nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
