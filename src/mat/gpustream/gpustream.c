/* MATGPUSTREAM: an AIJ matrix (SeqAIJ on one rank, MPIAIJ on several) whose CSR is mirrored in device memory
   (Kokkos views) for SpMV; on several ranks the diagonal and off-diagonal blocks, plus the halo exchange.

   The host AIJ arrays hold the nonzero pattern: assembly, preallocation, MatSetValues and every AIJ operation work
   unchanged on them. The values live where they last changed. Changed on the host, the device copy is refreshed
   lazily, when a device operation finds that the host changed: the whole CSR when the nonzero pattern changed, the
   values alone (no reallocation) otherwise. Changed on the device (MatSetValuesCOO(), MatScale(), MatShift(),
   MatDiagonalScale(), MatAXPY() and MatZeroEntries() on a resident matrix), the host arrays are marked stale and
   copied back only when a host operation needs them: every AIJ operation the matrix's ops table holds runs through a
   wrapper that brings the host up to date first (GSWrappedOps), and so do the products, factorizations, conversions,
   transposes, views and duplicates that hand the host arrays to PETSc (MatGPUStreamSyncHost_Private()). */
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
  GSHaloShared     shared;                    /* -mat_gpustream_halo_shared */
  char             vectype[64];               /* -mat_gpustream_vec_type: auto or a VecType */
  PetscBool        pinned;                    /* -mat_gpustream_pinned_vecs: host vectors of MatCreateVecs() pinned */
  PetscObjectState nzstate, state, bstate[2]; /* host states the device copy reflects (bstate: MPIAIJ's blocks) */
  /* AIJ's operations before ours replaced those of GSOwnOps: ours call them, a conversion back to AIJ restores them */
  struct _MatOps aij;
  PetscErrorCode (*setpreallocationcoo)(Mat, PetscCount, PetscInt[], PetscInt[]);
  PetscErrorCode (*setvaluescoo)(Mat, const PetscScalar[], InsertMode);
  PetscErrorCode (*storevalues)(Mat);
  PetscErrorCode (*retrievevalues)(Mat);
  PetscErrorCode (*diagonalscalelocal)(Mat, Vec);
  struct _MatOps   base;                 /* AIJ's operations behind the wrappers of GSWrappedOps */
  PetscCount       ncoo;                 /* entries of the last MatSetPreallocationCOO() */
  GSCOOMap         coo;                  /* where they go in the device CSR */
  PetscObjectState coostate;             /* the nonzero state the map was found to fit (0: not checked yet) */
  PetscBool        hoststale;            /* the device's values are newer than the host arrays' */
  PetscObjectState trstate[3];           /* the states (as state, bstate) the device transposes' values reflect */
  PetscBool        devicemaster;         /* the device's values are current whatever the object states say: they changed
                                            on the device (or on both sides alike) since the host was last accessed */
  PetscObjectState zerostate;            /* a product result's: the state at which its host values were the zeros of its
                                            symbolic phase (its device copy is zeroed there, not uploaded); 0: none */
  Mat              diag;                 /* on several processes, the diagonal block as MatGetDiagonalBlock() gives it */
  PetscObjectState diagnz, diagstate[2]; /* the nonzero state and the states (the matrix's, its block's) it reflects */
} Mat_GPUStream;

const char *const GSSpMVKernels[] = {"auto", "thread", "warp", "GSSpMVKernel", "GS_KERNEL_", NULL};
const char *const GSFormats[]     = {"auto", "csr", "block", "GSFormat", "GS_FORMAT_", NULL};
const char *const GSDeviceMPIs[]  = {"auto", "false", "true", "GSDeviceMPI", "GS_DEVICE_MPI_", NULL};

static PetscErrorCode MatConvert_AIJ_GPUStream(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_GPUStream_AIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatAIJToGPUStream_Private(Mat);
static PetscErrorCode MatDestroy_GPUStream(Mat);
static void           MatGPUStreamUnwrapOps_Private(Mat, const Mat_GPUStream *);
static PetscErrorCode MatGPUStreamToAIJ_Private(Mat);
static PetscErrorCode MatGPUStreamUnwrapComposed_Private(Mat, const Mat_GPUStream *);
static PetscErrorCode MatGPUStreamBaseOps_Private(Mat, const struct _MatOps **);

/* Whether A is (still) a gpustream matrix. Not after a header replace inside AIJ's code (A is then another type), nor
   a duplicate made while a gpustream matrix wore its base name (AIJ's ops); nor after a header merge
   (MatHeaderMerge(), which keeps A's ops, type name and composed functions but takes the other's data): our ops
   without our data, see MatGPUStreamAdopt_Private() */
static PetscBool MatGPUStreamIsOurs_Private(Mat A)
{
  return (PetscBool)(A->ops->destroy == MatDestroy_GPUStream && A->spptr);
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

/* A takes its base name for code that checks type names; only the name changes (the callers that hand A to code
   reading its host arrays bring them up to date first: MatGPUStreamWearBase()). *worn: whether it changed, not when A
   is not a gpustream matrix or wears its base name already (a nested call: the outer one takes it off again) */
static PetscErrorCode MatGPUStreamWearName_Private(Mat A, PetscBool *worn)
{
  MatType base;

  PetscFunctionBegin;
  *worn = PETSC_FALSE;
  if (!MatGPUStreamIsOurs_Private(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, worn));
  if (!*worn) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUStreamBaseName_Private(A, &base));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's own name again where it took its base name (worn), unless the code it was handed to replaced its header (an
   in-place conversion or transpose): A is then another matrix. ierr is the result of the call A wore its base name
   for, so that A wears its own name again also when that call failed. */
PetscErrorCode MatGPUStreamWearOwn(Mat A, PetscBool worn, PetscErrorCode ierr)
{
  PetscFunctionBegin;
  if (worn && MatGPUStreamIsOurs_Private(A)) PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATGPUSTREAM));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
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
    PetscObjectState state;
    PetscBool        zeros;
    PetscCall(PetscObjectStateGet((PetscObject)S, &state));
    zeros = (PetscBool)(gs->zerostate && gs->zerostate == state); /* a product result's zeros: written on the device */
    ierr  = MatGPUStreamFormatBlockSize_Private(S, m, ia, ja, &o, &bs);
    if (!ierr) ierr = GSDeviceMatCreate(m, S->cmap->n, ia, ja, zeros ? NULL : a, PETSC_FALSE, bs, gs->opts.tile, &gs->dA);
    if (!ierr && zeros) ierr = GSDeviceMatZeroValues(gs->dA);
  }
  gs->zerostate = 0;
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
  PetscBool worn;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamWearName_Private(A, &worn));
  PetscCall(MatGPUStreamWearOwn(A, worn, MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray)));
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
  if (size > 1) { /* MPIAIJ's MatAXPY() changes its blocks and leaves the matrix's own state as it was. A new nonzero
                     pattern comes from collective operations only, so every process decides alike to make the device
                     copy again (collective); new values alone may be found on some processes only (a process whose
                     values changed on the device since its host last did), and their copy is local. */
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(PetscObjectStateGet((PetscObject)Ad, &bstate[0]));
    PetscCall(PetscObjectStateGet((PetscObject)Ao, &bstate[1]));
  }
  if (gs->devicemaster && (gs->dA || gs->plan)) {
    if (gs->nzstate == A->nonzerostate) { /* the states moved with the device's values (or without any change) */
      gs->state     = state;
      gs->bstate[0] = bstate[0];
      gs->bstate[1] = bstate[1];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    /* a new nonzero pattern (a preallocation routine, which drops the values): the host's values are the ones */
    PetscCall(PetscInfo(A, "New nonzero pattern after values changed on the device: the device copy is made again from the host\n"));
    gs->devicemaster = gs->hoststale = PETSC_FALSE;
  }
  if ((!gs->dA && !gs->plan) || gs->nzstate != A->nonzerostate || gs->state != state || gs->bstate[0] != bstate[0] || gs->bstate[1] != bstate[1]) {
    const PetscBool valuesonly = (PetscBool)((gs->dA || gs->plan) && gs->nzstate == A->nonzerostate);

    PetscCall(PetscLogEventBegin(GPUS_MatSync, A, 0, 0, 0));
    if (size == 1)
      PetscCall(MatGPUStreamSyncDiag_Private(PETSC_COMM_SELF, A, GSPrefix((PetscObject)A), valuesonly, gs));
    else {
      PetscCall(MatGPUStreamSyncDiag_Private(PetscObjectComm((PetscObject)A), Ad, GSPrefix((PetscObject)A), valuesonly, gs));
      if (valuesonly) /* allocates nothing: local, as a process whose values changed on the device alone may not come here */
        PetscCall(MatGPUStreamSyncBlock_Private(Ao, PETSC_TRUE, PETSC_TRUE, gs->opts.kernel, gs->opts.tile, &gs->dB));
      else
        PetscCall(GSAllOK(PetscObjectComm((PetscObject)A), MatGPUStreamSyncBlock_Private(Ao, PETSC_FALSE, PETSC_TRUE, gs->opts.kernel, gs->opts.tile, &gs->dB)));
      if (!valuesonly) { /* collective, its allocations last */
        PetscBool   devicempi;
        const char *why;
        PetscCall(GSHaloUseDeviceMPI(gs->devicempi, GSPrefix((PetscObject)A), &devicempi, &why));
        PetscCall(GSHaloDestroy(&gs->halo));
        PetscCall(GSAllOK(PetscObjectComm((PetscObject)A), GSHaloCreate(PetscObjectComm((PetscObject)A), A->cmap->n, A->cmap->range, Ao->cmap->n, garray, devicempi, gs->shared, GSPrefix((PetscObject)A), &gs->halo)));
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

/* The object states the device copy reflects: the matrix's and, on several processes, its blocks' */
static PetscErrorCode MatGPUStreamRecordStates_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &gs->state));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) {
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(PetscObjectStateGet((PetscObject)Ad, &gs->bstate[0]));
    PetscCall(PetscObjectStateGet((PetscObject)Ao, &gs->bstate[1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device values of one block into its host arrays; its object state stays as it was */
static PetscErrorCode MatGPUStreamBlockToHost_Private(Mat S, GSDeviceMat d)
{
  PetscObjectState state;
  PetscScalar     *a;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)S, &state));
  PetscCall(MatSeqAIJGetArrayWrite(S, &a));
  ierr = GSDeviceMatGetValues(d, a);
  PetscCall(MatSeqAIJRestoreArrayWrite(S, &a));
  PetscCall(PetscObjectStateSet((PetscObject)S, state));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host arrays as current as the device's values, before any host operation reads or writes them: the device
   values are copied back where a device-side change left the host behind (once, counted in -log_view). The object
   states stay as they are: the values the host now holds were announced when they changed on the device. Afterwards
   the host may change the values, so the device copy follows the states again. Local; nothing for a matrix that is
   not (or no longer) a gpustream one. */
static PetscErrorCode MatGPUStreamSyncHost_Private(Mat A)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  if (!MatGPUStreamIsOurs_Private(A)) PetscFunctionReturn(PETSC_SUCCESS);
  gs = (Mat_GPUStream *)A->spptr;
  if (gs->hoststale) {
    PetscMPIInt size;
    PetscCall(PetscLogEventBegin(GPUS_MatToHost, A, 0, 0, 0));
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    if (size == 1)
      PetscCall(MatGPUStreamBlockToHost_Private(A, gs->dA));
    else {
      Mat             Ad, Ao;
      const PetscInt *garray;
      PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
      PetscCall(MatGPUStreamBlockToHost_Private(Ad, gs->dA));
      PetscCall(MatGPUStreamBlockToHost_Private(Ao, gs->dB));
    }
    gs->hoststale = PETSC_FALSE;
    PetscCall(PetscLogEventEnd(GPUS_MatToHost, A, 0, 0, 0));
  }
  if (gs->devicemaster) {
    PetscCall(MatGPUStreamRecordStates_Private(A));
    gs->devicemaster = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc code that reads AIJ's data checks type names: AIJ's own implementations (MatMPIAIJGetSeqAIJ(),
   MatMPIAIJGetLocalMat(), products, MatCreateGraph()), the solver packages' factorizations, PCML, the coarsening and
   coloring implementations. A gpustream matrix keeps its own name, so none of them reads its host arrays, which may be
   stale, behind its back; where it is handed to one, its host arrays are brought up to date and it wears its base
   name, "seqaij" or "mpiaij", for the call (MatGPUStreamWearOwn() afterwards). Nothing for a matrix that is not a
   gpustream one. */
PetscErrorCode MatGPUStreamWearBase(Mat A, PetscBool *worn)
{
  PetscFunctionBegin;
  *worn = PETSC_FALSE;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall(MatGPUStreamWearName_Private(A, worn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the values changed on the device: the host arrays are stale, and the object states move on (the matrix's
   and, on several processes, its blocks', which a PC that holds a block watches: block Jacobi's) */
static PetscErrorCode MatGPUStreamDeviceChanged_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) {
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(PetscObjectStateIncrease((PetscObject)Ad));
    PetscCall(PetscObjectStateIncrease((PetscObject)Ao));
  }
  PetscCall(MatGPUStreamRecordStates_Private(A));
  gs->hoststale    = PETSC_TRUE;
  gs->devicemaster = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether value operations run on the device: A is a gpustream matrix whose copy is resident (not streamed), brought
   up to date with the host first. The same answer on every process (the plan is chosen alike on all). */
static PetscErrorCode MatGPUStreamValuesOnDevice_Private(Mat A, PetscBool *on)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  *on = PETSC_FALSE;
  if (!MatGPUStreamIsOurs_Private(A) || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  gs = (Mat_GPUStream *)A->spptr;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  *on = (PetscBool)(gs->dA && !gs->plan);
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

/* AIJ's coordinate preallocation, then the device map of the entries. AIJ may leave the matrix unassembled (until
   MatSetValuesCOO()); it is assembled here, with the zeros AIJ put in, so that the pattern the map is made from is
   final and the first MatSetValuesCOO() can go to the device. AIJ may change i and j: the map is made from copies. */
static PetscErrorCode MatSetPreallocationCOO_GPUStream(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  Mat_GPUStream  *gs = (Mat_GPUStream *)A->spptr;
  PetscInt       *ci = NULL, *cj = NULL;
  PetscMPIInt     size;
  Mat             Ad = A, Ao = NULL;
  const PetscInt *garray = NULL, *dia, *dja, *oia = NULL, *oja = NULL;
  PetscInt        m, mo, nghost = 0;
  PetscBool       done;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  gs->hoststale = gs->devicemaster = PETSC_FALSE; /* a new pattern: the values so far go */
  PetscCall(GSCOOMapDestroy(&gs->coo));
  gs->coostate = 0;
  gs->ncoo     = 0;
#if defined(GPUSTREAM_PETSC_MAT_HASH_ACTIVE)
  if (A->hash_active) { /* MatSetUp() without preallocation: the hash table's assembly would drop AIJ's new pattern */
    PetscCall(MatSeqAIJSetPreallocation(A, 0, NULL));
    PetscCall(MatMPIAIJSetPreallocation(A, 0, NULL, 0, NULL));
  }
#endif
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  PetscCall(PetscArraycpy(ci, i, n));
  PetscCall(PetscArraycpy(cj, j, n));
  ierr = (*gs->setpreallocationcoo)(A, n, i, j);
  if (ierr) PetscCall(PetscFree2(ci, cj));
  PetscCall(ierr);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) { /* AIJ makes the blocks of the matrix's root type, gpustream ones: plain SeqAIJ, as elsewhere */
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    if (MatGPUStreamIsOurs_Private(Ad)) PetscCall(MatGPUStreamToAIJ_Private(Ad));
    if (MatGPUStreamIsOurs_Private(Ao)) PetscCall(MatGPUStreamToAIJ_Private(Ao));
  }
  A->preallocated = PETSC_TRUE; /* as MatSetPreallocationCOO() sets it next: no default preallocation at assembly */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  gs->ncoo = n;
  if (size > 1) {
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(MatGetSize(Ao, NULL, &nghost));
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mo, &oia, &oja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
  }
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &m, &dia, &dja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
  ierr = GSCOOMapCreate(PetscObjectComm((PetscObject)A), n, ci, cj, A->rmap->range, A->cmap->range, m, dia, dja, oia, oja, nghost, garray, &gs->coo);
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &m, &dia, &dja, &done));
  if (Ao) PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mo, &oia, &oja, &done));
  PetscCall(PetscFree2(ci, cj));
  PetscCall(GSAllOK(PetscObjectComm((PetscObject)A), ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the device map of the coordinate entries fits the device copy: made for this nonzero pattern (checked once
   against the device CSR's sizes, then by the nonzero state) and resident. The same answer on every process. */
static PetscErrorCode MatGPUStreamCOOOnDevice_Private(Mat A, PetscBool *on)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  *on = PETSC_FALSE;
  if (!gs->coo) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUStreamValuesOnDevice_Private(A, on));
  if (!*on) PetscFunctionReturn(PETSC_SUCCESS);
  if (!gs->coostate) {
    PetscCount na, nb, da, db = 0;
    int        fits;
    PetscCall(GSCOOMapGetSizes(gs->coo, NULL, &na, &nb, NULL));
    PetscCall(GSDeviceMatGetSizes(gs->dA, NULL, NULL, &da));
    if (gs->dB) PetscCall(GSDeviceMatGetSizes(gs->dB, NULL, NULL, &db));
    fits = na == da && nb == db;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    if (fits) gs->coostate = A->nonzerostate;
  }
  if (gs->coostate != A->nonzerostate) { /* another pattern since: AIJ's own coordinate assembly, on the host */
    PetscCall(PetscInfo(A, "The nonzero pattern changed after MatSetPreallocationCOO(): MatSetValuesCOO() runs on the host\n"));
    PetscCall(GSCOOMapDestroy(&gs->coo));
    *on = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coordinate values into the device CSR (where MatGPUStreamCOOOnDevice_Private() said so), from an array a caller
   hands the plugin (exec false: its memory told by GSDeviceArrayBegin()) or from the plugin's own in the execution
   space's memory (exec true); the host arrays become stale */
static PetscErrorCode MatGPUStreamCOOSetDevice_Private(Mat A, const PetscScalar v[], PetscBool exec, InsertMode imode)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(GPUS_MatSetCOO, A, 0, 0, 0));
  if (exec)
    PetscCall(GSCOOMapSetValuesExec(gs->coo, v, imode, gs->dA, gs->dB));
  else
    PetscCall(GSCOOMapSetValues(gs->coo, v, imode, gs->dA, gs->dB));
  PetscCall(MatGPUStreamDeviceChanged_Private(A));
  PetscCall(PetscLogEventEnd(GPUS_MatSetCOO, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* On a resident matrix the values go straight into the device CSR (from device memory in place, from the host
   copied once), and the host arrays become stale. Otherwise AIJ's code sets them on the host, values in device
   memory copied there first. */
static PetscErrorCode MatSetValuesCOO_GPUStream(Mat A, const PetscScalar v[], InsertMode imode)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscBool      on, device;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamCOOOnDevice_Private(A, &on));
  if (on) {
    PetscCall(MatGPUStreamCOOSetDevice_Private(A, v, PETSC_FALSE, imode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall(GSDeviceArrayBegin(gs->ncoo ? v : NULL, &device));
  if (device) {
    PetscScalar   *h;
    PetscErrorCode ierr;
    PetscCall(PetscMalloc1(gs->ncoo, &h));
    ierr = GSCopyToHost(v, h, gs->ncoo);
    if (!ierr) ierr = (*gs->setvaluescoo)(A, h, imode);
    PetscCall(PetscFree(h));
    PetscCall(GSDeviceArrayEnd(device));
    PetscCall(ierr);
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

static PetscErrorCode MatGPUStreamBaseOps_Private(Mat, const struct _MatOps **);

/* y = A^T x (+ z) on the device, through the transposes of the device blocks (made on first use, their values
   gathered again after a change); the off-diagonal block's products go back to their owners through the halo.
   Streamed matrices use AIJ's product on the host. */
static PetscErrorCode MatMultTransposeAdd_GPUStream(Mat A, Vec x, Vec z, Vec y)
{
  Mat_GPUStream     *gs        = (Mat_GPUStream *)A->spptr;
  Vec                v[3]      = {x, y, z};
  GSAccess           access[3] = {GS_ACCESS_READ, z == y ? GS_ACCESS_READWRITE : GS_ACCESS_WRITE, GS_ACCESS_READ};
  GSVecArray         a[3];
  const PetscInt     nv = (z && z != y) ? 3 : 2;
  const PetscInt    *ia, *ja, *ib = NULL, *jb = NULL;
  const PetscScalar *za;
  Mat                S = A, Ao = NULL;
  PetscInt           m, mb;
  PetscBool          done, values;
  PetscMPIInt        size;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  if (gs->plan) {
    const struct _MatOps *base;
    PetscCall(MatGPUStreamSyncHost_Private(A));
    PetscCall(MatGPUStreamBaseOps_Private(A, &base));
    PetscCall(z ? (*base->multtransposeadd)(A, x, z, y) : (*base->multtranspose)(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) {
    const PetscInt *garray;
    PetscCall(MatGPUStreamGetBlocks_Private(A, &S, &Ao, &garray));
  }
  values = (PetscBool)(gs->trstate[0] != gs->state || gs->trstate[1] != gs->bstate[0] || gs->trstate[2] != gs->bstate[1]);
  PetscCall(PetscLogEventBegin(GPUS_MatMultTranspose, A, x, y, 0));
  PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
  if (Ao && gs->dB) {
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mb, &ib, &jb, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
  }
  PetscCall(GSVecGetArrays(nv, v, access, a));
  za   = z ? a[nv - 1].array : NULL;
  ierr = GSDeviceMatMultTranspose(gs->dA, ia, ja, Ao ? gs->dB : NULL, ib, jb, Ao ? gs->halo : NULL, values, a[0].array, za, a[1].array, a[0].device);
  PetscCall(GSVecRestoreArrays(nv, v, a));
  if (ib) PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mb, &ib, &jb, &done));
  PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(ierr);
  gs->trstate[0] = gs->state;
  gs->trstate[1] = gs->bstate[0];
  gs->trstate[2] = gs->bstate[1];
  PetscCall(PetscLogEventEnd(GPUS_MatMultTranspose, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_GPUStream(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_GPUStream(A, x, NULL, y));
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

/* How the halo's values travel, and why (the same on every process) */
static PetscErrorCode MatViewHalo_Private(const Mat_GPUStream *gs, GSHalo halo, PetscViewer viewer)
{
  PetscBool   use;
  const char *why, *swhy;
  GSHaloPath  path;

  PetscFunctionBegin;
  PetscCall(GSHaloGetPath(halo, &path, &swhy));
  if (path == GS_HALO_PATH_SHARED) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: halo values written into the neighbours' buffers through %s (-mat_gpustream_halo_shared %s: %s)\n", GSOnDevice() ? "CUDA IPC, device to device" : "an MPI shared-memory window",
                                     GSHaloShareds[gs->shared], swhy));
  } else {
    PetscCall(GSHaloUseDeviceMPI(gs->devicempi, NULL, &use, &why));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: halo messages %s (-mat_gpustream_device_mpi %s: %s; -mat_gpustream_halo_shared %s: %s)\n",
                                     path == GS_HALO_PATH_DEVICE_MPI ? "between the device buffers themselves" : "staged through pinned host buffers", GSDeviceMPIs[gs->devicempi], why, GSHaloShareds[gs->shared], swhy));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan of a streamed matrix (sums and extremes over the processes) */
static PetscErrorCode MatViewStreamPlan_Private(const Mat_GPUStream *gs, GSStreamPlan plan, GSDeviceMat dB, GSHalo halo, MPI_Comm comm, PetscViewer viewer)
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
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: streamed on %s: CSR %s in %" PetscInt_FMT " subdivisions (%s) of %s to %s\n", GSExecutionSpace(), s[0], counts[0], info.automatic ? "count chosen by the model" : "-mat_gpustream_subdivisions",
                                   s[1], s[2]));
  PetscCall(FormatBytes(sums[1], s[0]));
  PetscCall(FormatBytes(sums[2], s[1]));
  PetscCall(FormatBytes(info.bufferbytes, s[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %" PetscInt_FMT " subdivisions resident (%" PetscInt_FMT " rows, %s); each product copies %s from pinned host memory through %" PetscInt_FMT " device buffers of %s, overlap %s\n", counts[1],
                                   counts[2], s[0], s[1], info.buffers, s[2], info.overlap ? "on" : "off"));
  PetscCall(FormatBytes(sums[3], s[0]));
  if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %d processes (sums over them, buffers of the first); off-diagonal blocks resident, %s\n", (int)size, s[0]));
  if (size > 1 && halo) PetscCall(MatViewHalo_Private(gs, halo, viewer));
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
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (!isascii || (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL)) { /* the values */
    PetscBool worn;
    /* MPIAIJ's ASCII view gathers the rows through MatMPIAIJGetSeqAIJ(), which takes "mpiaij" type names only */
    PetscCall(MatGPUStreamWearBase(A, &worn));
    PetscCall(MatGPUStreamWearOwn(A, worn, gs->aij.view(A, viewer)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(gs->aij.view(A, viewer));
  if (A->assembled) {
    GSDeviceMat    dA = NULL, dB = NULL;
    GSHalo         halo = NULL;
    PetscInt       vlen, team, league, cap, ntiles, bs, sizes[3] = {0, 0, 0};
    char           kernel[160];
    PetscLogDouble bytes[2], bbytes[2] = {0, 0};
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
    {
      PetscBool host, seq, mpi;
      PetscCall(PetscStrcmp(A->defaultvectype, VECSTANDARD, &host));
      PetscCall(PetscStrcmp(A->defaultvectype, VECSEQ, &seq));
      PetscCall(PetscStrcmp(A->defaultvectype, VECMPI, &mpi));
      host = (PetscBool)(host || seq || mpi);
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: MatCreateVecs() gives %s vectors (-mat_gpustream_vec_type %s)%s%s\n", A->defaultvectype, gs->vectype, host && gs->pinned ? ", in pinned host memory (-mat_gpustream_pinned_vecs)" : "",
                                       GSDeviceVecType() ? "; device arrays are read and written in place" : ""));
    }
    if (gs->plan) PetscCall(MatViewStreamPlan_Private(gs, gs->plan, dB, halo, comm, viewer));
    if (!dA) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league));
    PetscCall(GSDeviceMatGetMemory(dA, &bytes[0], &bytes[1]));
    if (dB) PetscCall(GSDeviceMatGetMemory(dB, &bbytes[0], &bbytes[1]));
    if (halo) PetscCall(GSHaloGetSizes(halo, &sizes[0], &sizes[1], &sizes[2]));
    bytes[0] += bbytes[0];
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bytes, 2, MPIU_PETSCLOGDOUBLE, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sizes, 3, MPIU_INT, MPI_SUM, comm));
    PetscCall(GSDeviceMatGetBlockSize(dA, &bs));
    if (bs > 1)
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR with block column indices (%" PetscInt_FMT " x %" PetscInt_FMT " blocks, -mat_gpustream_format %s) %.6g MB in device memory (+ %.6g MB staging for host vectors)\n",
                                       GSExecutionSpace(), bs, bs, GSFormats[gs->opts.format], bytes[0] / 1048576.0, bytes[1] / 1048576.0));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR %.6g MB in device memory (+ %.6g MB staging for host vectors)\n", GSExecutionSpace(), bytes[0] / 1048576.0, bytes[1] / 1048576.0));
    if (gs->coo) {
      PetscLogDouble cb;
      PetscCall(GSCOOMapGetSizes(gs->coo, NULL, NULL, NULL, &cb));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &cb, 1, MPIU_PETSCLOGDOUBLE, MPI_SUM, comm));
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: MatSetValuesCOO() on the device, through a map of the entries of %.6g MB in device memory\n", cb / 1048576.0));
    }
    if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %d processes; each product exchanges %" PetscInt_FMT " ghost values in %" PetscInt_FMT " messages in all\n", (int)size, sizes[1], sizes[2] / 2));
    if (size > 1 && halo) PetscCall(MatViewHalo_Private(gs, halo, viewer));
    PetscCall(GSDeviceMatGetTileSize(dA, &cap, &ntiles));
    /* a warp asked for on a host backend runs one lane per row, as every kernel there does */
    PetscCall(PetscSNPrintf(kernel, sizeof(kernel), "%s (-mat_gpustream_kernel %s%s%s)",
                            bs > 1     ? (vlen > 1 ? "vector lanes per block row" : "thread per block row")
                            : vlen > 1 ? "warp per row"
                                       : "thread per row",
                            GSSpMVKernels[gs->opts.kernel], gs->opts.kernel == GS_KERNEL_WARP && !GSOnDevice() ? ": one lane per row on the host backend " : "", gs->opts.kernel == GS_KERNEL_WARP && !GSOnDevice() ? GSExecutionSpace() : ""));
    if (cap)
      PetscCall(
          PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel %s, %" PetscInt_FMT " %s per row, by %" PetscInt_FMT " tiles of up to %" PetscInt_FMT " entries (-mat_gpustream_tile_size)\n", kernel, vlen, vlen == 1 ? "lane" : "lanes", ntiles, cap));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel %s, %" PetscInt_FMT " %s per %srow, %" PetscInt_FMT " %s%s per team, %" PetscInt_FMT " %s, no tiles\n", kernel, vlen, vlen == 1 ? "lane" : "lanes", bs > 1 ? "block " : "", team,
                                       bs > 1 ? "block " : "", team == 1 ? "row" : "rows", league, league == 1 ? "team" : "teams"));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: not assembled, nothing in device memory yet\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGraphOwnProducts_Private(Mat);

/* -gpustream_device_products: true unless given false (a bad value is an error at each reading) */
static PetscErrorCode GSOwnProducts_Private(PetscBool *use)
{
  PetscFunctionBegin;
  *use = PETSC_TRUE;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_device_products", GS_OPTION_BOOL, NULL, 0));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gpustream_device_products", use, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The arrays a graph made by MatCreateGraphOwn_Private() holds in place (MatCreateSeqAIJWithArrays() leaves them to
   the caller), freed with the graph */
typedef struct {
  PetscInt    *i, *j;
  PetscScalar *a;
} GSGraphArrays;

static PetscErrorCode GSGraphArraysDestroy_Private(void *ctx)
{
  GSGraphArrays *g = (GSGraphArrays *)GSContainerPointer(ctx);

  PetscFunctionBegin;
  if (g) {
    free(g->i);
    free(g->j);
    free(g->a);
    free(g);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCGAMG's graph of a sequential gpustream matrix, AIJ's to the bit, from the host arrays on host threads
   (GSHostGraph(): the steps of AIJ's MatCreateGraph() with no filter, which AIJ runs one after another on one thread,
   its transpose and sum through insertion), the result a plain SeqAIJ matrix holding the arrays in place with AIJ's
   symmetry flags. *done false where AIJ's code is to run: several processes, a filter, neither symmetrized nor scaled
   with bs 1, a rectangular matrix or one whose blocks AIJ collapses by its slower path. */
static PetscErrorCode MatCreateGraphOwn_Private(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt nidx, const PetscInt idx[], Mat *G, PetscBool *done)
{
  const PetscInt    *ai = NULL, *aj = NULL;
  const PetscScalar *aa = NULL;
  PetscInt           m = 0, bs, gm = 0, *gi = NULL, *gj = NULL;
  PetscScalar       *ga  = NULL;
  PetscBool          rij = PETSC_FALSE, worn = PETSC_FALSE, isset = PETSC_FALSE, issym = PETSC_FALSE, use = PETSC_TRUE, made = PETSC_FALSE;
  GSGraphArrays     *keep = NULL;
  PetscMPIInt        size;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatGetBlockSize(A, &bs));
  PetscCall(GSOwnProducts_Private(&use));
  if (!use || size > 1 || filter >= 0 || (bs == 1 && !sym && !scale) || A->rmap->n != A->cmap->n || A->rmap->n % bs || A->factortype != MAT_FACTOR_NONE) PetscFunctionReturn(PETSC_SUCCESS); /* AIJ's graph of bs 1 is then A itself */
  PetscCall(MatIsSymmetricKnown(A, &isset, &issym));
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_host_threads", GS_OPTION_INT, NULL, 0));
  PetscCall(MatGPUStreamWearBase(A, &worn)); /* the host arrays up to date */
  ierr = MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &rij);
  if (!ierr && rij) ierr = MatSeqAIJGetArrayRead(A, &aa);
  if (!ierr && rij) {
    ierr = GSHostGraph(m, bs, ai, aj, aa, bs > 1 ? nidx : 0, idx, (PetscBool)(sym && !(isset && issym)), scale, GSHostThreads(), &made, &gm, &gi, &gj, &ga);
    PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  }
  if (rij) PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &rij));
  PetscCall(MatGPUStreamWearOwn(A, worn, ierr));
  if (!made) PetscFunctionReturn(PETSC_SUCCESS);
  keep = (GSGraphArrays *)malloc(sizeof(*keep));
  if (keep) {
    keep->i = gi;
    keep->j = gj;
    keep->a = ga;
  } else {
    free(gi);
    free(gj);
    free(ga);
  }
  PetscCheck(keep, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory for a graph");
  ierr = MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, gm, gm, gi, gj, ga, G);
  if (ierr) {
    PetscCall(GSGraphArraysDestroy_Private(keep));
    PetscCall(ierr);
  }
  PetscCall(GSObjectComposePointer((PetscObject)*G, "GPUStreamGraphArrays", keep, GSGraphArraysDestroy_Private)); /* G holds them */
  /* AIJ's flags: its bs 1 graph is a duplicate of A (A's flags), its collapsed one a new matrix */
  if (bs == 1 || !sym) PetscCall(MatPropagateSymmetryOptions(A, *G));
  if (sym) PetscCall(MatSetOption(*G, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatViewFromOptions(*G, NULL, "-mat_graph_view"));
  PetscCall(PetscInfo(A, "Graph on host threads, none of AIJ's code: %" PetscInt_FMT " vertices, %" PetscInt_FMT " edges%s%s\n", gm, gi[gm], sym && !(isset && issym) ? ", symmetrized" : "", scale ? ", scaled" : ""));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCGAMG builds its graph with MatCreateGraph(). On one process with no filter (PCGAMG's call) it is the plugin's
   (MatCreateGraphOwn_Private()); otherwise AIJ's, whose implementation accepts only type names starting with "seqaij"
   or "mpiaij": the matrix wears its base name for the call, so the graph (a duplicate) comes out a plain AIJ matrix,
   exactly the one an AIJ operator gives (PCGAMG's coarsening reads its AIJ data by type name). On one process its
   square is the plugin's (MatGraphOwnProducts_Private()). */
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
static PetscErrorCode MatCreateGraph_GPUStream(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt nidx, PetscInt idx[], Mat *G)
#else
static PetscErrorCode MatCreateGraph_GPUStream(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, Mat *G)
#endif
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscBool      worn, done;
  PetscErrorCode ierr;

  PetscFunctionBegin;
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
  PetscCall(MatCreateGraphOwn_Private(A, sym, scale, filter, nidx, idx, G, &done));
#else
  PetscCall(MatCreateGraphOwn_Private(A, sym, scale, filter, 0, NULL, G, &done));
#endif
  if (!done) {
    PetscCall(MatGPUStreamWearBase(A, &worn));
#if defined(GPUSTREAM_PETSC_CREATEGRAPH_INDEX)
    ierr = (*gs->aij.creategraph)(A, sym, scale, filter, nidx, idx, G);
#else
    ierr = (*gs->aij.creategraph)(A, sym, scale, filter, G);
#endif
    PetscCall(MatGPUStreamWearOwn(A, worn, ierr));
  }
  PetscCall(MatGraphOwnProducts_Private(*G));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool MatGPUStreamHasDeviceData(Mat A)
{
  PetscBool isgs = PETSC_FALSE;

  if (!A->spptr || PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs)) return PETSC_FALSE;
  return isgs;
}

PetscErrorCode MatGPUStreamGetFactorValues(Mat A, const PetscScalar **a, PetscBool *device)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
  if (gs->dA && !gs->plan) {
    PetscScalar *v;
    PetscCall(GSDeviceMatGetValuesArray(gs->dA, &v, NULL));
    *a      = v;
    *device = PETSC_TRUE;
  } else {
    PetscCall(MatGPUStreamSyncHost_Private(A));
    PetscCall(MatSeqAIJGetArrayRead(A, a));
    *device = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUStreamRestoreFactorValues(Mat A, const PetscScalar **a, PetscBool device)
{
  PetscFunctionBegin;
  if (!device) PetscCall(MatSeqAIJRestoreArrayRead(A, a));
  *a = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether PETSc's MPI linear solver server moves vectors through shared memory (PETSc 3.22 on): it maps only arrays
   PETSc allocated itself, neither pinned ones nor a device vector's host copy (PETSc's own device vectors fail there
   too), so MatCreateVecs() gives AIJ's host vectors while it runs */
static PetscBool MatGPUStreamServerSharesArrays_Private(void)
{
#if PETSC_VERSION_GE(3, 22, 0)
  return (PetscBool)(PCMPIServerActive && PCMPIServerUseShmget);
#else
  return PETSC_FALSE;
#endif
}

/* MatCreateVecs(): AIJ's (of the type MatGPUStreamSetVecType_Private() set), host ones in pinned memory where
   -mat_gpustream_pinned_vecs (not for PCMPI's shared memory) */
static PetscErrorCode MatCreateVecs_GPUStream(Mat A, Vec *right, Vec *left)
{
  Mat_GPUStream  *gs  = (Mat_GPUStream *)A->spptr;
  const PetscBool pin = (PetscBool)(gs->pinned && !MatGPUStreamServerSharesArrays_Private());
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  A->ops->getvecs = gs->aij.getvecs; /* AIJ's, or none: PETSc's default */
  ierr            = MatCreateVecs(A, right, left);
  A->ops->getvecs = MatCreateVecs_GPUStream;
  PetscCall(ierr);
  if (pin && right && *right) PetscCall(GSVecPin(right));
  if (pin && left && *left) PetscCall(GSVecPin(left));
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
    PetscCall(MatSetVecType(A, GSDeviceVecType() && !MatGPUStreamServerSharesArrays_Private() ? GSDeviceVecType() : VECSTANDARD));
#if defined(PETSC_HAVE_DEVICE)
  {
    PetscBool device = PETSC_FALSE;

    /* PETSc takes a matrix of a host type (MatCreate()'s default) as bound to the CPU: GAMG then binds its
       prolongators and their vectors, which would send every product of a level through host memory */
    if (GSDeviceVecType()) PetscCall(PetscStrendswith(A->defaultvectype, GSDeviceVecType(), &device)); /* cuda, seqcuda, mpicuda */
    A->boundtocpu = (PetscBool)!device;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_GPUStream(Mat A, GSOptionItems PetscOptionsObject)
{
  Mat_GPUStream  *gs        = (Mat_GPUStream *)A->spptr;
  GSStreamOptions o         = gs->opts;
  GSDeviceMPI     devicempi = gs->devicempi;
  GSHaloShared    shared    = gs->shared;
  PetscBool       flg;
  char            vectype[64];

  PetscFunctionBegin;
  if (gs->aij.setfromoptions) PetscCall((*gs->aij.setfromoptions)(A, PetscOptionsObject));
  PetscCall(PetscStrncpy(vectype, gs->vectype, sizeof(vectype)));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATGPUSTREAM options");
  {
    static const struct {
      const char        *name;
      GSOptionKind       kind;
      const char *const *list;
    } checks[] = {
        {"-mat_gpustream_mode", GS_OPTION_LIST, GSStreamModes},
        {"-mat_gpustream_max_device_bytes", GS_OPTION_REAL, NULL},
        {"-mat_gpustream_buffers", GS_OPTION_INT, NULL},
        {"-mat_gpustream_subdivisions", GS_OPTION_INT, NULL},
        {"-mat_gpustream_overlap", GS_OPTION_BOOL, NULL},
        {"-mat_gpustream_kernel", GS_OPTION_LIST, GSSpMVKernels},
        {"-mat_gpustream_format", GS_OPTION_LIST, GSFormats},
        {"-mat_gpustream_tile_size", GS_OPTION_INT, NULL},
        {"-mat_gpustream_device_mpi", GS_OPTION_LIST, GSDeviceMPIs},
        {"-mat_gpustream_pinned_vecs", GS_OPTION_BOOL, NULL},
        {"-mat_gpustream_halo_shared", GS_OPTION_LIST, GSHaloShareds},
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
  PetscCall(PetscOptionsEnum("-mat_gpustream_halo_shared",
                             "Halo values written straight into the buffers of neighbours on this node (CUDA IPC on a GPU, an MPI shared-memory window on the host): auto (when every neighbour is on this node), true, false (MPI messages)",
                             "MATGPUSTREAM", GSHaloShareds, (PetscEnum)shared, (PetscEnum *)&shared, NULL));
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
  PetscCall(PetscOptionsBool("-mat_gpustream_pinned_vecs", "Host vectors of MatCreateVecs() in pinned (page-locked) memory, which the device reads and writes directly (default: true with a GPU)", "MATGPUSTREAM", gs->pinned, &gs->pinned, NULL));
  PetscOptionsHeadEnd();
  if (flg) {
    PetscCall(PetscStrncpy(gs->vectype, vectype, sizeof(gs->vectype)));
    PetscCall(MatGPUStreamSetVecType_Private(A));
  }
  if (devicempi != gs->devicempi || shared != gs->shared || o.mode != gs->opts.mode || o.budget != gs->opts.budget || o.buffers != gs->opts.buffers || o.subdivisions != gs->opts.subdivisions || o.overlap != gs->opts.overlap ||
      o.kernel != gs->opts.kernel || o.tile != gs->opts.tile || o.format != gs->opts.format)
    PetscCall(MatGPUStreamSyncHost_Private(A)); /* the device copy is made again from the host */
  if (devicempi != gs->devicempi || shared != gs->shared) {
    gs->devicempi = devicempi; /* the next device operation makes a new halo */
    gs->shared    = shared;
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

/* The operations a gpustream matrix has its own of, set by MatAIJToGPUStream_Private() */
static const size_t GSOwnOps[] = {offsetof(struct _MatOps, mult),        offsetof(struct _MatOps, multadd),           offsetof(struct _MatOps, view),
                                  offsetof(struct _MatOps, assemblyend), offsetof(struct _MatOps, destroy),           offsetof(struct _MatOps, setfromoptions),
                                  offsetof(struct _MatOps, duplicate),   offsetof(struct _MatOps, creategraph),       offsetof(struct _MatOps, productsetfromoptions),
                                  offsetof(struct _MatOps, transpose),   offsetof(struct _MatOps, transposesymbolic), offsetof(struct _MatOps, convert),
                                  offsetof(struct _MatOps, getvecs)};

/* AIJ's ops where a gpustream matrix has its own (from's saved ones) */
static PetscErrorCode MatGPUStreamRestoreOps_Private(Mat A, const Mat_GPUStream *from)
{
  PetscFunctionBegin;
  for (size_t k = 0; k < sizeof(GSOwnOps) / sizeof(GSOwnOps[0]); k++) *(GSFn *)((char *)A->ops + GSOwnOps[k]) = *(const GSFn *)((const char *)&from->aij + GSOwnOps[k]);
  MatGPUStreamUnwrapOps_Private(A, from);
  PetscCall(MatGPUStreamUnwrapComposed_Private(A, from));
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
  gs->shared    = from->shared;
  PetscCall(PetscStrncpy(gs->vectype, from->vectype, sizeof(gs->vectype)));
  PetscCall(MatGPUStreamSetVecType_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's duplicate makes a gpustream matrix with the default options: it inherits ours */
static PetscErrorCode MatDuplicate_GPUStream(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  if (op == MAT_COPY_VALUES) PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall((*gs->aij.duplicate)(A, op, B));
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

static PetscErrorCode MatProductWrapSymbolic_Private(Mat);

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
  PetscCall(MatProductWrapSymbolic_Private(C)); /* its phases read the host arrays */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Products with AIJ matrices, on several processes, and of other types (MatMatMult(), MatPtAP() ...) are AIJ's, on
   the host arrays (made current first); A B, A^T B and P^T A P of sequential gpustream matrices are the plugin's own
   (MatProductSymbolicOwn_Private()). Their implementations check type names (MatMPIAIJGetLocalMat() ...), so in each phase the
   gpustream operands, and a gpustream result, wear their base name. The result of a product of gpustream matrices
   only is a gpustream matrix (as aijcusparse's products are aijcusparse), so that a Galerkin hierarchy built on a
   gpustream operator (PCGAMG's, PCMG's) has every level on the device; with any other operand it is the plain AIJ
   matrix AIJ operands give. was[]: which matrices wear it */
static PetscErrorCode MatProductWearAIJ_Private(Mat C, PetscBool wear, PetscBool was[4])
{
  Mat_Product *product = C->product;
  Mat          X[4]    = {product->A, product->B, product->C, C};

  PetscFunctionBegin;
  for (int i = 0; i < 4; i++) {
    if (!X[i]) continue;
    if (wear)
      PetscCall(MatGPUStreamWearBase(X[i], &was[i])); /* false for a repeated operand */
    else
      PetscCall(MatGPUStreamWearOwn(X[i], was[i], PETSC_SUCCESS));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Calls the product phase composed on C under name, with the operands wearing their base names */
static PetscErrorCode MatProductPhaseAIJ_Private(Mat C, const char name[])
{
  PetscErrorCode (*f)(Mat) = NULL;
  PetscBool      was[4]    = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
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

/* What a product of gpustream operands keeps on its result (composed as GSDeviceProductName): the operands' ids and
   nonzero states at its symbolic phase, and for one of ours (else NULL) the product made from their patterns */
typedef struct {
  GSDeviceProduct  prod;
  GSProductType    type;
  PetscObjectId    id[3];
  PetscObjectState nz[3];
  PetscScalar     *values; /* C's values, where C holds prod's pattern (MatSeqAIJHoldPattern_Private()) */
} GSProductCtx;

static const char GSDeviceProductName[] = "GPUStreamDeviceProduct";

static PetscErrorCode GSProductCtxFree_Private(GSProductCtx *ctx)
{
  PetscFunctionBegin;
  PetscCall(GSDeviceProductDestroy(&ctx->prod));
  free(ctx->values);
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the container's destroy function (GSContainerSetDestroy()) */
static PetscErrorCode GSProductCtxDestroy_Private(void *ctx)
{
  PetscFunctionBegin;
  PetscCall(GSProductCtxFree_Private((GSProductCtx *)GSContainerPointer(ctx)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ctx records C's operands as they are now */
static void GSProductCtxRecord_Private(GSProductCtx *ctx, Mat C)
{
  Mat X[3] = {C->product->A, C->product->B, C->product->C};

  for (int i = 0; i < 3; i++) {
    ctx->id[i] = X[i] ? ((PetscObject)X[i])->id : 0;
    ctx->nz[i] = X[i] ? X[i]->nonzerostate : 0;
  }
}

/* The device values of a resident gpustream matrix */
static PetscErrorCode MatGPUStreamDeviceValues_Private(Mat A, PetscScalar **v)
{
  GSDeviceMat d = NULL;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamGetDeviceMat(A, &d, NULL, NULL));
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The matrix is not resident on the device");
  PetscCall(GSDeviceMatGetValuesArray(d, v, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether C's product is one of ours: A B, A^T B or P^T A P of sequential gpustream matrices, A B and P^T A P of
   gpustream matrices on several processes, unless -gpustream_device_products false (then, and for other products,
   AIJ's code on the host) */
static PetscErrorCode MatProductOwnType_Private(Mat C, PetscBool *own, GSProductType *type)
{
  Mat_Product *product = C->product;
  PetscBool    use     = PETSC_TRUE;
  PetscMPIInt  size;

  PetscFunctionBegin;
  *own = PETSC_FALSE;
  PetscCall(GSOwnProducts_Private(&use)); /* on any product */
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (!use || !MatGPUStreamIsOurs_Private(product->A) || !MatGPUStreamIsOurs_Private(product->B)) PetscFunctionReturn(PETSC_SUCCESS);
  if (size > 1) { /* A B and P^T A P (MatProductSymbolicDist_Private()), P's rows laid out as A's columns */
    PetscBool same;
    PetscCall(PetscLayoutCompare(product->B->rmap, product->A->cmap, &same));
    if (!same || (product->type == MATPRODUCT_PtAP && product->A->rmap->n != product->A->cmap->n) || (product->type != MATPRODUCT_AB && product->type != MATPRODUCT_PtAP)) PetscFunctionReturn(PETSC_SUCCESS);
  }
  switch (product->type) {
  case MATPRODUCT_AB:
    *type = GS_PRODUCT_AB;
    break;
  case MATPRODUCT_AtB:
    *type = GS_PRODUCT_AtB;
    break;
  case MATPRODUCT_PtAP:
    *type = GS_PRODUCT_PtAP;
    break;
  default:
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *own = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The product of type of A and B from their host patterns (the symbolic phase, on the host: -gpustream_host_threads
   threads, by default the cores this process may use, see GSHostThreads()) */
static PetscErrorCode MatProductOwnPattern_Private(GSProductType type, Mat A, Mat B, GSDeviceProduct *prod)
{
  const PetscInt *ai, *aj, *bi, *bj;
  PetscInt        am, bm, threads = 0;
  PetscBool       done[2] = {PETSC_FALSE, PETSC_FALSE}, set = PETSC_FALSE, sym = PETSC_FALSE;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_host_threads", GS_OPTION_INT, NULL, 0));
  threads = GSHostThreads();
  if (type == GS_PRODUCT_AtB && A->rmap->n == A->cmap->n) PetscCall(MatIsStructurallySymmetricKnown(A, &set, &sym)); /* A^T's pattern is A's */
  PetscCall(PetscLogEventBegin(GPUS_ProductSetUp, A, B, 0, 0));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &am, &ai, &aj, &done[0]));
  ierr = MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &bm, &bi, &bj, &done[1]);
  if (!ierr && done[0] && done[1]) ierr = GSDeviceProductSymbolic(type, am, A->cmap->n, ai, aj, B->cmap->n, bi, bj, (PetscBool)(set && sym), threads, prod);
  if (done[1]) PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &bm, &bi, &bj, &done[1]));
  if (done[0]) PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &am, &ai, &aj, &done[0]));
  PetscCall(ierr);
  PetscCheck(done[0] && done[1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "The operands of a product gave no CSR pattern");
  PetscCall(PetscLogEventEnd(GPUS_ProductSetUp, A, B, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductNumeric_GPUStream_Own(Mat);

/* C, a SeqAIJ matrix of m x n not yet preallocated, holds the CSR pattern (ci, cj) in place, without AIJ's insertion
   row by row (MatSeqAIJSetPreallocationCSR() costs more than the pattern at GAMG's sizes). AIJ gets the arrays through
   MatCreateSeqAIJWithArrays(), which leaves them to the caller, and C takes the data and ops of that matrix. The arrays
   and the zeroed values (calloc(): pages zeroed at their first touch; *values, the caller's to free()) must outlive C's
   use of them: the product context composed on C holds both. */
static PetscErrorCode MatSeqAIJHoldPattern_Private(Mat C, PetscInt m, PetscInt n, const PetscInt ci[], const PetscInt cj[], PetscScalar **values)
{
  Mat   T;
  void *data;

  PetscFunctionBegin;
  PetscCall(PetscLayoutSetUp(C->rmap));
  PetscCall(PetscLayoutSetUp(C->cmap));
  *values = (PetscScalar *)calloc((size_t)ci[m] + 1, sizeof(PetscScalar)); /* not PetscCalloc1(), which writes the zeros */
  PetscCheck(*values, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory for the %" PetscInt_FMT " values of a product", ci[m]);
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, n, (PetscInt *)ci, (PetscInt *)cj, *values, &T));
  data    = C->data;
  C->data = T->data;
  T->data = data; /* C's empty data goes with T */
  PetscCall(PetscMemcpy(C->ops, T->ops, sizeof(struct _MatOps)));
  PetscCall(MatDestroy(&T));
  C->preallocated  = PETSC_TRUE;
  C->assembled     = PETSC_TRUE;
  C->was_assembled = PETSC_FALSE;
  C->num_ass++;
  C->nonzerostate++;
  C->ass_nonzerostate = C->nonzerostate;
  PetscCall(PetscObjectStateIncrease((PetscObject)C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The symbolic phase of our products: C's pattern from the operands' host patterns, then C a gpustream matrix of that
   pattern holding zeros, with the first operand's settings (a Galerkin level's vectors and binding are then its fine
   level's). AIJ's symbolic phase does not run; the numeric phase is ours (MatProductNumeric_GPUStream_Own()). */
static PetscErrorCode MatProductSymbolicOwn_Private(Mat C, GSProductType type)
{
  Mat_Product    *product = C->product;
  Mat             A = product->A, B = product->B;
  const PetscInt *ci, *cj;
  PetscInt        cm, m, n;
  MatType         base;
  GSProductCtx   *ctx;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(PetscNew(&ctx));
  ctx->type = type;
  GSProductCtxRecord_Private(ctx, C);
  ierr = MatProductOwnPattern_Private(type, A, B, &ctx->prod);
  if (ierr) PetscCall(GSProductCtxFree_Private(ctx));
  PetscCall(ierr);
  PetscCall(GSDeviceProductGetPattern(ctx->prod, &cm, &ci, &cj));
  m = type == GS_PRODUCT_AB ? A->rmap->n : type == GS_PRODUCT_AtB ? A->cmap->n : B->cmap->n;
  n = B->cmap->n;
  PetscCall(MatSetSizes(C, m, n, m, n));
  if (type == GS_PRODUCT_AB)
    PetscCall(MatSetBlockSizesFromMats(C, A, B));
  else
    PetscCall(MatSetBlockSizes(C, type == GS_PRODUCT_AtB ? PetscAbs(A->cmap->bs) : PetscAbs(B->cmap->bs), PetscAbs(B->cmap->bs)));
  PetscCall(MatGPUStreamBaseName_Private(A, &base));
  PetscCall(MatSetType(C, base));
  PetscCall(MatSeqAIJHoldPattern_Private(C, m, n, ci, cj, &ctx->values));
  PetscCall(GSObjectComposePointer((PetscObject)C, GSDeviceProductName, ctx, GSProductCtxDestroy_Private)); /* C holds it */
  if (MatGPUStreamIsOurs_Private(A)) {
    PetscCall(MatAIJToGPUStream_Private(C));
    PetscCall(MatGPUStreamAdopt_Private(C, (Mat_GPUStream *)A->spptr));
    PetscCall(PetscObjectStateGet((PetscObject)C, &((Mat_GPUStream *)C->spptr)->zerostate));
  }
  C->ops->productnumeric = MatProductNumeric_GPUStream_Own;
  PetscCall(PetscInfo(C, "%s symbolic phase of %s on their host patterns, none of AIJ's: %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " entries\n", MatProductTypes[product->type],
                      MatGPUStreamIsOurs_Private(A) ? "gpustream matrices" : "graphs", m, n, ci[cm]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The products of a sequential graph made by MatCreateGraph_GPUStream(): its square, A B or A^T B of the graph with
   itself or another such graph (PCGAMG's aggressive coarsening: a symbolic phase only), is the plugin's, from the
   patterns on several host threads, the result a plain SeqAIJ matrix holding the pattern in place
   (MatSeqAIJHoldPattern_Private()) with the numeric phase's serial twin on the host; other products are AIJ's */
static PetscErrorCode (*MatProductSetFromOptions_GraphBase)(Mat) = NULL;

static PetscErrorCode MatProductSymbolic_GPUStreamGraph(Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatProductSymbolicOwn_Private(C, C->product->type == MATPRODUCT_AB ? GS_PRODUCT_AB : GS_PRODUCT_AtB));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSetFromOptions_GPUStreamGraph(Mat C)
{
  Mat_Product *product = C->product;
  PetscBool    use     = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall((*MatProductSetFromOptions_GraphBase)(C));
  PetscCall(GSOwnProducts_Private(&use));
  if (use && C->ops->productsymbolic && (product->type == MATPRODUCT_AB || product->type == MATPRODUCT_AtB) && product->A->ops->productsetfromoptions == MatProductSetFromOptions_GPUStreamGraph &&
      product->B->ops->productsetfromoptions == MatProductSetFromOptions_GPUStreamGraph)
    C->ops->productsymbolic = MatProductSymbolic_GPUStreamGraph;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGraphOwnProducts_Private(Mat G)
{
  PetscBool isseq;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)G, MATSEQAIJ, &isseq));
  if (!isseq || !G->ops->productsetfromoptions || G->ops->productsetfromoptions == MatProductSetFromOptions_GPUStreamGraph) PetscFunctionReturn(PETSC_SUCCESS);
  if (!MatProductSetFromOptions_GraphBase) MatProductSetFromOptions_GraphBase = G->ops->productsetfromoptions;
  if (G->ops->productsetfromoptions == MatProductSetFromOptions_GraphBase) G->ops->productsetfromoptions = MatProductSetFromOptions_GPUStreamGraph;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Other operands since the symbolic phase (MatProductReplaceMats()) or new patterns: the product is made again for
   them, which must give C's pattern (else the symbolic phase is due again) */
static PetscErrorCode MatProductOwnRenew_Private(Mat C, GSProductCtx *ctx)
{
  Mat             A = C->product->A, B = C->product->B;
  GSDeviceProduct prod;
  const PetscInt *ci, *cj, *xi, *xj;
  PetscInt        cm, xm;
  PetscBool       done, same;

  PetscFunctionBegin;
  PetscCall(MatProductOwnPattern_Private(ctx->type, A, B, &prod));
  PetscCall(GSDeviceProductGetPattern(prod, &xm, &xi, &xj));
  PetscCall(MatGetRowIJ(C, 0, PETSC_FALSE, PETSC_FALSE, &cm, &ci, &cj, &done));
  same = (PetscBool)(done && cm == xm);
  if (same) PetscCall(PetscArraycmp(ci, xi, cm + 1, &same));
  if (same) PetscCall(PetscArraycmp(cj, xj, ci[cm], &same));
  if (done) PetscCall(MatRestoreRowIJ(C, 0, PETSC_FALSE, PETSC_FALSE, &cm, &ci, &cj, &done));
  if (!same) PetscCall(GSDeviceProductDestroy(&prod));
  PetscCheck(same, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP, "The operands' nonzero patterns changed the product's after its symbolic phase: call MatProductSymbolic() again (or make the product with MAT_INITIAL_MATRIX)");
  PetscCall(GSDeviceProductKeepPattern(prod, ctx->prod)); /* C holds those arrays */
  PetscCall(GSDeviceProductDestroy(&ctx->prod));
  ctx->prod = prod;
  GSProductCtxRecord_Private(ctx, C);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric phase of our products: on the device where the operands and C are resident (C's device values then
   lead; the host's follow when a host operation needs them), else the serial twin on the host arrays */
static PetscErrorCode MatProductNumeric_GPUStream_Own(Mat C)
{
  Mat             A = C->product->A, B = C->product->B, X[3] = {A, B, C};
  const PetscInt *ai, *aj, *bi, *bj, *ci, *cj;
  PetscInt        am, bm, cm;
  PetscBool       on = PETSC_TRUE, done[2];
  GSProductCtx   *ctx;
  PetscContainer  c;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_device_products", GS_OPTION_BOOL, NULL, 0)); /* read at each numeric phase */
  PetscCall(PetscObjectQuery((PetscObject)C, GSDeviceProductName, (PetscObject *)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "The product lost its data");
  PetscCall(PetscContainerGetPointer(c, (void **)&ctx));
  if (ctx->nz[0] != A->nonzerostate || ctx->nz[1] != B->nonzerostate) PetscCall(MatProductOwnRenew_Private(C, ctx));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &am, &ai, &aj, &done[0]));
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &bm, &bi, &bj, &done[1]));
  PetscCheck(done[0] && done[1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "The operands of a product gave no CSR pattern");
  PetscCall(GSDeviceProductGetPattern(ctx->prod, &cm, &ci, &cj));
  for (int i = 0; i < 3 && on; i++) PetscCall(MatGPUStreamValuesOnDevice_Private(X[i], &on));
  if (!ci[cm]) { /* nothing to compute: C holds its zeros */
  } else if (on) {
    PetscScalar *a, *b, *v;
    PetscCall(MatGPUStreamDeviceValues_Private(A, &a));
    PetscCall(MatGPUStreamDeviceValues_Private(B, &b));
    PetscCall(MatGPUStreamDeviceValues_Private(C, &v));
    PetscCall(GSDeviceProductNumeric(ctx->prod, ai, aj, a, bi, bj, b, v));
    PetscCall(MatGPUStreamDeviceChanged_Private(C));
    PetscCall(PetscInfo(C, "%s numeric phase on the device\n", MatProductTypes[C->product->type]));
  } else { /* a streamed operand or result */
    const PetscScalar *a, *b;
    PetscScalar       *v;
    PetscBool          was[4] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
    PetscErrorCode     ierr;
    PetscCall(MatProductWearAIJ_Private(C, PETSC_TRUE, was));
    PetscCall(MatSeqAIJGetArrayRead(A, &a));
    PetscCall(MatSeqAIJGetArrayRead(B, &b));
    PetscCall(MatSeqAIJGetArrayWrite(C, &v));
    ierr = GSDeviceProductNumericHost(ctx->prod, ai, aj, a, bi, bj, b, v);
    PetscCall(MatSeqAIJRestoreArrayWrite(C, &v));
    PetscCall(MatSeqAIJRestoreArrayRead(B, &b));
    PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
    if (!ierr) ierr = MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY);
    if (!ierr) ierr = MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY);
    PetscCall(MatProductWearAIJ_Private(C, PETSC_FALSE, was)); /* also when it failed */
    PetscCall(ierr);
    PetscCall(PetscInfo(C, "%s numeric phase on the host arrays (%s)\n", MatProductTypes[C->product->type], MatGPUStreamIsOurs_Private(C) ? "a streamed operand or result" : "graphs"));
  }
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &bm, &bi, &bj, &done[1]));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &am, &ai, &aj, &done[0]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A B and P^T A P of gpustream matrices on several processes (PCGAMG's smoothed prolongators and Galerkin operators
   there): each process's part is a product of sequential matrices (GSDistProduct), A's local rows with P's rows for
   A's columns (its own and those of A's ghost columns, fetched by AIJ's MatCreateSubMatrices()) in a compact numbering
   of P's columns; the parts are summed into C by its coordinate assembly (MatSetPreallocationCOO() at the symbolic
   phase, MatSetValuesCOO()'s device path at each numeric phase). After new values of A alone a numeric phase runs on
   the device; P's values are taken again from its host arrays, the ghost rows fetched again, where P changed. */
typedef struct {
  GSDistProduct    prod;
  PetscObjectId    id[2];
  PetscObjectState nz[2], pstate; /* the operands' nonzero states at the symbolic phase; P's state when its values were taken */
  IS               rows, cols;    /* P's rows for A's ghost columns, all of P's columns */
  Mat             *ghost;         /* those rows (AIJ's submatrix) */
  PetscInt         npc, *pcols;   /* P's compact columns: their number, their global indices (ascending) */
  PetscCount       npd, npl, np;  /* entries of P's diagonal block, of its local rows, of all the rows the product takes */
  PetscCount      *pmap;          /* each entry of P's local rows: its index in the diagonal block's values, or npd + that in the off-diagonal one's */
  PetscScalar     *pv;            /* the values of those rows in the product's order */
} GSDistCtx;

static const char GSDistProductName[] = "GPUStreamDistProduct";

static PetscErrorCode GSDistCtxFree_Private(GSDistCtx *ctx)
{
  PetscFunctionBegin;
  if (!ctx) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSDistProductDestroy(&ctx->prod));
  if (ctx->ghost) PetscCall(MatDestroySubMatrices(1, &ctx->ghost));
  PetscCall(ISDestroy(&ctx->rows));
  PetscCall(ISDestroy(&ctx->cols));
  PetscCall(PetscFree(ctx->pcols));
  PetscCall(PetscFree(ctx->pmap));
  PetscCall(PetscFree(ctx->pv));
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the container's destroy function (GSContainerSetDestroy()) */
static PetscErrorCode GSDistCtxDestroy_Private(void *ptr)
{
  PetscFunctionBegin;
  PetscCall(GSDistCtxFree_Private((GSDistCtx *)GSContainerPointer(ptr)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The compact index *k of P's column g: its local columns [c0, c1) in order amid its other columns ext[] (ascending,
   nbelow of them below c0, g among them) */
static PetscErrorCode GSCompactColumn(PetscInt g, PetscInt c0, PetscInt c1, PetscInt next, const PetscInt ext[], PetscInt nbelow, PetscInt *k)
{
  PetscInt loc;

  PetscFunctionBegin;
  if (g >= c0 && g < c1) {
    *k = nbelow + g - c0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscFindInt(g, next, ext, &loc));
  PetscCheck(loc >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Column %" PetscInt_FMT " of P is not among the product's", g);
  *k = loc < nbelow ? loc : loc + (c1 - c0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P's values, as the product takes them, from its host arrays and its ghost rows (fetched again where fetch) */
static PetscErrorCode GSDistTakeP_Private(Mat P, GSDistCtx *ctx, PetscBool fetch)
{
  Mat                Pd, Po;
  const PetscInt    *pgarray;
  const PetscScalar *pd, *po, *g;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(P));
  if (fetch) {
    const struct _MatOps *base;
    PetscCall(MatGPUStreamBaseOps_Private(P, &base));
    PetscCall((*base->createsubmatrices)(P, 1, &ctx->rows, &ctx->cols, MAT_REUSE_MATRIX, &ctx->ghost));
  }
  PetscCall(MatGPUStreamGetBlocks_Private(P, &Pd, &Po, &pgarray));
  PetscCall(MatSeqAIJGetArrayRead(Pd, &pd));
  PetscCall(MatSeqAIJGetArrayRead(Po, &po));
  PetscCall(MatSeqAIJGetArrayRead(ctx->ghost[0], &g));
  for (PetscCount e = 0; e < ctx->npl; e++) ctx->pv[e] = ctx->pmap[e] < ctx->npd ? pd[ctx->pmap[e]] : po[ctx->pmap[e] - ctx->npd];
  PetscCall(PetscArraycpy(ctx->pv + ctx->npl, g, ctx->np - ctx->npl));
  PetscCall(MatSeqAIJRestoreArrayRead(ctx->ghost[0], &g));
  PetscCall(MatSeqAIJRestoreArrayRead(Po, &po));
  PetscCall(MatSeqAIJRestoreArrayRead(Pd, &pd));
  PetscCall(GSDistProductSetP(ctx->prod, ctx->pv));
  PetscCall(PetscObjectStateGet((PetscObject)P, &ctx->pstate));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The process's part of A B or P^T A P on several processes from the host patterns, with P's values */
static PetscErrorCode GSDistCtxCreate_Private(GSProductType type, Mat A, Mat P, GSDistCtx **out)
{
  Mat                   Ad, Ao, Pd, Po, G;
  const PetscInt       *garray, *pgarray, *adi, *adj, *aoi, *aoj, *pdi, *pdj, *poi, *poj, *gi, *gj;
  PetscInt              m, n, ng, mo, c0, c1, next = 0, nbelow = 0, *ext, *pi, *pj, k;
  PetscCount            e       = 0;
  PetscBool             done[5] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  const struct _MatOps *base;
  GSDistCtx            *ctx;

  PetscFunctionBegin;
  PetscCall(PetscNew(&ctx));
  *out       = ctx; /* the caller's to free, also after a failure */
  ctx->id[0] = ((PetscObject)A)->id;
  ctx->id[1] = ((PetscObject)P)->id;
  ctx->nz[0] = A->nonzerostate;
  ctx->nz[1] = P->nonzerostate;
  m          = A->rmap->n;
  n          = A->cmap->n;
  c0         = P->cmap->rstart;
  c1         = P->cmap->rend;
  PetscCall(MatGPUStreamSyncHost_Private(P)); /* the ghost rows come from the host arrays */
  PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
  ng = Ao->cmap->n;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, ng, garray, PETSC_COPY_VALUES, &ctx->rows));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, P->cmap->N, 0, 1, &ctx->cols));
  PetscCall(MatGPUStreamBaseOps_Private(P, &base));
  PetscCall((*base->createsubmatrices)(P, 1, &ctx->rows, &ctx->cols, MAT_INITIAL_MATRIX, &ctx->ghost)); /* plain SeqAIJ */
  G = ctx->ghost[0];
  PetscCall(MatGPUStreamGetBlocks_Private(P, &Pd, &Po, &pgarray));
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &mo, &adi, &adj, &done[0]));
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mo, &aoi, &aoj, &done[1]));
  PetscCall(MatGetRowIJ(Pd, 0, PETSC_FALSE, PETSC_FALSE, &mo, &pdi, &pdj, &done[2]));
  PetscCall(MatGetRowIJ(Po, 0, PETSC_FALSE, PETSC_FALSE, &mo, &poi, &poj, &done[3]));
  PetscCall(MatGetRowIJ(G, 0, PETSC_FALSE, PETSC_FALSE, &mo, &gi, &gj, &done[4]));
  for (int i = 0; i < 5; i++) PetscCheck(done[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "The blocks of a product's operands gave no CSR pattern");
  /* P's columns: its local ones, the off-diagonal block's, the ghost rows' */
  PetscCall(PetscMalloc1(Po->cmap->n + gi[ng], &ext));
  for (k = 0; k < Po->cmap->n; k++) ext[next++] = pgarray[k];
  for (k = 0; k < gi[ng]; k++)
    if (gj[k] < c0 || gj[k] >= c1) ext[next++] = gj[k];
  PetscCall(PetscSortRemoveDupsInt(&next, ext));
  while (nbelow < next && ext[nbelow] < c0) nbelow++;
  ctx->npc = next + c1 - c0;
  PetscCall(PetscMalloc1(ctx->npc, &ctx->pcols));
  for (k = 0; k < nbelow; k++) ctx->pcols[k] = ext[k];
  for (k = c0; k < c1; k++) ctx->pcols[nbelow + k - c0] = k;
  for (k = nbelow; k < next; k++) ctx->pcols[k + c1 - c0] = ext[k];
  /* P's local rows (the blocks merged, columns ascending), then the ghost rows, in compact columns */
  ctx->npd = pdi[n];
  ctx->npl = pdi[n] + poi[n];
  ctx->np  = ctx->npl + gi[ng];
  PetscCall(PetscMalloc1(n + ng + 1, &pi));
  PetscCall(PetscMalloc1(ctx->np, &pj));
  PetscCall(PetscMalloc1(ctx->npl, &ctx->pmap));
  PetscCall(PetscMalloc1(ctx->np, &ctx->pv));
  pi[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt a = pdi[i], b = poi[i];
    while (a < pdi[i + 1] || b < poi[i + 1]) {
      if (b == poi[i + 1] || (a < pdi[i + 1] && c0 + pdj[a] < pgarray[poj[b]])) {
        pj[e]          = nbelow + pdj[a];
        ctx->pmap[e++] = a++;
      } else {
        PetscCall(GSCompactColumn(pgarray[poj[b]], c0, c1, next, ext, nbelow, &pj[e]));
        ctx->pmap[e++] = ctx->npd + b++;
      }
    }
    pi[i + 1] = (PetscInt)e;
  }
  for (PetscInt r = 0; r < ng; r++) {
    for (k = gi[r]; k < gi[r + 1]; k++) PetscCall(GSCompactColumn(gj[k], c0, c1, next, ext, nbelow, &pj[e++]));
    pi[n + r + 1] = (PetscInt)e;
  }
  PetscCall(GSDistProductCreate(type, m, n, adi, adj, ng, aoi, aoj, ctx->npc, pi, pj, GSHostThreads(), &ctx->prod));
  PetscCall(PetscFree(pi));
  PetscCall(PetscFree(pj));
  PetscCall(PetscFree(ext));
  PetscCall(MatRestoreRowIJ(G, 0, PETSC_FALSE, PETSC_FALSE, &mo, &gi, &gj, &done[4]));
  PetscCall(MatRestoreRowIJ(Po, 0, PETSC_FALSE, PETSC_FALSE, &mo, &poi, &poj, &done[3]));
  PetscCall(MatRestoreRowIJ(Pd, 0, PETSC_FALSE, PETSC_FALSE, &mo, &pdi, &pdj, &done[2]));
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &mo, &aoi, &aoj, &done[1]));
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &mo, &adi, &adj, &done[0]));
  PetscCall(GSDistTakeP_Private(P, ctx, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductNumeric_GPUStream_Dist(Mat);

/* The symbolic phase of A B and P^T A P on several processes: the process's part, then C a gpustream matrix with A's
   settings, preallocated by the coordinates of every process's part */
static PetscErrorCode MatProductSymbolicDist_Private(Mat C, GSProductType type)
{
  Mat_Product    *product = C->product;
  Mat             A = product->A, P = product->B;
  const PetscInt *ci, *cj;
  PetscInt        cm, *ri, *rj;
  GSDistCtx      *ctx = NULL;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(GPUS_ProductSetUp, A, P, 0, 0));
  ierr = GSAllOK(PetscObjectComm((PetscObject)C), GSDistCtxCreate_Private(type, A, P, &ctx));
  PetscCall(GSObjectComposePointer((PetscObject)C, GSDistProductName, ctx, GSDistCtxDestroy_Private)); /* C holds it */
  PetscCall(ierr);
  PetscCall(GSDistProductGetPattern(ctx->prod, &cm, &ci, &cj));
  PetscCall(PetscMalloc2(ci[cm], &ri, ci[cm], &rj));
  for (PetscInt r = 0; r < cm; r++)
    for (PetscInt k = ci[r]; k < ci[r + 1]; k++) {
      ri[k] = type == GS_PRODUCT_AB ? A->rmap->rstart + r : ctx->pcols[r];
      rj[k] = ctx->pcols[cj[k]];
    }
  if (type == GS_PRODUCT_AB) {
    PetscCall(MatSetSizes(C, A->rmap->n, P->cmap->n, A->rmap->N, P->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(C, A, P));
  } else {
    PetscCall(MatSetSizes(C, P->cmap->n, P->cmap->n, P->cmap->N, P->cmap->N));
    PetscCall(MatSetBlockSizes(C, PetscAbs(P->cmap->bs), PetscAbs(P->cmap->bs)));
  }
  PetscCall(MatSetType(C, MATMPIAIJ));
  PetscCall(MatGPUStreamAdopt_Private(C, (Mat_GPUStream *)A->spptr));
  PetscCall(MatSetPreallocationCOO(C, ci[cm], ri, rj));
  PetscCall(PetscFree2(ri, rj));
  C->ops->productnumeric = MatProductNumeric_GPUStream_Dist;
  PetscCall(PetscLogEventEnd(GPUS_ProductSetUp, A, P, 0, 0));
  PetscCall(PetscInfo(C, "%s symbolic phase of gpustream matrices on several processes, none of AIJ's: this process's part %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " entries\n", MatProductTypes[product->type], cm, ctx->npc, ci[cm]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Other operands since the symbolic phase (MatProductReplaceMats()) or new patterns: the process's part is made again
   for them, which must give C's coordinates (else the symbolic phase is due again); collective */
static PetscErrorCode GSDistCtxRenew_Private(Mat C, GSProductType type, GSDistCtx *ctx)
{
  GSDistCtx      *now = NULL, swap;
  const PetscInt *ci, *cj, *xi, *xj;
  PetscInt        cm, xm;
  PetscBool       same = PETSC_FALSE;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  ierr = GSAllOK(PetscObjectComm((PetscObject)C), GSDistCtxCreate_Private(type, C->product->A, C->product->B, &now));
  if (!ierr) {
    PetscCall(GSDistProductGetPattern(ctx->prod, &cm, &ci, &cj));
    PetscCall(GSDistProductGetPattern(now->prod, &xm, &xi, &xj));
    same = (PetscBool)(cm == xm && ctx->npc == now->npc);
    if (same) PetscCall(PetscArraycmp(ctx->pcols, now->pcols, ctx->npc, &same));
    if (same) PetscCall(PetscArraycmp(ci, xi, cm + 1, &same));
    if (same) PetscCall(PetscArraycmp(cj, xj, ci[cm], &same));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)C)));
    if (same) {
      swap = *ctx;
      *ctx = *now;
      *now = swap;
    }
  }
  if (now) PetscCall(GSDistCtxFree_Private(now));
  PetscCall(ierr);
  PetscCheck(same, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP, "The operands' nonzero patterns changed the product's after its symbolic phase: call MatProductSymbolic() again (or make the product with MAT_INITIAL_MATRIX)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric phase on several processes: A's values gathered into the process's part on the device where A is
   resident (else from its host arrays), the part's product, and the parts summed into C (on the device where C is
   resident) */
static PetscErrorCode MatProductNumeric_GPUStream_Dist(Mat C)
{
  Mat                A = C->product->A, P = C->product->B;
  GSDistCtx         *ctx;
  PetscContainer     c;
  PetscObjectState   pstate;
  PetscBool          on, con;
  const PetscScalar *ad, *ao, *cv;
  Mat                Ad = NULL, Ao = NULL;
  const PetscInt    *garray;
  Mat_GPUStream     *gs = (Mat_GPUStream *)C->spptr;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_device_products", GS_OPTION_BOOL, NULL, 0)); /* read at each numeric phase */
  PetscCall(PetscObjectQuery((PetscObject)C, GSDistProductName, (PetscObject *)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "The product lost its data");
  PetscCall(PetscContainerGetPointer(c, (void **)&ctx));
  if (ctx->id[0] != ((PetscObject)A)->id || ctx->id[1] != ((PetscObject)P)->id || ctx->nz[0] != A->nonzerostate || ctx->nz[1] != P->nonzerostate)
    PetscCall(GSDistCtxRenew_Private(C, C->product->type == MATPRODUCT_AB ? GS_PRODUCT_AB : GS_PRODUCT_PtAP, ctx));
  PetscCall(PetscObjectStateGet((PetscObject)P, &pstate));
  if (pstate != ctx->pstate) PetscCall(GSDistTakeP_Private(P, ctx, PETSC_TRUE));
  PetscCall(MatGPUStreamValuesOnDevice_Private(A, &on));
  if (on) {
    GSDeviceMat dA = NULL, dB = NULL;
    PetscCall(MatGPUStreamGetDeviceMat(A, &dA, &dB, NULL));
    PetscCall(GSDeviceMatGetValuesArray(dA, (PetscScalar **)&ad, NULL));
    ao = NULL;
    if (dB) PetscCall(GSDeviceMatGetValuesArray(dB, (PetscScalar **)&ao, NULL));
    ierr = GSDistProductNumeric(ctx->prod, ad, ao, PETSC_TRUE, &cv);
  } else {
    PetscCall(MatGPUStreamSyncHost_Private(A));
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(MatSeqAIJGetArrayRead(Ad, &ad));
    PetscCall(MatSeqAIJGetArrayRead(Ao, &ao));
    ierr = GSDistProductNumeric(ctx->prod, ad, ao, PETSC_FALSE, &cv);
    PetscCall(MatSeqAIJRestoreArrayRead(Ao, &ao));
    PetscCall(MatSeqAIJRestoreArrayRead(Ad, &ad));
  }
  PetscCall(GSAllOK(PetscObjectComm((PetscObject)C), ierr)); /* the parts' sum is collective */
  PetscCall(MatGPUStreamCOOOnDevice_Private(C, &con));
  if (con)
    PetscCall(MatGPUStreamCOOSetDevice_Private(C, cv, PETSC_TRUE, INSERT_VALUES));
  else { /* a streamed result: AIJ's coordinate assembly on the host */
    PetscScalar *h;
    PetscCall(PetscMalloc1(gs->ncoo, &h));
    ierr = GSAllOK(PetscObjectComm((PetscObject)C), GSDistProductGetValues(ctx->prod, h));
    if (!ierr) ierr = MatSetValuesCOO(C, h, INSERT_VALUES);
    PetscCall(PetscFree(h));
    PetscCall(ierr);
  }
  PetscCall(PetscInfo(C, "%s numeric phase on several processes, %s\n", MatProductTypes[C->product->type], on ? "on the device" : "from A's host arrays"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's numeric phase, with the operands wearing their base names. AIJ's reads the patterns its symbolic phase saw:
   an operand that is still the one it saw must have kept its pattern. */
static PetscErrorCode MatProductNumeric_GPUStream_AIJ(Mat C)
{
  Mat            X[3] = {C->product->A, C->product->B, C->product->C};
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_device_products", GS_OPTION_BOOL, NULL, 0)); /* read at each numeric phase */
  PetscCall(PetscObjectQuery((PetscObject)C, GSDeviceProductName, (PetscObject *)&c));
  if (c) {
    GSProductCtx *ctx;
    PetscCall(PetscContainerGetPointer(c, (void **)&ctx));
    for (int i = 0; i < 3; i++)
      PetscCheck(!X[i] || ctx->id[i] != ((PetscObject)X[i])->id || ctx->nz[i] == X[i]->nonzerostate, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP,
                 "An operand's nonzero pattern changed after the product's symbolic phase: call MatProductSymbolic() again (or make the product with MAT_INITIAL_MATRIX)");
  }
  PetscCall(MatProductPhaseAIJ_Private(C, "MatProductNumeric_GPUStream_AIJ_C"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the operands of C's product are all gpustream matrices and AIJ's symbolic phase made C a plain AIJ matrix */
static PetscErrorCode MatProductOfOurs_Private(Mat C, PetscBool *ours)
{
  Mat_Product *product = C->product;
  Mat          X[3]    = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  MatType      base;

  PetscFunctionBegin;
  *ours = PETSC_TRUE;
  for (int i = 0; i < 3; i++)
    if (X[i] && !MatGPUStreamIsOurs_Private(X[i])) *ours = PETSC_FALSE;
  if (!*ours) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUStreamBaseName_Private(C, &base));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, base, ours));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our symbolic phase for our products, else AIJ's; the result of gpustream operands only is a gpustream matrix */
static PetscErrorCode MatProductSymbolic_GPUStream_AIJ(Mat C)
{
  PetscBool     ours, own;
  GSProductType type;

  PetscFunctionBegin;
  PetscCall(MatProductOwnType_Private(C, &own, &type));
  if (own) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
    if (size > 1)
      PetscCall(MatProductSymbolicDist_Private(C, type));
    else
      PetscCall(MatProductSymbolicOwn_Private(C, type));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatProductPhaseAIJ_Private(C, "MatProductSymbolic_GPUStream_AIJ_C"));
  if (C->ops->productnumeric && C->ops->productnumeric != MatProductNumeric_GPUStream_AIJ) {
    GSProductCtx *ctx;
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "MatProductNumeric_GPUStream_AIJ_C", C->ops->productnumeric));
    C->ops->productnumeric = MatProductNumeric_GPUStream_AIJ;
    PetscCall(PetscNew(&ctx));
    GSProductCtxRecord_Private(ctx, C);
    PetscCall(GSObjectComposePointer((PetscObject)C, GSDeviceProductName, ctx, GSProductCtxDestroy_Private));
  }
  PetscCall(MatProductOfOurs_Private(C, &ours));
  if (ours) {
    PetscCall(MatAIJToGPUStream_Private(C)); /* its numeric phases write its host arrays and assemble it */
    PetscCall(MatGPUStreamAdopt_Private(C, (Mat_GPUStream *)C->product->A->spptr));
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
  PetscBool      was[4]  = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (!MatGPUStreamIsOurs_Private(G)) G = product->B;
  PetscCall(MatProductWearAIJ_Private(C, PETSC_TRUE, was));
  ierr = (*((Mat_GPUStream *)G->spptr)->aij.productsetfromoptions)(C);
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
  PetscBool      isgs, any = PETSC_FALSE, was[4] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
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
  PetscBool      worn, bgs                         = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamWearBase(A, &worn));
  if (!worn) { /* it wore its base name already */
    PetscCall((*gs->aij.transpose)(A, reuse, B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_REUSE_MATRIX) {
    bgs = MatGPUStreamIsOurs_Private(*B);
    if (bgs) b = *(Mat_GPUStream *)(*B)->spptr;
  }
  PetscCall(MatGPUStreamWearOwn(A, worn, (*a.aij.transpose)(A, reuse, B)));
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
  PetscBool      worn;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamWearName_Private(A, &worn)); /* the pattern only: the values may stay on the device */
  if (!worn) {
    PetscCall((*gs->aij.transposesymbolic)(A, B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUStreamWearOwn(A, worn, (*gs->aij.transposesymbolic)(A, B)));
  PetscCall(MatGPUStreamAdopt_Private(*B, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert() to a type with no converter of ours: dense (PCASM's -pc_asm_sub_mat_type), MATIS (PCBDDC, PCMG's GDSW
   coarse spaces), hypre (PCHYPRE), BAIJ ... MatConvert() asks the matrix's general converter when no specialized one
   is found: this one calls MatConvert() again with the matrix wearing its base name, which finds the converter AIJ
   composed ("MatConvert_seqaij_seqdense_C" ...), so the result is the one an AIJ matrix gives (a plain local SeqAIJ
   in a MATIS, no block size where AIJ's converter sets none, the same hypre matrix). Without one, AIJ's general
   converter (none: PETSc's basic one), as for AIJ. In place, the matrix is of the new type afterwards. */
static PetscErrorCode MatConvert_GPUStream_Any(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscBool      worn;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamWearBase(A, &worn));
  A->ops->convert = gs->aij.convert;
  ierr            = MatConvert(A, type, reuse, B);
  if (MatGPUStreamIsOurs_Private(A)) A->ops->convert = MatConvert_GPUStream_Any; /* not after an in-place conversion */
  PetscCall(MatGPUStreamWearOwn(A, worn, ierr));
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
  PetscCall(GSCOOMapDestroy(&gs->coo));
  PetscCall(MatDestroy(&gs->diag));
  PetscCall(MatSetVecType(A, VECSTANDARD));
#if defined(PETSC_HAVE_DEVICE)
  A->boundtocpu = PETSC_TRUE; /* AIJ's, as MatCreate() leaves it */
#endif
  PetscCall(MatGPUStreamRestoreOps_Private(A, gs));
  PetscCall(PetscFree(A->spptr));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamProductAIJ[i], NULL));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_seqdense_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_mpidense_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", NULL));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, size > 1 ? MATMPIAIJ : MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_GPUStream(Mat A)
{
  PetscFunctionBegin;
  if (!A->spptr) { /* a submatrix made gpustream by AIJ's code, then converted to AIJ in place (PCASM's
                      -pc_asm_sub_mat_type): AIJ's routine that destroys submatrices still calls the destroy they had */
    PetscErrorCode (*destroy)(Mat) = A->ops->destroy;
    if (destroy == MatDestroy_GPUStream) {
      const struct _MatOps *base;
      PetscCall(MatGPUStreamBaseOps_Private(A, &base));
      destroy = base->destroy;
    }
    PetscCall((*destroy)(A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUStreamToAIJ_Private(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's operations of the first SeqAIJ and MPIAIJ matrices made gpustream ones, for the wrappers' calls on a header
   that wears our operations without our data (see MatGPUStreamIsOurs_Private()) */
static struct _MatOps GSAIJOps[2];
static PetscBool      GSAIJOpsSet[2];

/* The AIJ operations behind A's wrappers */
static PetscErrorCode MatGPUStreamBaseOps_Private(Mat A, const struct _MatOps **base)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  if (MatGPUStreamIsOurs_Private(A)) {
    *base = &((Mat_GPUStream *)A->spptr)->base;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(GSAIJOpsSet[size > 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "No AIJ operations recorded");
  *base = &GSAIJOps[size > 1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An AIJ operation that reads or writes the values on the host, with the host arrays brought up to date first: the
   matrices it syncs are the parameter named A and, for GS_HOST_OP2(), the one named B (either or both gpustream
   ones); a change it makes moves the object state, which the device follows */
#define GS_HOST_OP_SYNCING(op, params, args, B)                                                                                                                                                                                                          \
  static PetscErrorCode MatHostOp_##op##_GPUStream params                                                                                                                                                                                                \
  {                                                                                                                                                                                                                                                      \
    const struct _MatOps *base;                                                                                                                                                                                                                          \
                                                                                                                                                                                                                                                         \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(MatGPUStreamSyncHost_Private(A));                                                                                                                                                                                                          \
    if (B) PetscCall(MatGPUStreamSyncHost_Private(B));                                                                                                                                                                                                   \
    PetscCall(MatGPUStreamBaseOps_Private(A, &base));                                                                                                                                                                                                    \
    PetscCheck(base->op, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No AIJ operation " #op " behind the gpustream one");                                                                                                                                          \
    PetscCall((*base->op)args);                                                                                                                                                                                                                          \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }
#define GS_HOST_OP(op, params, args)  GS_HOST_OP_SYNCING(op, params, args, NULL)
#define GS_HOST_OP2(op, params, args) GS_HOST_OP_SYNCING(op, params, args, B)

GS_HOST_OP(setvalues, (Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode), (A, m, im, n, in, v, mode))
GS_HOST_OP(getrow, (Mat A, PetscInt row, PetscInt *n, PetscInt *cols[], PetscScalar *vals[]), (A, row, n, cols, vals))
GS_HOST_OP(getvalues, (Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], PetscScalar v[]), (A, m, im, n, in, v))
GS_HOST_OP(multhermitiantranspose, (Mat A, Vec x, Vec y), (A, x, y))
GS_HOST_OP(multhermitiantransposeadd, (Mat A, Vec x, Vec z, Vec y), (A, x, z, y))
GS_HOST_OP(multdiagonalblock, (Mat A, Vec x, Vec y), (A, x, y))
GS_HOST_OP(lufactor, (Mat A, IS row, IS col, const MatFactorInfo *info), (A, row, col, info))
GS_HOST_OP(ilufactor, (Mat A, IS row, IS col, const MatFactorInfo *info), (A, row, col, info))
GS_HOST_OP(sor, (Mat A, Vec b, PetscReal omega, MatSORType flag, PetscReal shift, PetscInt its, PetscInt lits, Vec x), (A, b, omega, flag, shift, its, lits, x))
GS_HOST_OP(norm, (Mat A, NormType type, PetscReal *nrm), (A, type, nrm))
GS_HOST_OP(zerorows, (Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b), (A, n, rows, diag, x, b))
GS_HOST_OP(zerorowscolumns, (Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b), (A, n, rows, diag, x, b))
GS_HOST_OP(getdiagonalblock, (Mat A, Mat *a), (A, a))
GS_HOST_OP(diagonalset, (Mat A, Vec d, InsertMode mode), (A, d, mode))
GS_HOST_OP(getrowmax, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
GS_HOST_OP(getrowmaxabs, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
GS_HOST_OP(getrowmin, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
GS_HOST_OP(getrowminabs, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
GS_HOST_OP(fdcoloringapply, (Mat A, MatFDColoring c, Vec x, void *ctx), (A, c, x, ctx))
GS_HOST_OP(setvaluesrow, (Mat A, PetscInt row, const PetscScalar v[]), (A, row, v))
GS_HOST_OP(conjugate, (Mat A), (A))
GS_HOST_OP(realpart, (Mat A), (A))
GS_HOST_OP(imaginarypart, (Mat A), (A))
GS_HOST_OP(getcolumnreductions, (Mat A, PetscInt type, PetscReal *r), (A, type, r))
GS_HOST_OP(invertblockdiagonal, (Mat A, const PetscScalar **v), (A, v))
GS_HOST_OP(invertvariableblockdiagonal, (Mat A, PetscInt n, const PetscInt *sizes, PetscScalar *v), (A, n, sizes, v))
GS_HOST_OP(transcoloringapplysptoden, (MatTransposeColoring c, Mat A, Mat D), (c, A, D))
GS_HOST_OP(transcoloringapplydentosp, (MatTransposeColoring c, Mat D, Mat A), (c, D, A))
GS_HOST_OP(findzerodiagonals, (Mat A, IS *is), (A, is))
GS_HOST_OP(findnonzerorows, (Mat A, IS *is), (A, is))
GS_HOST_OP(setrandom, (Mat A, PetscRandom r), (A, r))
GS_HOST_OP(load, (Mat A, PetscViewer v), (A, v))
GS_HOST_OP(issymmetric, (Mat A, PetscReal tol, PetscBool *flg), (A, tol, flg))
GS_HOST_OP(ishermitian, (Mat A, PetscReal tol, PetscBool *flg), (A, tol, flg))
#if defined(GPUSTREAM_PETSC_MATOPS_ELIMINATEZEROS)
GS_HOST_OP(eliminatezeros, (Mat A, PetscBool keep), (A, keep))
#endif
#if defined(GPUSTREAM_PETSC_MATOPS_GETROWSUMABS)
GS_HOST_OP(getrowsumabs, (Mat A, Vec v), (A, v))
#endif

/* The nonzero pattern, which the host arrays always hold (the values may stay on the device). On several processes
   AIJ's gathers the local rows with MatMPIAIJGetLocalMat(), which checks the type name (orderings: nested dissection
   on several processes) */
static PetscErrorCode MatGetRowIJ_GPUStream(Mat A, PetscInt shift, PetscBool symmetric, PetscBool inodecompressed, PetscInt *n, const PetscInt *ia[], const PetscInt *ja[], PetscBool *done)
{
  const struct _MatOps *base;
  PetscBool             worn = PETSC_FALSE;
  PetscMPIInt           size;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) PetscCall(MatGPUStreamWearName_Private(A, &worn));
  PetscCall(MatGPUStreamWearOwn(A, worn, (*base->getrowij)(A, shift, symmetric, inodecompressed, n, ia, ja, done)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's permuted matrix, made a gpustream one with A's settings: on one process AIJ's code makes it of A's type, on
   several it takes the blocks with MatMPIAIJGetSeqAIJ() (which checks the type name) and makes a plain MPIAIJ one */
static PetscErrorCode MatPermute_GPUStream(Mat A, IS row, IS col, Mat *B)
{
  const struct _MatOps *base;
  Mat_GPUStream         a;
  PetscBool             worn;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&a, sizeof(a)));
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall(MatGPUStreamWearBase(A, &worn));
  if (worn) a = *(Mat_GPUStream *)A->spptr;
  PetscCall(MatGPUStreamWearOwn(A, worn, (*base->permute)(A, row, col, B)));
  if (worn) PetscCall(MatGPUStreamAdopt_Private(*B, &a)); /* not while A wore its base name already */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pattern only; AIJ's scalable variant (-mat_increase_overlap_scalable) gathers rows with MatMPIAIJGetLocalMat(),
   which checks the type name */
static PetscErrorCode MatIncreaseOverlap_GPUStream(Mat A, PetscInt n, IS is[], PetscInt ov)
{
  const struct _MatOps *base;
  PetscBool             worn;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall(MatGPUStreamWearName_Private(A, &worn));
  PetscCall(MatGPUStreamWearOwn(A, worn, (*base->increaseoverlap)(A, n, is, ov)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ operations that make matrices from A's values and, with MAT_REUSE_MATRIX, write them into the host arrays of the
   matrices made before (directly, then assemble them): those, gpustream ones (they are made of A's type), are brought
   up to date first, so that a change on their device is not taken for newer than the values written. New ones take
   A's settings (PCGAMG's levels reduced to fewer processes: their vectors and binding must stay the operator's) */
#define GS_HOST_OP_REUSE(op, params, args, reused, n)                                                                                                                                                                                                    \
  static PetscErrorCode MatHostOp_##op##_GPUStream params                                                                                                                                                                                                \
  {                                                                                                                                                                                                                                                      \
    const struct _MatOps *base;                                                                                                                                                                                                                          \
                                                                                                                                                                                                                                                         \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(MatGPUStreamSyncHost_Private(A));                                                                                                                                                                                                          \
    if (scall == MAT_REUSE_MATRIX)                                                                                                                                                                                                                       \
      for (PetscInt i = 0; i < (n); i++) PetscCall(MatGPUStreamSyncHost_Private((reused)[i]));                                                                                                                                                           \
    PetscCall(MatGPUStreamBaseOps_Private(A, &base));                                                                                                                                                                                                    \
    PetscCheck(base->op, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No AIJ operation " #op " behind the gpustream one");                                                                                                                                          \
    PetscCall((*base->op)args);                                                                                                                                                                                                                          \
    if (scall == MAT_INITIAL_MATRIX)                                                                                                                                                                                                                     \
      for (PetscInt i = 0; i < (n); i++) PetscCall(MatGPUStreamTakeSettings((reused)[i], A));                                                                                                                                                            \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }

GS_HOST_OP_REUSE(createsubmatricesmpi, (Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat **sub), (A, n, irow, icol, scall, sub), *sub, n)
GS_HOST_OP_REUSE(createsubmatrix, (Mat A, IS irow, IS icol, MatReuse scall, Mat *sub), (A, irow, icol, scall, sub), sub, 1)
GS_HOST_OP_REUSE(getmultiprocblock, (Mat A, MPI_Comm comm, MatReuse scall, Mat *B), (A, comm, scall, B), B, 1)
GS_HOST_OP_REUSE(creatempimatconcatenateseqmat, (MPI_Comm comm, Mat A, PetscInt n, MatReuse scall, Mat *B), (comm, A, n, scall, B), B, 1)

/* Whether the plugin factors on the device (built with Kokkos-Kernels): only then are the blocks of block Jacobi and
   ASM on several processes made gpustream matrices */
#if defined(GPUSTREAM_HAVE_KOKKOSKERNELS)
#  define GS_DEVICE_FACTORS 1
#else
#  define GS_DEVICE_FACTORS 0
#endif

/* B, a gpustream matrix made from A's values by AIJ's code (its blocks, a submatrix, GAMG's interpolation), takes A's
   settings (options, vector type) where they differ from those it was made with: its device copy is then made again
   from its host arrays */
static PetscErrorCode MatGPUStreamInherit_Private(Mat B, const Mat_GPUStream *from)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  if (!MatGPUStreamHasDeviceData(B)) PetscFunctionReturn(PETSC_SUCCESS);
  gs = (Mat_GPUStream *)B->spptr;
  if (memcmp(&gs->opts, &from->opts, sizeof(gs->opts)) || gs->devicempi != from->devicempi || gs->shared != from->shared) {
    PetscCall(MatGPUStreamSyncHost_Private(B));
    PetscCall(GSDeviceMatDestroy(&gs->dA));
    PetscCall(GSStreamPlanDestroy(&gs->plan));
    gs->opts      = from->opts;
    gs->devicempi = from->devicempi;
    gs->shared    = from->shared;
  }
  PetscCall(PetscStrncpy(gs->vectype, from->vectype, sizeof(gs->vectype)));
  PetscCall(MatGPUStreamSetVecType_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUStreamTakeSettings(Mat B, Mat from)
{
  PetscFunctionBegin;
  if (MatGPUStreamHasDeviceData(B) && MatGPUStreamHasDeviceData(from)) PetscCall(MatGPUStreamInherit_Private(B, (Mat_GPUStream *)from->spptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCreateSubMatrices() (PCASM's subdomains, PCBJACOBI's blocks when a process has several): AIJ's code gives the
   submatrices the type name of the matrix (one process) or of its diagonal block (several), which therefore wears
   "gpustream" for the call; the submatrices are sequential gpustream matrices with A's settings, whose factors (ILU,
   ICC) run on the device (where the plugin has them; else the blocks stay plain SeqAIJ on several processes, as AIJ's
   code makes them). Reused, AIJ's code writes their host arrays and assembles them, and the device follows: they are
   brought up to date first (GS_HOST_OP_REUSE above), so that a change on their device is not taken for newer. */
static PetscErrorCode MatCreateSubMatrices_GPUStream(Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat *sub[])
{
  const struct _MatOps *base;
  Mat                   Ad = NULL, Ao;
  const PetscInt       *garray;
  PetscMPIInt           size;
  PetscBool             isgs;
  PetscErrorCode        ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(A));
  if (scall == MAT_REUSE_MATRIX)
    for (PetscInt i = 0; i < n; i++) PetscCall(MatGPUStreamSyncHost_Private((*sub)[i]));
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCheck(base->createsubmatrices, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No AIJ operation createsubmatrices behind the gpustream one");
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs)); /* not while it wears its base name for AIJ's code (MATIS' conversion) */
  if (size > 1 && MatGPUStreamIsOurs_Private(A) && GS_DEVICE_FACTORS && isgs) {
    PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
    PetscCall(PetscObjectChangeTypeName((PetscObject)Ad, MATGPUSTREAM));
  }
  ierr = (*base->createsubmatrices)(A, n, irow, icol, scall, sub);
  if (Ad) PetscCall(PetscObjectChangeTypeName((PetscObject)Ad, MATSEQAIJ)); /* also when it failed */
  PetscCall(ierr);
  if (scall == MAT_INITIAL_MATRIX && MatGPUStreamIsOurs_Private(A))
    for (PetscInt i = 0; i < n; i++) PetscCall(MatGPUStreamInherit_Private((*sub)[i], (Mat_GPUStream *)A->spptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGetDiagonalBlock() on several processes (PCBJACOBI's block, PCASM's subdomain graph): MPIAIJ's diagonal block is
   a plain SeqAIJ inside the matrix, so the block given is a sequential gpustream matrix of its own, whose factors run on
   the device. It is made at the first call and at each new nonzero pattern (a duplicate of the block), and its values
   follow the matrix's at each call that finds these changed: copied on the device where both are resident, else from
   the host arrays. Values set in it do not reach the matrix. On one process the matrix is its own diagonal block; without
   device factors MPIAIJ's block is given, as before. */
static PetscErrorCode MatGetDiagonalBlock_GPUStream(Mat A, Mat *a)
{
  Mat_GPUStream   *gs;
  Mat              Ad, Ao;
  const PetscInt  *garray;
  PetscObjectState state[2];
  PetscMPIInt      size;
  PetscBool        isgs;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs));
  if (size == 1 || !MatGPUStreamIsOurs_Private(A) || !GS_DEVICE_FACTORS || !isgs) {
    PetscCall(MatHostOp_getdiagonalblock_GPUStream(A, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  gs = (Mat_GPUStream *)A->spptr;
  PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state[0]));
  PetscCall(PetscObjectStateGet((PetscObject)Ad, &state[1]));
  if (gs->diag && gs->diagnz != A->nonzerostate) PetscCall(MatDestroy(&gs->diag));
  if (!gs->diag) {
    PetscCall(MatGPUStreamSyncHost_Private(A));
    PetscCall(MatDuplicate(Ad, MAT_COPY_VALUES, &gs->diag));
    PetscCall(MatGPUStreamAdopt_Private(gs->diag, gs));
  } else if (state[0] != gs->diagstate[0] || state[1] != gs->diagstate[1]) {
    Mat_GPUStream *ds = (Mat_GPUStream *)gs->diag->spptr;
    /* A's device copy is brought up to date here only where that is local: its values alone */
    PetscBool ondevice = (PetscBool)(gs->dA && !gs->plan && gs->nzstate == A->nonzerostate);

    if (ondevice) {
      PetscCall(MatGPUStreamSync_Private(A, PETSC_FALSE));
      PetscCall(MatGPUStreamSync_Private(gs->diag, PETSC_FALSE));
      ondevice = (PetscBool)(ds->dA && !ds->plan);
    }
    if (ondevice) {
      PetscCall(GSDeviceMatCopyValues(ds->dA, gs->dA));
      PetscCall(MatGPUStreamDeviceChanged_Private(gs->diag));
    } else {
      const PetscScalar *v;
      PetscScalar       *w;
      const PetscInt    *ia, *ja;
      PetscInt           m;
      PetscBool          done;
      PetscCall(MatGPUStreamSyncHost_Private(A));
      ds->hoststale = PETSC_FALSE; /* all of it is overwritten */
      PetscCall(MatGPUStreamSyncHost_Private(gs->diag));
      PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
      PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the diagonal block");
      PetscCall(MatSeqAIJGetArrayRead(Ad, &v));
      PetscCall(MatSeqAIJGetArrayWrite(gs->diag, &w));
      PetscCall(PetscArraycpy(w, v, ia[m]));
      PetscCall(MatSeqAIJRestoreArrayWrite(gs->diag, &w));
      PetscCall(MatSeqAIJRestoreArrayRead(Ad, &v));
      PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
      PetscCall(PetscObjectStateIncrease((PetscObject)gs->diag));
    }
  }
  { /* what is known of the block's symmetry, which a sub-PC's default type reads (ICC where it is symmetric) */
    PetscErrorCode (*known[4])(Mat, PetscBool *, PetscBool *) = {MatIsSymmetricKnown, MatIsHermitianKnown, MatIsStructurallySymmetricKnown, MatIsSPDKnown};
    const MatOption option[4]                                 = {MAT_SYMMETRIC, MAT_HERMITIAN, MAT_STRUCTURALLY_SYMMETRIC, MAT_SPD};
    for (int k = 0; k < 4; k++) {
      PetscBool set, flg, dset, dflg;
      PetscCall((*known[k])(Ad, &set, &flg));
      PetscCall((*known[k])(gs->diag, &dset, &dflg));
      if (set && (!dset || flg != dflg)) PetscCall(MatSetOption(gs->diag, option[k], flg));
    }
  }
  gs->diagnz       = A->nonzerostate;
  gs->diagstate[0] = state[0];
  gs->diagstate[1] = state[1];
  *a               = gs->diag;
  PetscFunctionReturn(PETSC_SUCCESS);
}

GS_HOST_OP2(equal, (Mat A, Mat B, PetscBool *flg), (A, B, flg))
GS_HOST_OP2(copy, (Mat A, Mat B, MatStructure str), (A, B, str))

/* Entries another process stashed for this one are inserted into the host arrays at assembly: where any process
   stashed some, the host arrays are brought up to date first (MatSetValues() did so on the process that set them) */
static PetscErrorCode MatAssemblyBegin_GPUStream(Mat A, MatAssemblyType type)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  if (!A->nooffprocentries) {
    int stashed = A->stash.n > 0 || A->bstash.n > 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &stashed, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
    if (stashed) PetscCall(MatGPUStreamSyncHost_Private(A));
  }
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall((*base->assemblybegin)(A, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUStreamWrapOps_Private(Mat);

/* AIJ's assembly and options may choose other AIJ operations (inodes, sorted rows): the wrappers take them. A final
   assembly ends with the device copy made or refreshed, so that a failed device allocation surfaces here, where no
   vector is locked: PETSc's MatMult() and KSPSolve() keep the read locks they took on their vectors when the type's
   operation fails inside them. After such an error the matrix is not assembled: once memory is there, assemble it
   again. Products refresh the copy when the host arrays changed since (MatScale() ...) or new options dropped it. */
static PetscErrorCode MatAssemblyEnd_GPUStream(Mat A, MatAssemblyType type)
{
  const struct _MatOps *base;
  PetscBool             isgs;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall((*base->assemblyend)(A, type));
  if (!MatGPUStreamIsOurs_Private(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUStreamWrapOps_Private(A));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATGPUSTREAM, &isgs)); /* not while it wears its base name in AIJ's code */
  if (type == MAT_FINAL_ASSEMBLY && isgs) PetscCall(MatGPUStreamSync_Private(A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetOption_GPUStream(Mat A, MatOption op, PetscBool flg)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall((*base->setoption)(A, op, flg));
  if (MatGPUStreamIsOurs_Private(A)) PetscCall(MatGPUStreamWrapOps_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device CSR where value operations run on the device (MatGPUStreamValuesOnDevice_Private()): the diagonal
   block's, the off-diagonal block's and the halo; *dA is NULL where they run on the host */
static PetscErrorCode MatGPUStreamDeviceBlocks_Private(Mat A, GSDeviceMat *dA, GSDeviceMat *dB, GSHalo *halo)
{
  Mat_GPUStream *gs;
  PetscBool      on;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamValuesOnDevice_Private(A, &on));
  gs  = on ? (Mat_GPUStream *)A->spptr : NULL;
  *dA = gs ? gs->dA : NULL;
  *dB = gs ? gs->dB : NULL;
  if (halo) *halo = gs ? gs->halo : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the diagonal of every local row lies in the diagonal block (the row and column layouts agree) */
static PetscBool MatGPUStreamSquareLayout_Private(Mat A)
{
  return (PetscBool)(A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend);
}

/* Value operations on the device where the copy is resident, else AIJ's on the host arrays (made current first) */
GS_HOST_OP(scale, (Mat A, PetscScalar a), (A, a))
GS_HOST_OP(shift, (Mat A, PetscScalar a), (A, a))
GS_HOST_OP(diagonalscale, (Mat A, Vec l, Vec r), (A, l, r))
GS_HOST_OP(getdiagonal, (Mat A, Vec v), (A, v))

static PetscErrorCode MatScale_GPUStream(Mat A, PetscScalar a)
{
  GSDeviceMat dA = NULL, dB = NULL;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamDeviceBlocks_Private(A, &dA, &dB, NULL));
  if (!dA) {
    PetscCall(MatHostOp_scale_GPUStream(A, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSDeviceMatScale(dA, a));
  if (dB) PetscCall(GSDeviceMatScale(dB, a));
  PetscCall(MatGPUStreamDeviceChanged_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* On the device where every row has its diagonal entry in the pattern (else AIJ adds them: a new pattern) */
static PetscErrorCode MatShift_GPUStream(Mat A, PetscScalar a)
{
  GSDeviceMat dA = NULL, dB = NULL;
  PetscBool   has = MatGPUStreamSquareLayout_Private(A);
  int         all = 0;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamDeviceBlocks_Private(A, &dA, &dB, NULL));
  if (dA) {
    if (has) PetscCall(GSDeviceMatHasDiagonal(dA, &has));
    all = has ? 1 : 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)A)));
  }
  if (!all) {
    PetscCall(MatHostOp_shift_GPUStream(A, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSDeviceMatShift(dA, a));
  PetscCall(MatGPUStreamDeviceChanged_Private(A));
#if PETSC_VERSION_LT(3, 25, 0)
  PetscCall(MatViewFromOptions(A, NULL, "-mat_view")); /* AIJ's shift ends in an assembly, which views it so (3.25 on, it adds to the diagonal in place) */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* l and r read where they are (device vectors in place, host vectors copied over); on several processes the ghost
   values of r come through the halo */
static PetscErrorCode MatDiagonalScale_GPUStream(Mat A, Vec l, Vec r)
{
  GSDeviceMat    dA, dB;
  GSHalo         halo;
  GSVecArray     la = {NULL, PETSC_FALSE, GS_ACCESS_READ, PETSC_FALSE}, ra = {NULL, PETSC_FALSE, GS_ACCESS_READ, PETSC_FALSE};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamDeviceBlocks_Private(A, &dA, &dB, &halo));
  if (!dA) {
    PetscCall(MatHostOp_diagonalscale_GPUStream(A, l, r));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (l) PetscCall(GSVecGetArray(l, GS_ACCESS_READ, &la));
  if (r) PetscCall(GSVecGetArray(r, GS_ACCESS_READ, &ra));
  ierr = GSDeviceMatDiagonalScale(dA, dB, halo, la.array, la.device, ra.array, ra.device);
  if (r) PetscCall(GSVecRestoreArray(r, &ra));
  if (l) PetscCall(GSVecRestoreArray(l, &la));
  PetscCall(ierr);
  PetscCall(MatGPUStreamDeviceChanged_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* On the device when the host arrays are stale or v is a device vector; else AIJ's, which reads the host arrays
   without a copy */
static PetscErrorCode MatGetDiagonal_GPUStream(Mat A, Vec v)
{
  GSDeviceMat dA = NULL, dB = NULL;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamDeviceBlocks_Private(A, &dA, &dB, NULL));
  if (dA && MatGPUStreamSquareLayout_Private(A)) {
    const PetscBool stale = ((Mat_GPUStream *)A->spptr)->hoststale;
    GSVecArray      va;
    PetscErrorCode  ierr = PETSC_SUCCESS;

    PetscCall(GSVecGetArray(v, GS_ACCESS_WRITE, &va));
    if (va.device || stale) ierr = GSDeviceMatGetDiagonal(dA, va.array, va.device);
    PetscCall(GSVecRestoreArray(v, &va));
    PetscCall(ierr);
    if (va.device || stale) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatHostOp_getdiagonal_GPUStream(A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y += a X on the device when both are resident gpustream matrices: on several processes with the same pattern
   (SAME_NONZERO_PATTERN, checked by the sizes), on one with any str where X's pattern lies within Y's (PCGAMG's
   smoothed prolongator, SUBSET_NONZERO_PATTERN); else AIJ's code on the host arrays, which for another pattern merges
   a new matrix into Y's header (Y is made a gpustream one again, with its settings) */
static PetscErrorCode MatAXPY_GPUStream(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  const struct _MatOps *base;
  GSDeviceMat           yA = NULL, yB = NULL, xA = NULL, xB = NULL;
  Mat_GPUStream         saved;
  PetscBool             ours = MatGPUStreamIsOurs_Private(Y);
  PetscMPIInt           size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)Y), &size));
  if (str == SAME_NONZERO_PATTERN || size == 1) {
    PetscCall(MatGPUStreamDeviceBlocks_Private(Y, &yA, &yB, NULL));
    if (yA) PetscCall(MatGPUStreamDeviceBlocks_Private(X, &xA, &xB, NULL));
  }
  if (yA && xA) {
    PetscCount ny[2] = {0, 0}, nx[2] = {0, 0};
    PetscInt   bs[2];
    int        same;
    PetscBool  done = PETSC_FALSE;
    PetscCall(GSDeviceMatGetSizes(yA, NULL, NULL, &ny[0]));
    PetscCall(GSDeviceMatGetSizes(xA, NULL, NULL, &nx[0]));
    PetscCall(GSDeviceMatGetBlockSize(yA, &bs[0]));
    PetscCall(GSDeviceMatGetBlockSize(xA, &bs[1]));
    if (yB) PetscCall(GSDeviceMatGetSizes(yB, NULL, NULL, &ny[1]));
    if (xB) PetscCall(GSDeviceMatGetSizes(xB, NULL, NULL, &nx[1]));
    same = str == SAME_NONZERO_PATTERN && ny[0] == nx[0] && ny[1] == nx[1] && !yB == !xB && bs[0] == bs[1];
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)Y)));
    if (same) {
      PetscCall(GSDeviceMatAXPY(yA, a, xA));
      if (yB) PetscCall(GSDeviceMatAXPY(yB, a, xB));
      done = PETSC_TRUE;
    } else if (size == 1)
      PetscCall(GSDeviceMatAXPYSubset(yA, a, xA, &done));
    if (done) {
      PetscCall(MatGPUStreamDeviceChanged_Private(Y));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(MatGPUStreamSyncHost_Private(Y));
  PetscCall(MatGPUStreamSyncHost_Private(X));
  PetscCall(MatGPUStreamBaseOps_Private(Y, &base));
  if (ours) saved = *(Mat_GPUStream *)Y->spptr;
  PetscCall((*base->axpy)(Y, a, X, str));
  if (ours && !MatGPUStreamIsOurs_Private(Y)) PetscCall(MatGPUStreamAdopt_Private(Y, &saved));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Zero on both sides: the host's zeros by AIJ (no copy of stale values first), the device's in place, so that
   neither needs the other's afterwards */
static PetscErrorCode MatZeroEntries_GPUStream(Mat A)
{
  const struct _MatOps *base;
  Mat_GPUStream        *gs = MatGPUStreamIsOurs_Private(A) ? (Mat_GPUStream *)A->spptr : NULL;

  PetscFunctionBegin;
  if (gs) {
    gs->hoststale = PETSC_FALSE; /* all of it is overwritten */
    PetscCall(MatGPUStreamSyncHost_Private(A));
  }
  PetscCall(MatGPUStreamBaseOps_Private(A, &base));
  PetscCall((*base->zeroentries)(A));
  if (gs && gs->dA && !gs->plan && gs->nzstate == A->nonzerostate) { /* resident, same pattern: no copy from the host */
    PetscCall(GSDeviceMatZeroValues(gs->dA));
    if (gs->dB) PetscCall(GSDeviceMatZeroValues(gs->dB));
    PetscCall(MatGPUStreamRecordStates_Private(A));
    /* both sides hold the zeros: the state increase MatZeroEntries() makes next is no change, a later one is (AIJ's
       code writes a reused submatrix's host arrays directly after zeroing it, then assembles it) */
    gs->state++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  size_t offset; /* of the operation in struct _MatOps */
  GSFn   wrapper;
} GSWrappedOp;
#define GS_WRAP(op, fn)                                                                                                                                                                                                                                  \
  {                                                                                                                                                                                                                                                      \
    offsetof(struct _MatOps, op), (GSFn)(fn)                                                                                                                                                                                                             \
  }
#define GS_WRAP_HOST(op) GS_WRAP(op, MatHostOp_##op##_GPUStream)

/* The AIJ operations that a gpustream matrix runs through its wrappers (where AIJ has them) */
static const GSWrappedOp GSWrappedOps[] = {
    GS_WRAP_HOST(setvalues),
    GS_WRAP_HOST(getrow),
    GS_WRAP_HOST(getvalues),
    GS_WRAP(multtranspose, MatMultTranspose_GPUStream),
    GS_WRAP(multtransposeadd, MatMultTransposeAdd_GPUStream),
    GS_WRAP_HOST(multhermitiantranspose),
    GS_WRAP_HOST(multhermitiantransposeadd),
    GS_WRAP_HOST(multdiagonalblock),
    GS_WRAP_HOST(lufactor),
    GS_WRAP_HOST(ilufactor),
    GS_WRAP_HOST(sor),
    GS_WRAP_HOST(norm),
    GS_WRAP_HOST(zerorows),
    GS_WRAP_HOST(zerorowscolumns),
    GS_WRAP(createsubmatrices, MatCreateSubMatrices_GPUStream),
    GS_WRAP_HOST(createsubmatricesmpi),
    GS_WRAP_HOST(createsubmatrix),
    GS_WRAP(getdiagonalblock, MatGetDiagonalBlock_GPUStream),
    GS_WRAP_HOST(diagonalset),
    GS_WRAP(permute, MatPermute_GPUStream),
    GS_WRAP(increaseoverlap, MatIncreaseOverlap_GPUStream),
    GS_WRAP_HOST(getrowmax),
    GS_WRAP_HOST(getrowmaxabs),
    GS_WRAP_HOST(getrowmin),
    GS_WRAP_HOST(getrowminabs),
    GS_WRAP_HOST(fdcoloringapply),
    GS_WRAP_HOST(setvaluesrow),
    GS_WRAP_HOST(conjugate),
    GS_WRAP_HOST(realpart),
    GS_WRAP_HOST(imaginarypart),
    GS_WRAP_HOST(getmultiprocblock),
    GS_WRAP_HOST(getcolumnreductions),
    GS_WRAP_HOST(invertblockdiagonal),
    GS_WRAP_HOST(invertvariableblockdiagonal),
    GS_WRAP_HOST(transcoloringapplysptoden),
    GS_WRAP_HOST(transcoloringapplydentosp),
    GS_WRAP_HOST(findzerodiagonals),
    GS_WRAP_HOST(findnonzerorows),
    GS_WRAP_HOST(setrandom),
    GS_WRAP_HOST(load),
    GS_WRAP_HOST(issymmetric),
    GS_WRAP_HOST(ishermitian),
    GS_WRAP_HOST(creatempimatconcatenateseqmat),
#if defined(GPUSTREAM_PETSC_MATOPS_ELIMINATEZEROS)
    GS_WRAP_HOST(eliminatezeros),
#endif
#if defined(GPUSTREAM_PETSC_MATOPS_GETROWSUMABS)
    GS_WRAP_HOST(getrowsumabs),
#endif
    GS_WRAP(getrowij, MatGetRowIJ_GPUStream),
    GS_WRAP_HOST(equal),
    GS_WRAP_HOST(copy),
    GS_WRAP(assemblybegin, MatAssemblyBegin_GPUStream),
    GS_WRAP(assemblyend, MatAssemblyEnd_GPUStream),
    GS_WRAP(setoption, MatSetOption_GPUStream),
    GS_WRAP(scale, MatScale_GPUStream),
    GS_WRAP(shift, MatShift_GPUStream),
    GS_WRAP(diagonalscale, MatDiagonalScale_GPUStream),
    GS_WRAP(getdiagonal, MatGetDiagonal_GPUStream),
    GS_WRAP(axpy, MatAXPY_GPUStream),
    GS_WRAP(zeroentries, MatZeroEntries_GPUStream),
};

/* Each AIJ operation of the table that A has goes behind its wrapper (again, where AIJ chose another since): not
   while a hash table assembles A, whose operations AIJ puts back, ours among them, at its first assembly */
static PetscErrorCode MatGPUStreamWrapOps_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
#if defined(GPUSTREAM_PETSC_MAT_HASH_ACTIVE)
  if (A->hash_active) PetscFunctionReturn(PETSC_SUCCESS);
#endif
  for (size_t k = 0; k < sizeof(GSWrappedOps) / sizeof(GSWrappedOps[0]); k++) {
    GSFn *slot = (GSFn *)((char *)A->ops + GSWrappedOps[k].offset), *base = (GSFn *)((char *)&gs->base + GSWrappedOps[k].offset);
    if (*slot && *slot != GSWrappedOps[k].wrapper) {
      *base = *slot;
      *slot = GSWrappedOps[k].wrapper;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's operations back where the wrappers stand (from: the data whose base operations they called) */
static void MatGPUStreamUnwrapOps_Private(Mat A, const Mat_GPUStream *from)
{
  for (size_t k = 0; k < sizeof(GSWrappedOps) / sizeof(GSWrappedOps[0]); k++) {
    GSFn *slot = (GSFn *)((char *)A->ops + GSWrappedOps[k].offset);
    if (*slot == GSWrappedOps[k].wrapper) *slot = *(const GSFn *)((const char *)&from->base + GSWrappedOps[k].offset);
  }
}

/* AIJ's functions composed on the matrix that read or write the values: MatStoreValues(), MatRetrieveValues() (which
   moves no object state: the state moves here, so that the device follows) and MatDiagonalScaleLocal() */
static PetscErrorCode MatStoreValues_GPUStream(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall((*((Mat_GPUStream *)A->spptr)->storevalues)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRetrieveValues_GPUStream(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall((*((Mat_GPUStream *)A->spptr)->retrievevalues)(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalScaleLocal_GPUStream(Mat A, Vec s)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall((*((Mat_GPUStream *)A->spptr)->diagonalscalelocal)(A, s));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define GS_NCOMPOSED 3
static const char *const GSComposedValueOps[GS_NCOMPOSED] = {"MatStoreValues_C", "MatRetrieveValues_C", "MatDiagonalScaleLocal_C"};

/* Where AIJ composed them, ours stand in for them (save: record AIJ's first) */
static PetscErrorCode MatGPUStreamWrapComposed_Private(Mat A)
{
  Mat_GPUStream *gs                          = (Mat_GPUStream *)A->spptr;
  PetscErrorCode (*f[GS_NCOMPOSED])(void)    = {NULL, NULL, NULL};
  PetscErrorCode (*ours[GS_NCOMPOSED])(void) = {(PetscErrorCode(*)(void))MatStoreValues_GPUStream, (PetscErrorCode(*)(void))MatRetrieveValues_GPUStream, (PetscErrorCode(*)(void))MatDiagonalScaleLocal_GPUStream};

  PetscFunctionBegin;
  for (int k = 0; k < GS_NCOMPOSED; k++) {
    PetscCall(PetscObjectQueryFunction((PetscObject)A, GSComposedValueOps[k], &f[k]));
    if (f[k] == ours[k]) f[k] = NULL; /* a header that kept our functions: AIJ's are gone with its data */
  }
  gs->storevalues        = (PetscErrorCode(*)(Mat))f[0];
  gs->retrievevalues     = (PetscErrorCode(*)(Mat))f[1];
  gs->diagonalscalelocal = (PetscErrorCode(*)(Mat, Vec))f[2];
  for (int k = 0; k < GS_NCOMPOSED; k++)
    if (f[k]) PetscCall(PetscObjectComposeFunction((PetscObject)A, GSComposedValueOps[k], ours[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's composed functions back where ours stand */
static PetscErrorCode MatGPUStreamUnwrapComposed_Private(Mat A, const Mat_GPUStream *from)
{
  PetscErrorCode (*aij[GS_NCOMPOSED])(void)  = {(PetscErrorCode(*)(void))from->storevalues, (PetscErrorCode(*)(void))from->retrievevalues, (PetscErrorCode(*)(void))from->diagonalscalelocal};
  PetscErrorCode (*ours[GS_NCOMPOSED])(void) = {(PetscErrorCode(*)(void))MatStoreValues_GPUStream, (PetscErrorCode(*)(void))MatRetrieveValues_GPUStream, (PetscErrorCode(*)(void))MatDiagonalScaleLocal_GPUStream};

  PetscFunctionBegin;
  for (int k = 0; k < GS_NCOMPOSED; k++) {
    PetscErrorCode (*f)(void) = NULL;
    PetscCall(PetscObjectQueryFunction((PetscObject)A, GSComposedValueOps[k], &f));
    if (f && f == ours[k]) PetscCall(PetscObjectComposeFunction((PetscObject)A, GSComposedValueOps[k], aij[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Turns a SeqAIJ or MPIAIJ matrix into a gpustream one in place; its host arrays are kept as they are */
static PetscErrorCode MatAIJToGPUStream_Private(Mat A)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  PetscCall(GSKokkosInitialize());
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
  gs->shared            = GS_HALO_SHARED_AUTO;
  PetscCall(PetscStrncpy(gs->vectype, "auto", sizeof(gs->vectype)));
  gs->pinned = GSOnDevice();
  gs->aij    = *A->ops;
  gs->base   = *A->ops;
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    if (!MatViewBase[size > 1]) MatViewBase[size > 1] = A->ops->view;
    if (!GSAIJOpsSet[size > 1]) {
      GSAIJOps[size > 1]    = *A->ops;
      GSAIJOpsSet[size > 1] = PETSC_TRUE;
    }
  }
  A->spptr               = gs;
  A->ops->mult           = MatMult_GPUStream;
  A->ops->multadd        = MatMultAdd_GPUStream;
  A->ops->view           = MatView_GPUStream;
  A->ops->assemblyend    = MatAssemblyEnd_GPUStream;
  A->ops->destroy        = MatDestroy_GPUStream;
  A->ops->setfromoptions = MatSetFromOptions_GPUStream;
  A->ops->duplicate      = MatDuplicate_GPUStream;
  if (gs->aij.creategraph) A->ops->creategraph = MatCreateGraph_GPUStream;
  A->ops->productsetfromoptions = MatProductSetFromOptions_GPUStream_AIJ;
  if (gs->aij.transpose) A->ops->transpose = MatTranspose_GPUStream;
  if (gs->aij.transposesymbolic) A->ops->transposesymbolic = MatTransposeSymbolic_GPUStream;
  A->ops->convert = MatConvert_GPUStream_Any;
  A->ops->getvecs = MatCreateVecs_GPUStream;
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamProductAIJ[i], MatProductSetFromOptions_GPUStream_AIJ));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], i < 2 ? MatConvert_GPUStream_AIJ : MatConvert_AIJ_GPUStream));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_seqdense_C", MatProductSetFromOptions_GPUStream_Dense));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_gpustream_mpidense_C", MatProductSetFromOptions_GPUStream_Dense));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", MatProductSetFromOptions_GPUStream_Any));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &gs->setpreallocationcoo));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &gs->setvaluescoo));
  if (gs->setpreallocationcoo && gs->setvaluescoo) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_GPUStream));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", MatSetValuesCOO_GPUStream));
  }
  PetscCall(MatGPUStreamWrapOps_Private(A));
  PetscCall(MatGPUStreamWrapComposed_Private(A));
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

/* In place, the values come to the host arrays first */
static PetscErrorCode MatGPUStreamToAIJValues_Private(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamSyncHost_Private(A));
  PetscCall(MatGPUStreamToAIJ_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_GPUStream_AIJ(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_Private(A, reuse, B, MatGPUStreamToAIJValues_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATGPUSTREAM - MATGPUSTREAM = "gpustream" - A sparse matrix whose SpMV runs on a GPU through Kokkos.

   The matrix is assembled exactly like `MATAIJ`: it is a `MATSEQAIJ` on one MPI process and a `MATMPIAIJ` on several,
   whose host arrays hold the nonzero pattern, so every AIJ operation works. The CSR is mirrored in device memory at
   each final assembly; `MatMult()`, `MatMultAdd()` and, on a resident matrix, `MatMultTranspose()` and the value
   operations run there. A matrix larger than its device budget streams its rows from pinned host memory.

   Options Database Keys:
+  -mat_type gpustream - selects this type in `MatSetFromOptions()`
.  -mat_gpustream_mode <auto,resident,stream> - auto streams when the CSR and vectors exceed the budget
.  -mat_gpustream_max_device_bytes <bytes> - device memory the matrix may use (default: the free memory less a reserve)
.  -mat_gpustream_buffers <2> - device buffers the streamed subdivisions rotate through
.  -mat_gpustream_subdivisions <n> - number of streamed subdivisions (default: chosen by a model of the product)
.  -mat_gpustream_overlap <true> - overlap the copy of a subdivision with the SpMV of the previous one
.  -mat_gpustream_kernel <auto,thread,warp> - the SpMV kernel: a thread or a warp per row
.  -mat_gpustream_tile_size <n> - `MatMult()` by tiles of up to n entries staged in scratch memory (0: none)
.  -mat_gpustream_format <auto,csr,block> - device storage: CSR, or block column indices for block sizes 2 to 6
.  -mat_gpustream_halo_shared <auto,false,true> - halo values written into the buffers of neighbours on this node (CUDA IPC
                                                 on a GPU, an MPI shared-memory window on the host), else MPI messages
.  -mat_gpustream_device_mpi <auto,false,true> - halo messages between device buffers, or through pinned host buffers
.  -mat_gpustream_vec_type <auto,VecType> - the vector type `MatCreateVecs()` returns
-  -mat_gpustream_pinned_vecs <true with a GPU> - host vectors of `MatCreateVecs()` in pinned memory

   Level: beginner

   Notes:
   Values set on the device (`MatSetValuesCOO()`, `MatScale()`, `MatShift()`, ...) leave the host arrays stale until
   a host operation needs them; they are then copied back once. Running out of device memory is an error of
   `MatAssemblyEnd()` (`PETSC_ERR_MEM`). Every PETSc PC and solver package works on it, as on `MATAIJ`; products of
   gpustream matrices are gpustream matrices (on one process `A B`, `A^T B` and `P^T A P` the plugin's own: the symbolic
   phase from the host patterns, the numeric phase on the device), and `MATSOLVERGPUSTREAM` factors or solves on the
   device. A new option
   value takes effect at the next assembly or product. README.md describes all of it.

   References:
+  * - O. A. Fagerlund, T. Kitayama, G. Hashimoto, H. Okuda, Effect of GPU communication-hiding for SpMV using OpenACC
-  * - V. Cardellini, A. Fanfarillo, S. Filippone, Sparse matrix computations on clusters with GPGPUs

.seealso: `MatCreateGPUStream()`, `MATAIJ`, `KSPPIPECGFUSED`, `KSPPIPEBCGSF`, `KSPSGMRESF`
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
