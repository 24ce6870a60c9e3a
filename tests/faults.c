static char help[] = "Faults and resource limits for the three fused solvers (pipecgfused, pipebcgsf, sgmresf) against their PETSc twins\n\
(KSPCG, KSPBCGS, KSPGMRES) on gpustream matrices split unevenly over the processes (with more than two the first owns no\n\
rows): zero right-hand side, NaN and Inf in b, x0 and the matrix, a zero row and column, the operators' breakdowns\n\
(indefinite for CG, singular with a null space, BiCGStab's, GMRES's happy one), a nonzero initial guess, the iteration\n\
limit, the divergence tolerance; after every fault the same KSP solves a good system. Also create/solve/destroy cycles and\n\
allocations that fail (host memory limited with setrlimit on the CPU backend, device memory filled on a GPU).\n\
  -scenario <cases,cycles,alloc,misuse,devicefull>\n\
  -case <ilu,transpose>, -type <ksp type> : misuse: what is refused\n\
  -cycles <1000> : create/solve/destroy cycles per solver\n\
  -n <2000000>, -margin <41943040> : alloc: rows of the matrix, bytes the address space may grow by\n\
  -leave_mb <MB> : devicefull: device memory left free (default: the default budget's reserve plus 1 GB)\n\
  -v : print the iteration counts\n\n";

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <petscgpustream.h>
#if defined(__GLIBC__)
#  include <malloc.h>
#endif

/* PetscErrorMessage()'s specific message: const in newer PETSc (cmake/probes/ERRORMESSAGE_CONST.c) */
#if defined(GPUSTREAM_PETSC_ERRORMESSAGE_CONST)
typedef const char *ErrorText;
#else
typedef char *ErrorText;
#endif

static PetscBool verbose = PETSC_FALSE;

static const KSPType fusedtypes[3] = {KSPPIPECGFUSED, KSPPIPEBCGSF, KSPSGMRESF};
static const KSPType twintypes[3]  = {KSPCG, KSPBCGS, KSPGMRES};

/* Rows of a process: none on the first when there are more than two, the others 1 : 2 : 3 ... of the rest */
static PetscInt LocalRows(PetscInt N)
{
  PetscMPIInt size, rank;
  PetscInt    skip, np, k, tot;

  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  skip = size > 2;
  np   = size - skip;
  if (rank < skip) return 0;
  k   = rank - skip;
  tot = np * (np + 1) / 2;
  return N * (k * (k + 1) / 2 + k + 1) / tot - N * (k * (k + 1) / 2) / tot;
}

/* -Laplace(u) + pe (1,1).grad(u) on an m x m grid, centred differences scaled by h^2 (symmetric for pe = 0) */
static PetscErrorCode Problem(PetscInt m, PetscReal pe, Mat *A)
{
  const PetscReal c = pe / (2.0 * (m + 1));
  PetscInt        rstart, rend, n = m * m;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, LocalRows(n), LocalRows(n), n, n));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 4, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt ij[2] = {row % m, row / m}, stride[2] = {1, m};
    PetscCall(MatSetValue(*A, row, row, 4.0, INSERT_VALUES));
    for (int d = 0; d < 2; d++)
      for (int side = -1; side <= 1; side += 2)
        if (ij[d] + side >= 0 && ij[d] + side < m) PetscCall(MatSetValue(*A, row, row + side * stride[d], -1.0 + side * c, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          res; /* true relative residual */
} Result;

/* CG: left Jacobi, preconditioned norm (KSPCG's defaults); BiCGStab and GMRES: right Jacobi, unpreconditioned norm */
static PetscErrorCode Configure(KSP ksp, KSPType type, Mat A, PetscReal rtol, PetscReal atol, PetscReal dtol, PetscInt maxit)
{
  PC        pc;
  PetscBool cg;

  PetscFunctionBeginUser;
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(PetscStrcmp(type, KSPCG, &cg));
  if (!cg) PetscCall(PetscStrcmp(type, KSPPIPECGFUSED, &cg));
  if (!cg) {
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  }
  PetscCall(KSPSetTolerances(ksp, rtol, atol, dtol, maxit));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* Solves with ksp (x0: the initial guess, or NULL for zero); x gets the solution */
static PetscErrorCode Run(KSP ksp, Mat A, Vec b, Vec x0, Vec x, Result *out)
{
  Vec       r;
  PetscReal nb;

  PetscFunctionBeginUser;
  if (x0) {
    PetscCall(VecCopy(x0, x));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  } else
    PetscCall(VecSet(x, 1.0)); /* overwritten: a zero guess must not read it */
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &out->its));
  PetscCall(KSPGetConvergedReason(ksp, &out->reason));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &out->res));
  PetscCall(VecNorm(b, NORM_2, &nb));
  out->res = nb > 0 ? out->res / nb : out->res;
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

/* A fresh KSP of the given type */
static PetscErrorCode RunFresh(KSPType type, Mat A, Vec b, Vec x0, PetscReal rtol, PetscReal atol, PetscReal dtol, PetscInt maxit, Vec x, Result *out)
{
  KSP ksp;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(Configure(ksp, type, A, rtol, atol, dtol, maxit));
  PetscCall(Run(ksp, A, b, x0, x, out));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* A copy of A with v at (row, row) */
static PetscErrorCode Poisoned(Mat A, PetscInt row, PetscScalar v, Mat *B)
{
  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  PetscCall(MatSetValue(*B, row, row, v, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* A copy of v with w at entry i */
static PetscErrorCode Poison(Vec v, PetscInt i, PetscScalar w, Vec *out)
{
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(v, out));
  PetscCall(VecCopy(v, *out));
  PetscCall(VecSetValue(*out, i, w, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(*out));
  PetscCall(VecAssemblyEnd(*out));
  PetscFunctionReturn(0);
}

/* A, with rows spread as LocalRows() does, from its entries (i, j, v) given by f for each local row i */
static PetscErrorCode Rows(PetscInt N, PetscInt (*f)(PetscInt, PetscInt, PetscInt[], PetscScalar[]), Mat *A)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, LocalRows(N), LocalRows(N), N, N));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 4, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    cols[5], n;
    PetscScalar v[5];
    n = f(N, i, cols, v);
    PetscCall(MatSetValues(*A, 1, &i, n, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* the Laplacian of the m x m grid (N = m^2) with Neumann boundaries: rows sum to 0, constants are its null space */
static PetscInt NeumannRow(PetscInt N, PetscInt row, PetscInt cols[], PetscScalar v[])
{
  const PetscInt m = (PetscInt)(sqrt((double)N) + 0.5), ij[2] = {row % m, row / m}, stride[2] = {1, m};
  PetscInt       n = 1;

  cols[0] = row;
  v[0]    = 0;
  for (int d = 0; d < 2; d++)
    for (int side = -1; side <= 1; side += 2)
      if (ij[d] + side >= 0 && ij[d] + side < m) {
        cols[n] = row + side * stride[d];
        v[n++]  = -1.0;
        v[0] += 1.0;
      }
  return n;
}

/* swaps the pairs (2k, 2k+1) */
static PetscInt PermutationRow(PetscInt N, PetscInt row, PetscInt cols[], PetscScalar v[])
{
  (void)N;
  cols[0] = row ^ 1;
  v[0]    = 1.0;
  return 1;
}

/* three eigenvalues, 0.5 and 1.5 of the blocks [1 0.5; 0.5 1] on the pairs (4k, 4k+1), 1 on the other rows; its unit
   diagonal makes Jacobi the identity */
static PetscInt ThreeValuesRow(PetscInt N, PetscInt row, PetscInt cols[], PetscScalar v[])
{
  (void)N;
  cols[0] = row;
  v[0]    = 1.0;
  if (row % 4 > 1) return 1;
  cols[1] = row ^ 1;
  v[1]    = 0.5;
  return 2;
}

/* The Neumann Laplacian with its null space set, and b = A x for a random x (consistent) */
static PetscErrorCode Singular(PetscInt N, PetscRandom rnd, Mat *A, Vec *b)
{
  MatNullSpace nsp;
  Vec          x;

  PetscFunctionBeginUser;
  PetscCall(Rows(N, NeumannRow, A));
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
  PetscCall(MatSetNullSpace(*A, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(MatCreateVecs(*A, &x, b));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(*A, x, *b));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

/* BiCGStab's (t = 1) and GMRES's (t = 2) breakdown problems: a permutation with b = e_0; three eigenvalues with b_i =
   1 + (i mod 2), which has a part in each eigenspace (N a multiple of 4) */
static PetscErrorCode Breakdown(int t, PetscInt N, Mat *A, Vec *b)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(Rows(N, t == 1 ? PermutationRow : ThreeValuesRow, A));
  PetscCall(MatCreateVecs(*A, NULL, b));
  PetscCall(VecSet(*b, 0.0));
  PetscCall(VecGetOwnershipRange(*b, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++)
    if (t == 2 || i == 0) PetscCall(VecSetValue(*b, i, t == 1 ? 1.0 : 1.0 + i % 2, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(*b));
  PetscCall(VecAssemblyEnd(*b));
  PetscFunctionReturn(0);
}

/* After a fault: the same KSP solves a good system (A, random b) as a fresh KSP does: the same iterations */
static PetscErrorCode GoodAgain(int t, KSP ksp, PetscRandom rnd)
{
  Result g, h;
  Vec    x, y, bg;
  Mat    Ag;

  PetscFunctionBeginUser;
  PetscCall(Problem(20, t ? 20.0 : 0.0, &Ag));
  PetscCall(MatCreateVecs(Ag, &x, &bg));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecSetRandom(bg, rnd));
  PetscCall(Configure(ksp, fusedtypes[t], Ag, 1e-8, 0.0, 1e5, 1000));
  PetscCall(Run(ksp, Ag, bg, NULL, x, &g));
  PetscCall(RunFresh(fusedtypes[t], Ag, bg, NULL, 1e-8, 0.0, 1e5, 1000, y, &h));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; then a good solve: %s\n", g.reason > 0 && g.reason == h.reason && g.its == h.its && g.res < 1e-6 ? "as a fresh KSP" : "DIFFERS FROM A FRESH KSP"));
  PetscCall(VecDestroy(&bg));
  PetscCall(MatDestroy(&Ag));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* One fault: the fused solver on the reused KSP ksp, its twin on a fresh one, the same reason (and, when they
   converge or hit the limit, iterations within max(2, 10%)); then GoodAgain() */
static PetscErrorCode Fault(int t, KSP ksp, const char *label, Mat A, Vec b, Vec x0, PetscReal rtol, PetscReal atol, PetscReal dtol, PetscInt maxit, PetscRandom rnd)
{
  Result    f, w;
  Vec       x, y;
  PetscReal nx;
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &y));
  PetscCall(Configure(ksp, fusedtypes[t], A, rtol, atol, dtol, maxit));
  PetscCall(Run(ksp, A, b, x0, x, &f));
  PetscCall(VecNorm(x, NORM_INFINITY, &nx));
  PetscCall(RunFresh(twintypes[t], A, b, x0, rtol, atol, dtol, maxit, y, &w));
  ok = (PetscBool)(f.reason == w.reason && (f.reason == KSP_DIVERGED_NANORINF || PetscAbsInt(f.its - w.its) <= PetscMax(2, w.its / 10)));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterations: %s %" PetscInt_FMT ", %s %" PetscInt_FMT "\n", fusedtypes[t], f.its, twintypes[t], w.its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s: %s%s, %s %s", fusedtypes[t], label, KSPConvergedReasons[f.reason], f.its ? "" : " at once", ok ? "as" : "UNLIKE", twintypes[t]));
  if (f.reason > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", |x| %s", nx == 0 ? "= 0" : (f.res < 1e-6 ? "> 0, true residual < 1e-6" : "> 0, TRUE RESIDUAL TOO LARGE")));
  PetscCall(GoodAgain(t, ksp, rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* GMRES's happy breakdown: three eigenvalues, no tolerance to stop at. The Krylov space is whole at step 3, where the
   next basis vector is rounding noise: sgmresf must neither divide by its norm into garbage nor run on, but stop at a
   happy breakdown, or at an exact zero residual once true-residual checks have rejected the estimate's claims (a
   new cycle each, 7 to 10 iterations here). KSPGMRES runs on to a zero estimate (60 or 90) or, where rounding
   leaves the estimate above zero at its own happy breakdown, stops with DIVERGED_BREAKDOWN (rtol = atol = 0 were
   not met): only the accuracy of its answer is compared. Then GoodAgain(). */
static PetscErrorCode HappyBreakdown(KSP ksp, PetscInt N, PetscRandom rnd)
{
  Mat       A;
  Vec       b, x;
  Result    f, w;
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(Breakdown(2, N, &A, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(Configure(ksp, KSPSGMRESF, A, 0.0, 0.0, 1e5, 1000));
  PetscCall(Run(ksp, A, b, NULL, x, &f));
  PetscCall(RunFresh(KSPGMRES, A, b, NULL, 0.0, 0.0, 1e5, 1000, x, &w));
  ok = (PetscBool)(f.reason > 0 && f.its <= 30 && f.res < 1e-14 && (w.reason > 0 || w.reason == KSP_DIVERGED_BREAKDOWN) && w.res < 1e-10);
  if (verbose)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  sgmresf %s in %" PetscInt_FMT " (true residual %g), gmres %s in %" PetscInt_FMT " (%g)\n", KSPConvergedReasons[f.reason], f.its, (double)f.res, KSPConvergedReasons[w.reason], w.its, (double)w.res));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgmresf, three eigenvalues, rtol = atol = 0: %s", ok ? "a happy breakdown or an exact zero residual within 30 iterations, gmres as accurate" : "UNEXPECTED"));
  PetscCall(GoodAgain(2, ksp, rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* Every fault for solver t. The fused solver and its twin stop for the same reason on each; after each fault the
   fused solver's KSP solves the good system again, in as many iterations as a fresh KSP did. */
static PetscErrorCode Cases(int t, PetscRandom rnd)
{
  const PetscInt    m = 20, N = m * m;
  const PetscReal   rtol = 1e-8;
  Mat               A, Abad;
  Vec               b, x, x0, xs, bad;
  KSP               ksp;
  Result            f;
  const char       *name = fusedtypes[t];
  const PetscScalar nan = NAN, inf = INFINITY;
  PetscReal         d;

  PetscFunctionBeginUser;
  PetscCall(Problem(m, t ? 20.0 : 0.0, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &x0));
  PetscCall(VecDuplicate(x, &xs));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(VecSetRandom(x0, rnd));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));

  PetscCall(Fault(t, ksp, "random b", A, b, NULL, rtol, 0.0, 1e5, 1000, rnd));

  /* zero right-hand side: x = 0 at once */
  PetscCall(VecDuplicate(b, &bad));
  PetscCall(VecSet(bad, 0.0));
  PetscCall(Fault(t, ksp, "zero b", A, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));

  /* NaN and Inf in b and in x0 (on a middle process and on the last) */
  PetscCall(Poison(b, N / 2, nan, &bad));
  PetscCall(Fault(t, ksp, "NaN in b", A, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));
  PetscCall(Poison(b, N - 1, inf, &bad));
  PetscCall(Fault(t, ksp, "Inf in b", A, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));
  PetscCall(Poison(x0, N / 2, nan, &bad));
  PetscCall(Fault(t, ksp, "NaN in x0", A, b, bad, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));
  PetscCall(Poison(x0, N - 1, -inf, &bad));
  PetscCall(Fault(t, ksp, "-Inf in x0", A, b, bad, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));

  /* NaN and Inf on the diagonal of the matrix */
  PetscCall(Poisoned(A, N / 2, nan, &Abad));
  PetscCall(Fault(t, ksp, "NaN in A", Abad, b, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(MatDestroy(&Abad));
  PetscCall(Poisoned(A, N - 1, inf, &Abad));
  PetscCall(Fault(t, ksp, "Inf in A", Abad, b, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(MatDestroy(&Abad));

  /* CG with Jacobi on a negative diagonal entry and b there: <r,z> < 0 at once, positive at the next iteration; the
     change of sign is KSP_DIVERGED_INDEFINITE_PC, as in KSPCG (a sign alone is not: a negative definite PC converges) */
  if (t == 0) {
    PetscCall(Poisoned(A, N / 2, -4.0, &Abad));
    PetscCall(VecDuplicate(b, &bad));
    PetscCall(VecSet(bad, 0.0));
    PetscCall(VecSetValue(bad, N / 2, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(bad));
    PetscCall(VecAssemblyEnd(bad));
    PetscCall(Fault(t, ksp, "indefinite PC", Abad, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
    PetscCall(VecDestroy(&bad));
    PetscCall(MatDestroy(&Abad));
  }

  /* a zero row and column (singular, consistent: b is 0 there), Jacobi taking 1 for its zero diagonal as PETSc's */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Abad));
  {
    PetscInt row = N / 2, rstart, rend;
    PetscCall(MatGetOwnershipRange(Abad, &rstart, &rend));
    PetscCall(MatZeroRowsColumns(Abad, row >= rstart && row < rend, &row, 0.0, NULL, NULL));
  }
  PetscCall(Poison(b, N / 2, 0.0, &bad));
  PetscCall(Fault(t, ksp, "a zero row and column", Abad, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecDestroy(&bad));
  PetscCall(MatDestroy(&Abad));

  /* the operator's own breakdowns: CG on an indefinite operator (shifted by -0.5, its diagonal still positive),
     BiCGStab on a permutation (<A r0, r0> = 0 at once), GMRES on three distinct eigenvalues (an exact Krylov space
     at step 3); CG on a singular consistent system, with the constant null space set */
  if (t == 0) {
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Abad));
    PetscCall(MatShift(Abad, -0.5));
    PetscCall(Fault(t, ksp, "indefinite A", Abad, b, NULL, rtol, 0.0, 1e5, 1000, rnd));
    PetscCall(MatDestroy(&Abad));
    PetscCall(Singular(N, rnd, &Abad, &bad));
    PetscCall(Fault(t, ksp, "singular A, consistent b, null space set", Abad, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
    PetscCall(VecDestroy(&bad));
    PetscCall(MatDestroy(&Abad));
  } else if (t == 1) {
    PetscCall(Breakdown(t, N, &Abad, &bad));
    PetscCall(Fault(t, ksp, "a permutation, b = e_0", Abad, bad, NULL, rtol, 0.0, 1e5, 1000, rnd));
    PetscCall(VecDestroy(&bad));
    PetscCall(MatDestroy(&Abad));
  } else
    PetscCall(HappyBreakdown(ksp, N, rnd));

  /* the iteration limit; the divergence tolerance (checked from iteration 0 on, as rnorm >= dtol rnorm0: GMRES's
     residual never grows, so only dtol <= 1 stops it) */
  PetscCall(Fault(t, ksp, "at most 7 iterations", A, b, NULL, rtol, 0.0, 1e5, 7, rnd));
  PetscCall(Fault(t, ksp, "dtol 1", A, b, NULL, rtol, 0.0, 1.0, 1000, rnd));
  PetscCall(Fault(t, ksp, "dtol 1.01", A, b, NULL, rtol, 0.0, 1.01, 1000, rnd));

  /* a nonzero initial guess: the twin's iterations; x0 = the solution of b = A xs converges at once, x kept */
  PetscCall(Fault(t, ksp, "random x0", A, b, x0, rtol, 0.0, 1e5, 1000, rnd));
  PetscCall(VecSetRandom(xs, rnd));
  PetscCall(VecDuplicate(b, &bad));
  PetscCall(MatMult(A, xs, bad));
  PetscCall(VecNorm(bad, NORM_2, &d));
  PetscCall(Configure(ksp, name, A, 0.0, 1e-10 * d, 1e5, 1000));
  PetscCall(Run(ksp, A, bad, xs, x, &f));
  PetscCall(VecAXPY(x, -1.0, xs));
  PetscCall(VecNorm(x, NORM_INFINITY, &d));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, x0 = the solution: %s in %" PetscInt_FMT ", x %s\n", name, KSPConvergedReasons[f.reason], f.its, d == 0 ? "unchanged" : "CHANGED"));
  PetscCall(VecDestroy(&bad));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&x0));
  PetscCall(VecDestroy(&xs));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* create, solve, destroy: -malloc_dump finds any leak */
static PetscErrorCode Cycles(PetscInt cycles)
{
  PetscFunctionBeginUser;
  for (int t = 0; t < 3; t++) {
    for (PetscInt c = 0; c < cycles; c++) {
      Mat    A;
      Vec    b, x;
      Result r;
      PetscCall(Problem(3 + c % 7, t ? 5.0 : 0.0, &A));
      PetscCall(MatCreateVecs(A, &x, &b));
      PetscCall(VecSet(b, 1.0));
      PetscCall(RunFresh(fusedtypes[t], A, b, NULL, 1e-8, 0.0, 1e5, 1000, x, &r));
      PetscCheck(r.reason > 0 && r.res < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: cycle %" PetscInt_FMT " did not converge: %s", fusedtypes[t], c, KSPConvergedReasons[r.reason]);
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&A));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " create/solve/destroy cycles converged\n", fusedtypes[t], cycles));
  }
  PetscFunctionReturn(0);
}

/* What -mat_view ::ascii_info prints for A, into text */
static PetscErrorCode ViewInfo(Mat A, char text[], size_t len)
{
  PetscViewer v;
  FILE       *f;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(text, len));
  f = fmemopen(text, len - 1, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_SYS, "fmemopen() failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_SELF, f, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  fclose(f);
  PetscFunctionReturn(0);
}

/* Whether the plugin's Kokkos backend has memory of its own, from what -mat_view ::ascii_info says */
static PetscErrorCode OnDevice(PetscBool *dev)
{
  Mat         A;
  char        text[4096];
  const char *hosts[] = {"resident on Serial", "resident on OpenMP", "resident on Threads", "resident on HPX"};

  PetscFunctionBeginUser;
  PetscCall(MatCreateGPUStream(PETSC_COMM_SELF, 1, 1, 1, NULL, &A));
  PetscCall(MatSetValue(A, 0, 0, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(ViewInfo(A, text, sizeof(text)));
  PetscCall(MatDestroy(&A));
  *dev = PETSC_TRUE;
  for (int i = 0; i < 4; i++)
    if (strstr(text, hosts[i])) *dev = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The address space of this process limited to what it maps now plus margin bytes (old: the limit to restore) */
static PetscErrorCode LimitAddressSpace(size_t margin, struct rlimit *old)
{
  unsigned long pages = 0;
  struct rlimit lim;
  FILE         *f;

  PetscFunctionBeginUser;
#if defined(__GLIBC__)
  malloc_trim(0); /* free heap memory back to the system: the limit then holds for every new block */
#endif
  f = fopen("/proc/self/statm", "r");
  PetscCheck(f && fscanf(f, "%lu", &pages) == 1, PETSC_COMM_SELF, PETSC_ERR_SYS, "Cannot read /proc/self/statm");
  fclose(f);
  PetscCheck(!getrlimit(RLIMIT_AS, old), PETSC_COMM_SELF, PETSC_ERR_SYS, "getrlimit() failed");
  lim          = *old;
  lim.rlim_cur = (rlim_t)(pages * (size_t)sysconf(_SC_PAGESIZE) + margin);
  PetscCheck(!setrlimit(RLIMIT_AS, &lim), PETSC_COMM_SELF, PETSC_ERR_SYS, "setrlimit() failed");
  PetscFunctionReturn(0);
}

/* Prints, for each process in turn, which error ierr is: PETSC_ERR_MEM with the hint, or something else */
static PetscErrorCode ReportError(const char *what, PetscErrorCode ierr)
{
  const char *text;
  ErrorText   msg = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscErrorMessage(ierr, &text, &msg));
  if (!ierr)
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "[%d] %s: NO ERROR\n", PetscGlobalRank, what));
  else if (ierr == PETSC_ERR_MEM && msg && strstr(msg, "Out of device memory (") && strstr(msg, "-mat_gpustream_max_device_bytes"))
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "[%d] %s: PETSC_ERR_MEM, \"Out of device memory (...)\" suggesting -mat_gpustream_max_device_bytes\n", PetscGlobalRank, what));
  else if (ierr == PETSC_ERR_MEM && msg && strstr(msg, "failed on another process"))
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "[%d] %s: PETSC_ERR_MEM, \"... failed on another process\"\n", PetscGlobalRank, what));
  else
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "[%d] %s: UNEXPECTED error %d: %s\n", PetscGlobalRank, what, (int)ierr, msg ? msg : "(no message)"));
  PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  PetscFunctionReturn(0);
}

/* A banded SPD matrix (diagonal 10, -1 at distances 1 and 1000) of n rows, uneven over the processes, its values set
   and not yet assembled: big enough that its device copy and a solver's device work need more than the margin the
   address space is limited to */
static PetscErrorCode Banded(PetscInt n, Mat *A)
{
  const PetscInt off[5] = {-1000, -1, 0, 1, 1000};
  PetscInt       rstart, rend, *dnz, *onz;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, LocalRows(n), LocalRows(n), n, n));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  rend = LocalRows(n);
  PetscCallMPI(MPI_Scan(MPI_IN_PLACE, &rend, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart = rend - LocalRows(n);
  PetscCall(PetscCalloc2(rend - rstart, &dnz, rend - rstart, &onz));
  for (PetscInt i = rstart; i < rend; i++)
    for (int d = 0; d < 5; d++)
      if (i + off[d] >= 0 && i + off[d] < n) {
        if (i + off[d] >= rstart && i + off[d] < rend)
          dnz[i - rstart]++;
        else
          onz[i - rstart]++;
      }
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
  PetscCall(PetscFree2(dnz, onz));
  for (PetscInt i = rstart; i < rend; i++)
    for (int d = 0; d < 5; d++)
      if (i + off[d] >= 0 && i + off[d] < n) {
        const PetscInt    j = i + off[d];
        const PetscScalar v = off[d] ? -1.0 : 10.0;
        PetscCall(MatSetValues(*A, 1, &i, 1, &j, &v, INSERT_VALUES));
      }
  PetscFunctionReturn(0);
}

/* Allocations that fail for real on a host backend: the address space of the last process is limited (setrlimit)
   to what it maps plus a margin, below what the device copy of the matrix and then a solver's device work need,
   around the calls that make them: MatAssemblyEnd() (the device copy), KSPSetUp() (the work), and KSPSolve() of a KSP
   not set up yet (its KSPSetUp()). Each failure is PETSC_ERR_MEM with the hint on that process (the others learn
   that it failed); b and x are left usable (no read lock left on them), nothing leaks, and once memory is there the
   same objects work: the matrix assembled again multiplies as AIJ, the same KSP converges as a fresh one. */
static PetscErrorCode AllocationFailure(PetscInt n, size_t margin)
{
  Mat            A, B;
  Vec            x, y, z, b;
  PetscBool      dev, last = (PetscBool)(PetscGlobalRank == PetscGlobalSize - 1);
  PetscErrorCode ierr = 0;
  struct rlimit  old;
  PetscReal      d;

  PetscFunctionBeginUser;
#if defined(__GLIBC__)
  /* large blocks mapped and unmapped each time, so that the limit sees every one of them (freed heap memory would
     serve the next allocations): a fixed threshold (glibc otherwise raises it after a free), and mapping allowed (a
     library PETSc links may turn it off: Debian unstable's SuperLU_DIST sets M_MMAP_MAX to 0 when it is loaded) */
  PetscCheck(mallopt(M_MMAP_THRESHOLD, 1 << 20) && mallopt(M_MMAP_MAX, 1 << 16), PETSC_COMM_SELF, PETSC_ERR_SYS, "mallopt() failed");
#endif
  PetscCall(OnDevice(&dev));
  if (dev) { /* CUDA maps far more address space than it uses: a limit would break it, not one allocation */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: device backend\n"));
    PetscFunctionReturn(0);
  }
  PetscCall(Banded(n, &A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  if (last) PetscCall(LimitAddressSpace(margin, &old));
  ierr = MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  if (last) PetscCheck(!setrlimit(RLIMIT_AS, &old), PETSC_COMM_SELF, PETSC_ERR_SYS, "setrlimit() failed");
  PetscCall(PetscPopErrorHandler());
  PetscCall(ReportError("MatAssemblyEnd, device copy of the matrix", ierr));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY)); /* not assembled after the error: again, with the memory */
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "then MatMult %s AIJ's\n", d == 0 ? "equals" : "DIFFERS FROM"));

  PetscCall(VecDuplicate(y, &b));
  PetscCall(VecSet(b, 1.0));
  for (int t = 0; t < 3; t++) {
    KSP    ksp;
    Result r, f;
    char   what[64];
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(Configure(ksp, fusedtypes[t], A, 1e-8, 0.0, 1e5, 100));
    for (int call = 0; call < 2; call++) {
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      if (last) PetscCall(LimitAddressSpace(margin, &old));
      ierr = call ? KSPSolve(ksp, b, x) : KSPSetUp(ksp);
      if (last) PetscCheck(!setrlimit(RLIMIT_AS, &old), PETSC_COMM_SELF, PETSC_ERR_SYS, "setrlimit() failed");
      PetscCall(PetscPopErrorHandler());
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s with %s, its device work", call ? "KSPSolve" : "KSPSetUp", fusedtypes[t]));
      PetscCall(ReportError(what, ierr));
    }
    PetscCall(VecSet(b, 1.0)); /* fails if the solve left b or x locked */
    PetscCall(VecSet(x, 0.0));
    PetscCall(Run(ksp, A, b, NULL, x, &r));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(RunFresh(fusedtypes[t], A, b, NULL, 1e-8, 0.0, 1e5, 100, y, &f));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "then b and x are usable and the same KSP: %s, %s\n", KSPConvergedReasons[r.reason], r.reason > 0 && r.its == f.its && r.res < 1e-6 ? "as a fresh KSP" : "DIFFERS FROM A FRESH KSP"));
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The CUDA driver API, loaded at run time (the plugin links the CUDA runtime statically and hides it): the test
   fills device memory from outside the plugin, in the context the plugin's CUDA runtime made current */
typedef int (*CuInit)(unsigned);
typedef int (*CuCtxGetCurrent)(void **);
typedef int (*CuMemGetInfo)(size_t *, size_t *);
typedef int (*CuMemAlloc)(unsigned long long *, size_t);
typedef int (*CuMemFree)(unsigned long long);

/* y = A 1 against the row lengths (every entry of A is 1): exact */
static PetscErrorCode CheckOnes(Mat A, const char *what)
{
  Vec                x, y;
  const PetscScalar *ya;
  PetscInt           m, rstart, N, bad = 0;
  char               text[4096];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(VecGetLocalSize(y, &m));
  PetscCall(VecGetOwnershipRange(y, &rstart, NULL));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt r = rstart + i, len = PetscMin(N - 1, r + 13) - PetscMax(0, r - 13) + 1;
    if (ya[i] != (PetscScalar)len) bad++;
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(ViewInfo(A, text, sizeof(text)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: MatMult %s, %s\n", what, bad ? "WRONG" : "exact", strstr(text, "streamed on") ? "streamed" : (strstr(text, "resident on") ? "resident" : "NEITHER STREAMED NOR RESIDENT")));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* The gpustream matrix of DeviceFull() from its CSR arrays, options prefix full_: *ierr is what its assembly (inside
   MatSeqAIJSetPreallocationCSR(), where the device copy is made) returned; after an error it is not assembled */
static PetscErrorCode FullMat(PetscInt N, const PetscInt ia[], const PetscInt ja[], const PetscScalar va[], Mat *A, PetscErrorCode *ierr)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, N, N, N, N));
  PetscCall(MatSetType(*A, MATGPUSTREAM));
  PetscCall(MatSetOptionsPrefix(*A, "full_"));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = MatSeqAIJSetPreallocationCSR(*A, ia, ja, va);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

/* GPU only (one process): device memory filled but for leave bytes (default: the plugin's default reserve,
   max(512 MB, 5% of the device), plus 1 GB), then a matrix of leave + 1 GB in resident mode with a budget above the
   free memory: the allocation at the end of its assembly fails with PETSC_ERR_MEM and the hint; with the default
   budget resident mode refuses it; assembled again in auto mode it streams; and with the memory released it is
   resident again. */
static PetscErrorCode DeviceFull(PetscReal leave_mb)
{
  PetscBool          dev;
  void              *lib, *ctx = NULL;
  CuInit             cuInit;
  CuCtxGetCurrent    cuCtxGetCurrent;
  CuMemGetInfo       cuMemGetInfo;
  CuMemAlloc         cuMemAlloc;
  CuMemFree          cuMemFree;
  size_t             free = 0, total = 0, leave, fill;
  unsigned long long filler = 0;
  PetscInt           N, *ia, *ja, k = 0;
  PetscScalar       *va;
  Mat                A;
  PetscErrorCode     ierr;

  PetscFunctionBeginUser;
  PetscCall(OnDevice(&dev));
  if (!dev) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: host backend\n"));
    PetscFunctionReturn(0);
  }
  lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  PetscCheck(lib, PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot load libcuda.so.1: %s", dlerror());
  cuInit          = (CuInit)dlsym(lib, "cuInit");
  cuCtxGetCurrent = (CuCtxGetCurrent)dlsym(lib, "cuCtxGetCurrent");
  cuMemGetInfo    = (CuMemGetInfo)dlsym(lib, "cuMemGetInfo_v2");
  cuMemAlloc      = (CuMemAlloc)dlsym(lib, "cuMemAlloc_v2");
  cuMemFree       = (CuMemFree)dlsym(lib, "cuMemFree_v2");
  PetscCheck(cuInit && cuCtxGetCurrent && cuMemGetInfo && cuMemAlloc && cuMemFree, PETSC_COMM_SELF, PETSC_ERR_LIB, "libcuda.so.1 lacks a driver API function");
  PetscCheck(!cuInit(0) && !cuCtxGetCurrent(&ctx) && ctx, PETSC_COMM_SELF, PETSC_ERR_LIB, "No current CUDA context after the plugin ran on the device");
  PetscCheck(!cuMemGetInfo(&free, &total), PETSC_COMM_SELF, PETSC_ERR_LIB, "cuMemGetInfo failed");
  leave = leave_mb > 0 ? (size_t)(leave_mb * 1048576.0) : (size_t)(PetscMax(512.0 * 1048576.0, 0.05 * (double)total) + 1073741824.0);
  fill  = free > leave ? free - leave : 0;
  if (fill) PetscCheck(!cuMemAlloc(&filler, fill), PETSC_COMM_SELF, PETSC_ERR_LIB, "cuMemAlloc of %g GB failed", (double)fill / 1073741824.0);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  device: %g GB in all, %g GB free, %g GB filled, %g GB left\n", total / 1073741824.0, free / 1073741824.0, fill / 1073741824.0, (free - fill) / 1073741824.0));

  /* rows of 27 ones (a band): about 350 bytes of CSR and staged vectors a row, leave + 1 GB in all */
  N = (PetscInt)((leave + 1073741824.0) / (4 + 27 * (sizeof(PetscInt) + sizeof(PetscScalar)) + 3 * sizeof(PetscScalar)));
  PetscCall(PetscMalloc3(N + 1, &ia, 27 * (size_t)N, &ja, 27 * (size_t)N, &va));
  ia[0] = 0;
  for (PetscInt i = 0; i < N; i++) {
    for (PetscInt j = PetscMax(0, i - 13); j <= PetscMin(N - 1, i + 13); j++) {
      ja[k]   = j;
      va[k++] = 1.0;
    }
    ia[i + 1] = k;
  }
  PetscCall(PetscOptionsSetValue(NULL, "-full_mat_gpustream_mode", "resident"));
  PetscCall(PetscOptionsSetValue(NULL, "-full_mat_gpustream_max_device_bytes", "1e15"));
  PetscCall(FullMat(N, ia, ja, va, &A, &ierr));
  PetscCall(ReportError("resident mode, a budget above the free memory", ierr));
  /* a new matrix: a budget once set stays when its option is cleared */
  PetscCall(PetscOptionsClearValue(NULL, "-full_mat_gpustream_max_device_bytes"));
  PetscCall(MatDestroy(&A));
  PetscCall(FullMat(N, ia, ja, va, &A, &ierr));
  {
    const char *text;
    ErrorText   msg = NULL;
    PetscCall(PetscErrorMessage(ierr, &text, &msg));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resident mode, the default budget: %s\n",
                          ierr == PETSC_ERR_ARG_OUTOFRANGE && msg && strstr(msg, "use -full_mat_gpustream_mode auto or stream") ? "PETSC_ERR_ARG_OUTOFRANGE suggesting auto or stream" : "UNEXPECTED"));
  }
  PetscCall(PetscOptionsSetValue(NULL, "-full_mat_gpustream_mode", "auto"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY)); /* not assembled after the error: again, in auto mode */
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckOnes(A, "auto mode, the default budget"));
  if (fill) PetscCheck(!cuMemFree(filler), PETSC_COMM_SELF, PETSC_ERR_LIB, "cuMemFree failed");
  PetscCall(PetscOptionsSetValue(NULL, "-full_mat_gpustream_mode", "resident"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(CheckOnes(A, "device memory released, resident mode"));
  PetscCall(PetscOptionsClearValue(NULL, "-full_mat_gpustream_mode"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree3(ia, ja, va));
  PetscFunctionReturn(0);
}

/* Uses PETSc or the plugin refuses (each stops the program with its error): -case ilu (whole matrix, several
   processes), transpose */
static PetscErrorCode Misuse(const char *which, const char *type)
{
  Mat       A;
  Vec       b, x;
  KSP       ksp;
  PC        pc;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(Problem(8, 0.0, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(Configure(ksp, type, A, 1e-8, 0.0, 1e5, 100));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscStrcmp(which, "ilu", &flg));
  if (flg) PetscCall(PCSetType(pc, PCILU));
  PetscCall(PetscStrcmp(which, "transpose", &flg));
  if (flg)
    PetscCall(KSPSolveTranspose(ksp, b, x));
  else
    PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rnd;
  char        scenario[32] = "cases";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-scenario", scenario, sizeof(scenario), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &verbose, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  if (!strcmp(scenario, "cases"))
    for (int t = 0; t < 3; t++) PetscCall(Cases(t, rnd));
  else if (!strcmp(scenario, "cycles")) {
    PetscInt cycles = 1000;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-cycles", &cycles, NULL));
    PetscCall(Cycles(cycles));
  } else if (!strcmp(scenario, "alloc")) {
    PetscInt n = 2000000, margin = 40 << 20;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-margin", &margin, NULL));
    PetscCall(AllocationFailure(n, (size_t)margin));
  } else if (!strcmp(scenario, "misuse")) {
    char which[32] = "", type[32] = KSPPIPECGFUSED;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-case", which, sizeof(which), NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
    PetscCall(Misuse(which, type));
  } else if (!strcmp(scenario, "devicefull")) {
    PetscReal leave = 0;
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-leave_mb", &leave, NULL));
    PetscCall(DeviceFull(leave));
  } else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Unknown -scenario %s", scenario);
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: cases
      args: -malloc_debug -malloc_dump

   test:
      suffix: cases_2
      nsize: 2
      args: -malloc_dump
      output_file: output/faults_cases.out

   test:
      suffix: cases_3
      nsize: 3
      args: -malloc_dump
      output_file: output/faults_cases.out

   test:
      suffix: cases_4
      nsize: 4
      args: -malloc_dump
      output_file: output/faults_cases.out

   test:
      suffix: cycles
      args: -scenario cycles -malloc_debug -malloc_dump

   test:
      suffix: cycles_3
      nsize: 3
      args: -scenario cycles -cycles 300 -malloc_dump

   # allocations that fail for real: the address space limited with setrlimit (host backends only)
   test:
      suffix: alloc
      args: -scenario alloc -malloc_debug -malloc_dump

   test:
      suffix: alloc_2
      nsize: 2
      args: -scenario alloc -malloc_dump

   test:
      suffix: alloc_3
      nsize: 3
      args: -scenario alloc -malloc_dump

   # what PETSc or the plugin refuses, with its error
   test:
      suffix: misuse_ilu_2
      nsize: 2
      args: -scenario misuse -case ilu -type pipebcgsf
      error: 1
      filter: grep -o "factors a gpustream matrix on one process only" | sort -u

   test:
      suffix: misuse_transpose
      args: -scenario misuse -case transpose -type pipecgfused
      error: 1
      filter: grep -o "KSPPIPECGFUSED has no transpose solve" | sort -u

   test:
      suffix: misuse_transpose_bcgs
      args: -scenario misuse -case transpose -type pipebcgsf
      error: 1
      filter: grep -o "KSPPIPEBCGSF has no transpose solve" | sort -u

   test:
      suffix: misuse_transpose_gmres
      args: -scenario misuse -case transpose -type sgmresf
      error: 1
      filter: grep -o "KSPSGMRESF has no transpose solve" | sort -u

   # device memory filled: on a GPU build the output is output/faults_devicefull_gpu.out (run by hand, see README)
   test:
      suffix: devicefull
      args: -scenario devicefull

TEST*/
