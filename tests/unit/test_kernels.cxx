/* Unit tests: every device kernel against its serial reference twin, on random inputs of several sizes (0, 1,
   sizes that are not multiples of any team or block size, and sizes spanning many teams), one file a module
   (test_mat.cxx, test_stream.cxx, test_pipecgfused.cxx, test_pipebcgsf.cxx, test_sgmresf.cxx, test_factor.cxx,
   test_device.cxx). Runs on whatever Kokkos backend the library was built for. Ends with 'N passed, N failed'. */
#include "unit.hpp"

namespace unit
{
int passed = 0, failed = 0;

void Check(bool ok, const std::string &what)
{
  if (ok)
    passed++;
  else {
    failed++;
    std::printf("not ok %s\n", what.c_str());
  }
}

double RelDiff(const std::vector<PetscScalar> &a, const std::vector<PetscScalar> &b)
{
  double d = 0, s = 1;
  for (size_t i = 0; i < a.size(); i++) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / s;
}

bool Close(double a, double b, double scale)
{
  return std::isfinite(a) && std::abs(a - b) <= 1e-12 * std::max(1.0, scale);
}

std::mt19937_64 rng(20261121);

std::vector<PetscScalar> Random(PetscInt n, double lo, double hi)
{
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<PetscScalar>               v(n);
  for (auto &x : v) x = u(rng);
  return v;
}

CSRHost RandomCSR(PetscInt m, PetscInt n, PetscInt maxlen)
{
  std::uniform_int_distribution<PetscInt> len(0, maxlen);
  return RandomCSRBy(m, n, [&](PetscInt) { return len(rng); });
}

const PetscInt        allsizes[] = {0, 1, 2, 3, 31, 255, 256, 257, 1000, 10007, 300001};
std::vector<PetscInt> sizes;

double AbsSum(const std::vector<PetscScalar> &a, const std::vector<PetscScalar> &b)
{
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += std::abs(a[i] * b[i]);
  return s;
}

CSRHost RandomBlockCSR(PetscInt nb, PetscInt bs, PetscInt maxb)
{
  std::uniform_int_distribution<PetscInt> nblocks(0, maxb);
  const CSRHost                           P = RandomCSRBy(nb, nb, [&](PetscInt) { return nblocks(rng); });
  CSRHost                                 A{nb * bs, nb * bs, {0}, {}, {}};
  for (PetscInt br = 0; br < nb; br++)
    for (PetscInt i = 0; i < bs; i++) {
      for (PetscInt j = P.ia[br]; j < P.ia[br + 1]; j++)
        for (PetscInt c = 0; c < bs; c++) A.ja.push_back(P.ja[j] * bs + c);
      A.ia.push_back((PetscInt)A.ja.size());
    }
  A.a = Random((PetscInt)A.ja.size());
  return A;
}
} // namespace unit

using namespace unit;

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  PetscCall(PetscGPUStreamInitializePackage());
  PetscCall(GSKokkosInitialize());
  {
    PetscInt maxsize = PETSC_MAX_INT;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-max_size", &maxsize, nullptr));
    for (PetscInt n : allsizes)
      if (n <= maxsize) sizes.push_back(n);
  }
  std::printf("# Kokkos execution space: %s\n", GSExecutionSpace());
  {
    /* -only Tiles,SpMV: those tests alone (a sanitizer run of a few kernels) */
    const std::pair<const char *, void (*)()> tests[] = {{"SpMV", TestSpMV},
                                                         {"Tiles", TestTiles},
                                                         {"BlockFormat", TestBlockFormat},
                                                         {"Update", TestUpdate},
                                                         {"UpdateNorms", TestUpdateNorms},
                                                         {"DeviceScalars", TestDeviceScalars},
                                                         {"Step", TestStep},
                                                         {"Sums", TestSums},
                                                         {"Apply", TestApply},
                                                         {"SpMVDot", TestSpMVDot},
                                                         {"PointBlock", TestPointBlock},
                                                         {"Overlap", TestOverlap},
                                                         {"MatSolveBlock", TestMatSolveBlock},
                                                         {"WorkNorm", TestWorkNorm},
                                                         {"BCGS", TestBCGS},
                                                         {"BCGSFold", TestBCGSFold},
                                                         {"BCGSBlocks", TestBCGSBlocks},
                                                         {"BCGSHalo", TestBCGSHalo},
                                                         {"SGMRES", TestSGMRES},
                                                         {"SGMRESDelayed", TestSGMRESDelayed},
                                                         {"PartialsGrowth", TestPartialsGrowth},
                                                         {"SizeMismatch", TestSizeMismatch},
                                                         {"Block", TestBlock},
                                                         {"Stream", TestStream},
                                                         {"StreamTooSmall", TestStreamTooSmall},
                                                         {"TriFactor", TestTriFactor},
                                                         {"TriFactorPivots", TestTriFactorPivots},
                                                         {"TriFactorBackends", TestTriFactorBackends},
                                                         {"TriFactorSweeps", TestTriFactorSweeps},
                                                         {"TriFactorFixedPoint", TestTriFactorFixedPoint},
                                                         {"ChebF", TestChebF},
                                                         {"Product", TestProduct},
                                                         {"AllocationFailure", TestAllocationFailure}};
    /* -skip AllocationFailure: all but those (its deliberate failed cudaMalloc is an API error to compute-sanitizer) */
    char     *only[64], *skip[64];
    PetscInt  nonly = 64, nskip = 64;
    PetscBool set, skipset;
    PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-only", only, &nonly, &set));
    PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-skip", skip, &nskip, &skipset));
    if (!skipset) nskip = 0;
    const auto named = [](char **names, PetscInt n, const char *name) { return std::any_of(names, names + n, [&](const char *o) { return std::string(o) == name; }); };
    for (const auto &t : tests)
      if ((!set || named(only, nonly, t.first)) && !named(skip, nskip, t.first)) t.second();
    for (PetscInt i = 0; set && i < nonly; i++) PetscCall(PetscFree(only[i]));
    for (PetscInt i = 0; i < nskip; i++) PetscCall(PetscFree(skip[i]));
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  PetscCall(PetscFinalize());
  return failed ? 1 : 0;
}
