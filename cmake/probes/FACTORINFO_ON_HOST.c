/* Newer PETSc (3.2x) added factoronhost and solveonhost to MatFactorInfo (-pc_factor_mat_factor_on_host,
   -pc_factor_mat_solve_on_host), which MATSOLVERGPUSTREAM honours by factoring on the host */
#include <petscmat.h>

int main(void)
{
  MatFactorInfo info;
  info.factoronhost = PETSC_TRUE;
  info.solveonhost  = PETSC_FALSE;
  return (int)info.factoronhost + (int)info.solveonhost;
}
