/* MATGPUSTREAM: a SeqAIJ matrix whose CSR is mirrored in device memory (Kokkos views) for SpMV.

   The host AIJ arrays stay the master copy: assembly, preallocation, MatSetValues and every AIJ operation work
   unchanged on them. The device copy is refreshed lazily, when a device operation finds that the host changed:
   the whole CSR when the nonzero pattern changed, the values alone (no reallocation) otherwise. */
#include <petsc/private/matimpl.h>
#include "../../sys/gpustreamimpl.h"

PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat); /* in PETSc's aij.h, which PETSc does not install */

typedef struct {
  GSDeviceMat      dA;
  PetscObjectState nzstate, state; /* host states the device copy reflects */
  /* SeqAIJ's operations that ours wrap, restored when converting back to AIJ */
  PetscErrorCode (*mult)(Mat, Vec, Vec);
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec);
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*destroy)(Mat);
} Mat_GPUStream;

static PetscErrorCode MatConvert_SeqAIJ_GPUStream(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_GPUStream_SeqAIJ(Mat, MatType, MatReuse, Mat *);

PetscErrorCode MatGPUStreamGetDeviceMat(Mat A, GSDeviceMat *dA)
{
  Mat_GPUStream     *gs = (Mat_GPUStream *)A->spptr;
  PetscObjectState   state;
  const PetscInt    *ia, *ja;
  const PetscScalar *a;
  PetscInt           m;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "Not for an unassembled matrix: call MatAssemblyBegin/End() first");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!gs->dA || gs->nzstate != A->nonzerostate || gs->state != state) {
    PetscCall(PetscLogEventBegin(GPUS_MatSync, A, 0, 0, 0));
    PetscCall(MatSeqAIJGetArrayRead(A, &a));
    if (gs->dA && gs->nzstate == A->nonzerostate) {
      PetscCall(GSDeviceMatSetValues(gs->dA, a));
    } else {
      PetscCall(GSDeviceMatDestroy(&gs->dA));
      PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
      PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
      PetscCall(GSDeviceMatCreate(m, A->cmap->n, ia, ja, a, &gs->dA));
      PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    }
    PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
    gs->nzstate = A->nonzerostate;
    gs->state   = state;
    PetscCall(PetscLogEventEnd(GPUS_MatSync, A, 0, 0, 0));
  }
  *dA = gs->dA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_GPUStream(Mat A, Vec x, Vec z, Vec y)
{
  GSDeviceMat        dA;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamGetDeviceMat(A, &dA));
  PetscCall(PetscLogEventBegin(GPUS_MatMult, A, x, y, 0));
  PetscCall(VecGetArrayRead(x, &xa));
  if (z) PetscCall(VecGetArrayRead(z, &za));
  if (z == y) { /* y = A x + y: read y before overwriting it */
    PetscCall(VecGetArray(y, &ya));
    PetscCall(GSDeviceMatMult(dA, xa, ya, ya));
    PetscCall(VecRestoreArray(y, &ya));
  } else {
    PetscCall(VecGetArrayWrite(y, &ya));
    PetscCall(GSDeviceMatMult(dA, xa, za, ya));
    PetscCall(VecRestoreArrayWrite(y, &ya));
  }
  if (z) PetscCall(VecRestoreArrayRead(z, &za));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogEventEnd(GPUS_MatMult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_GPUStream(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_GPUStream(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_GPUStream(Mat A, PetscViewer viewer)
{
  Mat_GPUStream    *gs = (Mat_GPUStream *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(gs->view(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  if (A->assembled) {
    GSDeviceMat    dA;
    PetscInt       vlen, team, league;
    PetscLogDouble mbytes, sbytes;

    PetscCall(MatGPUStreamGetDeviceMat(A, &dA));
    PetscCall(GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league));
    PetscCall(GSDeviceMatGetMemory(dA, &mbytes, &sbytes));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR %.6g MB in device memory (+ %.6g MB staging for host vectors)\n", PetscGPUStreamExecutionSpace(), mbytes / 1048576.0, sbytes / 1048576.0));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel vector-per-row, %" PetscInt_FMT " lanes per row, %" PetscInt_FMT " rows per team, %" PetscInt_FMT " teams\n", vlen, team, league));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: not assembled, nothing in device memory yet\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drops the device side and turns A back into a plain SeqAIJ matrix */
static PetscErrorCode MatGPUStreamToSeqAIJ_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;

  PetscFunctionBegin;
  PetscCall(GSDeviceMatDestroy(&gs->dA));
  A->ops->mult    = gs->mult;
  A->ops->multadd = gs->multadd;
  A->ops->view    = gs->view;
  A->ops->destroy = gs->destroy;
  PetscCall(PetscFree(A->spptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_gpustream_seqaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_gpustream_C", NULL));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_GPUStream(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUStreamToSeqAIJ_Private(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Turns a SeqAIJ matrix into a gpustream one in place; its host arrays are kept as they are */
static PetscErrorCode MatSeqAIJToGPUStream_Private(Mat A)
{
  Mat_GPUStream *gs;

  PetscFunctionBegin;
  PetscCall(PetscGPUStreamKokkosInitialize());
  PetscCall(PetscNew(&gs));
  gs->mult        = A->ops->mult;
  gs->multadd     = A->ops->multadd;
  gs->view        = A->ops->view;
  gs->destroy     = A->ops->destroy;
  A->spptr        = gs;
  A->ops->mult    = MatMult_GPUStream;
  A->ops->multadd = MatMultAdd_GPUStream;
  A->ops->view    = MatView_GPUStream;
  A->ops->destroy = MatDestroy_GPUStream;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_gpustream_seqaij_C", MatConvert_GPUStream_SeqAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_gpustream_C", MatConvert_SeqAIJ_GPUStream));
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

static PetscErrorCode MatConvert_SeqAIJ_GPUStream(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_Private(A, reuse, B, MatSeqAIJToGPUStream_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_GPUStream_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_Private(A, reuse, B, MatGPUStreamToSeqAIJ_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATGPUSTREAM - MATGPUSTREAM = "gpustream" - A sparse matrix whose SpMV runs on a GPU through Kokkos.

   The matrix is assembled exactly like `MATSEQAIJ` (`MatSetValues()`, `MatSeqAIJSetPreallocation()`,
   `MatXAIJSetPreallocation()`, `DMCreateMatrix()` with `-dm_mat_type gpustream`); the host AIJ arrays stay the master
   copy, so every AIJ operation works. The CSR arrays are mirrored once in the memory of Kokkos' default execution
   space and refreshed when the host changes: values alone when the nonzero pattern is the same (no reallocation),
   everything otherwise. `MatMult()` and `MatMultAdd()` run on the device; the Krylov methods of this plugin
   (`KSPPIPECGFUSED`) fuse the device SpMV into their kernels and keep their vectors on the device.

   Options Database Key:
.  -mat_type gpustream - selects this type in `MatSetFromOptions()`

   Level: beginner

   Notes:
   Runs on one MPI process for now; on more it stops with an error.
   `-mat_view ::ascii_info` shows the execution space, the device memory in use and the SpMV launch shape.

.seealso: `MatCreateGPUStream()`, `KSPPIPECGFUSED`, `MATSEQAIJ`
M*/
PETSC_EXTERN PetscErrorCode MatCreate_GPUStream(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATGPUSTREAM runs on one MPI process for now, not %d; use -mat_type aij on several processes", (int)size);
  PetscCall(MatCreate_SeqAIJ(A));
  PetscCall(MatSeqAIJToGPUStream_Private(A));
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
