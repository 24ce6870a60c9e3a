/* Entry points of the plugin: PETSc calls PetscDLLibraryRegister_petscgpustream() when a program loads
   libpetscgpustream.so with -dll_append; programs linking the library call PetscGPUStreamInitializePackage(). */
#include "src/sys/gpustreamimpl.h"
#include "src/ksp/chebyshevf/chebyshevfimpl.h"

PetscLogEvent GPUS_MatMult, GPUS_MatSync, GPUS_CopyVec, PCGF_Update, PCGF_SpMVDot, PCGF_Step, PCGF_Dot, PCGF_Reduce, PCGF_Iterations;
PetscLogEvent PBCGSF_Update, PBCGSF_SpMVDot, PBCGSF_Reduce, PBCGSF_Iteration;
PetscLogEvent GPUS_StreamCopy, GPUS_MatMatMult;
PetscLogEvent SGMRESF_Update, SGMRESF_SpMVDot, SGMRESF_Reduce, SGMRESF_Iteration;
PetscLogEvent GPUS_MatSetCOO, GPUS_MatToHost, GPUS_MatMultTranspose, GPUS_ProductSetUp;
PetscLogEvent CHEBF_Step;

static PetscBool PetscGPUStreamPackageInitialized = PETSC_FALSE;

static PetscErrorCode PetscGPUStreamFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscGPUStreamPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
   PetscGPUStreamInitializePackage - Registers `MATGPUSTREAM`, `KSPPIPECGFUSED`, `KSPPIPEBCGSF`, `KSPSGMRESF`, `KSPCHEBYSHEVF` and the plugin's log events.

   Not Collective

   Level: developer

   Note:
   Called when the library is loaded with `-dll_append`; a program that links the library directly calls it
   once after `PetscInitialize()`. Kokkos is initialized later, on first use, unless the program did it.

.seealso: `MATGPUSTREAM`, `KSPPIPECGFUSED`
@*/
PetscErrorCode PetscGPUStreamInitializePackage(void)
{
  PetscFunctionBegin;
  if (PetscGPUStreamPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  PetscGPUStreamPackageInitialized = PETSC_TRUE;
  PetscCall(KSPInitializePackage());
  PetscCall(MatRegister(MATGPUSTREAM, MatCreate_GPUStream));
  PetscCall(MatGPUStreamRegisterAIJReaders());
  PetscCall(KSPRegister(KSPPIPECGFUSED, KSPCreate_PIPECGFUSED));
  PetscCall(KSPRegister(KSPPIPEBCGSF, KSPCreate_PIPEBCGSF));
  PetscCall(KSPRegister(KSPSGMRESF, KSPCreate_SGMRESF));
  PetscCall(KSPRegister(KSPCHEBYSHEVF, KSPCreate_CHEBYSHEVF));
  PetscCall(PetscLogEventRegister("GPUSMatMult", MAT_CLASSID, &GPUS_MatMult));
  PetscCall(PetscLogEventRegister("GPUSMatSync", MAT_CLASSID, &GPUS_MatSync));
  PetscCall(PetscLogEventRegister("GPUSCopyVec", VEC_CLASSID, &GPUS_CopyVec));
  PetscCall(PetscLogEventRegister("GPUSStreamCopy", MAT_CLASSID, &GPUS_StreamCopy));
  PetscCall(PetscLogEventRegister("GPUSMatMatMult", MAT_CLASSID, &GPUS_MatMatMult));
  PetscCall(PetscLogEventRegister("GPUSMatSetCOO", MAT_CLASSID, &GPUS_MatSetCOO));
  PetscCall(PetscLogEventRegister("GPUSMatToHost", MAT_CLASSID, &GPUS_MatToHost));
  PetscCall(PetscLogEventRegister("GPUSMatMultTr", MAT_CLASSID, &GPUS_MatMultTranspose));
  PetscCall(PetscLogEventRegister("GPUSProdSetUp", MAT_CLASSID, &GPUS_ProductSetUp));
  PetscCall(PetscLogEventRegister("ChebFStep", KSP_CLASSID, &CHEBF_Step));
  PetscCall(PetscLogEventRegister("PCGFUpdate", KSP_CLASSID, &PCGF_Update));
  PetscCall(PetscLogEventRegister("PCGFSpMVDot", KSP_CLASSID, &PCGF_SpMVDot));
  PetscCall(PetscLogEventRegister("PCGFStep", KSP_CLASSID, &PCGF_Step));
  PetscCall(PetscLogEventRegister("PCGFDot", KSP_CLASSID, &PCGF_Dot));
  PetscCall(PetscLogEventRegister("PCGFReduce", KSP_CLASSID, &PCGF_Reduce));
  PetscCall(PetscLogEventRegister("PCGFIterations", KSP_CLASSID, &PCGF_Iterations));
  PetscCall(PetscLogEventRegister("PBCGSFUpdate", KSP_CLASSID, &PBCGSF_Update));
  PetscCall(PetscLogEventRegister("PBCGSFSpMVDot", KSP_CLASSID, &PBCGSF_SpMVDot));
  PetscCall(PetscLogEventRegister("PBCGSFReduce", KSP_CLASSID, &PBCGSF_Reduce));
  PetscCall(PetscLogEventRegister("PBCGSFIteration", KSP_CLASSID, &PBCGSF_Iteration));
  PetscCall(PetscLogEventRegister("SGMRESFUpdate", KSP_CLASSID, &SGMRESF_Update));
  PetscCall(PetscLogEventRegister("SGMRESFSpMVDot", KSP_CLASSID, &SGMRESF_SpMVDot));
  PetscCall(PetscLogEventRegister("SGMRESFReduce", KSP_CLASSID, &SGMRESF_Reduce));
  PetscCall(PetscLogEventRegister("SGMRESFIteration", KSP_CLASSID, &SGMRESF_Iteration));
  PetscCall(PetscRegisterFinalize(PetscGPUStreamFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscgpustream(void)
{
  PetscFunctionBegin;
  PetscCall(PetscGPUStreamInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
