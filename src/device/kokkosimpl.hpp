/* Kokkos types and helpers shared by the *.kokkos.cxx files: kokkosbase.hpp (errors, fences, copies, policies),
   launch.hpp (team kernel launches) and teamsum.hpp (team loops and reductions). Never included from C. */
#pragma once

#include "kokkosbase.hpp"
#include "launch.hpp"
#include "teamsum.hpp"

/* What the three solvers' device work shares: the counts -ksp_view reports and the table of work vectors by the
   solver's own ids, through which GSWorkLoad() and GSWorkStore() move them from and to PETSc vectors */
struct _n_GSWork {
  virtual ~_n_GSWork()                                     = default;
  virtual gpustream::DView<PetscScalar>   Vector(PetscInt) = 0;
  PetscInt                                launches = 0, transfers = 0, copies = 0;
  Kokkos::View<PetscReal, gpustream::Mem> norm; /* GSWorkNorm()'s sum, on the device: a reduction into a host value would
                                                 wait in Kokkos' fence */
};
