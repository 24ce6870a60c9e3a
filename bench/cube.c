/* The cantilever cube generator (see cube.h). Values are stiffness-like and symmetric positive definite: each
   coupling is negative, weaker across edges and corners than across faces and between unlike dofs, and the
   diagonal is the sum of the magnitudes of its row plus one (plus 1e3 on the clamped face x = 0, a spring to the
   wall standing for the cantilever's Dirichlet condition). Rows are generated one at a time, from their index
   alone, so any process (or thread) can build any range. */
#include "cube.h"

PetscInt CubeRow(PetscInt n, PetscInt dof, PetscInt row, PetscInt cols[], PetscScalar vals[])
{
  const PetscInt node = row / dof, a = row % dof, i = node % n, j = (node / n) % n, k = node / (n * n);
  PetscInt       len = 0, diag = -1;
  PetscScalar    sum = 0;

  for (PetscInt dk = -1; dk <= 1; dk++)
    for (PetscInt dj = -1; dj <= 1; dj++)
      for (PetscInt di = -1; di <= 1; di++) {
        const PetscInt ii = i + di, jj = j + dj, kk = k + dk;
        if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
        const PetscInt other = (kk * n + jj) * n + ii, dist = PetscAbsInt(di) + PetscAbsInt(dj) + PetscAbsInt(dk);
        for (PetscInt b = 0; b < dof; b++) {
          cols[len] = other * dof + b;
          if (other == node && b == a) {
            diag        = len;
            vals[len++] = 0;
          } else {
            vals[len] = -1.0 / (dist + 1) / (1 + (a != b));
            sum += PetscAbsScalar(vals[len++]);
          }
        }
      }
  vals[diag] = sum + 1 + (i == 0 ? 1e3 : 0);
  return len;
}

PetscErrorCode CubeCSR(PetscInt n, PetscInt dof, PetscInt rstart, PetscInt rend, PetscInt **ia, PetscInt **ja, PetscScalar **a)
{
  const PetscInt maxlen = 27 * dof;
  PetscInt64     nnz    = 0;

  PetscFunctionBegin;
  for (PetscInt row = rstart; row < rend; row++) { /* exact count first: interior rows have 27 dof entries */
    const PetscInt node = row / dof, i = node % n, j = (node / n) % n, k = node / (n * n);
    nnz += dof * ((i > 0) + 1 + (i < n - 1)) * ((j > 0) + 1 + (j < n - 1)) * ((k > 0) + 1 + (k < n - 1));
  }
  PetscCheck(nnz < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%" PetscInt64_FMT " entries need 64-bit PetscInt", nnz);
  PetscCall(PetscMalloc3(rend - rstart + 1, ia, nnz, ja, nnz, a));
  (*ia)[0] = 0;
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt off      = (*ia)[row - rstart];
    (*ia)[row - rstart + 1] = off + CubeRow(n, dof, row, *ja + off, *a + off);
    PetscCheck((*ia)[row - rstart + 1] - off <= maxlen, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row too long");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CubeCreate(MPI_Comm comm, PetscInt n, PetscInt dof, MatType type, Mat *A)
{
  PetscInt     N = n * n * n * dof, mloc = PETSC_DECIDE, rend, *ia, *ja;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscSplitOwnership(comm, &mloc, &N));
  PetscCallMPI(MPI_Scan(&mloc, &rend, 1, MPIU_INT, MPI_SUM, comm));
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, mloc, mloc, N, N));
  PetscCall(MatSetBlockSize(*A, dof));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(CubeCSR(n, dof, rend - mloc, rend, &ia, &ja, &a));
  PetscCall(MatSeqAIJSetPreallocationCSR(*A, ia, ja, a));
  PetscCall(MatMPIAIJSetPreallocationCSR(*A, ia, ja, a));
  PetscCall(PetscFree3(ia, ja, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}
