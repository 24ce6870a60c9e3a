/* MATGPUSTREAM: an AIJ matrix (SeqAIJ on one rank, MPIAIJ on several) whose CSR is mirrored in device memory
   (Kokkos views) for SpMV; on several ranks the diagonal and off-diagonal blocks, plus the halo exchange.

   The host AIJ arrays stay the master copy: assembly, preallocation, MatSetValues and every AIJ operation work
   unchanged on them. The device copy is refreshed lazily, when a device operation finds that the host changed:
   the whole CSR when the nonzero pattern changed, the values alone (no reallocation) otherwise. */
#include <petsc/private/matimpl.h>
#include "../../sys/gpustreamimpl.h"

/* in PETSc's aij.h and mpiaij.h, which PETSc does not install */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);

typedef struct {
  GSDeviceMat      dA, dB; /* the CSR (diagonal block) and, on several ranks, the off-diagonal block */
  GSHalo           halo;
  PetscObjectState nzstate, state; /* host states the device copy reflects */
  /* SeqAIJ's operations that ours wrap, restored when converting back to AIJ */
  PetscErrorCode (*mult)(Mat, Vec, Vec);
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec);
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*destroy)(Mat);
} Mat_GPUStream;

static PetscErrorCode MatConvert_AIJ_GPUStream(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_GPUStream_AIJ(Mat, MatType, MatReuse, Mat *);

/* Copies a SeqAIJ block to the device, or only its values when the pattern is known to be the same; rowlist: keep
   the list of nonempty rows (off-diagonal blocks) */
static PetscErrorCode MatGPUStreamSyncBlock_Private(Mat S, PetscBool valuesonly, PetscBool rowlist, GSDeviceMat *d)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *a;
  PetscInt           m;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayRead(S, &a));
  if (valuesonly)
    PetscCall(GSDeviceMatSetValues(*d, a));
  else {
    PetscCall(GSDeviceMatDestroy(d));
    PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot get the CSR of the host matrix");
    PetscCall(GSDeviceMatCreate(m, S->cmap->n, ia, ja, a, rowlist, d));
    PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(S, &a));
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

PetscErrorCode MatGPUStreamGetDeviceMat(Mat A, GSDeviceMat *dA, GSDeviceMat *dB, GSHalo *halo)
{
  Mat_GPUStream   *gs = (Mat_GPUStream *)A->spptr;
  PetscObjectState state;
  PetscMPIInt      size;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "Not for an unassembled matrix: call MatAssemblyBegin/End() first");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (!gs->dA || gs->nzstate != A->nonzerostate || gs->state != state) {
    const PetscBool valuesonly = (PetscBool)(gs->dA && gs->nzstate == A->nonzerostate);

    PetscCall(PetscLogEventBegin(GPUS_MatSync, A, 0, 0, 0));
    if (size == 1)
      PetscCall(MatGPUStreamSyncBlock_Private(A, valuesonly, PETSC_FALSE, &gs->dA));
    else {
      Mat             Ad, Ao;
      const PetscInt *garray;

      PetscCall(MatGPUStreamGetBlocks_Private(A, &Ad, &Ao, &garray));
      PetscCall(MatGPUStreamSyncBlock_Private(Ad, valuesonly, PETSC_FALSE, &gs->dA));
      PetscCall(MatGPUStreamSyncBlock_Private(Ao, valuesonly, PETSC_TRUE, &gs->dB));
      if (!valuesonly) {
        PetscCall(GSHaloDestroy(&gs->halo));
        PetscCall(GSHaloCreate(PetscObjectComm((PetscObject)A), A->cmap->n, A->cmap->range, Ao->cmap->n, garray, &gs->halo));
      }
    }
    gs->nzstate = A->nonzerostate;
    gs->state   = state;
    PetscCall(PetscLogEventEnd(GPUS_MatSync, A, 0, 0, 0));
  }
  *dA = gs->dA;
  if (dB) *dB = gs->dB;
  if (halo) *halo = gs->halo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_GPUStream(Mat A, Vec x, Vec z, Vec y)
{
  GSDeviceMat        dA, dB;
  GSHalo             halo;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(MatGPUStreamGetDeviceMat(A, &dA, &dB, &halo));
  PetscCall(PetscLogEventBegin(GPUS_MatMult, A, x, y, 0));
  PetscCall(VecGetArrayRead(x, &xa));
  if (z) PetscCall(VecGetArrayRead(z, &za));
  if (z == y) { /* y = A x + y: read y before overwriting it */
    PetscCall(VecGetArray(y, &ya));
    PetscCall(GSDeviceMatMult(dA, dB, halo, xa, ya, ya));
    PetscCall(VecRestoreArray(y, &ya));
  } else {
    PetscCall(VecGetArrayWrite(y, &ya));
    PetscCall(GSDeviceMatMult(dA, dB, halo, xa, za, ya));
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
    GSDeviceMat    dA, dB;
    GSHalo         halo;
    PetscInt       vlen, team, league, sizes[3] = {0, 0, 0};
    PetscLogDouble bytes[2], bbytes[2] = {0, 0};
    PetscMPIInt    size;
    MPI_Comm       comm = PetscObjectComm((PetscObject)A);

    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCall(MatGPUStreamGetDeviceMat(A, &dA, &dB, &halo));
    PetscCall(GSDeviceMatGetLaunchShape(dA, &vlen, &team, &league));
    PetscCall(GSDeviceMatGetMemory(dA, &bytes[0], &bytes[1]));
    if (dB) PetscCall(GSDeviceMatGetMemory(dB, &bbytes[0], &bbytes[1]));
    if (halo) PetscCall(GSHaloGetSizes(halo, &sizes[0], &sizes[1], &sizes[2]));
    bytes[0] += bbytes[0];
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bytes, 2, MPIU_PETSCLOGDOUBLE, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sizes, 3, MPIU_INT, MPI_SUM, comm));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: resident on %s, CSR %.6g MB in device memory (+ %.6g MB staging for host vectors)\n", PetscGPUStreamExecutionSpace(), bytes[0] / 1048576.0, bytes[1] / 1048576.0));
    if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: %d processes; each product exchanges %" PetscInt_FMT " ghost values in %" PetscInt_FMT " messages in all\n", (int)size, sizes[1], sizes[2] / 2));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: SpMV kernel vector-per-row, %" PetscInt_FMT " lanes per row, %" PetscInt_FMT " rows per team, %" PetscInt_FMT " teams\n", vlen, team, league));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPUStream: not assembled, nothing in device memory yet\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const MatGPUStreamConverters[] = {"MatConvert_gpustream_seqaij_C", "MatConvert_gpustream_mpiaij_C", "MatConvert_seqaij_gpustream_C", "MatConvert_mpiaij_gpustream_C"};

/* Drops the device side and turns A back into a plain SeqAIJ or MPIAIJ matrix */
static PetscErrorCode MatGPUStreamToAIJ_Private(Mat A)
{
  Mat_GPUStream *gs = (Mat_GPUStream *)A->spptr;
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCall(GSDeviceMatDestroy(&gs->dA));
  PetscCall(GSDeviceMatDestroy(&gs->dB));
  PetscCall(GSHaloDestroy(&gs->halo));
  A->ops->mult    = gs->mult;
  A->ops->multadd = gs->multadd;
  A->ops->view    = gs->view;
  A->ops->destroy = gs->destroy;
  PetscCall(PetscFree(A->spptr));
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], NULL));
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
  gs->mult        = A->ops->mult;
  gs->multadd     = A->ops->multadd;
  gs->view        = A->ops->view;
  gs->destroy     = A->ops->destroy;
  A->spptr        = gs;
  A->ops->mult    = MatMult_GPUStream;
  A->ops->multadd = MatMultAdd_GPUStream;
  A->ops->view    = MatView_GPUStream;
  A->ops->destroy = MatDestroy_GPUStream;
  for (int i = 0; i < 4; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, MatGPUStreamConverters[i], i < 2 ? MatConvert_GPUStream_AIJ : MatConvert_AIJ_GPUStream));
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
   copy, so every AIJ operation works. The CSR arrays are mirrored once in the memory of Kokkos' default execution
   space and refreshed when the host changes: values alone when the nonzero pattern is the same (no reallocation),
   everything otherwise. `MatMult()` and `MatMultAdd()` run on the device; the Krylov methods of this plugin
   (`KSPPIPECGFUSED`) fuse the device SpMV into their kernels and keep their vectors on the device.

   Options Database Key:
.  -mat_type gpustream - selects this type in `MatSetFromOptions()`

   Level: beginner

   Notes:
   On several processes each one holds its diagonal and off-diagonal blocks on the device. A product gathers the
   values other processes need on the device (index lists built once per nonzero pattern), exchanges them with MPI
   between pinned host buffers, and runs the diagonal-block SpMV while the messages travel; the off-diagonal block
   follows. Each process should drive its own GPU (one process per GPU).
   `-mat_view ::ascii_info` shows the execution space, the device memory in use, the halo and the SpMV launch shape.

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
