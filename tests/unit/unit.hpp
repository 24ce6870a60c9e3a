/* What the unit tests of the device kernels share (tests/unit/test_*.cxx, one file a module, run by
   test_kernels.cxx): the counts of checks, random inputs and host CSR matrices, and the tests of each module. */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpustreamimpl.h"
#include "../../src/ksp/pipecgfused/pipecgfusedimpl.h"
#include "../../src/ksp/pipebcgsf/pipebcgsfimpl.h"
#include "../../src/ksp/sgmresf/sgmresfimpl.h"
#include "../../src/stream/streamimpl.h"
#include "devicemat.hpp"
#include "kokkosimpl.hpp"

namespace unit
{
/* A check: counted, and printed as 'not ok what' when it fails */
void Check(bool, const std::string &);
/* max |a-b| over max(1, max |b|): kernels and twins may round differently (FMA contraction) */
double RelDiff(const std::vector<PetscScalar> &, const std::vector<PetscScalar> &);
bool   Close(double, double, double);
/* |a-b| summed */
double AbsSum(const std::vector<PetscScalar> &, const std::vector<PetscScalar> &);

extern std::mt19937_64   rng;
std::vector<PetscScalar> Random(PetscInt n, double lo = -1, double hi = 1);

struct CSRHost {
  PetscInt                 m, n;
  std::vector<PetscInt>    ia, ja;
  std::vector<PetscScalar> a;
};

/* Random CSR with length(i) entries drawn for row i (fewer after duplicates), sorted distinct columns */
template <class Len> CSRHost RandomCSRBy(PetscInt m, PetscInt n, const Len &length)
{
  CSRHost                                 A{m, n, {0}, {}, {}};
  std::uniform_int_distribution<PetscInt> col(0, n > 0 ? n - 1 : 0);
  for (PetscInt i = 0; i < m; i++) {
    std::vector<PetscInt> cols;
    const PetscInt        l = n > 0 ? length(i) : 0;
    for (PetscInt k = 0; k < l; k++) cols.push_back(col(rng));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    A.ja.insert(A.ja.end(), cols.begin(), cols.end());
    A.ia.push_back((PetscInt)A.ja.size());
  }
  A.a = Random((PetscInt)A.ja.size());
  return A;
}

/* Rows of 0 to maxlen entries (some empty) */
CSRHost RandomCSR(PetscInt, PetscInt, PetscInt);
/* A random pattern of full bs x bs blocks (up to maxb a block row, some block rows empty), random values */
CSRHost RandomBlockCSR(PetscInt, PetscInt, PetscInt);

/* Vectors into and out of the execution space's memory */
inline gpustream::DView<PetscScalar> ToDevice(const std::vector<PetscScalar> &h)
{
  gpustream::DView<PetscScalar> d("unit::vec", h.size());
  Kokkos::deep_copy(d, gpustream::HostUnmanaged<const PetscScalar>(h.data(), h.size()));
  return d;
}

inline std::vector<PetscScalar> ToHost(const gpustream::DView<PetscScalar> &d)
{
  std::vector<PetscScalar> h(d.extent(0));
  Kokkos::deep_copy(gpustream::HostUnmanaged<PetscScalar>(h.data(), h.size()), d);
  return h;
}

extern std::vector<PetscInt> sizes; /* all sizes up to -max_size (valgrind runs use small ones) */

/* pipecgfused's vectors (test_pipecgfused.cxx): random ones (d in [0.5, 2]), loaded into a work (d as its D^{-1} with
   jacobi), and stored from it (without d) */
struct CGVecs {
  std::vector<PetscScalar> x, r, p, w, d;
};
CGVecs RandomCG(PetscInt);
void   Load(PCGFWork, const CGVecs &, bool);
CGVecs Store(PCGFWork, PetscInt);

/* test_mat.cxx: the device matrix */
void TestSpMV();
void TestTiles();
void TestBlockFormat();
/* test_pipecgfused.cxx */
void TestUpdate();
void TestUpdateNorms();
void TestDeviceScalars();
void TestStep();
void TestSums();
void TestApply();
void TestSpMVDot();
void TestPointBlock();
void TestOverlap();
void TestMatSolveBlock();
void TestPartialsGrowth();
void TestSizeMismatch();
/* test_pipebcgsf.cxx */
void TestWorkNorm();
void TestBCGS();
void TestBCGSFold();
void TestBCGSBlocks();
void TestBCGSHalo();
/* test_sgmresf.cxx */
void TestSGMRES();
void TestSGMRESDelayed();
/* test_stream.cxx: the streaming engine and the block product */
void TestBlock();
void TestStream();
void TestStreamTooSmall();
/* test_factor.cxx: the device incomplete factors */
void TestTriFactor();
void TestTriFactorPivots();
void TestTriFactorBackends();
void TestTriFactorSweeps();
void TestTriFactorFixedPoint();
/* test_product.cxx: the sparse products */
void TestProduct();
/* test_chebyshevf.cxx */
void TestChebF();
/* test_device.cxx: the Kokkos layer */
void TestAllocationFailure();
} // namespace unit
