static char help[] = "Vectors of any type with a gpustream matrix: the type MatCreateVecs() gives, MatMult() and MatMultAdd()\n\
on these vectors and on host vectors against AIJ, the three solvers on them against the same solve on host vectors,\n\
and what the host and PETSc's own vector operations see afterwards.\n\
  -m <24>                     : grid edge of the 2D Laplacian\n\
  -expect_vec_type <standard> : the type MatCreateVecs() must give (standard or cuda); the tested vectors take\n\
                                -vec_type (default: that type), the tested dense matrices of KSPMatSolve() the\n\
                                dense type of the same kind\n\n";

#include <petscgpustream.h>
#include "laplacian.h"
#if defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
#  include <petscdevice.h> /* PetscDeviceMalloc() */
#endif

/* A vector like A's of the given type (NULL: -vec_type's, else the one MatCreateVecs() gives) */
static PetscErrorCode NewVec(Mat A, VecType type, Vec *v)
{
  Vec         l;
  PetscLayout map;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &l, NULL));
  PetscCall(VecGetLayout(l, &map));
  PetscCall(VecCreate(PETSC_COMM_WORLD, v));
  PetscCall(VecSetLayout(*v, map));
  if (type)
    PetscCall(VecSetType(*v, type));
  else {
    VecType t;
    PetscCall(VecGetType(l, &t));
    PetscCall(VecSetType(*v, t));
    PetscCall(VecSetFromOptions(*v));
  }
  PetscCall(VecDestroy(&l));
  PetscFunctionReturn(0);
}

/* v(i) = 1 + sin(i + shift) from the host; then scaled there and back by PETSc, which moves the data of a device
   vector to the device */
static PetscErrorCode Fill(Vec v, PetscReal shift)
{
  PetscScalar *a;
  PetscInt     lo, hi;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = 1.0 + PetscSinReal((PetscReal)i + shift);
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscCall(VecScale(v, 2.0));
  PetscCall(VecScale(v, 0.5));
  PetscFunctionReturn(0);
}

/* max |u_i - v_i| / max |v_i|, from the host arrays of both */
static PetscErrorCode RelDiff(Vec u, Vec v, PetscReal *d)
{
  const PetscScalar *a, *b;
  PetscInt           n;
  PetscReal          num = 0, den = 0;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(u, &n));
  PetscCall(VecGetArrayRead(u, &a));
  PetscCall(VecGetArrayRead(v, &b));
  for (PetscInt i = 0; i < n; i++) {
    num = PetscMax(num, PetscAbsScalar(a[i] - b[i]));
    den = PetscMax(den, PetscAbsScalar(b[i]));
  }
  PetscCall(VecRestoreArrayRead(u, &a));
  PetscCall(VecRestoreArrayRead(v, &b));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &den, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  *d = den > 0 ? num / den : num;
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char what[], PetscReal d, PetscReal tol)
{
  PetscFunctionBeginUser;
  if (d <= tol)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: matches\n", what));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: DIFFERS, relative difference %g > %g\n", what, (double)d, (double)tol));
  PetscFunctionReturn(0);
}

/* MatMult() and MatMultAdd() (y distinct from z, and y = A x + y) on vectors of type t (x and z of type tx) against
   AIJ on host vectors; then PETSc's own operations on the result, in the order they were queued */
static PetscErrorCode Products(Mat A, Mat Aaij, VecType t, VecType tx, const char tag[])
{
  Vec       x, y, z, xh, yh, zh;
  PetscReal d, n1, n2;
  char      what[128];

  PetscFunctionBeginUser;
  PetscCall(NewVec(A, tx, &x));
  PetscCall(NewVec(A, tx, &z));
  PetscCall(NewVec(A, t, &y));
  PetscCall(NewVec(Aaij, VECSTANDARD, &xh));
  PetscCall(NewVec(Aaij, VECSTANDARD, &yh));
  PetscCall(NewVec(Aaij, VECSTANDARD, &zh));
  PetscCall(Fill(x, 0.0));
  PetscCall(Fill(xh, 0.0));
  PetscCall(Fill(z, 1.0));
  PetscCall(Fill(zh, 1.0));

  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(Aaij, xh, yh));
  PetscCall(RelDiff(y, yh, &d));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatMult", tag));
  PetscCall(Report(what, d, 1e-14));

  PetscCall(MatMultAdd(A, x, z, y));
  PetscCall(MatMultAdd(Aaij, xh, zh, yh));
  PetscCall(RelDiff(y, yh, &d));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatMultAdd", tag));
  PetscCall(Report(what, d, 1e-14));

  PetscCall(MatMultAdd(A, x, y, y));
  PetscCall(MatMultAdd(Aaij, xh, yh, yh));
  PetscCall(RelDiff(y, yh, &d));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatMultAdd in place", tag));
  PetscCall(Report(what, d, 1e-14));

  /* a chain of PETSc's operations and products with nothing read on the host in between: each must see the last */
  for (int k = 0; k < 20; k++) {
    PetscCall(VecAXPY(x, 0.25, y));
    PetscCall(MatMult(A, x, y));
    PetscCall(VecScale(y, 0.125));
    PetscCall(VecAXPY(xh, 0.25, yh));
    PetscCall(MatMult(Aaij, xh, yh));
    PetscCall(VecScale(yh, 0.125));
  }
  PetscCall(VecNorm(y, NORM_2, &n1));
  PetscCall(VecNorm(yh, NORM_2, &n2));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s 20 products between vector operations, norm", tag));
  PetscCall(Report(what, PetscAbsReal(n1 - n2) / n2, 1e-12));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yh));
  PetscCall(VecDestroy(&zh));
  PetscFunctionReturn(0);
}

/* A Laplacian-like matrix assembled from coordinates (each diagonal entry given twice, which COO assembly adds), as
   gpustream and as AIJ: products on the tested vectors equal AIJ's, also after new values on the same pattern */
static PetscErrorCode Coordinates(PetscInt m, VecType vtype)
{
  Mat          A[2];
  MatType      types[2] = {"gpustream", MATAIJ};
  PetscInt     rstart, rend, ncoo = 0, *ci, *cj, n = m * m;
  PetscScalar *cv;
  Vec          x[2], y[2];
  PetscReal    d;

  PetscFunctionBeginUser;
  for (int t = 0; t < 2; t++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A[t]));
    PetscCall(MatSetSizes(A[t], PETSC_DECIDE, PETSC_DECIDE, n, n));
    PetscCall(MatSetType(A[t], types[t]));
  }
  PetscCall(MatSetUp(A[1]));
  PetscCall(MatGetOwnershipRange(A[1], &rstart, &rend));
  PetscCall(PetscMalloc3(6 * (rend - rstart), &ci, 6 * (rend - rstart), &cj, 6 * (rend - rstart), &cv));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt  i = row % m, j = row / m, cols[4] = {row - 1, row + 1, row - m, row + m};
    const PetscBool in[4] = {i > 0, i<m - 1, j> 0, j < m - 1};
    for (int h = 0; h < 2; h++) ci[ncoo] = row, cj[ncoo] = row, cv[ncoo++] = 2.0 + 0.25 * (row % 3);
    for (int k = 0; k < 4; k++)
      if (in[k]) ci[ncoo] = row, cj[ncoo] = cols[k], cv[ncoo++] = -1.0 - 0.125 * k;
  }
  for (int round = 0; round < 2; round++) {
    for (int t = 0; t < 2; t++) {
      if (!round) { /* PETSc may change the index arrays it is given */
        PetscInt *i, *j;
        PetscCall(PetscMalloc2(ncoo, &i, ncoo, &j));
        PetscCall(PetscArraycpy(i, ci, ncoo));
        PetscCall(PetscArraycpy(j, cj, ncoo));
        PetscCall(MatSetPreallocationCOO(A[t], ncoo, i, j));
        PetscCall(PetscFree2(i, j));
      }
      if (round && t == 0) { /* gpustream's second values from a vector's array: in device memory for device vectors */
        Vec                vv;
        const PetscScalar *va;
        PetscMemType       mtype;
        PetscCall(VecCreate(PETSC_COMM_SELF, &vv));
        PetscCall(VecSetSizes(vv, ncoo, ncoo));
        PetscCall(VecSetType(vv, vtype));
        PetscCall(VecPlaceArray(vv, cv)); /* then a copy owned by the vector, where PETSc keeps it */
        {
          Vec vc;
          PetscCall(VecDuplicate(vv, &vc));
          PetscCall(VecCopy(vv, vc));
          PetscCall(VecResetArray(vv));
          PetscCall(VecDestroy(&vv));
          vv = vc;
        }
        PetscCall(VecScale(vv, 2.0)); /* by PETSc, on the device for device vectors */
        PetscCall(VecScale(vv, 0.5));
        PetscCall(VecGetArrayReadAndMemType(vv, &va, &mtype));
        PetscCall(MatSetValuesCOO(A[t], va, INSERT_VALUES));
        PetscCall(VecRestoreArrayReadAndMemType(vv, &va));
        PetscCall(VecDestroy(&vv));
      } else
        PetscCall(MatSetValuesCOO(A[t], cv, INSERT_VALUES));
    }
    PetscCall(NewVec(A[0], NULL, &x[0]));
    PetscCall(NewVec(A[0], NULL, &y[0]));
    PetscCall(NewVec(A[1], VECSTANDARD, &x[1]));
    PetscCall(NewVec(A[1], VECSTANDARD, &y[1]));
    for (int t = 0; t < 2; t++) {
      PetscCall(Fill(x[t], 0.5));
      PetscCall(MatMult(A[t], x[t], y[t]));
    }
    PetscCall(RelDiff(y[0], y[1], &d));
    PetscCall(Report(round ? "MatSetValuesCOO, new values on the same pattern from a tested vector's array, MatMult" : "MatSetPreallocationCOO and MatSetValuesCOO, MatMult", d, 1e-14));
    for (int t = 0; t < 2; t++) {
      PetscCall(VecDestroy(&x[t]));
      PetscCall(VecDestroy(&y[t]));
    }
    for (PetscInt k = 0; k < ncoo; k++) cv[k] *= 1.5 + 0.001 * (k % 5);
  }
  PetscCall(PetscFree3(ci, cj, cv));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&A[t]));
  PetscFunctionReturn(0);
}

/* Copies from the device to the host that PETSc's log counted so far (a PETSc without devices counts none) */
static PetscLogDouble GpuToCpuCopies(void)
{
#if defined(PETSC_HAVE_DEVICE)
  return petsc_gtoc_ct;
#else
  return 0;
#endif
}

/* A gpustream matrix assembled from coordinates gets new values step after step, each followed by a solve with
   pipecgfused and Jacobi on the tested vectors, against KSPCG and Jacobi on an AIJ twin given the same values from the
   host. The gpustream matrix takes them from a vector's array (in device memory for device vectors: written there by
   PETSc, read there by the plugin) on even steps, and on odd ones from an array the program allocates itself (with
   PETSc's device allocator for device vectors, in a PETSc with CUDA). MatSetValuesCOO() must copy nothing from the
   device to the host (a copy the other way, host values to the device, is counted on a device only). */
static PetscErrorCode CoordinateSteps(PetscInt m, VecType vtype, PetscBool device)
{
  Mat            A[2];
  MatType        types[2]  = {"gpustream", MATAIJ};
  KSPType        ktypes[2] = {"pipecgfused", KSPCG};
  KSP            ksp[2];
  PetscInt       rstart, rend, ncoo = 0, *ci, *cj, n = m * m, diffits = 0;
  PetscScalar   *cv;
  Vec            b[2], x[2];
  PetscReal      dmax = 0;
  PetscLogDouble gtoc = 0;

  PetscFunctionBeginUser;
  for (int t = 0; t < 2; t++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A[t]));
    PetscCall(MatSetSizes(A[t], PETSC_DECIDE, PETSC_DECIDE, n, n));
    PetscCall(MatSetType(A[t], types[t]));
  }
  PetscCall(MatSetUp(A[1]));
  PetscCall(MatGetOwnershipRange(A[1], &rstart, &rend));
  PetscCall(PetscMalloc3(6 * (rend - rstart), &ci, 6 * (rend - rstart), &cj, 6 * (rend - rstart), &cv));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt  i = row % m, j = row / m, cols[4] = {row - 1, row + 1, row - m, row + m};
    const PetscBool in[4] = {i > 0, i<m - 1, j> 0, j < m - 1};
    for (int h = 0; h < 2; h++) ci[ncoo] = row, cj[ncoo++] = row;
    for (int k = 0; k < 4; k++)
      if (in[k]) ci[ncoo] = row, cj[ncoo++] = cols[k];
  }
  for (int t = 0; t < 2; t++) {
    PetscInt *i, *j;
    PC        pc;
    PetscCall(PetscMalloc2(ncoo, &i, ncoo, &j));
    PetscCall(PetscArraycpy(i, ci, ncoo));
    PetscCall(PetscArraycpy(j, cj, ncoo));
    PetscCall(MatSetPreallocationCOO(A[t], ncoo, i, j));
    PetscCall(PetscFree2(i, j));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp[t]));
    PetscCall(KSPSetOperators(ksp[t], A[t], A[t]));
    PetscCall(KSPSetType(ksp[t], ktypes[t]));
    PetscCall(KSPGetPC(ksp[t], &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(ksp[t], 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  }
  PetscCall(NewVec(A[0], NULL, &b[0]));
  PetscCall(NewVec(A[0], NULL, &x[0]));
  PetscCall(NewVec(A[1], VECSTANDARD, &b[1]));
  PetscCall(NewVec(A[1], VECSTANDARD, &x[1]));
  for (int step = 0; step < 4; step++) {
    PetscLogDouble before;
    PetscInt       its[2];
    PetscReal      d;
    PetscInt       k = 0;
    for (PetscInt row = rstart; row < rend; row++) { /* the diagonal twice (summed), then the neighbours */
      const PetscInt i = row % m, j = row / m;
      const PetscInt nn = (i > 0) + (i < m - 1) + (j > 0) + (j < m - 1);
      for (int h = 0; h < 2; h++) cv[k++] = 2.0 + 0.25 * ((row + step) % 3);
      for (PetscInt q = 0; q < nn; q++) cv[k++] = -1.0 + 0.125 * step;
    }
    if (step % 2 == 0) { /* a vector's array: where PETSc keeps it */
      Vec                vv;
      const PetscScalar *va;
      PetscMemType       mtype;
      PetscCall(VecCreate(PETSC_COMM_SELF, &vv));
      PetscCall(VecSetSizes(vv, ncoo, ncoo));
      PetscCall(VecSetType(vv, vtype));
      {
        PetscScalar *w;
        PetscCall(VecGetArrayWrite(vv, &w));
        PetscCall(PetscArraycpy(w, cv, ncoo));
        PetscCall(VecRestoreArrayWrite(vv, &w));
      }
      PetscCall(VecScale(vv, 2.0)); /* by PETSc, on the device for device vectors */
      PetscCall(VecScale(vv, 0.5));
      PetscCall(VecGetArrayReadAndMemType(vv, &va, &mtype));
      before = GpuToCpuCopies();
      PetscCall(MatSetValuesCOO(A[0], va, INSERT_VALUES));
      gtoc += GpuToCpuCopies() - before;
      PetscCall(VecRestoreArrayReadAndMemType(vv, &va));
      PetscCall(VecDestroy(&vv));
    } else { /* an array of the program's own */
      PetscScalar *dv = NULL;
#if defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
      PetscDeviceContext dctx = NULL;
      if (device) { /* PETSc copies between memory it allocated (and so knows the kind of) only */
        PetscScalar *hv;
        PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
        PetscCall(PetscDeviceMalloc(dctx, PETSC_MEMTYPE_HOST, ncoo, &hv));
        PetscCall(PetscArraycpy(hv, cv, ncoo));
        PetscCall(PetscDeviceMalloc(dctx, PETSC_MEMTYPE_CUDA, ncoo, &dv));
        PetscCall(PetscDeviceArrayCopy(dctx, dv, hv, ncoo));
        PetscCall(PetscDeviceContextSynchronize(dctx));
        PetscCall(PetscDeviceFree(dctx, hv));
      } else
#endif
      {
        PetscCall(PetscMalloc1(ncoo, &dv));
        PetscCall(PetscArraycpy(dv, cv, ncoo));
      }
      before = GpuToCpuCopies();
      PetscCall(MatSetValuesCOO(A[0], dv, INSERT_VALUES));
      gtoc += GpuToCpuCopies() - before;
#if defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
      if (device)
        PetscCall(PetscDeviceFree(dctx, dv));
      else
#endif
        PetscCall(PetscFree(dv));
    }
    PetscCall(MatSetValuesCOO(A[1], cv, INSERT_VALUES));
    for (int t = 0; t < 2; t++) {
      PetscCall(VecSet(b[t], 1.0));
      PetscCall(KSPSolve(ksp[t], b[t], x[t]));
      PetscCall(KSPGetIterationNumber(ksp[t], &its[t]));
    }
    PetscCall(RelDiff(x[0], x[1], &d));
    dmax = PetscMax(dmax, d);
    diffits += PetscAbsInt(its[0] - its[1]) > 2;
  }
  (void)device;
  if (!diffits && dmax <= 1e-9)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO from the tested kind of memory, 4 steps each followed by pipecgfused with jacobi: AIJ's iterations and solutions\n"));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO from the tested kind of memory, 4 steps: DIFFERS: %" PetscInt_FMT " steps of other iterations, solutions %g apart\n", diffits, (double)dmax));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &gtoc, 1, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatSetValuesCOO copied %s from the device to the host\n", gtoc == 0 ? "nothing" : "VALUES"));
  for (int t = 0; t < 2; t++) {
    PetscCall(KSPDestroy(&ksp[t]));
    PetscCall(VecDestroy(&b[t]));
    PetscCall(VecDestroy(&x[t]));
    PetscCall(MatDestroy(&A[t]));
  }
  PetscCall(PetscFree3(ci, cj, cv));
  PetscFunctionReturn(0);
}

/* One solve of b = (1, ..., 1), from zero or from a nonzero guess */
static PetscErrorCode Solve(Mat A, KSPType ktype, PCType ptype, PetscBool guess, Vec b, Vec x, PetscInt *its, PetscReal *rnorm, KSPConvergedReason *reason)
{
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, ktype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, ptype));
  PetscCall(KSPSetTolerances(ksp, 1e-9, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(VecSet(b, 1.0));
  if (guess) {
    PetscCall(Fill(x, 2.0));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  }
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetResidualNorm(ksp, rnorm));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* The solver on vectors of the tested type against the same solver on host vectors: the same iterations and
   residual norm, the same solution seen from the host, then a write from the host that PETSc's norm sees */
static PetscErrorCode Solvers(Mat A, KSPType ktype, PCType ptype, PetscBool guess)
{
  PetscBool          host;
  const char        *pname;
  Vec                b, x, bh, xh;
  PetscInt           its, itsh, n;
  PetscReal          r, rh, d, nrm, bnorm;
  KSPConvergedReason reason, reasonh;
  PetscScalar       *a;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(ptype, PCSOR, &host));
  if (!host) PetscCall(PetscStrcmp(ptype, PCBJACOBI, &host));
  pname = host ? "a host PC" : ptype; /* SOR on one process, block Jacobi on several */
  PetscCall(NewVec(A, NULL, &b));
  PetscCall(NewVec(A, NULL, &x));
  PetscCall(NewVec(A, VECSTANDARD, &bh));
  PetscCall(NewVec(A, VECSTANDARD, &xh));
  PetscCall(Solve(A, ktype, ptype, guess, b, x, &its, &r, &reason));
  PetscCall(Solve(A, ktype, ptype, guess, bh, xh, &itsh, &rh, &reasonh));
  PetscCall(RelDiff(x, xh, &d));
  /* PETSc's own vector operations (r = b - A x from a guess, the PC's) round differently on the device and the host:
     the residual norms are compared at the scale of b */
  PetscCall(VecNorm(bh, NORM_2, &bnorm));
  if (its == itsh && reason == reasonh && reason > 0 && PetscAbsReal(r - rh) <= 1e-12 * bnorm && d <= 1e-10)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s%s: converged, same iterations, residual and solution as on host vectors\n", ktype, pname, guess ? " from a guess" : ""));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s%s: DIFFERS: %" PetscInt_FMT " and %" PetscInt_FMT " iterations, reasons %s and %s, residuals %g and %g, solutions %g apart\n", ktype, pname, guess ? " from a guess" : "", its, itsh,
                          KSPConvergedReasons[reason], KSPConvergedReasons[reasonh], (double)r, (double)rh, (double)d));
  /* the host's write is what PETSc's next operation sees */
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = 3.0;
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetSize(x, &n));
  PetscCall(VecNorm(x, NORM_1, &nrm));
  if (nrm != 3.0 * n) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: the host's write after the solve is not seen: norm %g\n", ktype, pname, (double)nrm));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscFunctionReturn(0);
}

/* KSPMatSolve() with pipecgfused on dense matrices of the given type (the device's with device vectors) against host
   dense matrices: the same iterations and solution */
static PetscErrorCode MatSolveBlock(Mat A, MatType dtype, PCType ptype)
{
  Mat       B[2], X[2];
  MatType   types[2] = {dtype, MATDENSE};
  PetscInt  n, N, its[2], k = 3;
  KSP       ksp;
  PC        pc;
  PetscReal d = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(MatGetSize(A, &N, NULL));
  for (int t = 0; t < 2; t++) {
    for (int w = 0; w < 2; w++) {
      Mat *M = w ? &X[t] : &B[t];
      PetscCall(MatCreate(PETSC_COMM_WORLD, M));
      PetscCall(MatSetSizes(*M, n, PETSC_DECIDE, N, k));
      PetscCall(MatSetType(*M, types[t]));
      PetscCall(MatSetUp(*M));
    }
    { /* written on the host, then scaled there and back by PETSc (on the device for a device matrix) */
      PetscScalar *b;
      PetscInt     lo;
      PetscCall(MatGetOwnershipRange(B[t], &lo, NULL));
      PetscCall(MatDenseGetArrayWrite(B[t], &b));
      for (PetscInt j = 0; j < k; j++)
        for (PetscInt i = 0; i < n; i++) b[i + j * n] = 1.0 + PetscSinReal((PetscReal)(lo + i) + 3.0 * j);
      PetscCall(MatDenseRestoreArrayWrite(B[t], &b));
      PetscCall(MatScale(B[t], 2.0));
      PetscCall(MatScale(B[t], 0.5));
    }
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, "pipecgfused"));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, ptype));
    PetscCall(KSPSetTolerances(ksp, 1e-9, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(KSPMatSolve(ksp, B[t], X[t]));
    PetscCall(KSPGetIterationNumber(ksp, &its[t]));
    PetscCall(KSPDestroy(&ksp));
  }
  {
    const PetscScalar *a, *b;
    PetscReal          num = 0, den = 0;
    PetscCall(MatDenseGetArrayRead(X[0], &a));
    PetscCall(MatDenseGetArrayRead(X[1], &b));
    for (PetscInt i = 0; i < n * k; i++) {
      num = PetscMax(num, PetscAbsScalar(a[i] - b[i]));
      den = PetscMax(den, PetscAbsScalar(b[i]));
    }
    PetscCall(MatDenseRestoreArrayRead(X[0], &a));
    PetscCall(MatDenseRestoreArrayRead(X[1], &b));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &den, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    d = num / den;
  }
  if (its[0] == its[1] && d <= 1e-12)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSPMatSolve pipecgfused %s, %" PetscInt_FMT " columns: same iterations and solution as on host dense matrices\n", ptype, k));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSPMatSolve pipecgfused %s: DIFFERS: %" PetscInt_FMT " and %" PetscInt_FMT " iterations, solutions %g apart\n", ptype, its[0], its[1], (double)d));
  for (int t = 0; t < 2; t++) {
    PetscCall(MatDestroy(&B[t]));
    PetscCall(MatDestroy(&X[t]));
  }
  PetscFunctionReturn(0);
}

/* Whether B's vectors (both sides) are of A's vector type and bound as A's, and B is bound as A */
static PetscErrorCode LikeOperator(Mat A, Mat B, PetscBool *like)
{
  Vec       v, r, l;
  VecType   t, tr, tl;
  PetscBool bA, bB, bv, br, bl, sr, sl;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &v, NULL));
  PetscCall(MatCreateVecs(B, &r, &l));
  PetscCall(VecGetType(v, &t));
  PetscCall(VecGetType(r, &tr));
  PetscCall(VecGetType(l, &tl));
  PetscCall(PetscStrcmp(t, tr, &sr));
  PetscCall(PetscStrcmp(t, tl, &sl));
  PetscCall(MatBoundToCPU(A, &bA));
  PetscCall(MatBoundToCPU(B, &bB));
  PetscCall(VecBoundToCPU(v, &bv));
  PetscCall(VecBoundToCPU(r, &br));
  PetscCall(VecBoundToCPU(l, &bl));
  *like = (PetscBool)(sr && sl && bA == bB && br == bv && bl == bv);
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&l));
  PetscFunctionReturn(0);
}

/* PETSc takes a matrix of a host type as bound to the CPU, and GAMG binds its levels where the fine operator is bound:
   a gpustream matrix is bound exactly when its vectors are host ones, and GAMG's first coarse level gives vectors of
   the fine level's type, bound as they are, and so does its finest interpolation */
static PetscErrorCode GAMGLevels(Mat A)
{
  KSP       ksp, smooth;
  PC        pc;
  Mat       Al, P;
  Vec       v;
  PetscInt  nlev;
  PetscBool bA, host, like;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &v, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &host, VECSEQ, VECMPI, VECSTANDARD, ""));
  PetscCall(MatBoundToCPU(A, &bA));
#if !defined(PETSC_HAVE_DEVICE)
  host = PETSC_TRUE; /* everything is on the CPU, and bound there */
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatBoundToCPU: %s\n", bA == host ? "as its vectors' kind" : "NOT AS ITS VECTORS' KIND"));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(KSPSetOptionsPrefix(ksp, "gamg_")); /* -gamg_pc_gamg_agg_nsmooths 0: the tentative interpolation */
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCMGGetLevels(pc, &nlev));
  if (nlev < 2)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GAMG: ONE LEVEL ONLY\n"));
  else {
    PetscCall(PCMGGetSmoother(pc, nlev - 2, &smooth));
    PetscCall(KSPGetOperators(smooth, &Al, NULL));
    PetscCall(LikeOperator(A, Al, &like));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GAMG's first coarse level: %s\n", like ? "vectors of the fine level's type, bound as they are" : "OTHER VECTORS OR BINDING THAN THE FINE LEVEL'S"));
    PetscCall(PCMGGetInterpolation(pc, nlev - 1, &P));
    PetscCall(LikeOperator(A, P, &like));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GAMG's finest interpolation: %s\n", like ? "vectors of the fine level's type, bound as it is" : "OTHER VECTORS OR BINDING THAN THE FINE LEVEL'S"));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(0);
}

/* A submatrix made by AIJ's code (PCGAMG's process reduction, MatCreateSubMatrix()) gives vectors of its source's type
   and is bound as its source is (PETSc passes the vector type on, the binding follows the settings taken) */
static PetscErrorCode SubMatrixVectors(Mat A)
{
  Mat       S;
  IS        rows;
  PetscInt  lo, hi;
  PetscBool like;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  PetscCall(ISCreateStride(PETSC_COMM_WORLD, hi - lo, lo, 1, &rows));
  PetscCall(MatCreateSubMatrix(A, rows, rows, MAT_INITIAL_MATRIX, &S));
  PetscCall(LikeOperator(A, S, &like));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatCreateSubMatrix: %s\n", like ? "vectors of its source's type, bound as it is" : "OTHER VECTORS OR BINDING THAN ITS SOURCE'S"));
  PetscCall(MatDestroy(&S));
  PetscCall(ISDestroy(&rows));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A, Aaij;
  Vec         v;
  PetscInt    m          = 24;
  char        expect[64] = "standard";
  PetscBool   ok;
  PetscMPIInt size;
  const char *ktypes[] = {"pipecgfused", "pipebcgsf", "sgmresf"};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_vec_type", expect, sizeof(expect), NULL));
  PetscCall(Laplacian2D("gpustream", m, 4.5, PETSC_FALSE, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(Laplacian2D(MATAIJ, m, 4.5, PETSC_FALSE, &Aaij));

  PetscCall(MatCreateVecs(A, &v, NULL));
  PetscCall(PetscStrcmp(expect, "cuda", &ok));
  if (ok)
    PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &ok, VECSEQCUDA, VECMPICUDA, ""));
  else
    PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &ok, VECSEQ, VECMPI, ""));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatCreateVecs: %s\n", ok ? "the expected type" : "NOT the expected type"));
  PetscCall(VecDestroy(&v));

  PetscCall(GAMGLevels(A));
  PetscCall(SubMatrixVectors(A));
  PetscCall(Products(A, Aaij, NULL, NULL, "tested vectors:"));
  PetscCall(Products(A, Aaij, VECSTANDARD, NULL, "host y, tested x and z:"));
  {
    Vec       t;
    PetscBool iscuda;
    PetscCall(NewVec(A, NULL, &t));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)t, &iscuda, VECSEQCUDA, VECMPICUDA, ""));
    PetscCall(Coordinates(m, iscuda ? VECCUDA : VECSTANDARD)); /* values of the tested kind */
    PetscCall(CoordinateSteps(m, iscuda ? VECCUDA : VECSTANDARD, iscuda));
    PetscCall(VecDestroy(&t));
  }
  for (int k = 0; k < 3; k++) {
    PetscCall(Solvers(A, ktypes[k], PCNONE, PETSC_FALSE));
    PetscCall(Solvers(A, ktypes[k], PCJACOBI, PETSC_TRUE));
    PetscCall(Solvers(A, ktypes[k], size == 1 ? PCSOR : PCBJACOBI, PETSC_FALSE)); /* applied on the host */
  }
  {
    PetscBool cuda;
    PetscCall(PetscStrcmp(expect, "cuda", &cuda));
    PetscCall(MatSolveBlock(A, cuda ? MATDENSECUDA : MATDENSE, PCNONE));
    PetscCall(MatSolveBlock(A, cuda ? MATDENSECUDA : MATDENSE, PCJACOBI));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aaij));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: host
      args: -malloc_dump

   test:
      suffix: host_2
      nsize: 2
      output_file: output/devicevec_host.out
      args: -m 21

   test:
      suffix: host_3
      nsize: 3
      output_file: output/devicevec_host.out
      args: -m 17

   test:
      suffix: host_4
      nsize: 4
      output_file: output/devicevec_host.out
      args: -m 19

   test:
      suffix: vec_mpi
      output_file: output/devicevec_host.out
      args: -mat_gpustream_vec_type mpi -m 16

   test:
      suffix: vec_mpi_unsmoothed
      output_file: output/devicevec_host.out
      args: -mat_gpustream_vec_type mpi -m 16 -gamg_pc_gamg_agg_nsmooths 0

   test:
      suffix: bad_vec_type
      args: -mat_gpustream_vec_type nosuchtype
      error: 1
      filter: grep -o "mat_gpustream_vec_type nosuchtype: give auto or a vector type" | sort -u

TEST*/
