/* PCGAMG's graph of a sequential matrix on host threads (GSHostGraph()): the steps of AIJ's MatCreateGraph() with no
   filter, each a row loop, with AIJ's arithmetic in AIJ's order, so that the graph is AIJ's to the bit. AIJ runs the
   steps as whole-matrix operations one after another, each on one thread and the transpose and sum through
   insertion. */
#include "kokkosimpl.hpp"
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include "hostcsr.hpp"

using namespace gpustream;

namespace
{
struct FreeDeleter {
  void operator()(void *p) const
  {
    free(p);
  }
};
template <class T> using CArray = std::unique_ptr<T[], FreeDeleter>;

/* malloc()'s memory (the caller frees it with free()), its pages first touched by the threads that write them */
template <class T> CArray<T> CAlloc(size_t n)
{
  T *p = (T *)malloc((n ? n : 1) * sizeof(T));
  if (!p) throw std::bad_alloc();
  return CArray<T>(p);
}

/* Whether AIJ collapses the m rows of (ai, aj) by blocks of bs (its "New bs>1 Graph"): the rows of each block row
   alike, their lengths and columns aligned on the blocks; else it takes its slower path, which is not ours */
bool DenseBlocks(PetscInt m, PetscInt bs, const PetscInt *ai, const PetscInt *aj, int nt)
{
  std::vector<char> ok(nt, 1);
  ParallelRows(m / bs, nt, [&](int t, PetscInt b0, PetscInt b1) {
    for (PetscInt b = b0; b < b1 && ok[t]; b++) {
      const PetscInt r = b * bs, n = ai[r + 1] - ai[r];
      if (n % bs) ok[t] = 0;
      for (PetscInt ii = 1; ii < bs && ok[t]; ii++) {
        if (ai[r + ii + 1] - ai[r + ii] != n) ok[t] = 0;
        for (PetscInt jj = 0; jj < n && ok[t]; jj++)
          if (aj[ai[r + ii] + jj] != aj[ai[r] + jj] || aj[ai[r + ii] + jj] % bs != jj % bs) ok[t] = 0;
      }
    }
  });
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

/* The graph into (oi, oj, ov), or false where AIJ takes its slower path */
bool Graph(PetscInt m, PetscInt bs, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, PetscInt nidx, const PetscInt *idx, bool symmetrize, bool scale, PetscInt threads, CArray<PetscInt> &oi, CArray<PetscInt> &oj, CArray<PetscScalar> &ov)
{
  const PetscInt nb = m / bs;
  const int      nt = (int)std::max<PetscInt>(1, std::min<PetscInt>(std::min<PetscInt>(threads, 1024), ai[m] / 32768));
  if (bs > 1 && !DenseBlocks(m, bs, ai, aj, nt)) return false;

  /* G = |A| (bs 1), or the sums of |Re a| over each block, on the block rows and in the order AIJ sums them; rows
     (r, c), values v */
  HostArray<PetscInt>    br, bc;
  HostArray<PetscScalar> v;
  const PetscInt        *r = ai, *c = aj;
  if (bs == 1) {
    v.resize(ai[m]);
    ParallelRows(m, nt, [&](int, PetscInt i0, PetscInt i1) {
      for (PetscInt k = ai[i0]; k < ai[i1]; k++) v[k] = PetscAbsScalar(aa[k]);
    });
  } else {
    br.resize(nb + 1);
    br[0] = 0;
    for (PetscInt b = 0; b < nb; b++) br[b + 1] = br[b] + (ai[b * bs + 1] - ai[b * bs]) / bs;
    bc.resize(br[nb]);
    v.resize(br[nb]);
    ParallelRows(nb, nt, [&](int, PetscInt b0, PetscInt b1) {
      for (PetscInt b = b0; b < b1; b++) {
        const PetscInt row = b * bs;
        for (PetscInt k = 0, q = br[b]; k < ai[row + 1] - ai[row]; k += bs, q++) {
          PetscScalar val = 0;
          bc[q]           = aj[ai[row] + k] / bs;
          if (nidx == 0) {
            for (PetscInt ii = 0; ii < bs; ii++)
              for (PetscInt jj = 0; jj < bs; jj++) val += PetscAbs(PetscRealPart(aa[ai[row + ii] + k + jj]));
          } else {
            for (PetscInt iii = 0; iii < nidx; iii++)
              for (PetscInt jjj = 0; jjj < nidx; jjj++) val += PetscAbs(PetscRealPart(aa[ai[row + idx[iii]] + k + idx[jjj]]));
          }
          v[q] = val;
        }
      }
    });
    r = br.data();
    c = bc.data();
  }

  /* symmetrized: G + G^T on the union of the patterns (MatTranspose() and MatAXPY()), each sum g_ij + g_ji */
  HostArray<PetscInt> tr, tc, tmap;
  if (symmetrize) HostTranspose(nb, nb, r, c, tr, tc, tmap, nt);
  oi    = CAlloc<PetscInt>(nb + 1);
  oi[0] = 0;
  /* row i of G + G^T: visit(col, p, q) for each column of the union in order, p (q) the entry of G (G^T) there or -1 */
  const auto merge = [&](PetscInt i, const auto &visit) {
    const PetscInt none = std::numeric_limits<PetscInt>::max();
    for (PetscInt p = r[i], q = tr[i]; p < r[i + 1] || q < tr[i + 1];) {
      const PetscInt cp = p < r[i + 1] ? c[p] : none, cq = q < tr[i + 1] ? tc[q] : none;
      visit(PetscMin(cp, cq), cp <= cq ? p : -1, cq <= cp ? q : -1);
      p += cp <= cq;
      q += cq <= cp;
    }
  };
  if (symmetrize) {
    ParallelRows(nb, nt, [&](int, PetscInt i0, PetscInt i1) {
      for (PetscInt i = i0; i < i1; i++) {
        PetscInt n = 0;
        merge(i, [&](PetscInt, PetscInt, PetscInt) { n++; });
        oi[i + 1] = n;
      }
    });
  } else {
    ParallelRows(nb, nt, [&](int, PetscInt i0, PetscInt i1) {
      for (PetscInt i = i0; i < i1; i++) oi[i + 1] = r[i + 1] - r[i];
    });
  }
  for (PetscInt i = 0; i < nb; i++) oi[i + 1] += oi[i];
  oj = CAlloc<PetscInt>(oi[nb]);
  ov = CAlloc<PetscScalar>(oi[nb]);
  ParallelRows(nb, nt, [&](int, PetscInt i0, PetscInt i1) {
    for (PetscInt i = i0; i < i1; i++) {
      PetscInt o = oi[i];
      if (!symmetrize) {
        for (PetscInt p = r[i]; p < r[i + 1]; p++, o++) oj[o] = c[p], ov[o] = v[p];
        continue;
      }
      merge(i, [&](PetscInt col, PetscInt p, PetscInt q) {
        ov[o]   = p >= 0 && q >= 0 ? v[p] + v[tmap[q]] : p >= 0 ? v[p] : v[tmap[q]];
        oj[o++] = col;
      });
    }
  });

  /* scaled: D G D with d_i = sqrt|1/g_ii| (0 for a zero or missing diagonal: VecReciprocal(), VecSqrtAbs()), left
     then right as MatDiagonalScale() */
  if (scale) {
    HostArray<PetscScalar> d(nb);
    ParallelRows(nb, nt, [&](int, PetscInt i0, PetscInt i1) {
      for (PetscInt i = i0; i < i1; i++) {
        const PetscInt   *e = std::lower_bound(oj.get() + oi[i], oj.get() + oi[i + 1], i);
        const PetscScalar x = (e != oj.get() + oi[i + 1] && *e == i) ? ov[e - oj.get()] : 0.0;
        d[i]                = PetscSqrtScalar(PetscAbsScalar(x == (PetscScalar)0.0 ? x : (PetscScalar)1.0 / x));
      }
    });
    ParallelRows(nb, nt, [&](int, PetscInt i0, PetscInt i1) {
      for (PetscInt i = i0; i < i1; i++)
        for (PetscInt k = oi[i]; k < oi[i + 1]; k++) {
          ov[k] *= d[i];
          ov[k] *= d[oj[k]];
        }
    });
  }
  return true;
}
} // namespace

PetscErrorCode GSHostGraph(PetscInt m, PetscInt bs, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], PetscInt nidx, const PetscInt idx[], PetscBool symmetrize, PetscBool scale, PetscInt threads, PetscBool *done, PetscInt *gm,
                           PetscInt **gi, PetscInt **gj, PetscScalar **ga)
{
  CArray<PetscInt>    oi, oj;
  CArray<PetscScalar> ov;
  bool                made = false;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  *gm   = 0;
  *gi = *gj = NULL;
  *ga       = NULL;
  PetscCheck(bs >= 1 && m % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%" PetscInt_FMT " rows are not blocks of %" PetscInt_FMT, m, bs);
  GSCallKokkos(made = Graph(m, bs, ai, aj, aa, nidx, idx, symmetrize, scale, threads, oi, oj, ov));
  if (made) {
    *gm   = m / bs;
    *gi   = oi.release();
    *gj   = oj.release();
    *ga   = ov.release();
    *done = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
