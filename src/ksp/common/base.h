/* What the three fused solvers (KSPPIPECGFUSED, KSPPIPEBCGSF, KSPSGMRESF) share on the host; their device work shares
   work.h. Each solver's data starts with a GSKSPBase, which GSKSPCreate() allocates with the rest: the operations
   of the solver, its work and the preconditioner as the kernels see it, D^{-1} taken from the PC, and the bookkeeping
   of the last solve. KSPSetUp() (GSKSPSetUp) and, for the solvers whose x lives on the device from start to end,
   KSPBuildSolution() (GSKSPBuildSolution) are the base's own. */
#pragma once

#include <petsc/private/kspimpl.h>
#include "work.h"
#include "residualgap.h"

/* The operators of a solve as the solvers' kernels may take them (GSKSPGetOperators()) */
typedef struct {
  Mat         Amat, Pmat;
  PetscInt    n;    /* local rows */
  PetscMPIInt size; /* processes */
  /* the device form of a gpustream Amat: the diagonal block, and on several processes the off-diagonal block and the
     halo; NULL for other types and for a streamed matrix, which has no whole device CSR (a solver whose kernels do
     not take it sets them to NULL) */
  GSDeviceMat dA, dB;
  GSHalo      halo;
  GSKSPPC     pc; /* the PC as it is: GS_PC_NONE, GS_PC_JACOBI, GS_PC_PBJACOBI, or GS_PC_APPLY for any other */
  PetscInt    bs; /* Pmat's block size */
} GSKSPOperators;

/* A solver's device allocations for the operators o (its Allocate_Private), where it decides what its kernels take */
typedef PetscErrorCode (*GSWorkAllocate)(KSP, GSKSPOperators *);

/* The solver and its operations, which GSKSPCreate() sets: its own, but KSPSetUp() (allocate, then nwork PETSc work
   vectors) and KSPBuildSolution() (NULL: GSKSPBuildSolution()); KSPView() calls view for ASCII viewers alone,
   KSPSetFromOptions() setfromoptions inside the solver's options block with the base's options after it, KSPReset()
   reset and then resets the base, KSPDestroy() destroy (NULL: none), then resets and frees the data */
typedef struct {
  struct {
    const char *name;    /* "KSPPIPECGFUSED" */
    const char *title;   /* of the options block */
    PCSide      side;    /* PC_LEFT: preconditioned, unpreconditioned, natural or no norm; PC_RIGHT: right
                            preconditioning only, the unpreconditioned norm or none (rightpc.h) */
    const char    *twin; /* PC_RIGHT: the PETSc solver for the other sides and norms */
    const char    *gap;  /* the options prefix of the true residual check at convergence (residualgap.h); NULL: none */
    PetscInt       x;    /* the work vector of x */
    GSWorkAllocate allocate;
    PetscInt       nwork;
  } kind;
  struct {
    PetscErrorCode (*solve)(KSP);
    PetscErrorCode (*view)(KSP, PetscViewer);
    PetscErrorCode (*setfromoptions)(KSP, GSOptionItems);
    PetscErrorCode (*reset)(KSP);
    PetscErrorCode (*destroy)(KSP);
    PetscErrorCode (*buildsolution)(KSP, Vec, Vec *);
    PetscErrorCode (*matsolve)(KSP, Mat, Mat);
  } f;
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
  GSResidualGap    gap;                                             /* the true residual against the recursive one at convergence (ops->gap) */
} GSKSPBase;

/* In KSPCreate_XXX(): the solver ops (which must outlive the KSP) with ksp->data of size bytes, a copy of defaults (a
   GSKSPBase first), the norms of the solver's side, the true residual check, and KSPSetUp() for each new operator */
PETSC_INTERN PetscErrorCode GSKSPCreate(KSP, const GSKSPOps *, size_t, const void *);
/* KSPSetUp() of the fused solvers: the device work first (device memory is the scarcer), allocated for the operators
   once they are set, then the PETSc work vectors at the first set-up. Called again when the operators change
   (ksp->setupnewmatrix): the work then follows the new operator. */
PETSC_INTERN PetscErrorCode GSKSPSetUp(KSP);
/* KSPView(), KSPReset() and KSPDestroy() of the fused solvers, around the solver's own (GSKSPOps) */
PETSC_INTERN PetscErrorCode GSKSPView(KSP, PetscViewer);
PETSC_INTERN PetscErrorCode GSKSPSetFromOptions(KSP, GSOptionItems);
/* In the solver's setfromoptions: PetscOptionsInt() of name with the help text, *value changed when the option is
   set (*set, if given) and at least min; else PETSC_ERR_ARG_OUTOFRANGE "-<prefix>name must be <what>, not <value>" */
PETSC_INTERN PetscErrorCode GSKSPOptionsIntAtLeast(KSP, GSOptionItems, const char[], const char[], PetscInt, const char[], PetscInt *, PetscBool *);
PETSC_INTERN PetscErrorCode GSKSPReset(KSP);
PETSC_INTERN PetscErrorCode GSKSPDestroy(KSP);

/* The operators of ksp->pc for n local rows */
PETSC_INTERN PetscErrorCode GSKSPGetOperators(KSP, PetscInt, GSKSPOperators *);
/* Whether the solver's work must be made again for n local rows and the preconditioner pc with blocks of bs rows
   (none yet, made for others, or other: the solver's own reasons); if so the base forgets it: the solver destroys
   it and gives the new one to GSKSPSetWork() */
PETSC_INTERN PetscBool      GSKSPWorkStale(KSP, PetscInt, GSKSPPC, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode GSKSPSetWork(KSP, GSWork, PetscInt, GSKSPPC, PetscInt);
/* A solve begins: its bookkeeping, the operators o with the device form the kernels take, the solver's device work
   (its allocate), and D^{-1} from the PC itself when the kernels fuse Jacobi or point-block Jacobi (again only when
   Pmat changed), so that the PC's own options hold. No transpose solve. */
PETSC_INTERN PetscErrorCode GSKSPSolveBegin(KSP, GSKSPOperators *);
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
/* The start of a solve on the device: work vector r = b - A x and work vector x = x (computed on the host in the PETSc
   vector R); with a zero initial guess, r = b and x = 0, and the PETSc x is never set (it is written at the end) */
PETSC_INTERN PetscErrorCode GSKSPLoadResidual(KSP, Mat, PetscInt, PetscInt, Vec);
/* Work vector out = A (work vector in) on the host, through the PETSc vectors X and Y */
PETSC_INTERN PetscErrorCode GSKSPHostMult(KSP, Mat, PetscInt, Vec, PetscInt, Vec);
