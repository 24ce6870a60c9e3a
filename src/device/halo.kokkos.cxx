/* Halo exchange of a gpustream matrix distributed by rows (as MPIAIJ, after PSBLAS: gather and scatter on the
   device with index lists kept there; messages between device buffers when MPI can read device memory, else
   between pinned host buffers). */
#include <vector>

#include "devicemat.hpp"
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#  if __has_include(<mpi-ext.h>)
#    include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support() */
#  endif
#endif

using namespace gpustream;

struct _n_GSHalo {
  MPI_Comm                                 comm = MPI_COMM_NULL; /* our own, so tags never meet the user's */
  std::vector<PetscMPIInt>                 sranks, scounts, sdispls, rranks, rcounts, rdispls;
  std::vector<MPI_Request>                 reqs;
  DView<PetscInt>                          sidx;          /* local entries to send, grouped by destination */
  DView<PetscScalar>                       dsend, dghost; /* device send buffer; ghost values in off-diagonal column order */
  Kokkos::View<PetscScalar *, PinnedSpace> hsend, hghost; /* the messages' buffers unless devicempi */
  bool                                     devicempi = false;
  ~_n_GSHalo()
  {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/* What the MPI library says of CUDA device memory at run time: Open MPI's MPIX_Query_cuda_support() where it was
   built with the extension; other MPIs cannot be asked */
PetscErrorCode GSHaloMPIDeviceSupport(GSMPIDeviceSupport *support)
{
  PetscFunctionBegin;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  *support = MPIX_Query_cuda_support() ? GS_MPI_DEVICE_YES : GS_MPI_DEVICE_NO;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  *support = GS_MPI_DEVICE_NO; /* Open MPI built without CUDA */
#else
  *support = GS_MPI_DEVICE_UNKNOWN;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the halo hands MPI the Kokkos views themselves: -mat_gpustream_device_mpi true, or auto where they are host
   memory (host backends: staging would copy host memory to host memory) or the MPI says it reads device memory.
   true where the MPI says it cannot is an error; where the MPI cannot be asked, true is the user's word. */
PetscErrorCode GSHaloUseDeviceMPI(GSDeviceMPI opt, const char prefix[], PetscBool *use, const char **why)
{
  GSMPIDeviceSupport support;

  PetscFunctionBegin;
  PetscCall(GSHaloMPIDeviceSupport(&support));
  if (opt != GS_DEVICE_MPI_AUTO) {
    PetscCheck(opt == GS_DEVICE_MPI_FALSE || !OnDevice() || support != GS_MPI_DEVICE_NO, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "-%smat_gpustream_device_mpi true: this MPI reports no CUDA support (MPIX_Query_cuda_support() is 0), so it cannot read device buffers; use auto or false", prefix ? prefix : "");
    *use = (PetscBool)(opt == GS_DEVICE_MPI_TRUE);
    *why = "as asked";
  } else if (!OnDevice()) {
    *use = PETSC_TRUE;
    *why = "host backend, the views are host memory";
  } else {
    *use = (PetscBool)(support == GS_MPI_DEVICE_YES);
    *why = support == GS_MPI_DEVICE_YES ? "the MPI reports CUDA support" : (support == GS_MPI_DEVICE_NO ? "the MPI reports no CUDA support" : "the MPI cannot tell whether it supports CUDA");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* nlocal: local columns; ranges[size+1]: column ownership; garray[nghost]: the global columns of the ghosts, sorted
   (as MPIAIJ keeps them) so that each rank's ghosts arrive contiguously */
PetscErrorCode GSHaloCreate(MPI_Comm comm, PetscInt nlocal, const PetscInt ranges[], PetscInt nghost, const PetscInt garray[], PetscBool devicempi, GSHalo *halo)
{
  std::unique_ptr<_n_GSHalo> H; /* freed, with the views made so far, if an allocation fails */
  PetscMPIInt                size, rank;
  std::vector<PetscMPIInt>   rcount, scount, rdispl, sdispl;
  std::vector<PetscInt>      sidx;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallCXX(rcount.assign(size, 0));
  PetscCallCXX(scount.assign(size, 0));
  PetscCallCXX(rdispl.assign(size + 1, 0));
  PetscCallCXX(sdispl.assign(size + 1, 0));
  for (PetscInt i = 0, r = 0; i < nghost; i++) {
    PetscCheck(!i || garray[i] > garray[i - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Ghost columns must be sorted and distinct");
    while (r < size && garray[i] >= ranges[r + 1]) r++;
    PetscCheck(r < size && r != rank, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Ghost column %" PetscInt_FMT " has no other owner", garray[i]);
    rcount[r]++;
  }
  PetscCallMPI(MPI_Alltoall(rcount.data(), 1, MPI_INT, scount.data(), 1, MPI_INT, comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    rdispl[r + 1] = rdispl[r] + rcount[r];
    sdispl[r + 1] = sdispl[r] + scount[r];
  }
  PetscCallCXX(sidx.resize(sdispl[size]));
  PetscCallMPI(MPI_Alltoallv(garray, rcount.data(), rdispl.data(), MPIU_INT, sidx.data(), scount.data(), sdispl.data(), MPIU_INT, comm));
  for (auto &k : sidx) {
    k -= ranges[rank];
    PetscCheck(k >= 0 && k < nlocal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Requested entry %" PetscInt_FMT " is not local", k + ranges[rank]);
  }

  PetscCallCXX(H.reset(new _n_GSHalo));
  PetscCallMPI(MPI_Comm_dup(comm, &H->comm)); /* collective: before anything that can fail on one process */
  for (PetscMPIInt r = 0; r < size; r++) {
    if (scount[r]) {
      H->sranks.push_back(r);
      H->scounts.push_back(scount[r]);
      H->sdispls.push_back(sdispl[r]);
    }
    if (rcount[r]) {
      H->rranks.push_back(r);
      H->rcounts.push_back(rcount[r]);
      H->rdispls.push_back(rdispl[r]);
    }
  }
  H->reqs.resize(H->sranks.size() + H->rranks.size());
  H->devicempi = devicempi ? true : false;
  GSCallKokkos({
    H->sidx   = DView<PetscInt>("GPUStream::halo_sidx", sidx.size());
    H->dsend  = DView<PetscScalar>("GPUStream::halo_send", sidx.size());
    H->dghost = DView<PetscScalar>("GPUStream::halo_ghost", nghost);
    if (!devicempi) {
      H->hsend  = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::halo_hsend", sidx.size());
      H->hghost = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::halo_hghost", nghost);
    }
    SyncCopy(H->sidx, HostUnmanaged<const PetscInt>(sidx.data(), sidx.size()));
  });
  *halo = H.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSHaloDestroy(GSHalo *H)
{
  PetscFunctionBegin;
  if (!*H) PetscFunctionReturn(PETSC_SUCCESS);
  GSCallKokkos(delete *H); /* frees the communicator too */
  *H = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values this rank sends, values it receives, and the ranks it talks to, per exchange; whether MPI gets the Kokkos
   views themselves */
PetscErrorCode GSHaloGetSizes(GSHalo H, PetscInt *nsend, PetscInt *nghost, PetscInt *neighbors, PetscBool *devicempi)
{
  PetscFunctionBegin;
  if (devicempi) *devicempi = (PetscBool)H->devicempi;
  *nsend     = (PetscInt)H->sidx.extent(0);
  *nghost    = (PetscInt)H->dghost.extent(0);
  *neighbors = (PetscInt)(H->sranks.size() + H->rranks.size());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The buffers MPI reads and writes: the device views where it takes them, else their pinned host twins. The forward
   exchange sends from *owned and receives the ghosts into *ghost; the reverse one goes the other way. */
static void MessageBuffers(GSHalo H, PetscScalar **owned, PetscScalar **ghost)
{
  *owned = H->devicempi ? H->dsend.data() : H->hsend.data();
  *ghost = H->devicempi ? H->dghost.data() : H->hghost.data();
}

/* With device buffers one fence serves twice: the gather is done before MPI reads dsend, and kernels still reading
   the ghosts of the previous product are done before MPI writes dghost */
PetscErrorCode gpustream::HaloBegin(GSHalo H, const DView<PetscScalar> &x, PetscInt *launches, const DView<PetscScalar> &scale)
{
  const size_t ns = H->sidx.extent(0);
  const int    nr = (int)H->rranks.size();
  PetscScalar *recv, *send;

  PetscFunctionBegin;
  *launches = 0;
  MessageBuffers(H, &send, &recv);
  if (!H->devicempi)
    for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], 0, H->comm, &H->reqs[i]));
  if (ns) {
    const DView<PetscInt>    idx  = H->sidx;
    const DView<PetscScalar> dsnd = H->dsend, d = scale;
    const bool               scaled = d.extent(0) > 0;
    GSCallKokkos({
      Kokkos::parallel_for(
          "GPUStream::HaloGather", RangePol(0, ns), KOKKOS_LAMBDA(const size_t k) { dsnd(k) = scaled ? d(idx(k)) * x(idx(k)) : x(idx(k)); });
      if (!H->devicempi) SyncCopy(H->hsend, H->dsend);
    });
    if (!H->devicempi && OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(ns * sizeof(PetscScalar))));
    *launches = 1;
  }
  if (H->devicempi) {
    GSCallKokkos(FenceAll());
    for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], 0, H->comm, &H->reqs[i]));
  }
  for (size_t i = 0; i < H->sranks.size(); i++) PetscCallMPI(MPI_Isend(send + H->sdispls[i], H->scounts[i], MPIU_SCALAR, H->sranks[i], 0, H->comm, &H->reqs[nr + i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode gpustream::HaloEnd(GSHalo H)
{
  PetscFunctionBegin;
  if (!H->reqs.empty()) PetscCallMPI(MPI_Waitall((int)H->reqs.size(), H->reqs.data(), MPI_STATUSES_IGNORE));
  if (!H->devicempi && H->dghost.extent(0)) {
    GSCallKokkos(SyncCopy(H->dghost, H->hghost));
    if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(H->dghost.extent(0) * sizeof(PetscScalar))));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

const DView<PetscScalar> &gpustream::HaloGhosts(GSHalo H)
{
  return H->dghost;
}

PetscErrorCode gpustream::HaloBlock(GSHalo H, PetscInt k, const DView<PetscScalar> &X, PetscInt n, DView<PetscScalar> &G)
{
  const size_t ng = H->dghost.extent(0);
  PetscInt     gathers;

  PetscFunctionBegin;
  GSCallKokkos(if (G.extent(0) < ng * k) G = DView<PetscScalar>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::ghost_block"), ng * k));
  for (PetscInt c = 0; c < k; c++) {
    const DView<PetscScalar> x(X.data() + c * n, n); /* unmanaged: column c */
    PetscCall(HaloBegin(H, x, &gathers));
    PetscCall(HaloEnd(H));
    GSCallKokkos(if (ng) SyncCopy(Kokkos::subview(G, std::make_pair(c * ng, (c + 1) * ng)), H->dghost));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The messages of HaloBegin() the other way (tag 1): ghosts to their owners, from dghost (or pinned hghost) into
   dsend (or hsend); then each neighbour's part is added into y by its own launch, since an entry sent to several
   neighbours comes back from each (one pass with atomics would add them in a varying order) */
PetscErrorCode gpustream::HaloReverseAdd(GSHalo H, const DView<PetscScalar> &y)
{
  const size_t ns = H->sidx.extent(0), ng = H->dghost.extent(0);
  const int    nr = (int)H->sranks.size();
  PetscScalar *recv, *send;

  PetscFunctionBegin;
  MessageBuffers(H, &recv, &send);
  if (H->devicempi)
    GSCallKokkos(FenceAll()); /* the ghosts' product is done before MPI reads it */
  else if (ng) {
    GSCallKokkos(SyncCopy(H->hghost, H->dghost));
    if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(ng * sizeof(PetscScalar))));
  }
  for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->sdispls[i], H->scounts[i], MPIU_SCALAR, H->sranks[i], 1, H->comm, &H->reqs[i]));
  for (size_t i = 0; i < H->rranks.size(); i++) PetscCallMPI(MPI_Isend(send + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], 1, H->comm, &H->reqs[nr + i]));
  if (!H->reqs.empty()) PetscCallMPI(MPI_Waitall((int)H->reqs.size(), H->reqs.data(), MPI_STATUSES_IGNORE));
  if (ns) {
    if (!H->devicempi) {
      GSCallKokkos(SyncCopy(H->dsend, H->hsend));
      if (OnDevice()) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(ns * sizeof(PetscScalar))));
    }
    const DView<PetscInt>    idx = H->sidx;
    const DView<PetscScalar> v   = H->dsend;
    for (int i = 0; i < nr; i++)
      GSCallKokkos(Kokkos::parallel_for(
          "GPUStream::HaloAdd", RangePol(H->sdispls[i], H->sdispls[i] + H->scounts[i]), KOKKOS_LAMBDA(const PetscInt k) { y(idx(k)) += v(k); }));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
