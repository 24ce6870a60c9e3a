/* The sparse products of sequential matrices (GSDeviceProduct): the symbolic phase's pattern against the structural
   product, the device numeric phase and its serial twin against a dense reference, on random and block inputs */
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include "unit.hpp"
#include "hostcsr.hpp"

namespace unit
{
namespace
{
using gpustream::DView;

/* A dense m x n copy of A, and its structure (entries held, also where their value is zero) */
std::vector<PetscScalar> Dense(const CSRHost &A, std::vector<char> *held)
{
  std::vector<PetscScalar> d((size_t)A.m * A.n, 0);
  if (held) held->assign(d.size(), 0);
  for (PetscInt i = 0; i < A.m; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) {
      d[(size_t)i * A.n + A.ja[k]] = A.a[k];
      if (held) (*held)[(size_t)i * A.n + A.ja[k]] = 1;
    }
  return d;
}

/* X = op(L) R densely (op: transpose with tl), and its structure: the entries some product of held entries reaches */
void DenseProduct(const std::vector<PetscScalar> &l, const std::vector<char> &lh, PetscInt lm, PetscInt ln, bool tl, const std::vector<PetscScalar> &r, const std::vector<char> &rh, PetscInt rn, std::vector<PetscScalar> &x, std::vector<char> &xh)
{
  const PetscInt m = tl ? ln : lm, inner = tl ? lm : ln;
  x.assign((size_t)m * rn, 0);
  xh.assign((size_t)m * rn, 0);
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt k = 0; k < inner; k++) {
      const size_t lk = tl ? (size_t)k * ln + i : (size_t)i * ln + k;
      if (!lh[lk]) continue;
      for (PetscInt j = 0; j < rn; j++)
        if (rh[(size_t)k * rn + j]) {
          x[(size_t)i * rn + j] += l[lk] * r[(size_t)k * rn + j];
          xh[(size_t)i * rn + j] = 1;
        }
    }
}

/* A random square pattern made symmetric (with each entry its mirror), random values (not symmetric) */
CSRHost RandomSymmetricPattern(PetscInt n, PetscInt maxlen)
{
  const CSRHost                   A = RandomCSR(n, n, maxlen);
  std::vector<std::set<PetscInt>> rows(n);
  CSRHost                         S{n, n, {0}, {}, {}};
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) rows[i].insert(A.ja[k]), rows[A.ja[k]].insert(i);
  for (PetscInt i = 0; i < n; i++) {
    S.ja.insert(S.ja.end(), rows[i].begin(), rows[i].end());
    S.ia.push_back((PetscInt)S.ja.size());
  }
  S.a = Random((PetscInt)S.ja.size());
  return S;
}

/* One product of type on A (am x an) and B: the pattern, then the values on the device and on the host twice (new
   values the second time, as a set-up after new values) */
void CheckProduct(GSProductType type, const CSRHost &A, CSRHost B, const std::string &what, PetscInt threads = 1, PetscBool symmetric = PETSC_FALSE)
{
  static const char       *names[] = {"AB", "AtB", "PtAP"};
  const std::string        label   = std::string(names[type]) + " " + what;
  GSDeviceProduct          P       = nullptr;
  std::vector<char>        ah, bh, xh, ch;
  const auto               ad = Dense(A, &ah);
  auto                     bd = Dense(B, &bh);
  std::vector<PetscScalar> x, c;

  if (GSDeviceProductSymbolic(type, A.m, A.n, A.ia.data(), A.ja.data(), B.n, B.ia.data(), B.ja.data(), symmetric, threads, &P)) {
    Check(false, label + ": symbolic phase");
    return;
  }
  PetscInt        cm;
  const PetscInt *ci, *cj;
  GSDeviceProductGetPattern(P, &cm, &ci, &cj);
  PetscInt cn = B.n;
  for (int round = 0; round < 2; round++) {
    if (round) { /* new values, same patterns */
      B.a = Random((PetscInt)B.a.size());
      bd  = Dense(B, nullptr);
    }
    if (type == GS_PRODUCT_PtAP) {
      std::vector<PetscScalar> ap;
      std::vector<char>        aph;
      DenseProduct(ad, ah, A.m, A.n, false, bd, bh, B.n, ap, aph);
      DenseProduct(bd, bh, B.m, B.n, true, ap, aph, B.n, c, ch);
    } else
      DenseProduct(ad, ah, A.m, A.n, type == GS_PRODUCT_AtB, bd, bh, B.n, c, ch);
    const PetscInt rows = type == GS_PRODUCT_AB ? A.m : type == GS_PRODUCT_AtB ? A.n : B.n;
    if (!round) { /* the pattern: the structural product's, columns ascending */
      bool same = cm == rows;
      for (PetscInt i = 0; same && i < cm; i++) {
        std::vector<PetscInt> cols;
        for (PetscInt j = 0; j < cn; j++)
          if (ch[(size_t)i * cn + j]) cols.push_back(j);
        same = (PetscInt)cols.size() == ci[i + 1] - ci[i] && std::equal(cols.begin(), cols.end(), cj + ci[i]);
      }
      Check(same, label + ": the symbolic phase's pattern is the structural product's");
      if (!same) break;
    }
    std::vector<PetscScalar> expect(ci[cm]);
    for (PetscInt i = 0; i < cm; i++)
      for (PetscInt k = ci[i]; k < ci[i + 1]; k++) expect[k] = c[(size_t)i * cn + cj[k]];
    const auto               da = ToDevice(A.a), db = ToDevice(B.a);
    DView<PetscScalar>       dc("unit::product_c", expect.size());
    std::vector<PetscScalar> host(expect.size(), -1.0);
    const bool               dev  = !GSDeviceProductNumeric(P, A.ia.data(), A.ja.data(), da.data(), B.ia.data(), B.ja.data(), db.data(), dc.data());
    const bool               twin = !GSDeviceProductNumericHost(P, A.ia.data(), A.ja.data(), A.a.data(), B.ia.data(), B.ja.data(), B.a.data(), host.data());
    const std::string        when = round ? ", after new values" : "";
    Check(dev && RelDiff(ToHost(dc), expect) < 1e-13, label + ": device values as the dense product's" + when);
    Check(twin && RelDiff(host, expect) < 1e-13, label + ": the serial twin's values as the dense product's" + when);
  }
  GSDeviceProductDestroy(&P);
}

/* A with rows of B that do not fit its pattern count: the numeric phase refuses operands whose pattern changed */
void CheckChangedOperand()
{
  const CSRHost   A = RandomCSR(20, 20, 4), B = RandomCSR(20, 15, 3);
  GSDeviceProduct P = nullptr;
  if (GSDeviceProductSymbolic(GS_PRODUCT_AB, A.m, A.n, A.ia.data(), A.ja.data(), B.n, B.ia.data(), B.ja.data(), PETSC_FALSE, 1, &P)) {
    Check(false, "AB with a changed operand: symbolic phase");
    return;
  }
  CSRHost                  other = B;
  std::vector<PetscScalar> c(1 + A.a.size() * 3);
  other.ja.push_back(0);
  other.a.push_back(1.0);
  other.ia.back()++;
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  const PetscErrorCode ierr = GSDeviceProductNumericHost(P, A.ia.data(), A.ja.data(), A.a.data(), other.ia.data(), other.ja.data(), other.a.data(), c.data());
  PetscPopErrorHandler();
  Check(ierr != PETSC_SUCCESS, "AB with an operand of more entries than at the symbolic phase: an error");
  GSDeviceProductDestroy(&P);
}
} // namespace

/* The host transpose on several threads against the entries sorted by column: tall matrices (threads take ranges of
   rows of the original) and a wide one (ranges of rows of the transpose) */
void CheckTranspose()
{
  for (PetscInt n : {(PetscInt)1, (PetscInt)5, (PetscInt)3000, (PetscInt)40000}) {
    const CSRHost                              A = n < 40000 ? RandomCSR(4 * n + 17, n, 9) : RandomCSR(n / 4, n, 3);
    std::vector<std::pair<PetscInt, PetscInt>> order; /* (column, entry) */
    for (PetscInt i = 0; i < A.m; i++)
      for (PetscInt k = A.ia[i]; k < A.ia[i + 1]; k++) order.emplace_back(A.ja[k], k);
    std::stable_sort(order.begin(), order.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    for (int threads : {1, 3, 8}) {
      gpustream::HostArray<PetscInt> trow, tcol, tmap;
      gpustream::HostTranspose(A.m, A.n, A.ia.data(), A.ja.data(), trow, tcol, tmap, threads);
      bool same = (PetscInt)trow.size() == n + 1 && trow[n] == (PetscInt)order.size() && tcol.size() == order.size();
      for (PetscInt c = 0; same && c < n; c++)
        for (PetscInt p = trow[c]; same && p < trow[c + 1]; p++) same = order[p].first == c && tmap[p] == order[p].second && A.ja[tmap[p]] == c && A.ia[tcol[p]] <= tmap[p] && tmap[p] < A.ia[tcol[p] + 1];
      Check(same, "host transpose of " + std::to_string(A.m) + " x " + std::to_string(n) + " on " + std::to_string(threads) + " threads");
    }
  }
}

/* AIJ's MatCreateGraph() with no filter, step by step on maps as AIJ takes it: |a| or each dense block's sum of |Re a|
   (over idx's rows and columns if given), G + G^T on the union, then D G D with d_i = sqrt|1/g_ii| */
CSRHost GraphTwin(const CSRHost &A, PetscInt bs, const std::vector<PetscInt> &idx, bool sym, bool scale)
{
  const PetscInt                               nb = A.m / bs;
  std::vector<std::map<PetscInt, PetscScalar>> g(nb);
  for (PetscInt b = 0; b < nb; b++) {
    const PetscInt r = b * bs;
    if (bs == 1) {
      for (PetscInt k = A.ia[b]; k < A.ia[b + 1]; k++) g[b][A.ja[k]] = PetscAbsScalar(A.a[k]);
      continue;
    }
    for (PetscInt k = 0; k < A.ia[r + 1] - A.ia[r]; k += bs) {
      PetscScalar val = 0;
      if (idx.empty()) {
        for (PetscInt ii = 0; ii < bs; ii++)
          for (PetscInt jj = 0; jj < bs; jj++) val += PetscAbs(PetscRealPart(A.a[A.ia[r + ii] + k + jj]));
      } else {
        for (PetscInt ii : idx)
          for (PetscInt jj : idx) val += PetscAbs(PetscRealPart(A.a[A.ia[r + ii] + k + jj]));
      }
      g[b][A.ja[A.ia[r] + k] / bs] = val;
    }
  }
  if (sym) {
    auto s = g;
    for (PetscInt i = 0; i < nb; i++)
      for (const auto &e : g[i]) {
        const auto m  = g[e.first].find(i);
        s[e.first][i] = m != g[e.first].end() ? m->second + e.second : e.second;
      }
    g = s;
  }
  if (scale) {
    std::vector<PetscScalar> d(nb);
    for (PetscInt i = 0; i < nb; i++) {
      const PetscScalar x = g[i].count(i) ? g[i][i] : 0.0;
      d[i]                = PetscSqrtScalar(PetscAbsScalar(x == 0.0 ? x : 1.0 / x));
    }
    for (PetscInt i = 0; i < nb; i++)
      for (auto &e : g[i]) {
        e.second *= d[i];
        e.second *= d[e.first];
      }
  }
  CSRHost G{nb, nb, {0}, {}, {}};
  for (PetscInt i = 0; i < nb; i++) {
    for (const auto &e : g[i]) G.ja.push_back(e.first), G.a.push_back(e.second);
    G.ia.push_back((PetscInt)G.ja.size());
  }
  return G;
}

/* GSHostGraph() against its twin, to the bit, on the given threads; blocks AIJ would not collapse: not done */
void CheckGraph(const CSRHost &A, PetscInt bs, const std::vector<PetscInt> &idx, bool dense, const std::string &what)
{
  for (int sym = 0; sym < 2; sym++)
    for (int scale = 0; scale < 2; scale++) {
      const CSRHost T = dense ? GraphTwin(A, bs, idx, sym, scale) : CSRHost{};
      for (PetscInt threads : {(PetscInt)1, (PetscInt)3, (PetscInt)8}) {
        PetscInt       gm = 0, *gi = nullptr, *gj = nullptr;
        PetscScalar   *ga   = nullptr;
        PetscBool      done = PETSC_FALSE;
        PetscErrorCode ierr = GSHostGraph(A.m, bs, A.ia.data(), A.ja.data(), A.a.data(), (PetscInt)idx.size(), idx.data(), (PetscBool)sym, (PetscBool)scale, threads, &done, &gm, &gi, &gj, &ga);
        bool           ok   = !ierr && (bool)done == dense;
        if (ok && dense) ok = gm == T.m && std::equal(T.ia.begin(), T.ia.end(), gi) && std::equal(T.ja.begin(), T.ja.end(), gj) && std::equal(T.a.begin(), T.a.end(), ga);
        free(gi);
        free(gj);
        free(ga);
        Check(ok, "graph of " + what + (sym ? ", symmetrized" : "") + (scale ? ", scaled" : "") + ", " + std::to_string(threads) + " threads: " + (dense ? "the twin's to the bit" : "left to AIJ's slower path"));
      }
    }
}

void TestProduct()
{
  for (PetscInt n : {1, 7, 40, 130}) {
    if (std::find(sizes.begin(), sizes.end(), n) == sizes.end() && n > 7) continue; /* -max_size */
    const CSRHost A = RandomCSR(n, n, 5), R = RandomCSR(n, n / 3 + 1, 3), T = RandomCSR(n, n + 2, 4);
    CheckProduct(GS_PRODUCT_AB, A, R, "random " + std::to_string(n));
    CheckProduct(GS_PRODUCT_AtB, A, T, "random " + std::to_string(n));
    CheckProduct(GS_PRODUCT_PtAP, A, R, "random " + std::to_string(n));
  }
  { /* A^T B of a symmetric pattern: A's pattern for A^T's, the transpose made at the first numeric phase */
    const CSRHost S = RandomSymmetricPattern(300, 4), T = RandomCSR(300, 40, 3), L = RandomSymmetricPattern(2000, 10), U = RandomCSR(2000, 40, 10);
    CheckProduct(GS_PRODUCT_AtB, S, T, "symmetric pattern", 1, PETSC_TRUE);
    CheckProduct(GS_PRODUCT_AtB, L, U, "symmetric pattern, 3 threads", 3, PETSC_TRUE);
  }
  { /* rows of X of more columns, spread widely, than the symbolic phase orders by insertion */
    const CSRHost A = RandomCSR(300, 300, 40), R = RandomCSR(300, 5000, 6);
    CheckProduct(GS_PRODUCT_AB, A, R, "long rows");
  }
  { /* block patterns (the repeated rows and entries the symbolic phase skips) and a block aggregation */
    const CSRHost A = RandomBlockCSR(12, 3, 4);
    CSRHost       P{A.m, 8, {0}, {}, {}};
    for (PetscInt i = 0; i < A.m; i++) {
      const PetscInt g = (i / 3) % 4; /* two 3 x 2 blocks a node row: its aggregate's and the next one's */
      for (PetscInt c = 2 * g; c < PetscMin(2 * g + 4, 8); c++) P.ja.push_back(c);
      P.ia.push_back((PetscInt)P.ja.size());
    }
    P.a = Random((PetscInt)P.ja.size());
    CheckProduct(GS_PRODUCT_PtAP, A, P, "3x3 blocks");
    CheckProduct(GS_PRODUCT_AB, A, P, "3x3 blocks");
    CheckProduct(GS_PRODUCT_AtB, A, A, "3x3 blocks");
  }
  { /* on several threads (uneven row ranges, block rows across their ends): the pattern of one thread */
    const CSRHost A = RandomCSR(3001, 3001, 30), R = RandomCSR(3001, 900, 12), B = RandomBlockCSR(2000, 3, 4);
    for (int type = 0; type < 3; type++) {
      const CSRHost        &L = type == GS_PRODUCT_AtB ? B : A, &Rt = type == GS_PRODUCT_AtB ? B : R;
      bool                  same = true;
      std::vector<PetscInt> one[2];
      for (PetscInt threads : {(PetscInt)1, (PetscInt)3, (PetscInt)4}) {
        GSDeviceProduct P = nullptr;
        PetscInt        cm;
        const PetscInt *ci, *cj;
        if (GSDeviceProductSymbolic((GSProductType)type, L.m, L.n, L.ia.data(), L.ja.data(), Rt.n, Rt.ia.data(), Rt.ja.data(), PETSC_FALSE, threads, &P)) {
          same = false;
          break;
        }
        GSDeviceProductGetPattern(P, &cm, &ci, &cj);
        if (threads == 1) {
          one[0].assign(ci, ci + cm + 1);
          one[1].assign(cj, cj + ci[cm]);
        } else
          same = same && (PetscInt)one[0].size() == cm + 1 && std::equal(one[0].begin(), one[0].end(), ci) && std::equal(one[1].begin(), one[1].end(), cj);
        GSDeviceProductDestroy(&P);
      }
      Check(same, std::string(type == GS_PRODUCT_AB ? "AB" : type == GS_PRODUCT_AtB ? "AtB" : "PtAP") + " on 3 and 4 threads: the pattern of one thread");
    }
  }
  { /* PCGAMG's graph: random patterns (not symmetric, zero and missing diagonals), dense blocks, a strength index, and
       blocks AIJ collapses by its slower path; large enough for several threads */
    CSRHost A = RandomCSR(40, 40, 5), L = RandomCSR(60000, 60000, 7), B = RandomBlockCSR(30000, 3, 5), Z = RandomBlockCSR(20, 2, 3), Y = RandomBlockCSR(300, 3, 4);
    for (PetscInt k = 0; k < (PetscInt)A.a.size(); k += 7) A.a[k] = 0.0;
    CheckGraph(A, 1, {}, true, "a random matrix");
    if (sizes.back() >= 10007) { /* not in valgrind runs (-max_size) */
      CheckGraph(L, 1, {}, true, "a large random matrix");
      CheckGraph(B, 3, {}, true, "3x3 blocks");
      CheckGraph(B, 3, {0, 2}, true, "3x3 blocks by a strength index");
    }
    CheckGraph(Z, 2, {}, true, "2x2 blocks");
    CheckGraph(Y, 3, {1}, true, "small 3x3 blocks by a strength index");
    for (PetscInt b = 0; b < 20; b++) /* a block row whose second row lacks its last entry */
      if (Z.ia[2 * b + 2] > Z.ia[2 * b + 1]) {
        const PetscInt k = Z.ia[2 * b + 2] - 1;
        Z.ja.erase(Z.ja.begin() + k);
        Z.a.erase(Z.a.begin() + k);
        for (PetscInt i = 2 * b + 2; i <= Z.m; i++) Z.ia[i]--;
        CheckGraph(Z, 2, {}, false, "2x2 blocks, one row unlike its block's");
        break;
      }
    CheckGraph(RandomCSR(40, 40, 5), 2, {}, false, "sparse 2x2 blocks");
  }
  CheckChangedOperand();
  CheckTranspose();
}
} // namespace unit
