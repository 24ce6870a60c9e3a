/* PETSc 3.20 added assembly through a hash table before preallocation: until its first assembly the matrix wears the
   hash table's operations (hash_active), which MATGPUSTREAM's operation wrappers leave alone */
#include <petsc/private/matimpl.h>

int main(void)
{
  struct _p_Mat m;
  m.hash_active = PETSC_FALSE;
  return (int)m.hash_active;
}
