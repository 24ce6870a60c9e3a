/* Kokkos types and helpers shared by the *.kokkos.cxx files: kokkosbase.hpp (errors, fences, copies, policies),
   launch.hpp (team kernel launches) and teamsum.hpp (team loops and reductions). Never included from C. */
#pragma once

#include "kokkosbase.hpp"
#include "launch.hpp"
#include "teamsum.hpp"
