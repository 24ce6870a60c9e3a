/* The out-of-core streaming engine of MATGPUSTREAM (C interface; Kokkos inside stream.kokkos.cxx).

   A plan holds the rows of a host CSR matrix cut into subdivisions balanced by bytes: the leading ones stay in
   device memory as long as the budget allows, the others are copied each product from pinned host memory into a
   ring of device buffers, the copy of one subdivision overlapping the SpMV of the one before. */
#pragma once

#include "../sys/gpustreamimpl.h"

typedef enum { GS_STREAM_AUTO, GS_STREAM_RESIDENT, GS_STREAM_STREAM } GSStreamMode;
PETSC_INTERN const char *const GSStreamModes[];

typedef struct {
  GSStreamMode   mode;
  PetscLogDouble budget;       /* device bytes the matrix may use; < 0: the default (GSStreamDefaultBudget()) */
  PetscInt       buffers;      /* device buffers streamed subdivisions rotate through, >= 2 */
  PetscInt       subdivisions; /* 0: chosen by the model */
  PetscBool      overlap;      /* copies overlap SpMVs (else each copy completes before its SpMV starts) */
  PetscBool      inplace;      /* stream the column indices and values from the caller's arrays, page-locked where they
                                  are (cudaHostRegister), not from a pinned copy: they must outlive the plan, unmoved,
                                  and new values need no GSStreamPlanSetValues() for the streamed rows. For programs
                                  that own their CSR (bench_stream); MATGPUSTREAM copies, as PETSc owns its arrays */
  GSSpMVKernel kernel;         /* the SpMV kernel of every subdivision (-mat_gpustream_kernel) */
  PetscInt     tile;           /* entries a tile of the SpMV stages (-mat_gpustream_tile_size; 0: none, < 0: chosen) */
  GSFormat     format;         /* device storage of a resident matrix (-mat_gpustream_format); subdivisions are CSR */
  const char  *prefix;         /* the matrix's options prefix, for the option names of GSStreamPlanCreate()'s errors
                                  (NULL: none); the plan keeps no pointer to it */
} GSStreamOptions;

typedef struct {
  PetscInt       m, nsub, nresident, buffers, nrows_resident;
  PetscBool      overlap, automatic;
  PetscLogDouble budget, csrbytes, vecbytes;
  PetscLogDouble minbytes, maxbytes;         /* smallest and largest subdivision */
  PetscLogDouble residentbytes, streambytes; /* bytes of the resident subdivisions, bytes copied per product */
  PetscLogDouble bufferbytes;                /* each device buffer */
  PetscLogDouble copyrate, computerate;      /* bytes per second the model assumed */
  PetscLogDouble modeltime;                  /* modelled time of one product, seconds */
  PetscInt       tilecap;                    /* entries a tile of the subdivisions' SpMVs stages; 0: no tiles */
} GSStreamInfo;

typedef struct _n_GSStreamPlan *GSStreamPlan;

/* The budget when none is given: free device memory less a reserve; unlimited (PETSC_MAX_REAL) on host backends */
PETSC_INTERN PetscErrorCode GSStreamDefaultBudget(PetscLogDouble *);
/* Device bytes of a CSR with m rows and nnz entries, and of the vectors a product stages (x, y, z) */
PETSC_INTERN PetscLogDouble GSStreamCSRBytes(PetscInt, PetscInt);
PETSC_INTERN PetscLogDouble GSStreamVecBytes(PetscInt, PetscInt);

/* m, n, host CSR (ia, ja, a): the plan keeps pointers to none of them */
PETSC_INTERN PetscErrorCode GSStreamPlanCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const GSStreamOptions *, GSStreamPlan *);
PETSC_INTERN PetscErrorCode GSStreamPlanSetValues(GSStreamPlan, const PetscScalar[]);
/* Overlap of copies and SpMVs on or off, for experiments (the plan stays) */
PETSC_INTERN PetscErrorCode GSStreamPlanSetOverlap(GSStreamPlan, PetscBool);
PETSC_INTERN PetscErrorCode GSStreamPlanDestroy(GSStreamPlan *);
PETSC_INTERN PetscErrorCode GSStreamPlanGetInfo(GSStreamPlan, GSStreamInfo *);
/* y = A x (+ z) with host arrays; on several ranks B is the (resident) off-diagonal block and H the halo */
PETSC_INTERN PetscErrorCode GSStreamPlanMult(GSStreamPlan, GSDeviceMat, GSHalo, const PetscScalar[], const PetscScalar[], PetscScalar[]);
/* The same with arrays in the memory of the execution space (device vectors; z may be y) */
PETSC_INTERN PetscErrorCode GSStreamPlanMultInPlace(GSStreamPlan, GSDeviceMat, GSHalo, const PetscScalar[], const PetscScalar[], PetscScalar[]);
/* Y = A X for k columns (column-major, leading dimensions ldx >= n, ldy >= m), each subdivision streamed once
   for all k: host arrays (on several ranks with the off-diagonal block B and the halo H, else NULL), or device
   arrays of one rank's product (for solvers that keep their block vectors on the device) */
PETSC_INTERN PetscErrorCode GSStreamPlanMultBlock(GSStreamPlan, GSDeviceMat, GSHalo, PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);
PETSC_INTERN PetscErrorCode GSStreamPlanMultBlockDevice(GSStreamPlan, PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);
/* The plan of a streamed gpustream matrix (else NULL), brought up to date with the host first */
PETSC_INTERN PetscErrorCode MatGPUStreamGetStreamPlan(Mat, GSStreamPlan *);
