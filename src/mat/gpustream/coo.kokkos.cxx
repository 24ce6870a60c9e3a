/* Coordinate (COO) assembly of MATGPUSTREAM on the device: a map from the entries a process gives to the positions
   of its CSR, built once on the host at MatSetPreallocationCOO() and kept in device memory, so that
   MatSetValuesCOO() is one gather-and-sum kernel per block (each nonzero sums its own entries: no atomics, the same
   order every time). Entries of rows another process owns are sent to it; it adds them after its own, as AIJ does. */
#include <algorithm>
#include <vector>

#include "devicemat.hpp"

using namespace gpustream;

struct _n_GSCOOMap {
  PetscCount         n      = 0;         /* entries this process gives (the length of the values) */
  PetscCount         nnz[2] = {0, 0};    /* nonzeros of the diagonal and off-diagonal blocks */
  DView<PetscCount>  jmap[2], perm[2];   /* block b's nonzero p sums v(perm[b](k)), jmap[b](p) <= k < jmap[b](p + 1) */
  DView<PetscCount>  rjmap[2], rperm[2]; /* then adds the received values recv(rperm[b](k)), rjmap[b](p) <= k < rjmap[b](p + 1) */
  DView<PetscScalar> v;                  /* the values copied from the host */
  /* entries of other processes' rows: sent in the order of sendperm (indices into the values), grouped by rank */
  MPI_Comm                                 comm     = MPI_COMM_NULL;
  bool                                     exchange = false; /* any process sends */
  std::vector<PetscCount>                  sendperm;
  DView<PetscCount>                        dsendperm;
  std::vector<PetscMPIInt>                 scount, sdispl, rcount, rdispl;
  DView<PetscScalar>                       dsend, drecv;
  Kokkos::View<PetscScalar *, PinnedSpace> hsend, hrecv;
  ~_n_GSCOOMap()
  {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/* The position of (local row r, column c) in a CSR whose rows are sorted (AIJ's), or -1 */
static PetscCount FindInRow(const PetscInt ia[], const PetscInt ja[], PetscInt r, PetscInt c)
{
  const PetscInt *b = ja + ia[r], *e = ja + ia[r + 1], *p = std::lower_bound(b, e, c);
  return p != e && *p == c ? (PetscCount)(p - ja) : -1;
}

/* The block (0: diagonal, 1: off-diagonal) and position of the entry (i, j) of a local row, or -1 if it is not in
   the pattern */
static PetscCount Locate(PetscInt i, PetscInt j, PetscInt rstart, PetscInt cstart, PetscInt cend, const PetscInt dia[], const PetscInt dja[], const PetscInt oia[], const PetscInt oja[], PetscInt nghost, const PetscInt garray[], int *block)
{
  const PetscInt r = i - rstart;
  if (j >= cstart && j < cend) {
    *block = 0;
    return FindInRow(dia, dja, r, j - cstart);
  }
  *block = 1;
  if (!oia) return -1;
  const PetscInt *g = std::lower_bound(garray, garray + nghost, j);
  if (g == garray + nghost || *g != j) return -1;
  return FindInRow(oia, oja, r, (PetscInt)(g - garray));
}

/* jmap and perm in device memory from the block's positions of the entries src (in their order): the CSR of the
   entries by nonzero */
static PetscErrorCode BuildSums(PetscCount nnz, const std::vector<PetscCount> &pos, const std::vector<PetscCount> &src, const char *label, DView<PetscCount> &jmap, DView<PetscCount> &perm)
{
  std::vector<PetscCount> j, p;

  PetscFunctionBegin;
  PetscCallCXX({
    j.assign(nnz + 1, 0);
    p.resize(src.size());
  });
  for (PetscCount q : pos) j[q + 1]++;
  for (PetscCount q = 0; q < nnz; q++) j[q + 1] += j[q];
  {
    std::vector<PetscCount> next(j.begin(), j.end() - 1);
    for (size_t k = 0; k < pos.size(); k++) p[next[pos[k]]++] = src[k];
  }
  GSCallKokkos({
    jmap = DView<PetscCount>(Kokkos::ViewAllocateWithoutInitializing(std::string(label) + "_jmap"), nnz + 1);
    perm = DView<PetscCount>(Kokkos::ViewAllocateWithoutInitializing(std::string(label) + "_perm"), p.size());
    SyncCopy(jmap, HostUnmanaged<const PetscCount>(j.data(), j.size()));
    SyncCopy(perm, HostUnmanaged<const PetscCount>(p.data(), p.size()));
  });
  if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)((j.size() + p.size()) * sizeof(PetscCount))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCOOMapCreate(MPI_Comm comm, PetscCount n, const PetscInt coo_i[], const PetscInt coo_j[], const PetscInt rranges[], const PetscInt cranges[], PetscInt m, const PetscInt dia[], const PetscInt dja[], const PetscInt oia[],
                              const PetscInt oja[], PetscInt nghost, const PetscInt garray[], GSCOOMap *map)
{
  std::unique_ptr<_n_GSCOOMap> M; /* freed, with the views made so far, if something fails */
  PetscMPIInt                  size, rank;
  PetscInt                     rstart, cstart, cend;
  std::vector<PetscCount>      pos[2], src[2], rpos[2], rsrc[2];
  std::vector<PetscInt>        sij, rij;
  int                          sends = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  rstart = rranges[rank];
  cstart = cranges[rank];
  cend   = cranges[rank + 1];
  PetscCheck(rranges[rank + 1] - rstart == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Local rows %" PetscInt_FMT " and ownership range disagree", m);
  PetscCallCXX(M.reset(new _n_GSCOOMap));
  M->n      = n;
  M->nnz[0] = dia[m];
  M->nnz[1] = oia ? oia[m] : 0;
  PetscCallCXX({
    M->scount.assign(size, 0);
    M->rcount.assign(size, 0);
    M->sdispl.assign(size + 1, 0);
    M->rdispl.assign(size + 1, 0);
  });
  /* the process owning each row: ours, another's (counted by rank), or none (negative indices: ignored) */
  for (PetscCount k = 0; k < n; k++) {
    const PetscInt i = coo_i[k], j = coo_j[k];
    if (i < 0 || j < 0) continue;
    if (i >= rstart && i < rranges[rank + 1]) {
      int              b;
      const PetscCount p = Locate(i, j, rstart, cstart, cend, dia, dja, oia, oja, nghost, garray, &b);
      PetscCheck(p >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "COO entry (%" PetscInt_FMT ", %" PetscInt_FMT ") is not in the assembled pattern", i, j);
      PetscCallCXX({
        pos[b].push_back(p);
        src[b].push_back(k);
      });
    } else {
      const PetscInt   *o = std::upper_bound(rranges, rranges + size + 1, i);
      const PetscMPIInt r = (PetscMPIInt)(o - rranges) - 1;
      PetscCheck(r >= 0 && r < size && i < rranges[size], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "COO row index %" PetscInt_FMT " is outside the matrix's %" PetscInt_FMT " rows", i, rranges[size]);
      M->scount[r]++;
    }
  }
  for (PetscMPIInt r = 0; r < size; r++) M->sdispl[r + 1] = M->sdispl[r] + M->scount[r];
  sends = M->sdispl[size] > 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sends, 1, MPI_INT, MPI_MAX, comm));
  M->exchange = sends != 0;
  if (M->exchange) { /* the indices of the entries sent, then their (i, j) to their rows' owners */
    std::vector<PetscMPIInt> next(M->sdispl.begin(), M->sdispl.end() - 1), s2(size), d2(size), r2(size), e2(size);
    PetscCallCXX({
      M->sendperm.resize(M->sdispl[size]);
      sij.resize(2 * (size_t)M->sdispl[size]);
    });
    for (PetscCount k = 0; k < n; k++) {
      const PetscInt i = coo_i[k], j = coo_j[k];
      if (i < 0 || j < 0 || (i >= rstart && i < rranges[rank + 1])) continue;
      const PetscMPIInt r    = (PetscMPIInt)(std::upper_bound(rranges, rranges + size + 1, i) - rranges) - 1;
      const PetscMPIInt t    = next[r]++;
      M->sendperm[t]         = k;
      sij[2 * (size_t)t]     = i;
      sij[2 * (size_t)t + 1] = j;
    }
    PetscCallMPI(MPI_Alltoall(M->scount.data(), 1, MPI_INT, M->rcount.data(), 1, MPI_INT, comm));
    for (PetscMPIInt r = 0; r < size; r++) {
      PetscCheck((PetscCount)M->rdispl[r] + M->rcount[r] <= PETSC_MPI_INT_MAX / 2 && M->sdispl[size] <= PETSC_MPI_INT_MAX / 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many COO entries cross processes for MPI's counts");
      M->rdispl[r + 1] = M->rdispl[r] + M->rcount[r];
      s2[r]            = 2 * M->scount[r];
      d2[r]            = 2 * M->sdispl[r];
      r2[r]            = 2 * M->rcount[r];
      e2[r]            = 2 * M->rdispl[r];
    }
    PetscCallCXX(rij.resize(2 * (size_t)M->rdispl[size]));
    PetscCallMPI(MPI_Alltoallv(sij.data(), s2.data(), d2.data(), MPIU_INT, rij.data(), r2.data(), e2.data(), MPIU_INT, comm));
    for (PetscCount t = 0; t < M->rdispl[size]; t++) {
      const PetscInt   i = rij[2 * t], j = rij[2 * t + 1];
      int              b;
      const PetscCount p = i >= rstart && i < rranges[rank + 1] ? Locate(i, j, rstart, cstart, cend, dia, dja, oia, oja, nghost, garray, &b) : -1;
      PetscCheck(p >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "COO entry (%" PetscInt_FMT ", %" PetscInt_FMT ") sent here is not in the assembled pattern", i, j);
      PetscCallCXX({
        rpos[b].push_back(p);
        rsrc[b].push_back(t);
      });
    }
    PetscCallMPI(MPI_Comm_dup(comm, &M->comm));
  }
  for (int b = 0; b < 2; b++) {
    PetscCall(BuildSums(M->nnz[b], pos[b], src[b], "GPUStream::coo", M->jmap[b], M->perm[b]));
    if (M->exchange) PetscCall(BuildSums(M->nnz[b], rpos[b], rsrc[b], "GPUStream::coo_recv", M->rjmap[b], M->rperm[b]));
  }
  GSCallKokkos({
    if (M->exchange) {
      const size_t ns = M->sendperm.size(), nr = (size_t)M->rdispl[size];
      M->hsend     = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::coo_hsend", ns);
      M->hrecv     = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::coo_hrecv", nr);
      M->dsend     = DView<PetscScalar>("GPUStream::coo_send", ns);
      M->drecv     = DView<PetscScalar>("GPUStream::coo_recv", nr);
      M->dsendperm = DView<PetscCount>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::coo_sendperm"), ns);
      SyncCopy(M->dsendperm, HostUnmanaged<const PetscCount>(M->sendperm.data(), ns));
    }
  });
  *map = M.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCOOMapDestroy(GSCOOMap *map)
{
  PetscFunctionBegin;
  if (!*map) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(delete *map);
  *map = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCOOMapGetSizes(GSCOOMap M, PetscCount *n, PetscCount *nnzA, PetscCount *nnzB, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  if (n) *n = M->n;
  if (nnzA) *nnzA = M->nnz[0];
  if (nnzB) *nnzB = M->nnz[1];
  if (bytes) {
    size_t b = (M->v.span() + M->dsend.span() + M->drecv.span()) * sizeof(PetscScalar) + M->dsendperm.span() * sizeof(PetscCount);
    for (int k = 0; k < 2; k++) b += (M->jmap[k].span() + M->perm[k].span() + M->rjmap[k].span() + M->rperm[k].span()) * sizeof(PetscCount);
    *bytes = (PetscLogDouble)b;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* val(p) = (val(p) or 0) + the sum of its entries' values, then + each value received for it, in AIJ's order */
static void Sums(const DView<PetscScalar> &val, const DView<PetscCount> &jmap, const DView<PetscCount> &perm, const DView<PetscCount> &rjmap, const DView<PetscCount> &rperm, const PetscScalar *v, const DView<PetscScalar> &recv, bool insert)
{
  const bool received = rjmap.extent(0) > 0;
  Kokkos::parallel_for(
      "GPUStream::SetValuesCOO", RangePol(0, (PetscCount)val.extent(0)), KOKKOS_LAMBDA(const PetscCount p) {
        PetscScalar sum = 0;
        for (PetscCount k = jmap(p); k < jmap(p + 1); k++) sum += v[perm(k)];
        PetscScalar a = (insert ? PetscScalar(0) : val(p)) + sum;
        if (received)
          for (PetscCount k = rjmap(p); k < rjmap(p + 1); k++) a += recv(rperm(k));
        val(p) = a;
      });
}

static PetscErrorCode BlockSums(GSCOOMap M, const PetscScalar *v, bool insert, GSDeviceMat A, GSDeviceMat B)
{
  PetscFunctionBegin;
  GSCallKokkos({
    Sums(A->val, M->jmap[0], M->perm[0], M->rjmap[0], M->rperm[0], v, M->drecv, insert);
    if (B) Sums(B->val, M->jmap[1], M->perm[1], M->rjmap[1], M->rperm[1], v, M->drecv, insert);
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device: v is in the execution space's memory */
static PetscErrorCode SetValues(GSCOOMap M, const PetscScalar v[], PetscBool device, InsertMode imode, GSDeviceMat A, GSDeviceMat B)
{
  const PetscScalar *dv = v;

  PetscFunctionBegin;
  if (!device && M->n) { /* host values: copied once */
    GSCallKokkos({
      if (M->v.extent(0) != (size_t)M->n) M->v = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::coo_values"), M->n);
      SyncCopy(M->v, HostUnmanaged<const PetscScalar>(v, M->n));
    });
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(M->n * sizeof(PetscScalar))));
    dv = M->v.data();
  }
  if (M->exchange) { /* the values of other processes' rows, gathered where they are, through host buffers */
    const size_t ns = M->sendperm.size();
    if (device) {
      const DView<PetscCount>  sp = M->dsendperm;
      const DView<PetscScalar> sb = M->dsend;
      GSCallKokkos({
        Kokkos::parallel_for(
            "GPUStream::COOGather", RangePol(0, (PetscCount)ns), KOKKOS_LAMBDA(const PetscCount t) { sb(t) = dv[sp(t)]; });
        SyncCopy(M->hsend, M->dsend);
      });
      if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(ns * sizeof(PetscScalar))));
    } else
      for (size_t t = 0; t < ns; t++) M->hsend(t) = v[M->sendperm[t]];
    PetscCallMPI(MPI_Alltoallv(M->hsend.data(), M->scount.data(), M->sdispl.data(), MPIU_SCALAR, M->hrecv.data(), M->rcount.data(), M->rdispl.data(), MPIU_SCALAR, M->comm));
    GSCallKokkos(SyncCopy(M->drecv, M->hrecv));
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(M->hrecv.extent(0) * sizeof(PetscScalar))));
  }
  PetscCall(BlockSums(M, dv, imode == INSERT_VALUES, A, B));
  PetscCall(PetscLogFlops((PetscLogDouble)(M->n + (PetscCount)M->hrecv.extent(0))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckSetValues(GSCOOMap M, const PetscScalar v[], InsertMode imode, GSDeviceMat A, GSDeviceMat B)
{
  PetscFunctionBegin;
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  PetscCheck((PetscCount)A->val.extent(0) == M->nnz[0] && (B ? (PetscCount)B->val.extent(0) : 0) == M->nnz[1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "The device matrix does not have the pattern the COO map was made for");
  PetscCheck(v || !M->n, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "MatSetValuesCOO() needs the values of the %" PetscCount_FMT " entries", M->n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCOOMapSetValues(GSCOOMap M, const PetscScalar v[], InsertMode imode, GSDeviceMat A, GSDeviceMat B)
{
  PetscBool      device;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(CheckSetValues(M, v, imode, A, B));
  PetscCall(GSDeviceArrayBegin(v, &device));
  ierr = SetValues(M, v, device, imode, A, B);
  PetscCall(GSDeviceArrayEnd(device)); /* also after a failure: PETSc's stream is not left waiting */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSCOOMapSetValuesExec(GSCOOMap M, const PetscScalar v[], InsertMode imode, GSDeviceMat A, GSDeviceMat B)
{
  PetscFunctionBegin;
  PetscCall(CheckSetValues(M, v, imode, A, B));
  PetscCall(SetValues(M, v, PETSC_TRUE, imode, A, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}
