static char help[] = "Bad input, option values and budgets caught inside one program. For each case: the exact PETSc\n\
error code and message (the same as AIJ or the PETSc solver gives where they meet the same input), then the same objects\n\
used on good input, and the memory PETSc's allocator holds (run with -malloc_debug) the same before and after the case.\n\
Every case runs twice and is reported the second time, so that what PETSc allocates once per program is not counted.\n\
  -v : print each message caught\n\n";

#include <string.h>
#include <petscgpustream.h>
#include "vecdiff.h"

/* PetscErrorMessage()'s specific message: const in newer PETSc (cmake/probes/ERRORMESSAGE_CONST.c) */
#if defined(GPUSTREAM_PETSC_ERRORMESSAGE_CONST)
typedef const char *ErrorText;
#else
typedef char *ErrorText;
#endif

static PetscBool verbose = PETSC_FALSE, quiet = PETSC_FALSE;

/* PetscPrintf() on the reported pass only */
#define Say(...)                                                                                                                                                                                                                                         \
  do {                                                                                                                                                                                                                                                   \
    if (!quiet) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__));                                                                                                                                                                                   \
  } while (0)

typedef struct {
  PetscErrorCode code;
  char           msg[1024];
} Caught;

static PetscErrorCode Message(Caught *c)
{
  ErrorText specific = NULL;

  PetscFunctionBeginUser;
  c->msg[0] = 0;
  if (c->code) PetscCall(PetscErrorMessage(c->code, NULL, &specific));
  if (specific) PetscCall(PetscStrncpy(c->msg, specific, sizeof(c->msg)));
  PetscFunctionReturn(0);
}

/* call, its error returned instead of printed: the code and the first message into *c */
#define CATCH(c, call)                                                                                                                                                                                                                                   \
  do {                                                                                                                                                                                                                                                   \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));                                                                                                                                                                                     \
    (c)->code = (call);                                                                                                                                                                                                                                  \
    PetscCall(PetscPopErrorHandler());                                                                                                                                                                                                                   \
    PetscCall(Message(c));                                                                                                                                                                                                                               \
  } while (0)

static const char *CodeName(PetscErrorCode code)
{
  static const struct {
    PetscErrorCode code;
    const char    *name;
  } names[] = {
      {0, "no error"},
      {PETSC_ERR_MEM, "PETSC_ERR_MEM"},
      {PETSC_ERR_SUP, "PETSC_ERR_SUP"},
      {PETSC_ERR_ARG_SIZ, "PETSC_ERR_ARG_SIZ"},
      {PETSC_ERR_ARG_WRONG, "PETSC_ERR_ARG_WRONG"},
      {PETSC_ERR_ARG_OUTOFRANGE, "PETSC_ERR_ARG_OUTOFRANGE"},
      {PETSC_ERR_ARG_WRONGSTATE, "PETSC_ERR_ARG_WRONGSTATE"},
      {PETSC_ERR_ARG_INCOMP, "PETSC_ERR_ARG_INCOMP"},
      {PETSC_ERR_USER, "PETSC_ERR_USER"},
      {PETSC_ERR_PLIB, "PETSC_ERR_PLIB"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].code == code) return names[i].name;
  return "another error code";
}

/* The caught error against the expected code and a piece of its message, on every process */
static PetscErrorCode Expect(const char *label, const Caught *c, PetscErrorCode code, const char *text)
{
  int ok = c->code == code && (!code || strstr(c->msg, text));

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
  if (verbose && !quiet) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  caught: %s\n", c->msg));
  Say("%s: %s", label, ok ? CodeName(code) : "UNEXPECTED ");
  if (!ok) PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "[%d] %s (%d) \"%s\"\n", PetscGlobalRank, CodeName(c->code), (int)c->code, c->msg));
  if (!ok) PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  if (code) Say(", \"%s\"", text);
  PetscFunctionReturn(0);
}

/* The gpustream call's error is AIJ's: the same code and message on every process */
static PetscErrorCode SameAsAIJ(const Caught *g, const Caught *a)
{
  int ok = g->code == a->code && !strcmp(g->msg, a->msg);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
  Say("%s", ok ? ", as AIJ" : ", UNLIKE AIJ");
  PetscFunctionReturn(0);
}

/* 4 on the diagonal, -1 beside it: nlocal rows on each process (preallocated, values set, not assembled) */
static PetscErrorCode Tridiag(MatType type, PetscInt nlocal, PetscInt bs, Mat *A)
{
  PetscInt rstart, rend, N;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, nlocal, nlocal, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*A, type));
  if (bs > 1) PetscCall(MatSetBlockSize(*A, bs));
  PetscCall(MatSeqAIJSetPreallocation(*A, 3, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 3, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(MatGetSize(*A, &N, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatSetValue(*A, i, i, 4.0, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < N - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Assemble(Mat A)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Solves A x = b (b = A 1) with type, from a zero guess: reason, iterations and the error of x */
static PetscErrorCode Solve(Mat A, KSP ksp, KSPType type, KSPConvergedReason *reason, PetscInt *its, PetscReal *err)
{
  KSP ksp0 = ksp;
  Vec x, b, one;

  PetscFunctionBeginUser;
  if (!ksp) {
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetType(ksp, type));
  }
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 0.0, PETSC_DEFAULT, 200));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &one));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(A, one, b));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(VecRelDiff(x, one, err));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&one));
  if (!ksp0) PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* Good input after the fault: A (gpustream) multiplies as B (AIJ) does, and ksp (or a fresh KSP of type) solves with A
   as a fresh KSP of type does with B: the same reason, iterations within one, the solution to 1e-8 */
static PetscErrorCode GoodAfter(Mat A, Mat B, KSP ksp, KSPType type)
{
  Vec                x, ya, yb;
  PetscRandom        rnd;
  PetscReal          d, ea, eb;
  KSPConvergedReason ra, rb;
  PetscInt           ia, ib;
  PetscBool          ok;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(VecDuplicate(ya, &yb));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, x, yb));
  PetscCall(VecRelDiff(ya, yb, &d));
  PetscCall(Solve(A, ksp, type, &ra, &ia, &ea));
  PetscCall(Solve(B, NULL, type, &rb, &ib, &eb));
  ok = (PetscBool)(d < 1e-14 && ra > 0 && ra == rb && PetscAbsInt(ia - ib) <= 1 && ea < 1e-8); /* a device rounds otherwise */
  Say("; then good input: %s\n", ok ? "MatMult and KSPSolve as a fresh KSP on AIJ" : "FAILED");
  if (!ok && !quiet) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatMult differs by %g; %s: %s in %d, error %g; on AIJ: %s in %d\n", (double)d, type, KSPConvergedReasons[ra], (int)ia, (double)ea, KSPConvergedReasons[rb], (int)ib));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* The same tridiagonal matrix, 10 rows a process, as gpustream (A) and AIJ (B), assembled or not */
static PetscErrorCode Pair(PetscBool assemble, Mat *A, Mat *B)
{
  PetscFunctionBeginUser;
  PetscCall(Tridiag(MATGPUSTREAM, 10, 1, A));
  PetscCall(Tridiag(MATAIJ, 10, 1, B));
  if (assemble) PetscCall(Assemble(*A));
  if (assemble) PetscCall(Assemble(*B));
  PetscFunctionReturn(0);
}

/* GoodAfter(), then A and B destroyed */
static PetscErrorCode GoodAfterAndDestroy(Mat *A, Mat *B, KSP ksp, KSPType type)
{
  PetscFunctionBeginUser;
  PetscCall(GoodAfter(*A, *B, ksp, type));
  PetscCall(MatDestroy(A));
  PetscCall(MatDestroy(B));
  PetscFunctionReturn(0);
}

/* ---- bad input on a matrix: on a gpustream matrix and an AIJ one alike, then both made good ---- */

/* MatMult before assembly */
static PetscErrorCode Unassembled(void)
{
  Mat    A, B;
  Vec    x, y;
  Caught g, a;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_FALSE, &A, &B));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  CATCH(&g, MatMult(A, x, y));
  CATCH(&a, MatMult(B, x, y));
  PetscCall(Expect("MatMult before assembly", &g, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix"));
  PetscCall(SameAsAIJ(&g, &a));
  PetscCall(Assemble(A));
  PetscCall(Assemble(B));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPECGFUSED));
  PetscFunctionReturn(0);
}

/* MatMult with a vector of another local size */
static PetscErrorCode Sizes(void)
{
  Mat    A, B;
  Vec    x, y;
  Caught g, a;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, 9, PETSC_DETERMINE, &x));
  PetscCall(MatCreateVecs(B, NULL, &y));
  CATCH(&g, MatMult(A, x, y));
  CATCH(&a, MatMult(B, x, y));
  PetscCall(Expect("MatMult with x of 9 local rows for 10", &g, PETSC_ERR_ARG_SIZ, "Mat mat,Vec x: global dim"));
  PetscCall(SameAsAIJ(&g, &a));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPEBCGSF));
  PetscFunctionReturn(0);
}

/* MatSetValues on the assembled matrix: an entry outside the pattern (under the nonzero options given), a column or
   a row out of range; then assembled again */
static PetscErrorCode SetValuesAfter(const char *label, MatOption op, PetscBool flg, PetscInt row, PetscInt col, PetscErrorCode code, const char *text)
{
  Mat      A, B, M[2];
  Caught   c[2];
  PetscInt rstart;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_FALSE, &A, &B));
  M[0] = A;
  M[1] = B;
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  for (int k = 0; k < 2; k++) {
    PetscCall(Assemble(M[k]));
    if (op != MAT_OPTION_MAX) PetscCall(MatSetOption(M[k], op, flg));
    CATCH(&c[k], MatSetValue(M[k], row < 0 ? rstart - row - 1 : row, col < 0 ? rstart - col - 1 : col, 0.5, ADD_VALUES));
    PetscCall(Assemble(M[k]));
  }
  PetscCall(Expect(label, &c[0], code, text));
  PetscCall(SameAsAIJ(&c[0], &c[1]));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPSGMRESF));
  PetscFunctionReturn(0);
}

/* A block size that does not divide the local size: refused, then one that does */
static PetscErrorCode BlockSize(void)
{
  Mat    A, B;
  Caught g, a;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, 10, 10, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(A, MATGPUSTREAM));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, 10, 10, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(B, MATAIJ));
  CATCH(&g, MatSetBlockSize(A, 3));
  CATCH(&a, MatSetBlockSize(B, 3));
  PetscCall(Expect("block size 3 of 10 local rows", &g, PETSC_ERR_ARG_INCOMP, "not compatible with block size 3"));
  PetscCall(SameAsAIJ(&g, &a));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(Tridiag(MATGPUSTREAM, 10, 2, &A));
  PetscCall(Tridiag(MATAIJ, 10, 2, &B));
  PetscCall(Assemble(A));
  PetscCall(Assemble(B));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPECGFUSED));
  PetscFunctionReturn(0);
}

/* A KSP given a 10 x 12 operator on each process (cols = 12), refused by each fused solver as by its PETSc twin, or an
   empty system (no rows anywhere, cols = 0), which both solve at once; then the same KSP on a square system */
static PetscErrorCode Shape(KSPType type, KSPType twin, PetscInt cols)
{
  const PetscInt     rows = cols ? 10 : 0;
  Mat                R[2], A, B;
  Vec                x, b;
  KSP                ksp[2];
  Caught             c[2];
  KSPConvergedReason reason[2];
  PetscInt           its[2];
  char               label[64];

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &R[k]));
    PetscCall(MatSetSizes(R[k], rows, cols, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(MatSetType(R[k], k ? MATAIJ : MATGPUSTREAM));
    PetscCall(MatSeqAIJSetPreallocation(R[k], 1, NULL));
    PetscCall(MatMPIAIJSetPreallocation(R[k], 1, NULL, 0, NULL));
    PetscCall(Assemble(R[k]));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp[k]));
    PetscCall(KSPSetType(ksp[k], k ? twin : type));
    PetscCall(KSPSetOperators(ksp[k], R[k], R[k]));
    PetscCall(MatCreateVecs(R[k], &x, &b));
    PetscCall(VecSet(b, 1.0));
    CATCH(&c[k], KSPSolve(ksp[k], b, x));
    PetscCall(KSPGetConvergedReason(ksp[k], &reason[k]));
    PetscCall(KSPGetIterationNumber(ksp[k], &its[k]));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&R[k]));
  }
  PetscCall(PetscSNPrintf(label, sizeof(label), cols ? "%s on a 10 x 12 operator" : "%s on an empty system", type));
  if (cols)
    PetscCall(Expect(label, &c[0], PETSC_ERR_ARG_WRONG, "Must be square matrix"));
  else
    PetscCall(Expect(label, &c[0], 0, NULL));
  if (!cols) Say(", %s", reason[0] > 0 && !its[0] ? "converged at once" : "NOT CONVERGED AT ONCE");
  Say("%s%s", c[0].code == c[1].code && !strcmp(c[0].msg, c[1].msg) && reason[0] == reason[1] && its[0] == its[1] ? ", as " : ", UNLIKE ", twin);
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(KSPReset(ksp[0])); /* its PC keeps the local sizes it was given (PETSc's rule, for KSPCG as well) */
  PetscCall(GoodAfterAndDestroy(&A, &B, ksp[0], type));
  for (int k = 0; k < 2; k++) PetscCall(KSPDestroy(&ksp[k]));
  PetscFunctionReturn(0);
}

/* -gpustream_dependent_launch is read as the plugin first starts Kokkos, or makes a gpustream matrix */
static PetscErrorCode DependentLaunch(void)
{
  Mat    A, B;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, 10, 10, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(PetscOptionsSetValue(NULL, "-gpustream_dependent_launch", "maybe"));
  CATCH(&c, MatSetType(A, MATGPUSTREAM));
  PetscCall(PetscOptionsClearValue(NULL, "-gpustream_dependent_launch"));
  PetscCall(MatDestroy(&A));
  PetscCall(Expect("-gpustream_dependent_launch maybe", &c, PETSC_ERR_ARG_WRONG, "-gpustream_dependent_launch maybe: give true or false"));
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPEBCGSF));
  PetscFunctionReturn(0);
}

/* -gpustream_device_products is read at each numeric phase of a product of gpustream matrices, on any number of
   processes */
static PetscErrorCode DeviceProducts(void)
{
  Mat    A, B, C;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(PetscOptionsSetValue(NULL, "-gpustream_device_products", "maybe"));
  CATCH(&c, MatMatMult(A, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(PetscOptionsClearValue(NULL, "-gpustream_device_products"));
  PetscCall(MatDestroy(&C));
  PetscCall(Expect("-gpustream_device_products maybe", &c, PETSC_ERR_ARG_WRONG, "-gpustream_device_products maybe: give true or false"));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPECGFUSED));
  PetscFunctionReturn(0);
}

/* A product reused after a new nonzero of an operand changed the product's pattern: an error that asks for the symbolic
   phase again (the plugin's own check on one process, and before AIJ's numeric phase on several) */
static PetscErrorCode ProductPattern(void)
{
  Mat    A, B, C;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  for (int k = 0; k < 2; k++) {
    Mat X = k ? B : A;
    PetscCall(MatSetOption(X, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetValue(X, 0, 9, 0.5, INSERT_VALUES));
    PetscCall(Assemble(X));
  }
  CATCH(&c, MatMatMult(A, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(MatDestroy(&C));
  PetscCall(Expect("MatMatMult(MAT_REUSE_MATRIX) after a new nonzero of A", &c, PETSC_ERR_ARG_INCOMP, "symbolic phase: call MatProductSymbolic() again"));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPEBCGSF));
  PetscFunctionReturn(0);
}

/* The option -<prefix><name> set to value (value NULL: cleared) */
static PetscErrorCode SetOption(const char *prefix, const char *name, const char *value)
{
  char full[128];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(full, sizeof(full), "-%s%s", prefix ? prefix : "", name + 1));
  if (value)
    PetscCall(PetscOptionsSetValue(NULL, full, value));
  else
    PetscCall(PetscOptionsClearValue(NULL, full));
  PetscFunctionReturn(0);
}

/* A device-memory budget the matrix (with the options prefix given, or none) cannot use (mode, budget and
   subdivisions as given): MatMult refuses it; then a budget of 1 MB, which streams the same matrix in mode stream, and
   holds it whole otherwise */
static PetscErrorCode Budget(const char *label, const char *prefix, const char *mode, const char *budget, const char *subdivisions, const char *text)
{
  Mat    A, B;
  Vec    x, y;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(MatSetOptionsPrefix(A, prefix));
  PetscCall(SetOption(prefix, "-mat_gpustream_mode", mode));
  PetscCall(SetOption(prefix, "-mat_gpustream_max_device_bytes", budget));
  if (subdivisions) PetscCall(SetOption(prefix, "-mat_gpustream_subdivisions", subdivisions));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  CATCH(&c, MatMult(A, x, y));
  PetscCall(Expect(label, &c, PETSC_ERR_ARG_OUTOFRANGE, text));
  PetscCall(SetOption(prefix, "-mat_gpustream_max_device_bytes", "1e6"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(SetOption(prefix, "-mat_gpustream_mode", NULL));
  PetscCall(SetOption(prefix, "-mat_gpustream_max_device_bytes", NULL));
  PetscCall(SetOption(prefix, "-mat_gpustream_subdivisions", NULL));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPSGMRESF));
  PetscFunctionReturn(0);
}

/* -a_mat_gpustream_format block on a matrix without a block size: refused where the device copy is made, naming the
   options with the matrix's prefix */
static PetscErrorCode FormatBlock(void)
{
  Mat    A, B;
  Vec    x, y;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(MatSetOptionsPrefix(A, "a_"));
  PetscCall(PetscOptionsSetValue(NULL, "-a_mat_gpustream_format", "block"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  CATCH(&c, MatMult(A, x, y));
  PetscCall(Expect("prefix a_, -a_mat_gpustream_format block without a block size", &c, PETSC_ERR_ARG_WRONG, "-a_mat_gpustream_format block needs equal row and column block sizes of 2 to 6 (MatSetBlockSize() or -a_mat_block_size)"));
  PetscCall(PetscOptionsSetValue(NULL, "-a_mat_gpustream_format", "auto"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-a_mat_gpustream_format"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(GoodAfterAndDestroy(&A, &B, NULL, KSPPIPECGFUSED));
  PetscFunctionReturn(0);
}

/* Residual replacement with the overlapped reduction, given to a KSP with the prefix inner_: refused by KSPSolve, naming
   both options with the prefix; then the same KSP without them */
static PetscErrorCode OverlapReplace(KSPType type)
{
  Mat    A, B;
  KSP    ksp;
  Vec    x, b;
  Caught c;

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetOptionsPrefix(ksp, "inner_"));
  PetscCall(PetscOptionsSetValue(NULL, "-inner_ksp_pipecgfused_overlap_reduction", "1"));
  PetscCall(PetscOptionsSetValue(NULL, "-inner_ksp_pipecgfused_replace_every", "5"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  CATCH(&c, KSPSolve(ksp, b, x));
  PetscCall(Expect("prefix inner_, replacement with the overlapped reduction", &c, PETSC_ERR_SUP, "-inner_ksp_pipecgfused_replace_every needs -inner_ksp_pipecgfused_overlap_reduction 0"));
  PetscCall(PetscOptionsSetValue(NULL, "-inner_ksp_pipecgfused_overlap_reduction", "0"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscOptionsClearValue(NULL, "-inner_ksp_pipecgfused_overlap_reduction"));
  PetscCall(PetscOptionsClearValue(NULL, "-inner_ksp_pipecgfused_replace_every"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(GoodAfterAndDestroy(&A, &B, ksp, type));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* A side or norm that a solver preconditioning from the right only (pipebcgsf, sgmresf) does not have, given by the
   option (value) to a KSP with the prefix inner_: refused by KSPSetFromOptions with a message that says so, and by
   KSPSetUp when set by KSPSetPCSide() alone (PETSc's own check, as for KSPPIPEBCGS); then the same KSP on the right */
static PetscErrorCode RightOnly(KSPType type, const char *option, const char *value, const char *text)
{
  Mat    A, B;
  KSP    ksp;
  Caught c;
  char   label[128];

  PetscFunctionBeginUser;
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetOptionsPrefix(ksp, "inner_"));
  PetscCall(PetscOptionsSetValue(NULL, option, value));
  CATCH(&c, KSPSetFromOptions(ksp));
  PetscCall(PetscOptionsClearValue(NULL, option));
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s, %s %s", type, option, value));
  PetscCall(Expect(label, &c, PETSC_ERR_SUP, text));
  Say("\n");
  if (!strcmp(value, "left")) { /* the side set in the code, no options read */
    PetscCall(KSPSetPCSide(ksp, PC_LEFT));
    CATCH(&c, KSPSetUp(ksp));
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s, KSPSetPCSide(PC_LEFT), KSPSetUp", type));
    PetscCall(Expect(label, &c, PETSC_ERR_SUP, "does not support preconditioner side LEFT"));
    Say("\n");
  }
  PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s, then on the right", type));
  Say("%s", label);
  PetscCall(GoodAfterAndDestroy(&A, &B, ksp, type));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* ---- option values: each set, refused by the object's SetFromOptions, cleared, and the same object used ---- */

typedef struct {
  const char    *on;                    /* "mat", or the KSP type the option belongs to */
  const char    *prefix, *name, *value; /* the object's options prefix (or NULL), the option's name with it */
  PetscErrorCode code;
  const char    *text;
} OptionCase;

static const OptionCase optioncases[] = {
    {"mat", NULL, "-mat_gpustream_mode", "sometimes", PETSC_ERR_ARG_WRONG, "-mat_gpustream_mode sometimes: give one of auto, resident, stream"},
    {"mat", NULL, "-mat_gpustream_max_device_bytes", "-5", PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_max_device_bytes -5. must be positive"},
    {"mat", NULL, "-mat_gpustream_max_device_bytes", "lots", PETSC_ERR_ARG_WRONG, "-mat_gpustream_max_device_bytes lots: give a number"},
    {"mat", NULL, "-mat_gpustream_buffers", "1", PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_buffers 1 must be at least 2"},
    {"mat", NULL, "-mat_gpustream_buffers", "two", PETSC_ERR_ARG_WRONG, "-mat_gpustream_buffers two: give an integer"},
    {"mat", NULL, "-mat_gpustream_subdivisions", "0", PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_subdivisions 0 must be at least 1"},
    {"mat", NULL, "-mat_gpustream_subdivisions", "2.5", PETSC_ERR_ARG_WRONG, "-mat_gpustream_subdivisions 2.5: give an integer"},
    {"mat", NULL, "-mat_gpustream_overlap", "maybe", PETSC_ERR_ARG_WRONG, "-mat_gpustream_overlap maybe: give true or false"},
    {"mat", NULL, "-mat_gpustream_kernel", "diagonal", PETSC_ERR_ARG_WRONG, "-mat_gpustream_kernel diagonal: give one of auto, thread, warp"},
    {"mat", NULL, "-mat_gpustream_format", "bcsr", PETSC_ERR_ARG_WRONG, "-mat_gpustream_format bcsr: give one of auto, csr, block"},
    {"mat", NULL, "-mat_gpustream_tile_size", "4096", PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_tile_size 4096 must be in 0..2048"},
    {"mat", NULL, "-mat_gpustream_tile_size", "-2", PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpustream_tile_size -2 must be in 0..2048"},
    {"mat", NULL, "-mat_gpustream_device_mpi", "maybe", PETSC_ERR_ARG_WRONG, "-mat_gpustream_device_mpi maybe: give one of auto, false, true"},
    {"mat", NULL, "-mat_gpustream_halo_shared", "maybe", PETSC_ERR_ARG_WRONG, "-mat_gpustream_halo_shared maybe: give one of auto, false, true"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_replace", "sometimes", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_replace sometimes: give one of never, every, auto"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_replace", "every", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_replace every needs -ksp_pipecgfused_replace_every N with N > 0"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_replace_every", "-1", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pipecgfused_replace_every must be 0 (never) or positive, not -1"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_replace_every", "often", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_replace_every often: give an integer"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_overlap_reduction", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_overlap_reduction maybe: give true or false"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_device_scalars", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_device_scalars maybe: give true or false"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_one_kernel", "sometimes", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_one_kernel sometimes: give one of never, always, auto"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_check_true_residual", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_check_true_residual maybe: give true or false"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_residual_gap_factor", "0.5", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pipecgfused_residual_gap_factor must be at least 1, not 0.5"},
    {KSPPIPECGFUSED, NULL, "-ksp_pipecgfused_residual_gap_factor", "big", PETSC_ERR_ARG_WRONG, "-ksp_pipecgfused_residual_gap_factor big: give a number"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_device_scalars", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_pipebcgsf_device_scalars maybe: give true or false"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_s_in_spmv", "sometimes", PETSC_ERR_ARG_WRONG, "-ksp_pipebcgsf_s_in_spmv sometimes: give true or false"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_replace_every", "-3", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pipebcgsf_replace_every must be 0 (never) or positive, not -3"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_replace_every", "often", PETSC_ERR_ARG_WRONG, "-ksp_pipebcgsf_replace_every often: give an integer"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_check_true_residual", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_pipebcgsf_check_true_residual maybe: give true or false"},
    {KSPPIPEBCGSF, NULL, "-ksp_pipebcgsf_residual_gap_factor", "0.5", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pipebcgsf_residual_gap_factor must be at least 1, not 0.5"},
    {KSPSGMRESF, NULL, "-ksp_gmres_restart", "0", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_gmres_restart must be positive, not 0"},
    {KSPSGMRESF, NULL, "-ksp_gmres_restart", "many", PETSC_ERR_ARG_WRONG, "-ksp_gmres_restart many: give an integer"},
    {KSPSGMRESF, NULL, "-ksp_sgmresf_cgs_refinement", "bogus", PETSC_ERR_ARG_WRONG, "-ksp_sgmresf_cgs_refinement bogus: give one of never, ifneeded, always, delayed"},
    {KSPSGMRESF, NULL, "-ksp_sgmresf_check_true_residual", "maybe", PETSC_ERR_ARG_WRONG, "-ksp_sgmresf_check_true_residual maybe: give true or false"},
    {KSPSGMRESF, NULL, "-ksp_sgmresf_teams", "-2", PETSC_ERR_ARG_OUTOFRANGE, "-ksp_sgmresf_teams must be 0 (automatic) or positive, not -2"},
    {KSPSGMRESF, NULL, "-ksp_sgmresf_teams", "all", PETSC_ERR_ARG_WRONG, "-ksp_sgmresf_teams all: give an integer"},
    {KSPSGMRESF, "inner_", "-inner_ksp_sgmresf_teams", "all", PETSC_ERR_ARG_WRONG, "-inner_ksp_sgmresf_teams all: give an integer"},
    {"mat", "a_", "-a_mat_gpustream_overlap", "maybe", PETSC_ERR_ARG_WRONG, "-a_mat_gpustream_overlap maybe: give true or false"},
    /* the range checks with an options prefix */
    {"mat", "a_", "-a_mat_gpustream_max_device_bytes", "-5", PETSC_ERR_ARG_OUTOFRANGE, "-a_mat_gpustream_max_device_bytes -5. must be positive"},
    {"mat", "a_", "-a_mat_gpustream_buffers", "1", PETSC_ERR_ARG_OUTOFRANGE, "-a_mat_gpustream_buffers 1 must be at least 2"},
    {"mat", "a_", "-a_mat_gpustream_subdivisions", "0", PETSC_ERR_ARG_OUTOFRANGE, "-a_mat_gpustream_subdivisions 0 must be at least 1"},
    {"mat", "a_", "-a_mat_gpustream_tile_size", "4096", PETSC_ERR_ARG_OUTOFRANGE, "-a_mat_gpustream_tile_size 4096 must be in 0..2048"},
    {"mat", "a_", "-a_mat_gpustream_vec_type", "bogus", PETSC_ERR_ARG_WRONG, "-a_mat_gpustream_vec_type bogus: give auto or a vector type"},
    {KSPPIPECGFUSED, "inner_", "-inner_ksp_pipecgfused_replace", "every", PETSC_ERR_ARG_WRONG, "-inner_ksp_pipecgfused_replace every needs -inner_ksp_pipecgfused_replace_every N with N > 0"},
    {KSPPIPECGFUSED, "inner_", "-inner_ksp_pipecgfused_replace_every", "-1", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_pipecgfused_replace_every must be 0 (never) or positive, not -1"},
    {KSPPIPECGFUSED, "inner_", "-inner_ksp_pipecgfused_residual_gap_factor", "0.5", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_pipecgfused_residual_gap_factor must be at least 1, not 0.5"},
    {KSPPIPEBCGSF, "inner_", "-inner_ksp_pipebcgsf_replace_every", "-3", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_pipebcgsf_replace_every must be 0 (never) or positive, not -3"},
    {KSPPIPEBCGSF, "inner_", "-inner_ksp_pipebcgsf_residual_gap_factor", "0.5", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_pipebcgsf_residual_gap_factor must be at least 1, not 0.5"},
    {KSPSGMRESF, "inner_", "-inner_ksp_gmres_restart", "0", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_gmres_restart must be positive, not 0"},
    {KSPSGMRESF, "inner_", "-inner_ksp_sgmresf_teams", "-2", PETSC_ERR_ARG_OUTOFRANGE, "-inner_ksp_sgmresf_teams must be 0 (automatic) or positive, not -2"},
};

static PetscErrorCode BadOption(const OptionCase *o)
{
  Mat       A, B;
  KSP       ksp = NULL;
  Caught    c;
  PetscBool mat;
  char      label[128];

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(o->on, "mat", &mat));
  PetscCall(Pair(PETSC_TRUE, &A, &B));
  if (!mat) {
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetType(ksp, o->on));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetOptionsPrefix(ksp, o->prefix));
  } else
    PetscCall(MatSetOptionsPrefix(A, o->prefix));
  PetscCall(PetscOptionsSetValue(NULL, o->name, o->value));
  if (mat)
    CATCH(&c, MatSetFromOptions(A));
  else
    CATCH(&c, KSPSetFromOptions(ksp));
  PetscCall(PetscOptionsClearValue(NULL, o->name));
  if (mat)
    PetscCall(MatSetFromOptions(A));
  else
    PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s", o->name, o->value));
  PetscCall(Expect(label, &c, o->code, o->text));
  PetscCall(GoodAfterAndDestroy(&A, &B, ksp, mat ? KSPPIPECGFUSED : o->on));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* Runs a case twice, the second time reporting it and checking that it left PETSc's allocator holding what it held */
#define TWICE(call)                                                                                                                                                                                                                                      \
  do {                                                                                                                                                                                                                                                   \
    PetscLogDouble before, after;                                                                                                                                                                                                                        \
    quiet = PETSC_TRUE;                                                                                                                                                                                                                                  \
    PetscCall(call);                                                                                                                                                                                                                                     \
    quiet = PETSC_FALSE;                                                                                                                                                                                                                                 \
    PetscCall(PetscMallocGetCurrentUsage(&before));                                                                                                                                                                                                      \
    PetscCall(call);                                                                                                                                                                                                                                     \
    PetscCall(PetscMallocGetCurrentUsage(&after));                                                                                                                                                                                                       \
    PetscCall(MemoryKept(before, after));                                                                                                                                                                                                                \
  } while (0)

static PetscErrorCode MemoryKept(PetscLogDouble before, PetscLogDouble after)
{
  PetscLogDouble d = PetscAbsReal(after - before);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  if (d > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  LEAKED: the memory PETSc holds changed by %g bytes\n", d));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscLogDouble held;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &verbose, NULL));
  PetscCall(PetscMallocGetCurrentUsage(&held));
  PetscCheck(held > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Run with -malloc_debug: the leak check reads PETSc's count of allocated memory");
  TWICE(Unassembled());
  TWICE(Sizes());
  TWICE(SetValuesAfter("a new nonzero after assembly", MAT_OPTION_MAX, PETSC_FALSE, -1, -6, PETSC_ERR_ARG_OUTOFRANGE, "caused a malloc"));
  TWICE(SetValuesAfter("a new nonzero, MAT_NEW_NONZERO_LOCATIONS false", MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE, -1, -6, 0, NULL));
  TWICE(SetValuesAfter("a new nonzero, MAT_NEW_NONZERO_ALLOCATION_ERR false", MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE, -1, -6, 0, NULL));
  TWICE(SetValuesAfter("column out of range", MAT_OPTION_MAX, PETSC_FALSE, -1, 1 << 20, PETSC_ERR_ARG_OUTOFRANGE, "Column too large"));
  TWICE(SetValuesAfter("row out of range", MAT_OPTION_MAX, PETSC_FALSE, 1 << 20, 0, PETSC_ERR_ARG_OUTOFRANGE, "Row too large"));
  TWICE(BlockSize());
  for (PetscInt cols = 12; cols >= 0; cols -= 12) {
    TWICE(Shape(KSPPIPECGFUSED, KSPCG, cols));
    TWICE(Shape(KSPPIPEBCGSF, KSPBCGS, cols));
    TWICE(Shape(KSPSGMRESF, KSPGMRES, cols));
  }
  TWICE(DependentLaunch());
  TWICE(DeviceProducts());
  TWICE(ProductPattern());
  TWICE(Budget("a budget below one row and the vectors", NULL, "stream", "100", NULL, "is too small: even with one row per subdivision"));
  TWICE(Budget("a budget too small for 2 subdivisions", NULL, "stream", "400", "2", "is too small for 2 subdivisions"));
  TWICE(Budget("resident mode over the budget", NULL, "resident", "100", NULL, "-mat_gpustream_mode resident: the matrix needs"));
  /* the same with an options prefix: every option the messages name carries it */
  TWICE(Budget("prefix a_, a budget below one row and the vectors", "a_", "stream", "100", NULL, "Device budget 100. bytes (-a_mat_gpustream_max_device_bytes) is too small: even with one row per subdivision, 2 buffers of row"));
  TWICE(Budget("prefix a_, a budget too small for 2 subdivisions", "a_", "stream", "400", "2", "use a larger -a_mat_gpustream_max_device_bytes or more -a_mat_gpustream_subdivisions"));
  TWICE(Budget("prefix a_, resident mode over the budget", "a_", "resident", "100", NULL, "(-a_mat_gpustream_max_device_bytes), and a process is over it; use -a_mat_gpustream_mode auto or stream"));
  TWICE(FormatBlock());
  TWICE(OverlapReplace(KSPPIPECGFUSED));
  TWICE(
      RightOnly(KSPPIPEBCGSF, "-inner_ksp_pc_side", "left", "KSPPIPEBCGSF preconditions from the right only, not from the left (-inner_ksp_pc_side left or KSPSetPCSide()): leave the side out or give right, or use KSPBCGS for left preconditioning"));
  TWICE(RightOnly(KSPPIPEBCGSF, "-inner_ksp_pc_side", "symmetric", "KSPPIPEBCGSF preconditions from the right only, not from the two sides (-inner_ksp_pc_side symmetric or KSPSetPCSide())"));
  TWICE(RightOnly(KSPPIPEBCGSF, "-inner_ksp_norm_type", "preconditioned",
                  "KSPPIPEBCGSF preconditions from the right only: it tests the unpreconditioned residual norm (or none), not the preconditioned one (-inner_ksp_norm_type or KSPSetNormType()); use KSPBCGS for it"));
  TWICE(RightOnly(KSPSGMRESF, "-inner_ksp_pc_side", "left", "KSPSGMRESF preconditions from the right only, not from the left (-inner_ksp_pc_side left or KSPSetPCSide()): leave the side out or give right, or use KSPGMRES for left preconditioning"));
  TWICE(RightOnly(KSPSGMRESF, "-inner_ksp_norm_type", "natural", "KSPSGMRESF preconditions from the right only: it tests the unpreconditioned residual norm (or none), not the natural one"));
  for (size_t i = 0; i < sizeof(optioncases) / sizeof(optioncases[0]); i++) TWICE(BadOption(&optioncases[i]));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -malloc_debug -malloc_dump

   test:
      suffix: 2
      nsize: 2
      args: -malloc_debug -malloc_dump
      output_file: output/badinput.out

   test:
      suffix: 4
      nsize: 4
      args: -malloc_debug -malloc_dump
      output_file: output/badinput.out

TEST*/
