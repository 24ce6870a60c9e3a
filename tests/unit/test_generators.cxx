/* The benchmark matrices (bench/generators.h): valid CSR (sorted distinct columns in range), the stencil row
   lengths, square dense D x D node blocks, and the power law's mean row length and heavy tail. */
#include <cstdio>
#include <string>

#include "../../bench/generators.h"

static int passed = 0, failed = 0;

static void Check(bool ok, const std::string &what)
{
  if (ok)
    passed++;
  else {
    failed++;
    std::printf("not ok %s\n", what.c_str());
  }
}

template <class I, class S> static bool ValidCSR(const benchgen::CSR<I, S> &A)
{
  if ((I)A.ia.size() != A.m + 1 || A.ia[0] != 0 || A.ia[A.m] != A.nnz() || A.a.size() != A.ja.size()) return false;
  for (I r = 0; r < A.m; r++)
    for (I k = A.ia[r]; k < A.ia[r + 1]; k++)
      if (A.ja[k] < 0 || A.ja[k] >= A.m || (k > A.ia[r] && A.ja[k] <= A.ja[k - 1])) return false;
  return true;
}

int main()
{
  using CSR   = benchgen::CSR<int, double>;
  const CSR p = benchgen::FromSpec<int, double>("poisson2d:100");
  Check(ValidCSR(p) && p.m == 100 && p.nnz() == 5 * 100 - 4 * 10, "poisson2d: 10 x 10 grid, 5 points less the boundary");
  for (int d : {1, 3, 6}) {
    const CSR c        = benchgen::FromSpec<int, double>("cube27:4:" + std::to_string(d));
    const int interior = d * (1 + 4 + 16); /* node (1,1,1) */
    Check(ValidCSR(c) && c.m == 64 * d, "cube27 dof " + std::to_string(d) + ": valid, 64 nodes");
    Check(c.ia[interior + 1] - c.ia[interior] == 27 * d, "cube27 dof " + std::to_string(d) + ": 27 D entries in an interior row");
    Check(c.nnz() == d * d * 1000, "cube27 dof " + std::to_string(d) + ": D^2 (3E-2)^3 entries"); /* neighbour pairs per axis: 3E-2 */
  }
  const CSR w       = benchgen::FromSpec<int, double>("powerlaw:20000:8");
  int       longest = 0;
  for (int r = 0; r < w.m; r++) longest = std::max(longest, w.ia[r + 1] - w.ia[r]);
  Check(ValidCSR(w) && w.nnz() > 0.8 * 8 * w.m && w.nnz() < 1.2 * 8 * w.m, "powerlaw: mean row length within 20% of 8");
  Check(longest > 20 * 8, "powerlaw: a heavy tail (a row 20 times the mean)");
  const CSR v = benchgen::FromSpec<int, double>("convdiff:5:10");
  Check(ValidCSR(v) && v.m == 125 && v.nnz() == 7 * 125 - 6 * 25, "convdiff: 7 points less the boundary");
  bool threw = false;
  try {
    benchgen::FromSpec<int, double>("cube27:4");
  } catch (const std::invalid_argument &) {
    threw = true;
  }
  Check(threw, "a bad spec throws");
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
