/* What the three fused solvers (KSPPIPECGFUSED, KSPPIPEBCGSF, KSPSGMRESF) share on the host; their device work shares
   work.h. Each solver's data starts with a GSKSPBase, which GSKSPCreate() allocates with the rest: the operations
   of the solver, its work and the preconditioner as the kernels see it, D^{-1} taken from the PC, and the bookkeeping
   of the last solve. KSPSetUp() (GSKSPSetUp) and, for the solvers whose x lives on the device from start to end,
   KSPBuildSolution() (GSKSPBuildSolution) are the base's own. */
#pragma once

#include <petsc/private/kspimpl.h>
#include "work.h"

/* A solver's device allocations for the operators Amat, Pmat of local size n (its Allocate_Private): the device
   operator, where the SpMVs run on the device, else NULL */
typedef PetscErrorCode (*GSWorkAllocate)(KSP, Mat, Mat, PetscInt, GSDeviceMat *, GSDeviceMat *, GSHalo *);

/* The operations GSKSPCreate() sets, all the solver's own but KSPSetUp() (allocate, then nwork PETSc work vectors)
   and KSPBuildSolution() (NULL: GSKSPBuildSolution()) */
typedef struct {
  const char *name; /* "KSPPIPECGFUSED" */
  PetscErrorCode (*solve)(KSP);
  PetscErrorCode (*view)(KSP, PetscViewer);
  PetscErrorCode (*setfromoptions)(KSP, GSOptionItems);
  PetscErrorCode (*reset)(KSP);
  PetscErrorCode (*destroy)(KSP);
  PetscErrorCode (*buildsolution)(KSP, Vec, Vec *);
  PetscErrorCode (*matsolve)(KSP, Mat, Mat);
  GSWorkAllocate allocate;
  PetscInt       nwork;
} GSKSPOps;

typedef struct {
  const GSKSPOps  *ops;
  GSWork           work;    /* the base of the solver's device work, NULL before the first allocation */
  PetscInt         x;       /* the work vector that holds x (GSKSPBuildSolution()) */
  PetscInt         n;       /* the local size the work was made for */
  GSKSPPC          pc;      /* the preconditioner as the kernels see it */
  PetscInt         bs;      /* point-block Jacobi's block size, else 1 */
  Mat              dinvmat; /* the operator and state D^{-1} was taken from */
  PetscObjectState dinvstate;
  PetscBool        solving;                                         /* a solve runs: the device x is newer than ksp->vec_sol */
  PetscMPIInt      size;                                            /* processes of the last solve */
  PetscLogDouble   logged;                                          /* GSLoggedCopies() as the last solve began */
  PetscInt         hostcopies;                                      /* host-device vector copies of the last solve */
  PetscInt         l0, t0, c0;                                      /* the work's counts as the last solve's iterations began */
  PetscInt         passes, launches, transfers, copies, allreduces; /* counted over the last solve's iterations */
  PetscInt         discarded;                                       /* launches of an iteration begun after the last, left out of launches */
} GSKSPBase;

/* In KSPCreate_XXX(): ksp->data of size bytes (a GSKSPBase first, the rest zeroed), the norms of the solver's side
   (PC_LEFT: preconditioned, unpreconditioned, natural, none; PC_RIGHT: unpreconditioned, none, and right
   preconditioning unless the user chose a side), the operations ops, which must outlive the KSP, and KSPSetUp() for
   each new operator */
PETSC_INTERN PetscErrorCode GSKSPCreate(KSP, size_t, PCSide, const GSKSPOps *);
/* KSPSetUp() of the fused solvers: the device work first (device memory is the scarcer), allocated for the operators
   once they are set, then the PETSc work vectors at the first set-up. Called again when the operators change
   (ksp->setupnewmatrix): the work then follows the new operator. */
PETSC_INTERN PetscErrorCode GSKSPSetUp(KSP);
/* In the solver's Reset: the base's state of a KSP without work (the work itself is the solver's to destroy) */
PETSC_INTERN PetscErrorCode GSKSPResetBase(KSP);

/* The device form of a gpustream operator Amat (the diagonal block, and on several processes the off-diagonal
   block and the halo; all NULL for other types and for a streamed matrix, which has no whole device CSR) */
PETSC_INTERN PetscErrorCode GSKSPGetDeviceOperator(KSP, Mat, GSDeviceMat *, GSDeviceMat *, GSHalo *);
/* The PC as it is: GS_PC_NONE, GS_PC_JACOBI, GS_PC_PBJACOBI (with Pmat's block size in bs) or GS_PC_APPLY (any
   other); each solver then decides what its kernels fuse */
PETSC_INTERN PetscErrorCode GSKSPGetPC(KSP, Mat, GSKSPPC *, PetscInt *);
/* Whether the solver's work must be made again for n local rows and the preconditioner pc with blocks of bs rows
   (none yet, made for others, or other: the solver's own reasons); if so the base forgets it: the solver destroys
   it and gives the new one to GSKSPSetWork() */
PETSC_INTERN PetscBool      GSKSPWorkStale(KSP, PetscInt, GSKSPPC, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode GSKSPSetWork(KSP, GSWork, PetscInt, GSKSPPC, PetscInt);
/* A solve begins: its bookkeeping, the operators, their device form and the solver's device work (its allocate), and
   D^{-1} from the PC itself when the kernels fuse Jacobi or point-block Jacobi (again only when Pmat changed), so
   that the PC's own options hold. No transpose solve. */
PETSC_INTERN PetscErrorCode GSKSPSolveBegin(KSP, Mat *, Mat *, GSDeviceMat *, GSDeviceMat *, GSHalo *);
/* The iterations begin (the work's counts) and end (the counts of the iterations, passes of them, less the discarded
   launches) */
PETSC_INTERN PetscErrorCode GSKSPIterationsBegin(KSP);
PETSC_INTERN PetscErrorCode GSKSPIterationsEnd(KSP, PetscInt);
/* A solve ends: x to ksp->vec_sol (with store true, from the work vector base->x), its host-device copies */
PETSC_INTERN PetscErrorCode GSKSPSolveEnd(KSP, PetscBool);
/* KSPBuildSolution() of the solvers whose x is on the device while they solve: work vector base->x */
PETSC_INTERN PetscErrorCode GSKSPBuildSolution(KSP, Vec, Vec *);
/* The view of the last solve's counts per iteration, its host-device copies and its MPI_Allreduce calls */
PETSC_INTERN PetscErrorCode GSKSPViewCounts(KSP, PetscViewer);

/* r = b - A x on the host vectors x, b, r; with a zero initial guess x is set to 0 and r = b */
PETSC_INTERN PetscErrorCode GSKSPHostResidual(KSP, Mat, Vec, Vec, Vec);
/* Work vector out = A (work vector in) on the host, through the PETSc vectors X and Y */
PETSC_INTERN PetscErrorCode GSKSPHostMult(KSP, Mat, PetscInt, Vec, PetscInt, Vec);
