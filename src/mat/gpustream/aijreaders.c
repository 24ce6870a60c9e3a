/* PETSc code that reads AIJ's data and checks the type name of the matrix it is handed, made to take MATGPUSTREAM:
   the solver packages' factorizations (MATSOLVERPETSC's, MUMPS, SuperLU, SuperLU_DIST, KLU, UMFPACK, CHOLMOD, SPQR,
   BAS ...), PCML, PCCP, PCTFS, PCMPI, PCILU's nonzero shift, PCGAMG's classical direct interpolation, the coarsenings
   (MIS, MIS-k, HEM), the greedy and JP colorings and, on PETSc 3.18, the orderings on several processes. Each runs
   PETSc's code on the host arrays, made current first, with the matrix wearing its base name "seqaij" or "mpiaij" for
   the call (MatGPUStreamWearBase()): what it computes is what it computes for the AIJ matrix of the same values. The
   implementations registered under a name are replaced by wrappers that call PETSc's. */
#include <petsc/private/matimpl.h>
#include <petsc/private/pcgamgimpl.h>
#include "../../stream/streamimpl.h"

/* PETSc's implementation that a wrapper took the place of, composed on obj under name */
static PetscErrorCode GSGetSaved(PetscObject obj, const char name[], GSFn *f)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction(obj, name, f));
  PetscCheck(*f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Missing %s", name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A wrapper fn params: PETSc's implementation composed on obj under saved, called with args while the matrix mat
   wears its base name */
#define GS_WORN_WRAPPER(fn, params, obj, saved, mat, args)                                                                                                                                                                                               \
  static PetscErrorCode fn params                                                                                                                                                                                                                        \
  {                                                                                                                                                                                                                                                      \
    PetscErrorCode(*f) params = NULL;                                                                                                                                                                                                                    \
    PetscBool worn;                                                                                                                                                                                                                                      \
                                                                                                                                                                                                                                                         \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(GSGetSaved((PetscObject)(obj), saved, (GSFn *)&f));                                                                                                                                                                                        \
    PetscCall(MatGPUStreamWearBase(mat, &worn));                                                                                                                                                                                                         \
    PetscCall(MatGPUStreamWearOwn(mat, worn, (*f)args));                                                                                                                                                                                                 \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }

/* The phases of a factor made from a gpustream matrix: the factor's own (AIJ's or the package's) is composed on it
   under `saved` and called by the wrapper, with the matrix wearing its base name. A phase is an operation of the
   factor (offset in struct _MatOps) or a function composed on it (QR's). */
typedef struct {
  size_t      offset;   /* of the operation, or GS_COMPOSED */
  const char *composed; /* the name PETSc calls it by, for composed phases */
  const char *saved;
  GSFn        wrapper;
} GSFactorPhase;
#define GS_COMPOSED ((size_t)-1)

static PetscErrorCode MatFactorWrapPhases_Private(Mat, const struct _MatOps *);

enum { GS_LU_SYMBOLIC, GS_ILU_SYMBOLIC, GS_CHOLESKY_SYMBOLIC, GS_ICC_SYMBOLIC, GS_LU_NUMERIC, GS_CHOLESKY_NUMERIC, GS_QR_SYMBOLIC, GS_QR_NUMERIC, GS_NPHASES };
static const GSFactorPhase GSFactorPhases[GS_NPHASES]; /* below, with the wrappers */

/* A phase wrapper: the saved phase with A wearing its base name; the phases it set in turn (a symbolic phase sets the
   numeric one) are wrapped afterwards, and only those: MATSOLVERGPUSTREAM's factor (factor.c) calls the host phases
   from its own, whose operations stay as they are */
#define GS_FACTOR_PHASE(fn, k, params, args)                                                                                                                                                                                                             \
  static PetscErrorCode fn params                                                                                                                                                                                                                        \
  {                                                                                                                                                                                                                                                      \
    PetscErrorCode(*f) params = NULL;                                                                                                                                                                                                                    \
    PetscBool      worn;                                                                                                                                                                                                                                 \
    struct _MatOps before;                                                                                                                                                                                                                               \
                                                                                                                                                                                                                                                         \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(GSGetSaved((PetscObject)F, GSFactorPhases[k].saved, (GSFn *)&f));                                                                                                                                                                          \
    before = *F->ops;                                                                                                                                                                                                                                    \
    PetscCall(MatGPUStreamWearBase(A, &worn));                                                                                                                                                                                                           \
    PetscCall(MatGPUStreamWearOwn(A, worn, (*f)args));                                                                                                                                                                                                   \
    PetscCall(MatFactorWrapPhases_Private(F, &before));                                                                                                                                                                                                  \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }

GS_FACTOR_PHASE(MatLUFactorSymbolic_GPUStream, GS_LU_SYMBOLIC, (Mat F, Mat A, IS row, IS col, const MatFactorInfo *info), (F, A, row, col, info))
GS_FACTOR_PHASE(MatILUFactorSymbolic_GPUStream, GS_ILU_SYMBOLIC, (Mat F, Mat A, IS row, IS col, const MatFactorInfo *info), (F, A, row, col, info))
GS_FACTOR_PHASE(MatCholeskyFactorSymbolic_GPUStream, GS_CHOLESKY_SYMBOLIC, (Mat F, Mat A, IS perm, const MatFactorInfo *info), (F, A, perm, info))
GS_FACTOR_PHASE(MatICCFactorSymbolic_GPUStream, GS_ICC_SYMBOLIC, (Mat F, Mat A, IS perm, const MatFactorInfo *info), (F, A, perm, info))
GS_FACTOR_PHASE(MatLUFactorNumeric_GPUStream, GS_LU_NUMERIC, (Mat F, Mat A, const MatFactorInfo *info), (F, A, info))
GS_FACTOR_PHASE(MatCholeskyFactorNumeric_GPUStream, GS_CHOLESKY_NUMERIC, (Mat F, Mat A, const MatFactorInfo *info), (F, A, info))
GS_FACTOR_PHASE(MatQRFactorSymbolic_GPUStream, GS_QR_SYMBOLIC, (Mat F, Mat A, IS col, const MatFactorInfo *info), (F, A, col, info))
GS_FACTOR_PHASE(MatQRFactorNumeric_GPUStream, GS_QR_NUMERIC, (Mat F, Mat A, const MatFactorInfo *info), (F, A, info))

static const GSFactorPhase GSFactorPhases[GS_NPHASES] = {
    {offsetof(struct _MatOps, lufactorsymbolic), NULL, "GSLUFactorSymbolic_C", (GSFn)MatLUFactorSymbolic_GPUStream},
    {offsetof(struct _MatOps, ilufactorsymbolic), NULL, "GSILUFactorSymbolic_C", (GSFn)MatILUFactorSymbolic_GPUStream},
    {offsetof(struct _MatOps, choleskyfactorsymbolic), NULL, "GSCholeskyFactorSymbolic_C", (GSFn)MatCholeskyFactorSymbolic_GPUStream},
    {offsetof(struct _MatOps, iccfactorsymbolic), NULL, "GSICCFactorSymbolic_C", (GSFn)MatICCFactorSymbolic_GPUStream},
    {offsetof(struct _MatOps, lufactornumeric), NULL, "GSLUFactorNumeric_C", (GSFn)MatLUFactorNumeric_GPUStream},
    {offsetof(struct _MatOps, choleskyfactornumeric), NULL, "GSCholeskyFactorNumeric_C", (GSFn)MatCholeskyFactorNumeric_GPUStream},
    {GS_COMPOSED, "MatQRFactorSymbolic_C", "GSQRFactorSymbolic_C", (GSFn)MatQRFactorSymbolic_GPUStream},
    {GS_COMPOSED, "MatQRFactorNumeric_C", "GSQRFactorNumeric_C", (GSFn)MatQRFactorNumeric_GPUStream},
};

/* Every phase F has goes behind its wrapper (again, where a phase set another since); with before, the operations
   before a phase, only those the phase changed */
static PetscErrorCode MatFactorWrapPhases_Private(Mat F, const struct _MatOps *before)
{
  PetscFunctionBegin;
  for (int k = 0; k < GS_NPHASES; k++) {
    const GSFactorPhase *p = &GSFactorPhases[k];
    GSFn                 f = NULL;

    if (p->offset != GS_COMPOSED) {
      GSFn *slot = (GSFn *)((char *)F->ops + p->offset);
      if (before && *slot == *(const GSFn *)((const char *)before + p->offset)) continue;
      if (*slot && *slot != p->wrapper) {
        PetscCall(PetscObjectComposeFunction((PetscObject)F, p->saved, *slot));
        *slot = p->wrapper;
      }
      continue;
    }
    PetscCall(PetscObjectQueryFunction((PetscObject)F, p->composed, &f));
    if (f && f != p->wrapper) {
      PetscCall(PetscObjectComposeFunction((PetscObject)F, p->saved, f));
      PetscCall(PetscObjectComposeFunction((PetscObject)F, p->composed, p->wrapper));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver types that may be registered for MATSEQAIJ or MATMPIAIJ: every MATSOLVER name of PETSc 3.18 to 3.25.
   PETSc keeps the registrations in a list of its own, which no function walks; MatSolverTypeGet() asks by name. */
static const char *const GSSolverTypes[] = {"petsc", "mumps",  "superlu",   "superlu_dist",    "strumpack", "umfpack", "cholmod",  "klu",          "spqr", "bas",       "mkl_pardiso",   "mkl_cpardiso", "pastix", "essl",
                                            "lusol", "matlab", "elemental", "sparseelemental", "scalapack", "htool",   "cusparse", "cusparseband", "cuda", "hipsparse", "hipsparseband", "hip",          "kokkos", "kokkosdevice"};
#define GS_NSOLVERTYPES ((int)(sizeof(GSSolverTypes) / sizeof(GSSolverTypes[0])))

/* The factor of solver type GSSolverTypes[k]: the one it makes for the base type (MATSEQAIJ on one process, MATMPIAIJ
   on several), from the matrix wearing that name, its phases wrapped. MATSOLVERPETSC, which factors MATSEQAIJ only,
   is also what MatGetFactor() takes when no solver type is given (PETSc's first registration): on several processes
   the factor is then the one AIJ gets without a solver type, PETSc's first for MATMPIAIJ (MUMPS, SuperLU_DIST, ...) */
static PetscErrorCode MatGetFactor_GPUStream_Package(Mat A, MatFactorType ftype, Mat *F, int k)
{
  MatSolverType stype                            = GSSolverTypes[k];
  PetscErrorCode (*f)(Mat, MatFactorType, Mat *) = NULL;
  PetscMPIInt size;
  MatType     base;
  PetscBool   worn, ispetsc, byaijdefault = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  base = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  PetscCall(PetscStrcmp(stype, MATSOLVERPETSC, &ispetsc));
  PetscCall(MatSolverTypeGet(stype, base, ftype, NULL, NULL, &f));
  if (!f && ispetsc && size > 1) {
    PetscCall(MatSolverTypeGet(NULL, base, ftype, NULL, NULL, &f));
    byaijdefault = (PetscBool) !!f;
    PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_MISSING_FACTOR,
               "MATSOLVERPETSC factors a gpustream matrix on one process only (as MATSEQAIJ), and no solver package has the %s factorization for MATMPIAIJ; on several processes use -pc_type bjacobi or asm, whose blocks it factors, or -pc_type gamg",
               MatFactorTypes[ftype]);
  }
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_MISSING_FACTOR, "MatSolverType %s has no %s factorization of matrix type %s, which a gpustream matrix on %d process%s takes", stype, MatFactorTypes[ftype], base, (int)size,
             size > 1 ? "es" : "");
  PetscCall(MatGPUStreamWearBase(A, &worn));
  PetscCall(MatGPUStreamWearOwn(A, worn, (*f)(A, ftype, F)));
  PetscCall(MatFactorWrapPhases_Private(*F, NULL));
  if (byaijdefault) {
    MatSolverType t;
    PetscCall(MatFactorGetSolverType(*F, &t));
    PetscCall(PetscInfo(A, "MATSOLVERPETSC has no %s factorization on several processes: %s's, which MATMPIAIJ takes with no solver type\n", MatFactorTypes[ftype], t));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGetFactor() passes no solver type to the function registered: one for each */
#define GS_GET_FACTOR(k)                                                                                                                                                                                                                                 \
  static PetscErrorCode MatGetFactor_GPUStream_##k(Mat A, MatFactorType ftype, Mat *F)                                                                                                                                                                   \
  {                                                                                                                                                                                                                                                      \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(MatGetFactor_GPUStream_Package(A, ftype, F, k));                                                                                                                                                                                           \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }
GS_GET_FACTOR(0)
GS_GET_FACTOR(1)
GS_GET_FACTOR(2)
GS_GET_FACTOR(3)
GS_GET_FACTOR(4)
GS_GET_FACTOR(5)
GS_GET_FACTOR(6)
GS_GET_FACTOR(7)
GS_GET_FACTOR(8)
GS_GET_FACTOR(9)
GS_GET_FACTOR(10)
GS_GET_FACTOR(11)
GS_GET_FACTOR(12)
GS_GET_FACTOR(13)
GS_GET_FACTOR(14)
GS_GET_FACTOR(15)
GS_GET_FACTOR(16)
GS_GET_FACTOR(17)
GS_GET_FACTOR(18)
GS_GET_FACTOR(19)
GS_GET_FACTOR(20)
GS_GET_FACTOR(21)
GS_GET_FACTOR(22)
GS_GET_FACTOR(23)
GS_GET_FACTOR(24)
GS_GET_FACTOR(25)
GS_GET_FACTOR(26)
GS_GET_FACTOR(27)

static PetscErrorCode (*const GSGetFactor[])(Mat, MatFactorType, Mat *) = {
    MatGetFactor_GPUStream_0,  MatGetFactor_GPUStream_1,  MatGetFactor_GPUStream_2,  MatGetFactor_GPUStream_3,  MatGetFactor_GPUStream_4,  MatGetFactor_GPUStream_5,  MatGetFactor_GPUStream_6,
    MatGetFactor_GPUStream_7,  MatGetFactor_GPUStream_8,  MatGetFactor_GPUStream_9,  MatGetFactor_GPUStream_10, MatGetFactor_GPUStream_11, MatGetFactor_GPUStream_12, MatGetFactor_GPUStream_13,
    MatGetFactor_GPUStream_14, MatGetFactor_GPUStream_15, MatGetFactor_GPUStream_16, MatGetFactor_GPUStream_17, MatGetFactor_GPUStream_18, MatGetFactor_GPUStream_19, MatGetFactor_GPUStream_20,
    MatGetFactor_GPUStream_21, MatGetFactor_GPUStream_22, MatGetFactor_GPUStream_23, MatGetFactor_GPUStream_24, MatGetFactor_GPUStream_25, MatGetFactor_GPUStream_26, MatGetFactor_GPUStream_27,
};

/* MATSOLVERPETSC's factor of a gpustream matrix (MATSOLVERGPUSTREAM's is made from it, factor.c): SeqAIJ's, an ordinary
   host factor, which PCApply() and MatSolve() use on the host; its phases read the host arrays made current */
PetscErrorCode MatGetFactor_GPUStream_Host(Mat A, MatFactorType ftype, Mat *F)
{
  PetscFunctionBegin;
  PetscCall(MatGetFactor_GPUStream_Package(A, ftype, F, 0)); /* GSSolverTypes[0]: MATSOLVERPETSC */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver types are registered for the type name "gpustream" begins with, this one, not for "gpustream" itself.
   PETSc's MatGetFactor() without a solver type takes the first package registered for the matrix's exact type name,
   and only then the first registered for a name it begins with (its base types'), packages in the order of their
   first registration, MATSOLVERPETSC's first of all. So ILU and ICC without a solver type take MATSOLVERGPUSTREAM
   (registered for "gpustream" exactly, where the plugin has Kokkos-Kernels), LU and Cholesky MATSOLVERPETSC's as for
   AIJ, and a solver type asked for by name, whose search accepts a name the type begins with, finds its package. A
   package has one registration for the name, with all of its factorizations: its search stops at the first name. */
#define GS_SOLVER_MATTYPE "gpustrea"

/* Each solver type registered for MATSEQAIJ or MATMPIAIJ, for each factorization it has, is registered for
   MATGPUSTREAM: PETSc's registrations are all made by MatInitializePackage(), which MatSolverTypeGet() calls first;
   a package registered later (by another plugin) is not seen. Then MATSOLVERGPUSTREAM's. */
static PetscErrorCode MatSolverTypeRegister_GPUStream(void)
{
  PetscFunctionBegin;
  PetscCheck((int)(sizeof(GSGetFactor) / sizeof(GSGetFactor[0])) == GS_NSOLVERTYPES, PETSC_COMM_SELF, PETSC_ERR_PLIB, "One MatGetFactor function a solver type");
  PetscCall(MatInitializePackage());
  for (int k = 0; k < GS_NSOLVERTYPES; k++) {
    for (int t = MAT_FACTOR_LU; t < MAT_FACTOR_NUM_TYPES; t++) {
      PetscErrorCode (*fs)(Mat, MatFactorType, Mat *) = NULL, (*fm)(Mat, MatFactorType, Mat *) = NULL;
      PetscCall(MatSolverTypeGet(GSSolverTypes[k], MATSEQAIJ, (MatFactorType)t, NULL, NULL, &fs));
      PetscCall(MatSolverTypeGet(GSSolverTypes[k], MATMPIAIJ, (MatFactorType)t, NULL, NULL, &fm));
      if (fs || fm) PetscCall(MatSolverTypeRegister(GSSolverTypes[k], GS_SOLVER_MATTYPE, (MatFactorType)t, GSGetFactor[k]));
    }
  }
  PetscCall(MatSolverTypeRegister_GPUStreamDevice());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Preconditioners whose set-up reads AIJ's data or checks the type name: PCML (MatConvert_MPIAIJ_ML(), its row
   functions), PCCP and PCTFS (SeqAIJ and MPIAIJ only), PCMPI (the MPI linear solver server, which sends the values
   of MatSeqAIJGetArrayRead()): the set-up runs with the operator's host arrays current and its base name worn; the
   other phases use it through its operations. PCILU, PCGAMG: see below. */
GS_WORN_WRAPPER(PCSetUp_GPUStream, (PC pc), pc, "GSPCSetUp_C", pc->pmat, (pc))

/* PCILU changes -pc_factor_shift_type nonzero to inblocks for types other than SeqAIJ and MPIAIJ: with that shift
   type its set-up runs with the operator wearing its base name (the factor is then AIJ's own, MATSOLVERPETSC's where
   no solver type is given); with any other, or with MATSOLVERGPUSTREAM asked for by name (which has no registration
   for the base types: its device factor then shifts in blocks), through the factorizations registered for gpustream,
   as every factorization */
static PetscErrorCode PCSetUp_ILU_GPUStream(PC pc)
{
  MatFactorShiftType shift;
  MatSolverType      stype = NULL;
  PetscBool          device;

  PetscFunctionBegin;
  PetscCall(PCFactorGetShiftType(pc, &shift));
  PetscCall(PCFactorGetMatSolverType(pc, &stype));
  PetscCall(PetscStrcmp(stype, MATSOLVERGPUSTREAM, &device));
  if (shift == MAT_SHIFT_NONZERO && !device)
    PetscCall(PCSetUp_GPUStream(pc));
  else {
    PetscErrorCode (*f)(PC) = NULL;
    PetscCall(GSGetSaved((PetscObject)pc, "GSPCSetUp_C", (GSFn *)&f));
    PetscCall((*f)(pc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCGAMG's classical AMG with direct interpolation (-pc_gamg_classical_type direct) checks the operator's exact type
   name: its prolongator runs with the operator wearing its base name. The other prolongators make the interpolation
   of the operator's type (a gpustream one), applied on the device: they run as they are. The interpolation then
   takes the operator's settings, as its vectors and binding must be the operator's. */
#if defined(GPUSTREAM_PETSC_GAMG_PROLONGATOR_NO_GRAPH)
static PetscErrorCode PCGAMGProlongator_GPUStream(PC pc, Mat A, PetscCoarsenData *agg, Mat *P)
#else
static PetscErrorCode PCGAMGProlongator_GPUStream(PC pc, Mat A, Mat G, PetscCoarsenData *agg, Mat *P)
#endif
{
  PC_MG    *mg      = (PC_MG *)pc->data;
  PC_GAMG  *pc_gamg = (PC_GAMG *)mg->innerctx;
  PetscBool worn = PETSC_FALSE, direct = PETSC_FALSE;
#if defined(GPUSTREAM_PETSC_GAMG_PROLONGATOR_NO_GRAPH)
  PetscErrorCode (*f)(PC, Mat, PetscCoarsenData *, Mat *) = NULL;
#else
  PetscErrorCode (*f)(PC, Mat, Mat, PetscCoarsenData *, Mat *) = NULL;
#endif

  PetscFunctionBegin;
  PetscCall(GSGetSaved((PetscObject)pc, "GSPCGAMGProlongator_C", (GSFn *)&f));
  PetscCall(PetscStrcmp(pc_gamg->gamg_type_name, PCGAMGCLASSICAL, &direct));
  if (direct) {
    PCGAMGClassicalType ctype;
    PetscCall(PCGAMGClassicalGetType(pc, &ctype));
    PetscCall(PetscStrcmp(ctype, PCGAMGCLASSICALDIRECT, &direct));
  }
  if (direct) PetscCall(MatGPUStreamWearBase(A, &worn));
#if defined(GPUSTREAM_PETSC_GAMG_PROLONGATOR_NO_GRAPH)
  PetscCall(MatGPUStreamWearOwn(A, worn, (*f)(pc, A, agg, P)));
#else
  PetscCall(MatGPUStreamWearOwn(A, worn, (*f)(pc, A, G, agg, P)));
#endif
  if (*P) PetscCall(MatGPUStreamTakeSettings(*P, A)); /* made with the type's defaults */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The prolongator of the GAMG type set (PCGAMGSetType() sets it again) behind its wrapper, then PCGAMG's set-up */
static PetscErrorCode PCSetUp_GAMG_GPUStream(PC pc)
{
  PC_MG   *mg             = (PC_MG *)pc->data;
  PC_GAMG *pc_gamg        = (PC_GAMG *)mg->innerctx;
  PetscErrorCode (*f)(PC) = NULL;

  PetscFunctionBegin;
  if (pc_gamg->ops->prolongator && pc_gamg->ops->prolongator != PCGAMGProlongator_GPUStream) {
    PetscCall(PetscObjectComposeFunction((PetscObject)pc, "GSPCGAMGProlongator_C", pc_gamg->ops->prolongator));
    pc_gamg->ops->prolongator = PCGAMGProlongator_GPUStream;
  }
  PetscCall(GSGetSaved((PetscObject)pc, "GSPCSetUp_C", (GSFn *)&f));
  PetscCall((*f)(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCSetType() names the PC before it calls the creation function, which finds PETSc's by that name; the set-up
   PETSc's creation set is composed on the PC */
static const struct {
  const char *name;
  PetscErrorCode (*setup)(PC);
} GSPCTypes[] = {
    {"ml", PCSetUp_GPUStream}, {"cp", PCSetUp_GPUStream}, {"tfs", PCSetUp_GPUStream}, {"mpi", PCSetUp_GPUStream}, {"ilu", PCSetUp_ILU_GPUStream}, {"gamg", PCSetUp_GAMG_GPUStream},
};
#define GS_NPCTYPES ((int)(sizeof(GSPCTypes) / sizeof(GSPCTypes[0])))
static PetscFunctionList GSPCCreateAIJ;

static PetscErrorCode PCCreate_GPUStream(PC pc)
{
  PetscErrorCode (*create)(PC) = NULL;
  PetscErrorCode (*setup)(PC)  = NULL;
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListFind(GSPCCreateAIJ, ((PetscObject)pc)->type_name, &create));
  PetscCheck(create, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No PC creation function for %s", ((PetscObject)pc)->type_name);
  for (int k = 0; k < GS_NPCTYPES && !setup; k++) {
    PetscCall(PetscStrcmp(GSPCTypes[k].name, ((PetscObject)pc)->type_name, &flg));
    if (flg) setup = GSPCTypes[k].setup;
  }
  PetscCall((*create)(pc));
  if (pc->ops->setup && pc->ops->setup != setup) {
    PetscCall(PetscObjectComposeFunction((PetscObject)pc, "GSPCSetUp_C", pc->ops->setup));
    pc->ops->setup = setup;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarsenings read the graph's AIJ data (PCGAMG's classical graph is made of the operator's type): the graph
   wears its base name while one is applied. The apply of each coarsening is composed on the coarsening object. */
GS_WORN_WRAPPER(MatCoarsenApply_GPUStream, (MatCoarsen coarse), coarse, "GSMatCoarsenApply_C", coarse->graph, (coarse))

static const char *const GSCoarsenTypes[] = {"mis", "misk", "hem"};
#define GS_NCOARSENTYPES ((int)(sizeof(GSCoarsenTypes) / sizeof(GSCoarsenTypes[0])))
static PetscErrorCode (*GSCoarsenCreateAIJ[GS_NCOARSENTYPES])(MatCoarsen);

static PetscErrorCode MatCoarsenCreate_GPUStream_Private(MatCoarsen coarse, int k)
{
  PetscFunctionBegin;
  PetscCall((*GSCoarsenCreateAIJ[k])(coarse));
  if (coarse->ops->apply != MatCoarsenApply_GPUStream) {
    PetscCall(PetscObjectComposeFunction((PetscObject)coarse, "GSMatCoarsenApply_C", coarse->ops->apply));
    coarse->ops->apply = MatCoarsenApply_GPUStream;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCoarsenSetType() names the object after its creation: one creation function for each type */
#define GS_COARSEN_CREATE(k)                                                                                                                                                                                                                             \
  static PetscErrorCode MatCoarsenCreate_GPUStream_##k(MatCoarsen coarse)                                                                                                                                                                                \
  {                                                                                                                                                                                                                                                      \
    PetscFunctionBegin;                                                                                                                                                                                                                                  \
    PetscCall(MatCoarsenCreate_GPUStream_Private(coarse, k));                                                                                                                                                                                            \
    PetscFunctionReturn(PETSC_SUCCESS);                                                                                                                                                                                                                  \
  }
GS_COARSEN_CREATE(0)
GS_COARSEN_CREATE(1)
GS_COARSEN_CREATE(2)
static PetscErrorCode (*const GSCoarsenCreate[GS_NCOARSENTYPES])(MatCoarsen) = {MatCoarsenCreate_GPUStream_0, MatCoarsenCreate_GPUStream_1, MatCoarsenCreate_GPUStream_2};

/* Colorings that read the matrix's AIJ data and check the name: greedy (SNESComputeJacobianDefaultColor() with
   -mat_coloring_type greedy) and Jones-Plassmann. MatColoringSetType() names the object before its creation. */
static const char *const GSColoringTypes[] = {"greedy", "jp"};
#define GS_NCOLORINGTYPES ((int)(sizeof(GSColoringTypes) / sizeof(GSColoringTypes[0])))
static PetscFunctionList GSColoringCreateAIJ;

GS_WORN_WRAPPER(MatColoringApply_GPUStream, (MatColoring mc, ISColoring *iscoloring), mc, "GSMatColoringApply_C", mc->mat, (mc, iscoloring))

static PetscErrorCode MatColoringCreate_GPUStream(MatColoring mc)
{
  PetscErrorCode (*create)(MatColoring) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListFind(GSColoringCreateAIJ, ((PetscObject)mc)->type_name, &create));
  PetscCheck(create, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No coloring creation function for %s", ((PetscObject)mc)->type_name);
  PetscCall((*create)(mc));
  if (mc->ops->apply && mc->ops->apply != MatColoringApply_GPUStream) {
    PetscCall(PetscObjectComposeFunction((PetscObject)mc, "GSMatColoringApply_C", mc->ops->apply));
    mc->ops->apply = MatColoringApply_GPUStream;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if !defined(GPUSTREAM_PETSC_MATOPS_GETORDERING)
/* MatGetOrdering() orders the diagonal block of a matrix named MATMPIAIJ (the exact name); any other type on several
   processes goes to the ordering itself, which reads all local rows. An ordering handed a gpustream matrix on several
   processes calls MatGetOrdering() again with the matrix wearing its base name, which orders the diagonal block (the
   host pattern) as for MPIAIJ. Newer PETSc asks the matrix (the getordering operation, MPIAIJ's, which the ops table
   carries) and needs none of this. */
static const char *const GSOrderingTypes[] = {"natural", "nd", "1wd", "rcm", "qmd", "rowlength", "wbm", "spectral", "amd", "metisnd"};
#  define GS_NORDERINGTYPES ((int)(sizeof(GSOrderingTypes) / sizeof(GSOrderingTypes[0])))
static PetscFunctionList GSOrderingAIJ;

static PetscErrorCode MatGetOrdering_GPUStream(Mat A, MatOrderingType type, IS *rperm, IS *cperm)
{
  PetscMPIInt size;
  PetscBool   worn = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) PetscCall(MatGPUStreamWearBase(A, &worn));
  if (worn) {
    PetscCall(MatGPUStreamWearOwn(A, worn, MatGetOrdering(A, type, rperm, cperm)));
  } else {
    PetscErrorCode (*r)(Mat, MatOrderingType, IS *, IS *) = NULL;
    PetscCall(PetscFunctionListFind(GSOrderingAIJ, type, &r));
    PetscCheck(r, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No ordering function for %s", type);
    PetscCall((*r)(A, type, rperm, cperm));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* Puts create in place of PETSc's registration of name in list (where it has one), keeping PETSc's in saved: a
   later registration of a name replaces the earlier one */
static PetscErrorCode GSReplaceRegistration(PetscFunctionList *list, const char name[], void (*create)(void), PetscFunctionList *saved)
{
  void (*f)(void) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListFind(*list, name, &f));
  if (!f || f == create) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFunctionListAdd(saved, name, f));
  PetscCall(PetscFunctionListAdd(list, name, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUStreamFinalizeAIJReaders(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&GSPCCreateAIJ));
  PetscCall(PetscFunctionListDestroy(&GSColoringCreateAIJ));
#if !defined(GPUSTREAM_PETSC_MATOPS_GETORDERING)
  PetscCall(PetscFunctionListDestroy(&GSOrderingAIJ));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver types, and the implementations above in place of PETSc's registered ones, after PETSc registered its
   own (PETSc registers them all once, when its packages initialize); those not in this PETSc are left out */
PetscErrorCode MatGPUStreamRegisterAIJReaders(void)
{
  PetscFunctionBegin;
  PetscCall(MatSolverTypeRegister_GPUStream());
  PetscCall(PCInitializePackage());
  for (int k = 0; k < GS_NPCTYPES; k++) PetscCall(GSReplaceRegistration(&PCList, GSPCTypes[k].name, (GSFn)PCCreate_GPUStream, &GSPCCreateAIJ));
  for (int k = 0; k < GS_NCOARSENTYPES; k++) {
    void (*f)(void) = NULL;
    PetscCall(PetscFunctionListFind(MatCoarsenList, GSCoarsenTypes[k], &f));
    if (f && f != (GSFn)GSCoarsenCreate[k]) {
      GSCoarsenCreateAIJ[k] = (PetscErrorCode(*)(MatCoarsen))f;
      PetscCall(PetscFunctionListAdd(&MatCoarsenList, GSCoarsenTypes[k], GSCoarsenCreate[k]));
    }
  }
  for (int k = 0; k < GS_NCOLORINGTYPES; k++) PetscCall(GSReplaceRegistration(&MatColoringList, GSColoringTypes[k], (GSFn)MatColoringCreate_GPUStream, &GSColoringCreateAIJ));
#if !defined(GPUSTREAM_PETSC_MATOPS_GETORDERING)
  for (int k = 0; k < GS_NORDERINGTYPES; k++) PetscCall(GSReplaceRegistration(&MatOrderingList, GSOrderingTypes[k], (GSFn)MatGetOrdering_GPUStream, &GSOrderingAIJ));
#endif
  PetscCall(PetscRegisterFinalize(MatGPUStreamFinalizeAIJReaders));
  PetscFunctionReturn(PETSC_SUCCESS);
}
