/* The declared set of fused kernels of KSPPIPEBCGSF (Algorithm 4 of Rupp et al.: pipelined BiCGStab with
   beta = -<As,r0*>/<Ap,r0*>). The solver loop in pipebcgsf.c is written once against these; pipebcgsf.kokkos.cxx
   implements them and pipebcgsfref.c holds their serial twins. Right preconditioning: M^{-1} is D^{-1} (Jacobi or
   point-block Jacobi, fused into the SpMV gathers and the x update), the identity, or a PC applied on the host, whose results
   ph = M^{-1} p and sh = M^{-1} s the host path uploads.

   One iteration, four kernels and one device-to-host copy of all partial sums:
     SpMVDot1: v = A M^{-1} p;                partial <v, r0*>
     UpdateS:  alpha = <r,r0*> / <v,r0*> from the partial sums in device memory (each team sums them in the same
               order), or given (several ranks: the host reduces first); s = r - alpha v;   partial <s,s>
     SpMVDot3: t = A M^{-1} s;                partials <t,s>, <t,t>, <t,r0*>
     Update:   x += alpha M^{-1} p + omega M^{-1} s (alpha: the one UpdateS used, kept in device memory);  r = s - omega t;  p = r + beta (p - omega v);   partials <r,r0*>, <r,r>
   On several ranks (a halo given: PCNONE or PCJACOBI) an SpMV stage is the interior kernel over the diagonal block,
   which leaves the rows with off-diagonal entries out of the sums, while the ghost values (scaled by their owners'
   D^{-1}) travel, then the off-diagonal kernel, which finishes those rows and adds their sums to the same partials.
   On the host path the SpMVs run through MatMult() and Dot1/Dot3 compute the partial sums of v and t. */
#pragma once

#include "../common/work.h"

#if defined(PETSC_USE_COMPLEX)
#  error "PETSc GPUStream supports real scalars only"
#endif

typedef enum {
  PBF_RR0, /* <r, r0*> */
  PBF_RR,  /* <r, r>, to confirm a convergence the norm formula reports */
  PBF_VR0, /* <v, r0*> */
  PBF_SS,  /* <s, s> */
  PBF_TS,  /* <t, s> */
  PBF_TT,  /* <t, t> */
  PBF_TR0, /* <t, r0*> */
  PBF_NSUMS
} PBFSum;

typedef enum { PBF_X, PBF_R, PBF_R0, PBF_P, PBF_V, PBF_S, PBF_T, PBF_DINV, PBF_PH, PBF_SH } PBFVec;

/* Point-block Jacobi is fused for blocks up to this size (D^{-1} in n / bs row-major bs x bs blocks) */
#define PBF_MAX_BS 8

/* Local rows up to which s = r - alpha v is formed inside the second SpMV by default (-ksp_pipebcgsf_s_in_spmv):
   without a preconditioner, and with Jacobi (H200, docs/design-measurements.md) */
#define PBF_FOLD_ROWS        3000000
#define PBF_FOLD_ROWS_JACOBI 200000

typedef struct _n_PBFWork *PBFWork;

PETSC_INTERN PetscErrorCode PBFWorkCreate(PetscInt, GSKSPPC, PBFWork *);
PETSC_INTERN PetscErrorCode PBFWorkDestroy(PBFWork *);
PETSC_INTERN GSWork         PBFWorkBase(PBFWork); /* its vectors (PBFVec), D^{-1} and counts: work.h */
/* What GSWorkSetBlocks() and PBFWorkSetDeviceScalars() allocate when they first run, made ahead (KSPSetUp()) */
PETSC_INTERN PetscErrorCode PBFWorkReserve(PBFWork, PetscInt, PetscBool);

PETSC_INTERN PetscErrorCode PBFRDot(PBFWork);
/* A (the diagonal block on several ranks), B (the off-diagonal block) and the halo: NULL on one process */
PETSC_INTERN PetscErrorCode PBFSpMVDot1(PBFWork, GSDeviceMat, GSDeviceMat, GSHalo);
PETSC_INTERN PetscErrorCode PBFDot1(PBFWork);
PETSC_INTERN PetscErrorCode PBFUpdateS(PBFWork, PetscBool, PetscScalar);
PETSC_INTERN PetscErrorCode PBFSpMVDot3(PBFWork, GSDeviceMat, GSDeviceMat, GSHalo);
PETSC_INTERN PetscErrorCode PBFDot3(PBFWork);
PETSC_INTERN PetscErrorCode PBFUpdate(PBFWork, PetscScalar, PetscScalar);
PETSC_INTERN PetscErrorCode PBFReduce(PBFWork, PetscScalar[PBF_NSUMS]);
/* Device scalars (one process, a fused SpMV, PCNONE or PCJACOBI): SpMVDot3Final's last team sums the iteration's
   partials into one of two pinned slots and computes omega and beta, which UpdateDevice reads, so the host can queue
   the next iteration's SpMVDot1, UpdateS and SpMVDot3 before it reads this one's sums (ReduceSlot waits for that slot
   alone); UpdateDevice leaves x, r, p alone where the host loop stops without an Update (a breakdown, NaN or Inf).
   SpMVDot3Final's last argument folds UpdateS into it: every team sums alpha as UpdateS does, s of a row's columns is
   formed from r and v as the SpMV gathers them, s and t of its rows are stored with <s,s> and SpMVDot3's sums; three
   kernels an iteration instead of four. Twins: PBFUpdateS_Ref, then PBFSpMV_Ref and the sums. */
PETSC_INTERN PetscErrorCode PBFWorkSetDeviceScalars(PBFWork);
PETSC_INTERN PetscErrorCode PBFSpMVDot3Final(PBFWork, GSDeviceMat, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode PBFUpdateDevice(PBFWork);
PETSC_INTERN PetscErrorCode PBFReduceSlot(PBFWork, PetscInt, PetscScalar[PBF_NSUMS]);

/* Serial twins; dinv NULL: no Jacobi, else the inverse bs x bs diagonal blocks (bs = 1: Jacobi); ph/sh NULL: M^{-1}
   applied through dinv (or the identity) */
PETSC_INTERN void PBFSpMV_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PETSC_INTERN void PBFUpdateS_Ref(PetscInt, PetscScalar, const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar *);
PETSC_INTERN void PBFUpdate_Ref(PetscInt, PetscInt, PetscScalar, PetscScalar, PetscScalar, const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar[], PetscScalar[], const PetscScalar[], const PetscScalar[],
                                const PetscScalar[], const PetscScalar[], PetscScalar *);
