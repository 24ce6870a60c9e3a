#include "pcblocks.h"

/* blk[i * bs + c] = (D_b^{-1})(i mod bs, c) for the block b of local row i, as the PC itself computes it (so that the
   PC's own options hold): applied to the vector with ones at the rows c of every block, the PC gives column c of
   every inverse block; bs = 1 gives Jacobi's inverse diagonal. E and Z are work vectors of the operator's layout;
   blk is allocated here, freed by the caller with PetscFree(). */
PetscErrorCode GSPCGetInverseBlocks(PC pc, PetscInt bs, Vec E, Vec Z, PetscScalar **blk)
{
  PetscInt           n, rstart;
  PetscScalar       *e;
  const PetscScalar *z;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(E, &n));
  PetscCall(VecGetOwnershipRange(E, &rstart, NULL));
  PetscCall(PetscMalloc1(n * bs, blk));
  for (PetscInt c = 0; c < bs; c++) {
    PetscCall(VecGetArrayWrite(E, &e));
    for (PetscInt i = 0; i < n; i++) e[i] = (rstart + i) % bs == c ? 1.0 : 0.0;
    PetscCall(VecRestoreArrayWrite(E, &e));
    PetscCall(PCApply(pc, E, Z));
    PetscCall(VecGetArrayRead(Z, &z));
    for (PetscInt i = 0; i < n; i++) (*blk)[i * bs + c] = z[i];
    PetscCall(VecRestoreArrayRead(Z, &z));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscScalar GSBlockApply_Ref(PetscInt bs, const PetscScalar d[], const PetscScalar v[], PetscInt i)
{
  const PetscInt o = i - i % bs;
  PetscScalar    z = 0;

  if (!d) return v[i];
  for (PetscInt k = 0; k < bs; k++) z += d[i * bs + k] * v[o + k];
  return z;
}
