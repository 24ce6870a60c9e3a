/* PETSc GPUStream: GPU matrices and fused pipelined Krylov solvers for PETSc, as a plugin. */
#pragma once

#include <petscksp.h>

/* Matrix type: CSR held in Kokkos views on the default execution space (see MatCreate_GPUStream) */
#define MATGPUSTREAM "gpustream"

/* Solver package of the device ILU(0) and ICC(0) factors of sequential gpustream matrices (the default for them where
   the plugin is built with Kokkos-Kernels): -pc_factor_mat_solver_type gpustream */
#define MATSOLVERGPUSTREAM "gpustream"

/* Krylov methods with fused kernels */
#define KSPPIPECGFUSED "pipecgfused"
#define KSPPIPEBCGSF   "pipebcgsf"
#define KSPSGMRESF     "sgmresf"
#define KSPCHEBYSHEVF  "chebyshevf"

/* Registers the types and log events; called by PetscDLLibraryRegister_petscgpustream() when the library is
   loaded with -dll_append, and by programs that link the library directly, after PetscInitialize(). */
PETSC_EXTERN PetscErrorCode PetscGPUStreamInitializePackage(void);

PETSC_EXTERN PetscErrorCode MatCreate_GPUStream(Mat);
PETSC_EXTERN PetscErrorCode KSPCreate_PIPECGFUSED(KSP);
PETSC_EXTERN PetscErrorCode KSPCreate_PIPEBCGSF(KSP);
PETSC_EXTERN PetscErrorCode KSPCreate_SGMRESF(KSP);
PETSC_EXTERN PetscErrorCode KSPCreate_CHEBYSHEVF(KSP);

/* Creates a sequential gpustream matrix with the AIJ preallocation arguments */
PETSC_EXTERN PetscErrorCode MatCreateGPUStream(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
