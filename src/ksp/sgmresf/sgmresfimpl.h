/* The declared set of fused kernels of KSPSGMRESF (Algorithm 6 of Rupp et al.: Walker and Zhou's simpler GMRES(m)
   with classical Gram-Schmidt, the residual update taken out of the orthogonalization). The solver loop in
   sgmresf.c is written once against these; sgmresf.kokkos.cxx implements them and sgmresfref.c holds their serial
   twins. Right preconditioning: M^{-1} is D^{-1} (Jacobi, fused into the SpMV gather and the x update), the inverse
   diagonal blocks of point-block Jacobi (fused alike; the x update takes a second launch), the identity, or a PC
   applied on the host.

   The basis is one 2D view V (n x (m+1), LayoutLeft: column j contiguous, so that the threads of a team, one per
   row, read consecutive addresses of every column in the multi-dot). Column 0 holds the cycle's residual r0
   unnormalized, column k the k-th orthonormal vector. With v_0 = r0/rho, A M^{-1} [v_0..v_{k-1}] = [v_1..v_k] R and
   xi_k = <r0, v_k>: the residual norm after k steps is sqrt(rho^2 - sum xi_i^2), and x = x0 + M^{-1} [v_0..v_{k-1}] y
   with R y = xi, solved on the host once per cycle.

   Iteration k, on one process with a gpustream operator (first-stage partial sums: one per team, in slots):
     SpMVDot:       w = V(:,k) = s A M^{-1} V(:,k-1) (s = 1/rho for k = 1);   partials <w,w>, <v_j,w> j = 1..k-1
     Orthogonalize: (k >= 2) R(j,k) = <v_j,w>, the partials summed by SpMVDot's last team (second stage);
                    w' = w - sum_j R(j,k) v_j;   partials <w',w'> and, when refining, <v_j,w'> (the second CGS pass's
                    dots, fused here because they need only this thread's rows of w')
     Normalize:     R2 = <v_j,w'>, summed by Orthogonalize's last team, when refining (R(:,k) += R2);
                    R(k,k) = sqrt(<w',w'> - |R2|^2) (Pythagoras: w'' = w' - V R2 is orthogonal to V R2);
                    v_k = (w' - V R2) / R(k,k);   partial <r0, v_k>
     one device-to-host copy of the xi partials with R(k,k) and the refinement flag (the per-iteration estimate),
     left in flight: the host launches step k+1 before it waits for this copy alone (a CUDA event), so the device
     does not idle during the convergence test
   so two launches in the first iteration and three afterwards, with or without refinement (Rupp et al. have four:
   their multi-dot is a kernel of its own). 'ifneeded' refines
   when ||w'|| < 1.0833 ||R(:,k)|| (PETSc's test), ||w'||^2 taken as <w,w> - |R(:,k)|^2 so that every team decides
   from the sums it already has. Once per cycle: the copy of R, the upload of the coefficients, UpdateSolution and
   Residual (r0 = b - A x, partial <r0,r0>).
   Delayed refinement (DCGS2 of Swirydowicz et al. and Bielich et al., worked out for simpler GMRES): the second pass
   of w'_{k-1} waits for iteration k, which reads the basis anyway, so every iteration reads it twice, as one pass
   does, in two launches:
     SpMVDotDelayed: x = V(:,k) = A M^{-1} w'_{k-1} (column k-1 holds w'_{k-1}, one pass, not normalized); the pairs
                    a_j = <v_j,x>, b_j = <v_j,w'_{k-1}> for j < k in one read of each column; its last team derives
                    rho = sqrt(b_{k-1} - sum_{j<k-1} b_j^2) = R(k-1,k-1), R(:,k-1) += b (the second pass) and the
                    first pass of R(:,k) from A M^{-1} v_j = V R(:,j+1), and writes step k-1's record
     OrthogonalizeDelayed: v_{k-1} = (w'_{k-1} - V b) / rho and w'_k = (x - V g) / rho, g = <v_j,x>, in one pass;
                    partials of xi_{k-1} = <r0, v_{k-1}>
   so step k-1's xi and R(k-1,k-1) come with iteration k; a cycle's last step m ends with Dot (b of w'_m) and
   Normalize with close set.
   On the host path the SpMV runs through MatMult() and Dot computes SpMVDot's partials; on several processes the
   host reduces each stage's partials (one MPI_Allreduce per stage) and uploads the sums, which the kernels then
   take as given instead of summing partials. */
#pragma once

#include "../common/work.h"

#if defined(PETSC_USE_COMPLEX)
#  error "PETSc GPUStream supports real scalars only"
#endif

typedef enum { SGF_REFINE_NEVER, SGF_REFINE_IFNEEDED, SGF_REFINE_ALWAYS, SGF_REFINE_DELAYED } SGFRefine;

typedef enum { SGF_X, SGF_B, SGF_DINV, SGF_U } SGFVec;
#define SGF_COLUMN(j) (SGF_U + 1 + (j)) /* the work vector of the basis column j (work.h: GSWorkSetVec(), GSWorkLoad(), ...) */

/* Which partial sums a reduction copies: the first-stage sums of SpMVDot/Dot, of Orthogonalize */
typedef enum { SGF_PASS1, SGF_PASS2 } SGFPass;

/* The record Normalize leaves next to the xi partials: R(k,k), whether iteration k refined, <w,w> before the
   orthogonalization (the scale of the breakdown test) */
enum { SGF_REC_RKK, SGF_REC_REFINED, SGF_REC_WW, SGF_NREC };

/* PETSc's KSPGMRESClassicalGramSchmidtOrthogonalization() refines when ||w'|| < 1.0833 ||h||; ww - hh estimates
   ||w'||^2. A macro so that the host (several processes) and the device decide alike. */
#define SGF_REFINE_NEEDED(ww, hh) ((ww) - (hh) < 1.0833 * 1.0833 * (hh))

typedef struct _n_SGFWork *SGFWork;

PETSC_INTERN PetscErrorCode SGFWorkCreate(PetscInt, PetscInt, GSKSPPC, PetscInt, SGFWork *);
PETSC_INTERN PetscErrorCode SGFWorkDestroy(SGFWork *);
PETSC_INTERN GSWork         SGFWorkBase(SGFWork); /* its vectors (SGFVec and SGF_COLUMN()), D^{-1} and counts: work.h */
PETSC_INTERN PetscErrorCode SGFWorkSetGiven(SGFWork, PetscInt, const PetscScalar[]);
PETSC_INTERN PetscErrorCode SGFWorkSetTeams(SGFWork, PetscInt);
PETSC_INTERN PetscErrorCode SGFWorkGetMemory(SGFWork, PetscLogDouble *, PetscLogDouble *);

PETSC_INTERN PetscErrorCode SGFSpMVDot(SGFWork, GSDeviceMat, PetscInt, PetscScalar);
PETSC_INTERN PetscErrorCode SGFDot(SGFWork, PetscInt);
PETSC_INTERN PetscErrorCode SGFSpMVHalo(SGFWork, GSDeviceMat, GSDeviceMat, GSHalo, PetscInt, PetscScalar);
PETSC_INTERN PetscErrorCode SGFOrthogonalize(SGFWork, PetscInt, SGFRefine, PetscBool);
PETSC_INTERN PetscErrorCode SGFNormalize(SGFWork, PetscInt, PetscBool, PetscBool);
PETSC_INTERN PetscErrorCode SGFSpMVDotDelayed(SGFWork, GSDeviceMat, PetscInt);
PETSC_INTERN PetscErrorCode SGFDotDelayed(SGFWork, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode SGFOrthogonalizeDelayed(SGFWork, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode SGFResidual(SGFWork, GSDeviceMat);
PETSC_INTERN PetscErrorCode SGFResidualHalo(SGFWork, GSDeviceMat, GSDeviceMat, GSHalo);
PETSC_INTERN PetscErrorCode SGFUpdateSolution(SGFWork, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode SGFReduceDots(SGFWork, SGFPass, PetscInt, PetscScalar[]);
PETSC_INTERN PetscErrorCode SGFReduceXiBegin(SGFWork, PetscInt);
PETSC_INTERN PetscErrorCode SGFReduceXiEnd(SGFWork, PetscInt, PetscScalar *, PetscScalar[SGF_NREC]);
PETSC_INTERN PetscErrorCode SGFReduceXi(SGFWork, PetscScalar *, PetscScalar[SGF_NREC]);
PETSC_INTERN PetscErrorCode SGFGetR(SGFWork, PetscScalar[]);
PETSC_INTERN PetscErrorCode SGFWorkSetR(SGFWork, const PetscScalar[]);

/* Serial twins on a column-major basis V (leading dimension n); dinv: the inverse diagonal blocks of size bs stored
   row by row (bs = 1: Jacobi), NULL: no preconditioner */
PETSC_INTERN void SGFSpMVDot_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscScalar[], PetscInt, PetscInt, PetscScalar, PetscScalar[], PetscScalar[]);
PETSC_INTERN void SGFOrthogonalize_Ref(PetscInt, PetscInt, const PetscScalar[], PetscBool, PetscScalar[], PetscScalar[]);
PETSC_INTERN void SGFNormalize_Ref(PetscInt, PetscInt, PetscBool, const PetscScalar[], PetscScalar[], PetscScalar *, PetscScalar *);
PETSC_INTERN void SGFPairDots_Ref(PetscInt, PetscInt, const PetscScalar[], PetscScalar[]);
PETSC_INTERN void SGFCoefficients_Ref(PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscScalar[], PetscScalar[]);
PETSC_INTERN void SGFOrthogonalizeDelayed_Ref(PetscInt, PetscInt, const PetscScalar[], PetscScalar[], PetscScalar *);
PETSC_INTERN void SGFResidual_Ref(PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[], PetscScalar *);
PETSC_INTERN void SGFUpdateSolution_Ref(PetscInt, PetscInt, const PetscScalar[], const PetscScalar[], PetscInt, const PetscScalar[], PetscScalar[], PetscScalar[]);
