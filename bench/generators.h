// Matrix generators shared by the benchmark drivers (ours and the cuSPARSE ones), so that every SpMV is timed on
// the same CSR arrays. Header-only, plain C++, deterministic. A matrix is named by a spec string:
//   poisson2d:N          2D 5-point Laplacian, about N rows
//   cube27:E:D           3D 27-point node coupling on an E^3 node grid with D unknowns per node (dense D x D blocks,
//                        the hexahedral FEM pattern of the streaming paper): 27 D entries in interior rows
//   powerlaw:N:K         N rows whose lengths follow a power law (most rows short, a few up to N/10 long), K entries
//                        per row on average, columns spread over the matrix
//   convdiff:E:PE        3D convection-diffusion on an E^3 grid, centred differences, Peclet number PE (7 points)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchgen
{
template <class I, class S> struct CSR {
  std::string    name;
  I              m = 0;
  std::vector<I> ia{0}, ja;
  std::vector<S> a;
  I              nnz() const
  {
    return (I)ja.size();
  }
};

template <class I, class S> CSR<I, S> Poisson2D(double nrows)
{
  CSR<I, S> A;
  const I   m = (I)(std::sqrt(nrows) + 0.5), n = m * m;
  A.m = n;
  A.ja.reserve((size_t)5 * n);
  A.a.reserve((size_t)5 * n);
  for (I row = 0; row < n; row++) {
    const I i = row % m, j = row / m;
    auto    put = [&](I c, S v) { A.ja.push_back(c), A.a.push_back(v); };
    if (j > 0) put(row - m, -1);
    if (i > 0) put(row - 1, -1);
    put(row, 4);
    if (i < m - 1) put(row + 1, -1);
    if (j < m - 1) put(row + m, -1);
    A.ia.push_back((I)A.ja.size());
  }
  return A;
}

// Values: D x D blocks, diagonally dominant, nonsymmetric inside a block only through the node numbering
template <class I, class S> CSR<I, S> Cube27(I e, I d)
{
  CSR<I, S>    A;
  const I      nodes = e * e * e;
  const size_t est   = (size_t)nodes * d * 27 * d;
  A.m                = nodes * d;
  A.ja.reserve(est);
  A.a.reserve(est);
  for (I node = 0; node < nodes; node++) {
    const I x = node % e, y = (node / e) % e, z = node / (e * e);
    for (I c = 0; c < d; c++) {
      for (I dz = -1; dz <= 1; dz++)
        for (I dy = -1; dy <= 1; dy++)
          for (I dx = -1; dx <= 1; dx++) {
            const I nx = x + dx, ny = y + dy, nz = z + dz;
            if (nx < 0 || ny < 0 || nz < 0 || nx >= e || ny >= e || nz >= e) continue;
            const I nb = nx + e * (ny + e * nz);
            for (I k = 0; k < d; k++) {
              const bool self = nb == node;
              A.ja.push_back(nb * d + k);
              A.a.push_back(self ? (k == c ? (S)(27 * d) : (S)0.5) : (S)(-1.0 / (1 + std::abs(k - c))));
            }
          }
      A.ia.push_back((I)A.ja.size());
    }
  }
  return A;
}

// Row lengths: ceil(K * 0.5 u^-0.5)-ish heavy tail from a Pareto law (shape 1.5), capped at N/10; sorted distinct columns
template <class I, class S> CSR<I, S> PowerLaw(double nrows, double avg)
{
  CSR<I, S>                        A;
  const I                          n = (I)nrows;
  std::mt19937_64                  gen(12345);
  std::uniform_real_distribution<> u(0.0, 1.0);
  std::uniform_int_distribution<I> col(0, n - 1);
  const double                     shape = 1.5, xm = avg * (shape - 1) / shape;
  const I                          cap = std::max<I>(1, n / 10);
  std::vector<I>                   cols;
  A.m = n;
  for (I row = 0; row < n; row++) {
    I len = (I)std::min<double>(cap, std::ceil(xm / std::pow(1.0 - u(gen), 1.0 / shape)));
    len   = std::max<I>(1, std::min<I>(len, n));
    cols.clear();
    cols.push_back(row);
    for (I k = 1; k < len; k++) cols.push_back(col(gen));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (I c : cols) A.ja.push_back(c), A.a.push_back(c == row ? (S)len : (S)(-1.0 / len));
    A.ia.push_back((I)A.ja.size());
  }
  return A;
}

template <class I, class S> CSR<I, S> ConvDiff(I e, double pe)
{
  CSR<I, S>    A;
  const double c = pe / (2.0 * (e + 1));
  const I      n = e * e * e, stride[3] = {1, e, e * e};
  A.m = n;
  for (I row = 0; row < n; row++) {
    const I ijk[3] = {row % e, (row / e) % e, row / (e * e)};
    for (int dd = 2; dd >= 0; dd--) // columns in increasing order: -z, -y, -x, diagonal, +x, +y, +z
      if (ijk[dd] > 0) A.ja.push_back(row - stride[dd]), A.a.push_back((S)(-1.0 - c));
    A.ja.push_back(row), A.a.push_back(6);
    for (int dd = 0; dd < 3; dd++)
      if (ijk[dd] < e - 1) A.ja.push_back(row + stride[dd]), A.a.push_back((S)(-1.0 + c));
    A.ia.push_back((I)A.ja.size());
  }
  return A;
}

// Unknowns per node of a spec's matrix: its full blocks (cube27:E:D), else 1
inline int BlockSize(const std::string &spec)
{
  return spec.rfind("cube27:", 0) == 0 ? std::atoi(spec.substr(spec.rfind(':') + 1).c_str()) : 1;
}

// Builds the matrix a spec names (see the top of this file)
template <class I, class S> CSR<I, S> FromSpec(const std::string &spec)
{
  std::vector<std::string> f;
  size_t                   b = 0;
  for (size_t e; (e = spec.find(':', b)) != std::string::npos; b = e + 1) f.push_back(spec.substr(b, e - b));
  f.push_back(spec.substr(b));
  auto      num = [&](size_t i) { return i < f.size() ? std::atof(f[i].c_str()) : 0.0; };
  CSR<I, S> A;
  if (f[0] == "poisson2d" && f.size() == 2)
    A = Poisson2D<I, S>(num(1));
  else if (f[0] == "cube27" && f.size() == 3)
    A = Cube27<I, S>((I)num(1), (I)num(2));
  else if (f[0] == "powerlaw" && f.size() == 3)
    A = PowerLaw<I, S>(num(1), num(2));
  else if (f[0] == "convdiff" && f.size() == 3)
    A = ConvDiff<I, S>((I)num(1), num(2));
  else
    throw std::invalid_argument("unknown matrix spec '" + spec + "' (poisson2d:N, cube27:E:D, powerlaw:N:K, convdiff:E:PE)");
  A.name = spec;
  return A;
}
} // namespace benchgen
