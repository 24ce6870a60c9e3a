/* The declared set of fused kernels of KSPPIPECGFUSED (Algorithm 2 of Rupp et al., with PCJACOBI or PCPBJACOBI fused in).
   The solver loop in pipecgfused.c is written once against these; pipecgfused.kokkos.cxx implements them on the
   default Kokkos execution space and pipecgfusedref.c holds their serial reference twins for the tests.

   One iteration, with D^{-1} the Jacobi inverse diagonal, or the inverse bs x bs diagonal blocks of point-block Jacobi
   (the identity without a preconditioner):
     Update:  x += alpha p;  r -= alpha w;  z = D^{-1} r;  p = z + beta p;   partial sums of <r,z> and of the norm
              (with a PC applied on the host: z -= alpha q instead, q = M^{-1} w, and Dot's second sum is <w,q>)
              (<z,z> preconditioned, <r,r> unpreconditioned, nothing for natural or none)
     SpMVDot: w = A p;   partial sums of <p,w> and <w, D^{-1} w>   (one kernel; on several ranks three: the halo
              gather, the diagonal block while the ghosts travel, then the off-diagonal block with the sums)
     Dot:     the partial sums of SpMVDot for a w computed elsewhere (operators that are not gpustream)
     Sums:    Update's two sums again, for an r replaced by b - A x (residual replacement)
     UpdateX: x += alpha p alone (the first step of a replacement iteration)
     Reduce:  every partial sum of the iteration in one device-to-host copy, summed on the host
   With PCGFWorkSetNorms() (automatic residual replacement) Update also forms the partial sums of ||x||^2, ||p||^2 and
   ||w||^2 of the vectors it reads and ||r||^2 of the r it writes: the rounding-error estimate of the residual gap
   needs them every iteration, and they travel in the same copy (Reduce then gives PCGF_NALL sums).

   Several processes can overlap the reduction with the SpMV instead (Ghysels and Vanroose's pipelined CG, as
   KSPPIPECG, with the vectors u = M^{-1} r, w = A u, m = M^{-1} w, n = A m and the recurrences z, q, p, s):
     OverlapUpdate: z = n + beta z; q = m + beta q; p = u + beta p; s = w + beta s; x += alpha p; u -= alpha q;
                    w -= alpha z; r -= alpha s; m = D^{-1} w (unless the PC is applied on the host);
                    partial sums of gamma = <r,u>, delta = <w,u> and the norm
     SpMVN:         n = A m (on several ranks with the halo exchange), while the sums travel in an MPI_Iallreduce */
#pragma once

#include "../common/work.h"
#include "../../stream/streamimpl.h"

#if defined(PETSC_USE_COMPLEX)
#  error "PETSc GPUStream supports real scalars only"
#endif

typedef enum {
  PCGF_RZ,  /* <r,z> */
  PCGF_NRM, /* the squared norm the KSP monitors */
  PCGF_PW,  /* <p,w> */
  PCGF_WDW, /* <w, D^{-1} w> */
  PCGF_NSUMS
} PCGFSum;

/* The Update's extra sums with PCGFWorkSetNorms(), after the PCGF_NSUMS sums of Reduce's output: x, p, w before the
   update (x_{k-1}, p_{k-1}, w_{k-1}), r after it (r_k, unpreconditioned whatever the norm type) */
typedef enum { PCGF_XX = PCGF_NSUMS, PCGF_PP, PCGF_WW, PCGF_RR, PCGF_NALL } PCGFNormSum;

typedef enum { PCGF_X, PCGF_R, PCGF_P, PCGF_W, PCGF_DINV, PCGF_Z, PCGF_Q, PCGF_U, PCGF_M, PCGF_N, PCGF_S, PCGF_XPREV } PCGFVec; /* XPREV: x before the last UpdateDevice */

/* The preconditioner as the kernels see it (GSKSPPC): none, Jacobi fused (D^{-1} on the device), or applied on the
   host each iteration (any PC): then z = M^{-1} r follows the recurrence z -= alpha q with q = M^{-1} w given by the
   PC. Point-block Jacobi keeps the inverse blocks on the device (GSWorkSetBlocks()) and its kernels visit a block of
   rows per thread. */

/* Point-block Jacobi is fused for blocks up to this size: each thread keeps one block of r (Update) or of w (SpMVDot) */
#define PCGF_MAX_BS 8

typedef struct _n_PCGFWork *PCGFWork; /* device vectors and reduction buffers of one solver */

PETSC_INTERN PetscErrorCode PCGFWorkCreate(PetscInt, GSKSPPC, PCGFWork *);
PETSC_INTERN PetscErrorCode PCGFWorkDestroy(PCGFWork *);
PETSC_INTERN GSWork         PCGFWorkBase(PCGFWork); /* its vectors (PCGFVec), D^{-1} and counts: work.h */
PETSC_INTERN PetscErrorCode PCGFWorkSetLaunchShape(PCGFWork, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode PCGFWorkGetMemory(PCGFWork, PetscLogDouble *, PetscLogDouble *);
PETSC_INTERN PetscErrorCode PCGFWorkSetNorms(PCGFWork, PetscBool);
/* What the steps below allocate when they first run, made ahead (KSPSetUp()): point-block Jacobi's blocks of the
   given size, the partial sums with the norms, the device scalars, Step's buffers, the overlapped variant's vectors */
PETSC_INTERN PetscErrorCode PCGFWorkReserve(PCGFWork, PetscInt, PetscBool, PetscBool, PetscBool, PetscBool);

PETSC_INTERN PetscErrorCode PCGFUpdate(PCGFWork, PetscScalar, PetscScalar, KSPNormType);
PETSC_INTERN PetscErrorCode PCGFSpMVDot(PCGFWork, GSDeviceMat, GSDeviceMat, GSHalo);
PETSC_INTERN PetscErrorCode PCGFDot(PCGFWork);
PETSC_INTERN PetscErrorCode PCGFSums(PCGFWork, KSPNormType);
PETSC_INTERN PetscErrorCode PCGFUpdateX(PCGFWork, PetscScalar);
PETSC_INTERN PetscErrorCode PCGFReduce(PCGFWork, PetscScalar[]); /* PCGF_NSUMS sums, PCGF_NALL with the norms */
PETSC_INTERN PetscErrorCode PCGFWorkSetOverlap(PCGFWork);
/* Device scalars (one process, a resident gpustream matrix, PCNONE or PCJACOBI): SpMVDotFinal's last team also sums
   the partials of the iteration, writes them to one of two pinned slots and computes the next alpha and beta on the
   device, which UpdateDevice reads; so the host can start iteration k+1 before it reads iteration k's sums
   (ReduceSlot waits for that slot alone). UpdateDevice writes x to a second buffer, so that x_k survives an
   iteration begun before the host knew to stop (RevertX). */
PETSC_INTERN PetscErrorCode PCGFWorkSetDeviceScalars(PCGFWork);
PETSC_INTERN PetscErrorCode PCGFUpdateDevice(PCGFWork, KSPNormType);
PETSC_INTERN PetscErrorCode PCGFSpMVDotFinal(PCGFWork, GSDeviceMat, PetscInt);
PETSC_INTERN PetscErrorCode PCGFReduceSlot(PCGFWork, PetscInt, PetscScalar[]);
PETSC_INTERN PetscErrorCode PCGFWorkRevertX(PCGFWork);
/* One kernel per iteration (device scalars' conditions; PCGFWorkSetStep() after PCGFWorkSetDeviceScalars()):
     Step: UpdateDevice and SpMVDotFinal in one kernel; the new p of a row's columns is formed from the old r, w and
           p as the Update forms it, so x, r, p and w are written to second buffers (which then become x, r, p, w);
           the last team writes the four sums to a slot and the next alpha and beta, as SpMVDotFinal. p is not read
           back for the SpMV: 8 vector passes and one kernel per iteration instead of 9 and two.
   Its twin is PCGFUpdate_Ref followed by PCGFSpMVDot_Ref. */
PETSC_INTERN PetscErrorCode PCGFWorkSetStep(PCGFWork);
/* -ksp_pipecgfused_one_kernel auto takes Step up to this many local rows (measured crossover, docs/design-measurements.md) */
#define PCGF_ONE_KERNEL_ROWS 2000000
PETSC_INTERN PetscErrorCode PCGFStep(PCGFWork, GSDeviceMat, KSPNormType, PetscInt);

/* KSPMatSolve: k columns advancing together (pipecgfusedblock.kokkos.cxx), PCNONE or Jacobi fused, or any PC applied
   on the host (GS_PC_APPLY):
     BlockUpdate:  every column's Update with its own alpha_j, beta_j;  partial <r_j,z_j> and norm sums (with a PC
                   applied on the host z_j -= alpha_j q_j, as the single-vector Update)
     BlockSpMVDot: W = A P in one pass over the matrix for all columns (resident, or streamed: each subdivision
                   copied once for all columns; on several processes the off-diagonal block adds the ghost rows of P
                   that the halo brings), then partial <p_j,w_j>, <w_j,D^{-1}w_j> (not with a PC applied on the
                   host: the host forms Q = M^{-1} W from W and BlockDot then forms <p_j,w_j>, <w_j,q_j>)
     BlockReduce:  every column's sums in one device-to-host copy; sums[j * PCGF_NSUMS + s]
   Each column follows exactly the single-vector kernels' arithmetic (their twins serve for the tests). */
typedef struct _n_PCGFBlock *PCGFBlock;

PETSC_INTERN PetscErrorCode PCGFBlockCreate(PetscInt, PetscInt, GSKSPPC, PCGFBlock *);
PETSC_INTERN PetscErrorCode PCGFBlockDestroy(PCGFBlock *);
/* Its base: X, R, P, W, Z, Q n x k column-major (Z and Q with a PC applied on the host), DINV n; GSWorkTransferDense()
   for dense matrices; its counts are launches, reductions and block copies */
PETSC_INTERN GSWork         PCGFBlockBase(PCGFBlock);
PETSC_INTERN PetscErrorCode PCGFBlockUpdate(PCGFBlock, const PetscScalar[], const PetscScalar[], KSPNormType);
PETSC_INTERN PetscErrorCode PCGFBlockSpMVDot(PCGFBlock, GSDeviceMat, GSDeviceMat, GSHalo, GSStreamPlan);
PETSC_INTERN PetscErrorCode PCGFBlockDot(PCGFBlock);
PETSC_INTERN PetscErrorCode PCGFBlockReduce(PCGFBlock, PetscScalar[]);
PETSC_INTERN PetscErrorCode PCGFOverlapUpdate(PCGFWork, PetscScalar, PetscScalar, KSPNormType);
PETSC_INTERN PetscErrorCode PCGFSpMVN(PCGFWork, GSDeviceMat, GSDeviceMat, GSHalo);

/* Serial reference twins; dinv NULL means no preconditioner, else it holds the inverse bs x bs diagonal blocks, each
   row-major (bs = 1: Jacobi's inverse diagonal); sums[] gets the two sums of the kernel */
/* OverlapUpdate's twin: sums[0] = <r,u>, sums[1] = the norm's sum, sums[2] = <w,u>; m is written unless apply */
PETSC_INTERN void PCGFOverlapUpdate_Ref(PetscInt, PetscScalar, PetscScalar, KSPNormType, const PetscScalar[], PetscBool, PetscScalar[], PetscScalar[], PetscScalar[], PetscScalar[], PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar[],
                                        PetscScalar[], PetscScalar[], PetscScalar[3]);
PETSC_INTERN void PCGFUpdateApply_Ref(PetscInt, PetscScalar, PetscScalar, KSPNormType, PetscScalar[], PetscScalar[], PetscScalar[], PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[2]);
PETSC_INTERN void PCGFDot_Ref(PetscInt, PetscInt, const PetscScalar[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[2]);
PETSC_INTERN void PCGFUpdate_Ref(PetscInt, PetscInt, PetscScalar, PetscScalar, KSPNormType, const PetscScalar[], PetscScalar[], PetscScalar[], PetscScalar[], const PetscScalar[], PetscScalar[2]);
/* The extra sums of an Update with the norms (PCGF_XX .. PCGF_RR, in that order), from the vectors before it */
PETSC_INTERN void PCGFUpdateNorms_Ref(PetscInt, PetscScalar, const PetscScalar[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[4]);
PETSC_INTERN void PCGFUpdateX_Ref(PetscInt, PetscScalar, const PetscScalar[], PetscScalar[]);
PETSC_INTERN void PCGFSums_Ref(PetscInt, PetscInt, KSPNormType, const PetscScalar[], const PetscScalar[], PetscScalar[2]);
PETSC_INTERN void PCGFSpMVDot_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar[2]);
