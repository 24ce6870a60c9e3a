static char help[] = "The host vectors MatCreateVecs() gives on a gpustream matrix, in pinned memory\n\
(-mat_gpustream_pinned_vecs): their type and layout as AIJ's MatCreateVecs() gives, each array held by the vector,\n\
zeroed, duplicates pageable with the composed objects and functions of the original, the three solvers on them\n\
against the same solves on plain host vectors, placed and replaced arrays, and nothing left behind (-malloc_dump).\n\
  -m <16>              : grid edge of the 2D Laplacian\n\
  -expect_pinned <false> : whether the arrays must be pinned\n\
  -bind_first_core     : bind the process to the first core it may use (Linux), as MPI launchers bind processes\n\n";

#if defined(__linux__) && !defined(_GNU_SOURCE)
#  define _GNU_SOURCE /* sched_setaffinity() */
#endif
#include <petscgpustream.h>
#include "collective.h"
#include "laplacian.h"
#if defined(__linux__)
#  include <sched.h>
#endif

/* The name the plugin composes a pinned vector's array under (src/mat/gpustream/hostvecs.c) */
static const char Pinned[] = "GPUStreamPinnedArray";

static PetscErrorCode Check(PetscBool ok, const char what[])
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", what, ok ? "yes" : "NO"));
  PetscFunctionReturn(0);
}

/* The process bound to the first core of those it may use, before the plugin asks how many it has */
static PetscErrorCode BindFirstCore(void)
{
  PetscFunctionBeginUser;
#if defined(__linux__)
  {
    cpu_set_t set, one;
    CPU_ZERO(&set);
    CPU_ZERO(&one);
    PetscCheck(!sched_getaffinity(0, sizeof(set), &set), PETSC_COMM_SELF, PETSC_ERR_SYS, "sched_getaffinity() failed");
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &set)) {
        CPU_SET(c, &one);
        break;
      }
    PetscCheck(!sched_setaffinity(0, sizeof(one), &one), PETSC_COMM_SELF, PETSC_ERR_SYS, "sched_setaffinity() failed");
  }
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "-bind_first_core needs Linux");
#endif
  PetscFunctionReturn(0);
}

/* Whether v's array is the pinned one composed on it (on every process) */
static PetscErrorCode IsPinned(Vec v, PetscBool *pinned)
{
  PetscObject  c;
  void        *p = NULL;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)v, Pinned, &c));
  if (c) PetscCall(PetscContainerGetPointer((PetscContainer)c, &p));
  PetscCall(VecGetArray(v, &a));
  *pinned = (PetscBool)(c && p == (void *)a);
  PetscCall(VecRestoreArray(v, &a));
  PetscCall(AllTrue(pinned));
  PetscFunctionReturn(0);
}

/* Same type, block size and ownership ranges */
static PetscErrorCode SameLayout(Vec u, Vec v, PetscBool *same)
{
  PetscInt  lu, hu, lv, hv, bu, bv;
  PetscBool t;
  VecType   tv;

  PetscFunctionBeginUser;
  PetscCall(VecGetType(v, &tv));
  PetscCall(PetscObjectTypeCompare((PetscObject)u, tv, &t));
  PetscCall(VecGetOwnershipRange(u, &lu, &hu));
  PetscCall(VecGetOwnershipRange(v, &lv, &hv));
  PetscCall(VecGetBlockSize(u, &bu));
  PetscCall(VecGetBlockSize(v, &bv));
  *same = (PetscBool)(t && lu == lv && hu == hv && bu == bv);
  PetscCall(AllTrue(same));
  PetscFunctionReturn(0);
}

static PetscErrorCode Marker(void)
{
  return 0;
}

/* MatCreateVecs() and VecDuplicate() on the gpustream matrix A against AIJ's vectors of Aaij */
static PetscErrorCode Vectors(Mat A, Mat Aaij, PetscBool expect)
{
  Vec            x, b, xa, ba, y;
  PetscBool      ok, p1, p2, same;
  PetscReal      nx, nb;
  PetscContainer user;
  PetscObject    got;
  void (*f)(void) = NULL;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(MatCreateVecs(Aaij, &xa, &ba));
  PetscCall(SameLayout(x, xa, &p1));
  PetscCall(SameLayout(b, ba, &p2));
  PetscCall(Check((PetscBool)(p1 && p2), "MatCreateVecs: type and layout as AIJ's"));
  PetscCall(IsPinned(x, &p1));
  PetscCall(IsPinned(b, &p2));
  PetscCall(Check((PetscBool)(p1 == expect && p2 == expect), expect ? "MatCreateVecs: both arrays pinned" : "MatCreateVecs: neither array pinned"));
  PetscCall(VecNorm(x, NORM_INFINITY, &nx));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  PetscCall(Check((PetscBool)(nx == 0 && nb == 0), "MatCreateVecs: zeroed"));

  /* a duplicate: an ordinary (pageable) vector of its own array, the original's composed objects and functions */
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &user));
  PetscCall(PetscObjectCompose((PetscObject)x, "user", (PetscObject)user));
  PetscCall(PetscContainerDestroy(&user));
  PetscCall(PetscObjectComposeFunction((PetscObject)x, "Marker_C", Marker));
  PetscCall(VecSet(x, 3.0));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(SameLayout(y, xa, &same));
  PetscCall(IsPinned(y, &p1));
  PetscCall(PetscObjectQuery((PetscObject)y, "user", &got));
  PetscCall(PetscObjectQueryFunction((PetscObject)y, "Marker_C", &f));
  ok = (PetscBool)(same && !p1 && got && f == (void (*)(void))Marker);
  PetscCall(VecNorm(y, NORM_INFINITY, &nx));
  PetscCall(Check((PetscBool)(ok && nx == 0), "VecDuplicate: layout, pageable, composed objects and functions carried, zeroed"));
  {
    const PetscScalar *ax, *ay;
    PetscInt           n;
    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArrayRead(x, &ax));
    PetscCall(VecGetArrayRead(y, &ay));
    ok = (PetscBool)(ax != ay || !n);
    PetscCall(VecRestoreArrayRead(x, &ax));
    PetscCall(VecRestoreArrayRead(y, &ay));
    PetscCall(AllTrue(&ok));
    PetscCall(Check(ok, "VecDuplicate: an array of its own"));
  }

  /* a placed array, then a replaced one (which the vector then owns, its pinned array still freed with it) */
  {
    PetscScalar *mine, *now;
    PetscInt     n;
    PetscCall(VecGetLocalSize(y, &n));
    PetscCall(PetscCalloc1(n + 1, &mine));
    PetscCall(VecPlaceArray(y, mine));
    PetscCall(VecSet(y, 2.0));
    PetscCall(VecGetArray(y, &now));
    ok = (PetscBool)(now == mine && (!n || mine[0] == 2.0));
    PetscCall(VecRestoreArray(y, &now));
    PetscCall(VecResetArray(y));
    PetscCall(VecNorm(y, NORM_INFINITY, &nx));
    PetscCall(PetscFree(mine));
    PetscCall(PetscMalloc1(n + 1, &mine));
    PetscCall(VecReplaceArray(y, mine));
    PetscCall(VecSet(y, 1.0));
    PetscCall(VecNorm(y, NORM_INFINITY, &nb));
    PetscCall(AllTrue(&ok));
    PetscCall(Check((PetscBool)(ok && nx == 0 && nb == 1.0), "VecPlaceArray, VecResetArray, VecReplaceArray"));
  }
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ba));
  PetscFunctionReturn(0);
}

/* Each solver on MatCreateVecs()'s vectors against the same solve on plain host vectors of AIJ's MatCreateVecs() */
static PetscErrorCode Solves(Mat A, Mat Aaij)
{
  const char *types[] = {"pipecgfused", "pipebcgsf", "sgmresf"};

  PetscFunctionBeginUser;
  for (int t = 0; t < 3; t++) {
    Vec       x, b, xh, bh;
    PetscInt  its[2];
    PetscReal rn[2];
    PetscBool eq;
    for (int k = 0; k < 2; k++) {
      KSP ksp;
      Vec X, B;
      if (k == 0) {
        PetscCall(MatCreateVecs(A, &x, &b));
        X = x;
        B = b;
      } else {
        PetscCall(MatCreateVecs(Aaij, &xh, &bh));
        X = xh;
        B = bh;
      }
      PetscCall(VecSet(X, 1.0));
      PetscCall(MatMult(A, X, B));
      PetscCall(VecSet(X, 0.0));
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPSetType(ksp, types[t]));
      PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 400));
      {
        PC pc;
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCSetType(pc, PCJACOBI));
      }
      PetscCall(KSPSolve(ksp, B, X));
      PetscCall(KSPGetIterationNumber(ksp, &its[k]));
      PetscCall(KSPGetResidualNorm(ksp, &rn[k]));
      PetscCall(KSPDestroy(&ksp));
    }
    PetscCall(VecEqual(x, xh, &eq));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", types[t], its[0] == its[1] && rn[0] == rn[1] && eq ? "same iterations, residual and solution as on plain host vectors" : "DIFFERS from plain host vectors"));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xh));
    PetscCall(VecDestroy(&bh));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat       A, Aaij;
  PetscInt  m      = 16;
  PetscBool pinned = PETSC_FALSE, bind = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bind_first_core", &bind, NULL));
  if (bind) PetscCall(BindFirstCore());
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_pinned", &pinned, NULL));
  PetscCall(Laplacian2D(MATGPUSTREAM, m, 4.0, PETSC_TRUE, &A));
  PetscCall(Laplacian2D(MATAIJ, m, 4.0, PETSC_TRUE, &Aaij));
  PetscCall(MatViewFromOptions(A, NULL, "-view"));
  PetscCall(Vectors(A, Aaij, pinned));
  PetscCall(Solves(A, Aaij));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aaij));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # standard vectors on every stack (auto gives CUDA vectors where PETSc has them)
   test:
      suffix: pinned
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs -expect_pinned -malloc_dump

   test:
      suffix: pinned_2
      nsize: 2
      output_file: output/hostvecs_pinned.out
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs -expect_pinned -m 15

   test:
      suffix: pinned_3
      nsize: 3
      output_file: output/hostvecs_pinned.out
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs -expect_pinned -m 13

   test:
      suffix: pageable
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -malloc_dump

   # a process bound to one core stages its copies on that core alone, whatever -gpustream_staging_threads asks
   test:
      suffix: staging_bound
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs false -gpustream_staging_threads 8 -bind_first_core -info :sys
      filter: grep -E -o "GPUStream: staging threads capped.*|DIFFERS.*|: NO"

   test:
      suffix: view
      args: -mat_gpustream_vec_type standard -mat_gpustream_pinned_vecs -view ::ascii_info
      filter: grep -o "MatCreateVecs() gives [^;]*"

   test:
      suffix: bad_pinned
      args: -mat_gpustream_pinned_vecs maybe
      error: 1
      filter: grep -o "mat_gpustream_pinned_vecs maybe: give true or false" | sort -u

TEST*/
