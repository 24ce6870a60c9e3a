/* MatMult of a gpustream matrix on the device, on one or several processes (one GPU each): the 2D 5-point Laplacian
   (as bench_poisson), y = A x with device vectors, the halo exchange overlapping the diagonal block's SpMV as the
   solvers run it. For weak and strong scaling on several GPUs.
     mpiexec -n P bench_matmult -n <rows> [-reps 50] [-mat_gpustream_halo_shared false]
   Prints one CSV line: nprocs,n,nnz,us,path (the median over -reps of the slowest process's time per product; the
   halo's path: shared, device_mpi, host_mpi, none) */
#include <cmath>

#include "kokkosimpl.hpp"
#include "devicemat.hpp"
#include "kokkostiming.hpp"
#include "poisson2d.h"

using namespace gpustream;

int main(int argc, char **argv)
{
  Mat         A;
  Vec         u, v;
  PetscInt    m, n, reps = 50, nloc;
  PetscReal   nreal = 1e6;
  PetscMPIInt size;
  MatInfo     info;
  GSDeviceMat dA, dB;
  GSHalo      H;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(GSKokkosInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-n", &nreal, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
  m = (PetscInt)(std::sqrt(nreal) + 0.5);
  n = m * m;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatSetFromOptions(A)); /* -mat_gpustream_halo_shared, -mat_gpustream_device_mpi */
  PetscCall(Poisson2DAssemble(A, m));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetLocalSize(A, &nloc, nullptr));
  PetscCall(MatCreateVecs(A, &u, &v));
  PetscCall(VecSet(u, 1.0));
  PetscCall(MatMult(A, u, v)); /* builds the device copy and the halo */
  PetscCall(MatGPUStreamGetDeviceMat(A, &dA, &dB, &H));
  PetscCheck(dA, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONGSTATE, "The matrix is not resident on the device");
  {
    DView<PetscScalar> x("bench::x", (size_t)nloc), y("bench::y", (size_t)nloc);
    double             us, usmax;
    Kokkos::deep_copy(x, 1.0);
    us = TimeUs((int)reps, [&]() {
      MPI_Barrier(PETSC_COMM_WORLD);
      DeviceSpMV(dA, dB, H, x, nullptr, y, nullptr);
    });
    PetscCallMPI(MPI_Allreduce(&us, &usmax, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
    GSHaloPath  path = GS_HALO_PATH_HOST_MPI;
    const char *why;
    if (H) PetscCall(GSHaloGetPath(H, &path, &why));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d,%" PetscInt_FMT ",%.0f,%.2f,%s\n", (int)size, n, (double)info.nz_used, usmax, !H ? "none" : path == GS_HALO_PATH_SHARED ? "shared" : path == GS_HALO_PATH_DEVICE_MPI ? "device_mpi" : "host_mpi"));
  }
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&v));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
