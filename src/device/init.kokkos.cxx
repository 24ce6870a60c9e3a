/* Kokkos lifetime for the plugin: PETSc does not initialize Kokkos, so the plugin does, once, on first use. */
#include "kokkosimpl.hpp"
#include <petscdevice.h>

static PetscBool gs_kokkos_ours = PETSC_FALSE; /* we initialized it, so we finalize it */

static PetscErrorCode GSKokkosFinalize(void)
{
  PetscFunctionBegin;
  if (gs_kokkos_ours && Kokkos::is_initialized()) GSCallKokkos(Kokkos::finalize());
  gs_kokkos_ours = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Team kernels launched dependent (kokkosimpl.hpp) on sm_90 and later, unless -gpustream_dependent_launch false; the
   option is read on every backend, so that a bad value is an error there too */
static PetscErrorCode SetDependentLaunch(void)
{
  PetscBool on = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_dependent_launch", GS_OPTION_BOOL, NULL, 0));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-gpustream_dependent_launch", &on, NULL));
#if defined(GS_OWN_TEAM_LAUNCH)
  int dev, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) (void)cudaGetLastError();
  gpustream::DependentLaunch() = on && major >= 9;
#else
  (void)on; /* team kernels go through Kokkos::parallel_for, or run on the host */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace
{
__global__ void ProbeKernel(int *p)
{
  *p = 1;
}
} // namespace

/* One kernel of this build on the device, before Kokkos starts: Kokkos ends the program when its own first kernel
   cannot run (a build for another GPU architecture); here that is a PETSc error that says why */
static PetscErrorCode ProbeDevice(int dev)
{
  int        *d = nullptr, h = 0;
  cudaError_t e = cudaSetDevice(dev);

  PetscFunctionBegin;
  if (e == cudaSuccess) e = cudaMalloc((void **)&d, sizeof(int));
  if (e == cudaSuccess) {
    ProbeKernel<<<1, 1>>>(d);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  if (d) (void)cudaFree(d);
  PetscCheck(e == cudaSuccess && h == 1, PETSC_COMM_SELF, PETSC_ERR_GPU, "CUDA device %d cannot run the plugin's kernels: %s (%s); is the plugin built for this GPU's architecture?", dev, cudaGetErrorName(e), cudaGetErrorString(e));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode GSKokkosInitialize(void)
{
  PetscFunctionBegin;
  PetscCall(SetDependentLaunch());
  if (Kokkos::is_initialized()) PetscFunctionReturn(PETSC_SUCCESS);
  {
    char  arg0[] = "petscgpustream", devarg[64] = "";
    char *argv[] = {arg0, devarg, nullptr};
    int   argc   = 1;
#if defined(KOKKOS_ENABLE_CUDA)
    { /* one GPU per process: PETSc's, whose vectors the plugin reads in place, else the node-local rank picks it */
      MPI_Comm    node;
      PetscMPIInt lrank;
      int         ndev = 0, dev;
      PetscCallMPI(MPI_Comm_split_type(PETSC_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
      PetscCallMPI(MPI_Comm_rank(node, &lrank));
      PetscCallMPI(MPI_Comm_free(&node));
      PetscCheck(cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "No CUDA device found");
      dev = (int)(lrank % ndev);
#  if defined(GS_DEVICE_VECTORS)
      {
        PetscDeviceContext dctx;
        PetscDevice        pdev;
        PetscDeviceType    type;
        PetscInt           id;
        PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
        PetscCall(PetscDeviceContextGetDevice(dctx, &pdev));
        PetscCall(PetscDeviceGetType(pdev, &type));
        PetscCall(PetscDeviceGetDeviceId(pdev, &id));
        if (type == PETSC_DEVICE_CUDA && id >= 0 && id < ndev) dev = (int)id;
      }
#  endif
      PetscCall(ProbeDevice(dev));
      PetscCall(PetscSNPrintf(devarg, sizeof(devarg), "--kokkos-device-id=%d", dev));
      argc = 2;
    }
#endif
    GSCallKokkos(Kokkos::initialize(argc, argv));
  }
  gs_kokkos_ours = PETSC_TRUE;
  PetscCall(PetscRegisterFinalize(GSKokkosFinalize));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *GSExecutionSpace(void)
{
  return gpustream::Exec::name();
}

PetscBool GSOnDevice(void)
{
  return gpustream::OnDevice() ? PETSC_TRUE : PETSC_FALSE;
}
