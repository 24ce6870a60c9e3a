/* Internal declarations shared by the C (PETSc-facing) and C++ (Kokkos) parts of the plugin. */
#pragma once

#include <petscgpustream.h>

#if !defined(PETSC_SUCCESS) /* PETSc < 3.19 returns plain 0 */
#  define PETSC_SUCCESS 0
#endif

/* The options context XXXSetFromOptions_ implementations receive (a pointer type itself in newer PETSc; CMake checks) */
#if defined(GPUSTREAM_PETSC_OPTIONITEMS_IS_POINTER)
typedef PetscOptionItems GSOptionItems;
#else
typedef PetscOptionItems *GSOptionItems;
#endif

/* Checks of an option's value made before PETSc reads it (src/sys/options.c): a value PETSc cannot read as the kind,
   or none of the list's names (n of them; n < 0: an enum's list), is PETSC_ERR_ARG_WRONG naming the option with the
   object's prefix. An error inside an options block (PetscOptionsObject, or NULL outside one) ends the block first, as
   GSOptionsCheck() does for a range check, so that it leaves nothing allocated. */
typedef enum { GS_OPTION_BOOL, GS_OPTION_INT, GS_OPTION_REAL, GS_OPTION_LIST } GSOptionKind;
PETSC_INTERN PetscErrorCode GSOptionsCheckValue(GSOptionItems, PetscObject, const char[], GSOptionKind, const char *const[], PetscInt);
PETSC_INTERN PetscErrorCode GSOptionsAbandon(GSOptionItems);
/* The options prefix of obj, or "" (also for NULL): the option names of messages, "-%smat_gpustream_buffers" */
PETSC_INTERN const char *GSPrefix(PetscObject);
#define GSOptionsCheck(items, cond, comm, code, ...)                                                                                                                                                                                                     \
  do {                                                                                                                                                                                                                                                   \
    if (PetscUnlikely(!(cond))) {                                                                                                                                                                                                                        \
      PetscCall(GSOptionsAbandon(items));                                                                                                                                                                                                                \
      SETERRQ(comm, code, __VA_ARGS__);                                                                                                                                                                                                                  \
    }                                                                                                                                                                                                                                                    \
  } while (0)

/* Any function, as operation tables and composed functions hold them */
typedef void (*GSFn)(void);

/* A gpustream matrix handed to PETSc code that reads AIJ's data wears its base type name, its host arrays current
   (src/mat/gpustream/gpustream.c); the solver packages, PCs, coarsenings and colorings that check the name take
   gpustream matrices so (src/mat/gpustream/aijreaders.c) */
PETSC_INTERN PetscErrorCode MatGPUStreamWearBase(Mat, PetscBool *);
PETSC_INTERN PetscErrorCode MatGPUStreamWearOwn(Mat, PetscBool, PetscErrorCode);
PETSC_INTERN PetscErrorCode MatGPUStreamRegisterAIJReaders(void);
/* B, a gpustream matrix PETSc's code made for `from` (PCGAMG's prolongator, AIJ's submatrices), takes from's settings
   (options, vector type, and with it the binding) where both are gpustream matrices */
PETSC_INTERN PetscErrorCode MatGPUStreamTakeSettings(Mat, Mat);
/* Registers MATSOLVERGPUSTREAM's device ILU(0) and ICC(0) (factor.c), where the plugin has Kokkos-Kernels */
PETSC_INTERN PetscErrorCode MatSolverTypeRegister_GPUStreamDevice(void);
/* MATSOLVERPETSC's factor of a gpustream matrix (aijreaders.c): SeqAIJ's host factor, whose phases read the matrix's
   host arrays made current, the matrix wearing its base name */
PETSC_INTERN PetscErrorCode MatGetFactor_GPUStream_Host(Mat, MatFactorType, Mat *);
/* Whether A is a gpustream matrix with its device data (a sequential one, for the factors) */
PETSC_INTERN PetscBool MatGPUStreamHasDeviceData(Mat);
/* A's values as a factorization reads them, current: its device array when it is resident (device true: in the
   execution space's memory, addressed as the host CSR), else its host array; give them back with the restore */
PETSC_INTERN PetscErrorCode MatGPUStreamGetFactorValues(Mat, const PetscScalar **, PetscBool *);
PETSC_INTERN PetscErrorCode MatGPUStreamRestoreFactorValues(Mat, const PetscScalar **, PetscBool);

/* Log events, registered once in PetscGPUStreamInitializePackage() */
PETSC_INTERN PetscLogEvent GPUS_MatMult, GPUS_MatSync, GPUS_CopyVec, PCGF_Update, PCGF_SpMVDot, PCGF_Step, PCGF_Dot, PCGF_Reduce, PCGF_Iterations;
PETSC_INTERN PetscLogEvent PBCGSF_Update, PBCGSF_SpMVDot, PBCGSF_Reduce, PBCGSF_Iteration;
PETSC_INTERN PetscLogEvent GPUS_StreamCopy, GPUS_MatMatMult;
PETSC_INTERN PetscLogEvent SGMRESF_Update, SGMRESF_SpMVDot, SGMRESF_Reduce, SGMRESF_Iteration;
PETSC_INTERN PetscLogEvent GPUS_MatSetCOO, GPUS_MatToHost, GPUS_MatMultTranspose, GPUS_ProductSetUp;

/* The noun after a count in views: singular where the count is 1, GSNoun(n, "copy", "copies"). GSNounReal() for a
   value printed with %.<digits>g, singular where that prints 1 (0.9996 and 1.004 with 3 digits). PETSc's %g prints an
   integral value as "1.": views print such values with %.3g, or %.6g for %g's digits. */
static inline const char *GSNoun(PetscInt n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}
static inline const char *GSNounReal(double x, int digits, const char *one, const char *many)
{
  const double h = 0.5 * PetscPowReal(10.0, (PetscReal)(1 - digits));
  return x >= 1.0 - 0.1 * h && x < 1.0 + h ? one : many;
}

/* PetscCall(ierr) on every process of comm: an error on one (an allocation that failed there) becomes an error on all,
   before they go on to collective calls */
PETSC_INTERN PetscErrorCode GSAllOK(MPI_Comm, PetscErrorCode);

/* The vector-access layer: a PETSc vector's array where the plugin's kernels read or write it. With a CUDA build of the
   plugin inside a PETSc with CUDA (3.20 or later), a vector whose current data is in device memory (VECCUDA,
   VECMPICUDA, or any vector PETSc reports as such) gives its device array, and the plugin's stream is ordered after
   PETSc's current stream on get and PETSc's after the plugin's on restore (events, no synchronization); PETSc keeps
   the offload state (a write leaves the device copy current). Any other vector gives its host array. */
typedef enum { GS_ACCESS_READ, GS_ACCESS_WRITE, GS_ACCESS_READWRITE } GSAccess;
typedef struct {
  PetscScalar *array;
  PetscBool    device; /* array is in device memory */
  GSAccess     access;
  PetscBool    memtype; /* got through VecGetArray...AndMemType() */
} GSVecArray;
PETSC_INTERN PetscErrorCode GSVecGetArray(Vec, GSAccess, GSVecArray *);
PETSC_INTERN PetscErrorCode GSVecRestoreArray(Vec, GSVecArray *);
/* The arrays of an operation on several vectors: all in device memory, or all on the host when some are there */
PETSC_INTERN PetscErrorCode GSVecGetArrays(PetscInt, const Vec[], const GSAccess[], GSVecArray[]);
PETSC_INTERN PetscErrorCode GSVecRestoreArrays(PetscInt, const Vec[], GSVecArray[]);
/* The same for a dense matrix's local rows (column-major): in device memory for a device matrix (MATDENSECUDA) */
PETSC_INTERN PetscErrorCode GSMatDenseGetArray(Mat, GSAccess, GSVecArray *);
PETSC_INTERN PetscErrorCode GSMatDenseRestoreArray(Mat, GSVecArray *);
/* n scalars from device memory (after PETSc's current stream's work) to a host array; counted in -log_view */
PETSC_INTERN PetscErrorCode GSCopyToHost(const PetscScalar[], PetscScalar[], PetscCount);
/* Whether an array the caller hands the plugin is in device memory (PetscGetMemType(), with device vectors only:
   elsewhere every array is taken as host memory); if so the plugin's stream is ordered after PETSc's before the
   plugin reads it, and GSDeviceArrayEnd() orders PETSc's stream after the plugin's work on it */
PETSC_INTERN PetscErrorCode GSDeviceArrayBegin(const void *, PetscBool *);
PETSC_INTERN PetscErrorCode GSDeviceArrayEnd(PetscBool);
/* The vector type MatCreateVecs() of a gpustream matrix gives by default: PETSc's CUDA vectors where device arrays are
   read in place (above), else NULL (the AIJ default) */
PETSC_INTERN const char *GSDeviceVecType(void);

/* Host memory the device reaches by DMA (page-locked, cudaHostAlloc() with CUDA; plain memory on host backends), for
   the arrays of the host vectors MatCreateVecs() gives (src/mat/gpustream/hostvecs.c); copies between such arrays and
   the device skip the staging buffers */
PETSC_INTERN PetscErrorCode GSPinnedMalloc(size_t, void **);
PETSC_INTERN PetscErrorCode GSPinnedFree(void *);
/* The host vectors of MatCreateVecs() in pinned memory (-mat_gpustream_pinned_vecs): *v, a standard vector, replaced
   by one of the same layout with a zeroed pinned array (its duplicates are ordinary vectors) */
PETSC_INTERN PetscErrorCode GSVecPin(Vec *);
PETSC_INTERN PetscErrorCode GSVecIsPinned(Vec, PetscBool *);

/* A container's destroy function: from PETSc 3.23 on (PetscContainerSetCtxDestroy()) it is given the address of the
   container's pointer, before (PetscContainerSetUserDestroy()) the pointer; GSContainerPointer(ctx) is the pointer */
#if PETSC_VERSION_GE(3, 23, 0)
#  define GSContainerSetDestroy(c, f) PetscContainerSetCtxDestroy(c, (PetscCtxDestroyFn *)(f))
#  define GSContainerPointer(ctx)     (*(void **)(ctx))
#else
#  define GSContainerSetDestroy(c, f) PetscContainerSetUserDestroy(c, f)
#  define GSContainerPointer(ctx)     (ctx)
#endif
/* Composes ptr on obj under name in a container that destroys it with destroy (given as GSContainerSetDestroy() says)
   when obj lets it go; if that fails, ptr is destroyed at once */
PETSC_INTERN PetscErrorCode GSObjectComposePointer(PetscObject, const char[], void *, PetscErrorCode (*)(void *));

/* The host-device vector copies on this process so far: with a PETSc that has a device, those its log counted (the
   plugin's and PETSc's own, a device vector's data moved for a host operation: -log_view's CpuToGpu and GpuToCpu
   counts); else the plugin's (gs_host_copies). A solver's difference over a solve is what its view reports. */
PETSC_INTERN PetscLogDouble  gs_host_copies;
static inline PetscLogDouble GSLoggedCopies(void)
{
#if defined(PETSC_USE_LOG) && defined(PETSC_HAVE_DEVICE)
  return petsc_ctog_ct + petsc_gtoc_ct;
#else
  return gs_host_copies;
#endif
}
PETSC_INTERN PetscErrorCode GSHostCopiesView(PetscViewer, PetscInt);

/* Kokkos lifetime: initialized on first use unless the program did it, finalized in PetscFinalize() */
PETSC_INTERN PetscErrorCode GSKokkosInitialize(void);
PETSC_INTERN const char    *GSExecutionSpace(void);
/* Whether the execution space runs on a device with memory of its own (else a host backend: Serial, OpenMP, ...) */
PETSC_INTERN PetscBool GSOnDevice(void);

/* The SpMV kernel (-mat_gpustream_kernel): a thread per row, a warp (32 vector lanes) per row, or chosen from the
   mean row length (a warp from 12 entries on); host backends always run one lane (a thread) per row */
typedef enum { GS_KERNEL_AUTO, GS_KERNEL_THREAD, GS_KERNEL_WARP } GSSpMVKernel;
PETSC_INTERN const char *const GSSpMVKernels[];

/* Device storage (-mat_gpustream_format): CSR, or block column indices (one a bs x bs block, values in AIJ's order)
   when the matrix has a block size of 2 to GS_MAX_FORMAT_BS and its pattern is made of full aligned blocks; auto takes the latter
   where it can and MatMult would not use tiles */
typedef enum { GS_FORMAT_AUTO, GS_FORMAT_CSR, GS_FORMAT_BLOCK } GSFormat;
#define GS_MAX_FORMAT_BS 6 /* the largest block size of block column indices */
PETSC_INTERN const char *const GSFormats[];

/* A CSR matrix in device memory (opaque to C). Host arrays in, device kernels inside. */
typedef struct _n_GSDeviceMat *GSDeviceMat;

/* The halo exchange of a matrix distributed by rows (opaque to C): which local entries go to which rank, and where
   the ghost values arrive; built once per nonzero pattern from the off-diagonal block's global column indices */
typedef struct _n_GSHalo *GSHalo;

/* Whether MPI is handed the Kokkos views themselves (-mat_gpustream_device_mpi), and what the MPI says of device memory */
typedef enum { GS_DEVICE_MPI_AUTO, GS_DEVICE_MPI_FALSE, GS_DEVICE_MPI_TRUE } GSDeviceMPI;
PETSC_INTERN const char *const GSDeviceMPIs[];
typedef enum { GS_MPI_DEVICE_UNKNOWN, GS_MPI_DEVICE_NO, GS_MPI_DEVICE_YES } GSMPIDeviceSupport;
PETSC_INTERN PetscErrorCode GSHaloMPIDeviceSupport(GSMPIDeviceSupport *);
/* the option, its matrix's options prefix (NULL: none), whether the halo hands MPI device buffers, and why */
PETSC_INTERN PetscErrorCode GSHaloUseDeviceMPI(GSDeviceMPI, const char[], PetscBool *, const char **);

/* Whether halo values are written straight into the buffers of neighbours on the same node (-mat_gpustream_halo_shared):
   through CUDA IPC on device backends, through an MPI shared-memory window on host ones */
typedef enum { GS_HALO_SHARED_AUTO, GS_HALO_SHARED_FALSE, GS_HALO_SHARED_TRUE } GSHaloShared;
PETSC_INTERN const char *const GSHaloShareds[];
/* How the values of one halo travel */
typedef enum { GS_HALO_PATH_SHARED, GS_HALO_PATH_DEVICE_MPI, GS_HALO_PATH_HOST_MPI } GSHaloPath;

/* comm, local columns, column ownership, ghosts and their global columns, whether MPI gets device buffers
   (GSHaloUseDeviceMPI()), the shared path's option and the matrix's options prefix (its error messages); collective.
   -mat_gpustream_halo_shared true where some neighbour cannot be reached that way is an error on every process. */
PETSC_INTERN PetscErrorCode GSHaloCreate(MPI_Comm, PetscInt, const PetscInt[], PetscInt, const PetscInt[], PetscBool, GSHaloShared, const char[], GSHalo *);
PETSC_INTERN PetscErrorCode GSHaloDestroy(GSHalo *);
PETSC_INTERN PetscErrorCode GSHaloGetSizes(GSHalo, PetscInt *, PetscInt *, PetscInt *);
/* the path of the halo's values and why it was taken */
PETSC_INTERN PetscErrorCode GSHaloGetPath(GSHalo, GSHaloPath *, const char **);

/* m, n, host CSR (ia, ja, a), rowlist (keep the list of nonempty rows: off-diagonal blocks), bs: block column indices
   when above 1, for a pattern GSBlockPatternRow() accepts; tile: entries of MatMult's tiles (GSDeviceMatSetTileSize();
   < 0: chosen from the row lengths) */
PETSC_INTERN PetscErrorCode GSDeviceMatCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscBool, PetscInt, PetscInt, GSDeviceMat *);
/* The first row of the m x n CSR (ia, ja; columns sorted) that breaks the bs x bs block pattern, or -1 if none */
PETSC_INTERN PetscInt       GSBlockPatternRow(PetscInt, PetscInt, const PetscInt[], const PetscInt[], PetscInt);
PETSC_INTERN PetscErrorCode GSDeviceMatGetBlockSize(GSDeviceMat, PetscInt *);
PETSC_INTERN PetscErrorCode GSDeviceMatSetValues(GSDeviceMat, const PetscScalar[]);
/* The values of a resident matrix changed on the device. They are in AIJ's order on both storages (CSR and block column
   indices), so they are addressed as the host arrays are. GetValues copies them into a host array (counted in
   -log_view); AXPY: Y += a X on the same pattern; AXPYSubset: the same where X's pattern lies within Y's, on either
   storage of each (done false, Y unchanged, where an entry of X has no place in Y); the diagonal of the diagonal block
   (entries at local row = local column): HasDiagonal says whether every row has its entry (then Shift adds to them),
   GetDiagonal writes them, 0 where a row has none, into a host array or, with device true, one in the execution space's
   memory; DiagonalScale: A = diag(l) A diag(r), l and r host or device arrays (device flags), NULL for none, the
   off-diagonal block B's columns scaled by the ghost values of r that the halo H brings */
PETSC_INTERN PetscErrorCode GSDeviceMatGetValues(GSDeviceMat, PetscScalar[]);
PETSC_INTERN PetscErrorCode GSDeviceMatScale(GSDeviceMat, PetscScalar);
PETSC_INTERN PetscErrorCode GSDeviceMatZeroValues(GSDeviceMat);
PETSC_INTERN PetscErrorCode GSDeviceMatAXPY(GSDeviceMat, PetscScalar, GSDeviceMat);
PETSC_INTERN PetscErrorCode GSDeviceMatAXPYSubset(GSDeviceMat, PetscScalar, GSDeviceMat, PetscBool *);
PETSC_INTERN PetscErrorCode GSDeviceMatGetSizes(GSDeviceMat, PetscInt *, PetscInt *, PetscCount *);
PETSC_INTERN PetscErrorCode GSDeviceMatHasDiagonal(GSDeviceMat, PetscBool *);
PETSC_INTERN PetscErrorCode GSDeviceMatShift(GSDeviceMat, PetscScalar);
PETSC_INTERN PetscErrorCode GSDeviceMatGetDiagonal(GSDeviceMat, PetscScalar[], PetscBool);
PETSC_INTERN PetscErrorCode GSDeviceMatDiagonalScale(GSDeviceMat, GSDeviceMat, GSHalo, const PetscScalar[], PetscBool, const PetscScalar[], PetscBool);

/* Coordinate (COO) assembly on the device (opaque to C): where each of the n entries (i, j) a process gives goes in
   the CSR of its matrix, built once per MatSetPreallocationCOO() and kept in device memory. Entries with a negative
   index are ignored; entries of rows another process owns are sent to it once per MatSetValuesCOO() (their values
   only: MPI_Alltoallv through host buffers), where they join the sum. Create: comm, n, i, j (global indices), the row
   and column ownership ranges (size + 1 each), the local rows m, the diagonal block's CSR (ia, ja: local columns),
   and on several processes the off-diagonal block's (columns: indices into garray, its nghost sorted global
   columns); NULL there on one process. Collective. */
typedef struct _n_GSCOOMap *GSCOOMap;
PETSC_INTERN PetscErrorCode GSCOOMapCreate(MPI_Comm, PetscCount, const PetscInt[], const PetscInt[], const PetscInt[], const PetscInt[], PetscInt, const PetscInt[], const PetscInt[], const PetscInt[], const PetscInt[], PetscInt, const PetscInt[],
                                           GSCOOMap *);
PETSC_INTERN PetscErrorCode GSCOOMapDestroy(GSCOOMap *);
/* The entries' number, the nonzeros of the two blocks it was built for, and its device bytes */
PETSC_INTERN PetscErrorCode GSCOOMapGetSizes(GSCOOMap, PetscCount *, PetscCount *, PetscCount *, PetscLogDouble *);
/* The values of the n entries (host or device memory, see GSDeviceArrayBegin()) into the device CSR of the diagonal
   block A and the off-diagonal block B (NULL on one process): each nonzero becomes the sum of its entries
   (INSERT_VALUES) or gets it added (ADD_VALUES), as AIJ's MatSetValuesCOO() does. Collective where entries cross
   processes. */
PETSC_INTERN PetscErrorCode GSCOOMapSetValues(GSCOOMap, const PetscScalar[], InsertMode, GSDeviceMat, GSDeviceMat);
/* The same with the values in the execution space's memory (the plugin's own arrays) */
PETSC_INTERN PetscErrorCode GSCOOMapSetValuesExec(GSCOOMap, const PetscScalar[], InsertMode, GSDeviceMat, GSDeviceMat);
PETSC_INTERN PetscErrorCode GSDeviceMatDestroy(GSDeviceMat *);
PETSC_INTERN PetscErrorCode GSDeviceMatMult(GSDeviceMat, GSDeviceMat, GSHalo, const PetscScalar[], const PetscScalar[], PetscScalar[]);
/* The same with arrays in the memory of the execution space (device vectors): read and written in place, queued on
   the execution space's stream with nothing waiting for it (z may be y) */
PETSC_INTERN PetscErrorCode GSDeviceMatMultInPlace(GSDeviceMat, GSDeviceMat, GSHalo, const PetscScalar[], const PetscScalar[], PetscScalar[]);
/* y = A^T x (+ z), A the diagonal block and B the off-diagonal one (NULL on one process) whose products with the
   transpose go back to their owners through the halo H; ia, ja, ib, jb: the blocks' host CSR patterns, which make
   the transposes on first use; values: the blocks' values changed since the last call (gathered again). device:
   the arrays are in the execution space's memory (read and written in place), else staged. */
PETSC_INTERN PetscErrorCode GSDeviceMatMultTranspose(GSDeviceMat, const PetscInt[], const PetscInt[], GSDeviceMat, const PetscInt[], const PetscInt[], GSHalo, PetscBool, const PetscScalar[], const PetscScalar[], PetscScalar[], PetscBool);
PETSC_INTERN PetscErrorCode GSDeviceMatGetLaunchShape(GSDeviceMat, PetscInt *, PetscInt *, PetscInt *);
PETSC_INTERN PetscErrorCode GSDeviceMatSetLaunchShape(GSDeviceMat, PetscInt, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode GSDeviceMatSetKernel(GSDeviceMat, GSSpMVKernel);
/* Entries a tile of MatMult's kernel stages (-mat_gpustream_tile_size): one product of a value and x each, 16 KB of
   the 48 KB of team scratch every CUDA device gives a block; larger tiles were not measured */
#define GS_MAX_TILE_SIZE 2048
PETSC_INTERN PetscErrorCode GSDeviceMatSetTileSize(GSDeviceMat, PetscInt);
PETSC_INTERN PetscErrorCode GSDeviceMatGetTileSize(GSDeviceMat, PetscInt *, PetscInt *);
PETSC_INTERN PetscErrorCode GSDeviceMatGetMemory(GSDeviceMat, PetscLogDouble *, PetscLogDouble *);

/* Y = A X for k columns (column-major, leading dimensions ldx >= n, ldy >= m) on a resident matrix (A, and on several
   ranks B and H), one pass over the matrix for all columns (GSStreamPlanMultBlock() streams one) */
PETSC_INTERN PetscErrorCode GSDeviceMatMultBlock(GSDeviceMat, GSDeviceMat, GSHalo, PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);

/* The values array of a device matrix (in the execution space's memory, AIJ's order) and their number; Copy: dst's
   values = src's, both of the same pattern */
PETSC_INTERN PetscErrorCode GSDeviceMatGetValuesArray(GSDeviceMat, PetscScalar **, PetscCount *);
PETSC_INTERN PetscErrorCode GSDeviceMatCopyValues(GSDeviceMat, GSDeviceMat);

/* Level-0 incomplete factors on the device through Kokkos-Kernels (spiluk, sptrsv; opaque to C), where the build has
   it. Create: from the n x n host CSR (ia, ja; columns sorted, every diagonal entry present) of the matrix factored,
   or with symmetric true of the symmetric matrix its upper triangle defines (ICC(0) as ILU(0) of that matrix).
   Numeric: factors the values a (ia[n] of them, A's order; device: in the execution space's memory, else a host
   array), then finds the first row whose pivot fails the test PETSc's factorizations apply (GSPivotTest, with the
   tolerance zeropivot), -1 if none, and the pivot's absolute value. Solve: see GSTriSolve, with b and x in the execution
   space's memory (device) or on the host (staged, one copy each way on a device). GetInfo: entries
   of L (with its unit diagonal) and U, levels, device bytes, and the bytes Kokkos-Kernels 3 allocates at each
   numeric factorization beyond them (0 with later versions, which cut the levels to fit) */
typedef struct _n_GSTriFactor *GSTriFactor;
typedef enum {
  GS_PIVOT_ABS,        /* |pivot| <= zeropivot: no shift (a zero pivot), or MAT_SHIFT_INBLOCKS */
  GS_PIVOT_ABS_ROWSUM, /* |pivot| <= zeropivot times the row's off-diagonal sum: MAT_SHIFT_NONZERO */
  GS_PIVOT_REAL_ROWSUM /* Re(pivot) <= zeropivot times that sum: MAT_SHIFT_POSITIVE_DEFINITE */
} GSPivotTest;
/* Who solves the triangular factors (-mat_gpustream_trisolve): auto (cuSPARSE's SpSV in CUDA builds where it loads,
   else Kokkos-Kernels' sptrsv), kokkoskernels, cusparse (an error where it is not available), jacobi (a fixed number
   of Jacobi sweeps per triangle, GS_TRI_SWEEPS_DEFAULT unless GSTriFactorSetSweeps() says otherwise) */
typedef enum { GS_TRI_BACKEND_AUTO, GS_TRI_BACKEND_KOKKOSKERNELS, GS_TRI_BACKEND_CUSPARSE, GS_TRI_BACKEND_JACOBI } GSTriBackend;
#define GS_TRI_SWEEPS_DEFAULT 5
PETSC_INTERN const char *const GSTriBackends[];
PETSC_INTERN PetscErrorCode    GSTriFactorCreate(PetscInt, const PetscInt[], const PetscInt[], PetscBool, GSTriBackend, GSTriFactor *);
PETSC_INTERN PetscErrorCode    GSTriFactorNumeric(GSTriFactor, const PetscScalar[], PetscBool, GSPivotTest, PetscReal, PetscInt *, PetscReal *);
/* The device factor of a host factor (MATSOLVERPETSC's LU or ILU, PETSc's SeqAIJ layout: of n rows, its nz entries,
   ia, ja and values; its row and column orderings, NULL where natural), made anew where its pattern or orderings
   changed, else given the new values; then solved as the device's own (not GS_TRI_FORWARD or GS_TRI_BACKWARD).
   *ok false (nothing done) where the host factor is laid out otherwise */
PETSC_INTERN PetscErrorCode GSTriFactorSetHost(GSTriFactor *, PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscInt[], const PetscInt[], GSTriBackend, PetscBool *);
typedef enum {
  GS_TRI_SOLVE,     /* x = (L U)^-1 b */
  GS_TRI_TRANSPOSE, /* x = (L U)^-T b */
  GS_TRI_FORWARD,   /* x = D^(-1/2) L^-1 b, D U's diagonal (symmetric factors: L U = L D L^T); PCApplySymmetricLeft() */
  GS_TRI_BACKWARD   /* x = L^-T D^(-1/2) b; PCApplySymmetricRight() */
} GSTriSolve;
PETSC_INTERN PetscErrorCode GSTriFactorSolve(GSTriFactor, GSTriSolve, const PetscScalar[], PetscScalar[], PetscBool);
PETSC_INTERN PetscErrorCode GSTriFactorGetInfo(GSTriFactor, PetscCount *, PetscCount *, PetscInt *, PetscLogDouble *, PetscLogDouble *);
PETSC_INTERN PetscErrorCode GSTriFactorDestroy(GSTriFactor *);
PETSC_INTERN PetscErrorCode GSTriFactorSetSweeps(GSTriFactor, PetscInt);
/* Fixed-point sweeps of the numeric factorization (Chow and Patel), 0 (the default): Kokkos-Kernels' spiluk, exact */
PETSC_INTERN PetscErrorCode GSTriFactorSetFactorSweeps(GSTriFactor, PetscInt);
PETSC_INTERN PetscInt       GSTriFactorGetFactorSweeps(GSTriFactor);
PETSC_INTERN PetscInt       GSTriFactorGetSweeps(GSTriFactor);
/* "cuSPARSE's SpSV", "Kokkos-Kernels' sptrsv", "Jacobi sweeps" or "both solves in one kernel (a small factor)": who
   solves the factor's triangles */
PETSC_INTERN const char *GSTriFactorSolverName(GSTriFactor);
/* Both triangular solves of a small factor in one kernel of one team (auto: on a device, up to 2048 rows whose
   triangles fit the team's scratch memory and whose levels are at least an eighth of the rows); SetOneKernel forces it
   on where the factor fits, or off */
PETSC_INTERN PetscErrorCode GSTriFactorSetOneKernel(GSTriFactor, PetscBool);
PETSC_INTERN PetscBool      GSTriFactorUsesOneKernel(GSTriFactor);

/* Host threads (src/device/staging.kokkos.cxx). GSHostThreadsAuto(): the cores this process may use, those it is bound
   to, else the node's divided among the processes the MPI launcher put on it (also the most staging threads);
   GSHostThreads(): -gpustream_host_threads where given, else that (the threads of every host loop of products,
   transposes, graphs and large device-to-host copies). */
PETSC_INTERN PetscInt GSHostThreadsAuto(void);
PETSC_INTERN PetscInt GSHostThreads(void);

/* Sparse products of sequential matrices, C = A B, A^T B or P^T A P (opaque to C). Symbolic: C's pattern from the
   operands' host patterns (A: am x an, ai, aj; B: an x bn for A B and P^T A P, am x bn for A^T B; bi, bj), columns
   ascending in each row; GetPattern: that pattern (cm rows, ci, cj; the product's own arrays, which a matrix may hold
   as its own while the product lives); KeepPattern: P takes from's arrays of the same pattern, so that such a matrix
   outlives from. Numeric: C's values into c from the operands' values a and b (each in its matrix's order), with the
   operands' patterns as at the symbolic phase (an error otherwise); on the device from device values (the patterns
   uploaded at the first call), or its twin NumericHost from host values on the cores this process may use (what Numeric
   runs on a host backend). The symbolic phase runs on the given number of host threads; for A^T B with symmetric true
   (A square, its pattern known to be symmetric) it takes A's pattern for A^T's and leaves A's transpose to the first
   numeric phase (PCGAMG's graph square has no numeric phase). */
typedef enum { GS_PRODUCT_AB, GS_PRODUCT_AtB, GS_PRODUCT_PtAP } GSProductType;
typedef struct _n_GSDeviceProduct *GSDeviceProduct;
PETSC_INTERN PetscErrorCode        GSDeviceProductSymbolic(GSProductType, PetscInt, PetscInt, const PetscInt[], const PetscInt[], PetscInt, const PetscInt[], const PetscInt[], PetscBool, PetscInt, GSDeviceProduct *);
PETSC_INTERN PetscErrorCode        GSDeviceProductGetPattern(GSDeviceProduct, PetscInt *, const PetscInt *[], const PetscInt *[]);
PETSC_INTERN PetscErrorCode        GSDeviceProductKeepPattern(GSDeviceProduct, GSDeviceProduct);
PETSC_INTERN PetscErrorCode        GSDeviceProductNumeric(GSDeviceProduct, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscInt[], const PetscInt[], const PetscScalar[], PetscScalar[]);
PETSC_INTERN PetscErrorCode        GSDeviceProductNumericHost(GSDeviceProduct, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscInt[], const PetscInt[], const PetscScalar[], PetscScalar[]);
PETSC_INTERN PetscErrorCode        GSDeviceProductDestroy(GSDeviceProduct *);

/* The same products of distributed matrices (A B and P^T A P; opaque to C), from a process's pieces: A's m local rows,
   its diagonal block (m x n; di, dj) and off-diagonal one (m x ng, columns the ghosts' indices; oi, oj, NULL where ng
   is 0), and the rows of P for A's columns, P's n rows then those of the ghosts (pi, pj: n + ng rows, pn columns in a
   compact numbering of P's columns). The result's pattern (GetPattern) is the process's part of the product in those
   numberings: A's local rows (A B), or P's compact columns (P^T A P = P_local^T (A P), m = n), each row's columns
   ascending; its sum over the processes is the product. SetP: P's values in pi's order (host). Numeric: A's values (ad,
   ao: each block's in its order; in the execution space's memory where device, else host arrays) into the result's,
   *c in the execution space's memory; GetValues: a host copy of them. */
typedef struct _n_GSDistProduct *GSDistProduct;
PETSC_INTERN PetscErrorCode      GSDistProductCreate(GSProductType, PetscInt, PetscInt, const PetscInt[], const PetscInt[], PetscInt, const PetscInt[], const PetscInt[], PetscInt, const PetscInt[], const PetscInt[], PetscInt, GSDistProduct *);
PETSC_INTERN PetscErrorCode      GSDistProductGetPattern(GSDistProduct, PetscInt *, const PetscInt *[], const PetscInt *[]);
PETSC_INTERN PetscErrorCode      GSDistProductSetP(GSDistProduct, const PetscScalar[]);
PETSC_INTERN PetscErrorCode      GSDistProductNumeric(GSDistProduct, const PetscScalar[], const PetscScalar[], PetscBool, const PetscScalar **);
PETSC_INTERN PetscErrorCode      GSDistProductGetValues(GSDistProduct, PetscScalar[]);
PETSC_INTERN PetscErrorCode      GSDistProductDestroy(GSDistProduct *);

/* PCGAMG's graph of a sequential matrix (m rows in blocks of bs; CSR ai, aj, aa, columns ascending) as AIJ's
   MatCreateGraph() makes it with no filter, to the bit, on host threads: one vertex a block, the block's |a| (bs 1) or
   its sum of |Re a| (over the nidx rows and columns idx of each block where nidx > 0); symmetrized, G + G^T on the
   union of the patterns; scaled, D G D with d_i = sqrt|1/g_ii| (0 where g_ii is zero or missing). *done false where
   AIJ takes its slower path (bs > 1 with blocks not dense or not aligned); else the graph (gm rows, columns
   ascending) in malloc()'s memory, the caller's to free() */
PETSC_INTERN PetscErrorCode GSHostGraph(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscInt[], PetscBool, PetscBool, PetscInt, PetscBool *, PetscInt *, PetscInt **, PetscInt **, PetscScalar **);

/* Serial reference twins of the device SpMV: y = A x (+ z when z is not NULL), and Y = A X for k columns */
PETSC_INTERN void GSSpMV_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[]);
PETSC_INTERN void GSSpMMBlock_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);

/* The device side of an assembled gpustream matrix, copied or refreshed from the host first if the host changed:
   the (diagonal-block) CSR, and on several ranks the off-diagonal block and the halo (else NULL) */
PETSC_INTERN PetscErrorCode MatGPUStreamGetDeviceMat(Mat, GSDeviceMat *, GSDeviceMat *, GSHalo *);
