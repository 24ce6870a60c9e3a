/* Halo exchange of a gpustream matrix distributed by rows (as MPIAIJ, after PSBLAS: gather and scatter on the
   device with index lists kept there). Between processes of one node the values are written straight into the
   receiver's buffer (the shared path: CUDA IPC on device backends, an MPI shared-memory window on host ones), with
   events and empty messages to order the writes; otherwise messages between device buffers when MPI can read device
   memory, else between pinned host buffers. */
#include <map>
#include <vector>

#include "devicemat.hpp"
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#  if __has_include(<mpi-ext.h>)
#    include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support() */
#  endif
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#  define GS_HALO_IPC 1
#endif

using namespace gpustream;

const char *const GSHaloShareds[] = {"auto", "false", "true", "GSHaloShared", "GS_HALO_SHARED_", NULL};

namespace
{
#if defined(GS_HALO_IPC)
using Event = cudaEvent_t;
#else
using Event = void *;          /* host backends have none: their writes are done when the writer's message leaves */
#endif

/* The tags of the halo's own communicator */
enum { TAG_FORWARD, TAG_REVERSE, TAG_FFREE, TAG_FDONE, TAG_RFREE, TAG_RDONE, TAG_INFO_RECV, TAG_INFO_SEND };

/* The shared path's state. Each process owns one buffer, its ghosts then its send entries: neighbours write their
   values into its ghosts (forward) and their ghosts' products into its send entries (the reverse exchange of
   products with the transpose). A write waits for the receiver's "free" (its kernels that read the buffer before
   are done) and is followed by the writer's "done"; on a device both are events recorded on the stream, which the
   other side's stream waits for, and an empty message says that the event has been recorded. */
struct SharedPath {
  MPI_Comm                 node = MPI_COMM_NULL;                   /* the processes of this node */
  MPI_Win                  win  = MPI_WIN_NULL;                    /* host backends: the buffers in node-shared memory */
  PetscScalar             *base = nullptr;                         /* this process's buffer */
  DView<std::uintptr_t>    fdst;                                   /* forward: for each entry sent, its place in the receiver's ghosts */
  DView<std::uintptr_t>    rdst;                                   /* reverse: for each ghost, its place in the owner's send entries */
  std::vector<MPI_Request> reqs;                                   /* the notifications of one exchange */
  int                      token = 0;                              /* their payload */
  enum { FFREE, FDONE, RFREE, RDONE };                             /* the events of each process (a device's) */
  Event              ev[4] = {nullptr, nullptr, nullptr, nullptr}; /* ours */
  std::vector<Event> sffree, srdone;                               /* per rank we send to: its FFREE, RDONE (a device's) */
  std::vector<Event> rfdone, rrfree;                               /* per rank we receive from: its FDONE, RFREE */
#if defined(GS_HALO_IPC)
  std::map<PetscMPIInt, void *> opened; /* the neighbours' buffers mapped here */
#endif
  /* what this process holds; on an error path only (GSHaloDestroy() first waits for the neighbours) */
  ~SharedPath()
  {
#if defined(GS_HALO_IPC)
    for (auto &p : opened) (void)cudaIpcCloseMemHandle(p.second);
    for (auto *v : {&sffree, &srdone, &rfdone, &rrfree})
      for (auto e : *v)
        if (e) (void)cudaEventDestroy(e);
    for (auto e : ev)
      if (e) (void)cudaEventDestroy(e);
    if (base) (void)cudaFree(base);
    (void)cudaGetLastError();
#endif
    if (win != MPI_WIN_NULL) {
      MPI_Win_unlock_all(win);
      MPI_Win_free(&win);
    }
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  }
};

/* What a process tells a neighbour: where in its buffer the neighbour writes, and the two events the neighbour waits for */
struct PeerInfo {
#if defined(GS_HALO_IPC)
  cudaIpcMemHandle_t   mem;
  cudaIpcEventHandle_t ev[2];
#endif
  PetscInt offset; /* scalars */
};
} // namespace

struct _n_GSHalo {
  MPI_Comm                                 comm = MPI_COMM_NULL; /* our own, so tags never meet the user's */
  std::vector<PetscMPIInt>                 sranks, scounts, sdispls, rranks, rcounts, rdispls;
  std::vector<MPI_Request>                 reqs;
  DView<PetscInt>                          sidx;          /* local entries to send, grouped by destination */
  DView<PetscScalar>                       dsend, dghost; /* device send buffer; ghost values in off-diagonal column order */
  Kokkos::View<PetscScalar *, PinnedSpace> hsend, hghost; /* the messages' buffers unless devicempi */
  bool                                     devicempi = false;
  std::string                              why; /* why the shared path was taken or not */
  std::unique_ptr<SharedPath>              sh;  /* the shared path's, else null */
  ~_n_GSHalo()
  {
    sh.reset(); /* before the communicator: its window's node communicator is freed first */
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

#if defined(GS_HALO_IPC)
/* A CUDA call of the shared path's set-up: a failure clears ok and gives the first reason */
#  define GSIPCTry(call)                                                                                                                                                                                                                                 \
    do {                                                                                                                                                                                                                                                 \
      const cudaError_t e_ = (call);                                                                                                                                                                                                                     \
      if (e_ != cudaSuccess) {                                                                                                                                                                                                                           \
        (void)cudaGetLastError();                                                                                                                                                                                                                        \
        if (ok) why = std::string(#call) + ": " + cudaGetErrorName(e_);                                                                                                                                                                                  \
        ok = 0;                                                                                                                                                                                                                                          \
      }                                                                                                                                                                                                                                                  \
    } while (0)
#endif

/* Whether this process reaches every neighbour through the shared path: on its node and, on a device, through a GPU
   it can map (its own, or a peer with access). For auto, a neighbour on this process's own GPU counts only where MPS
   shares the GPU's contexts: without it the processes' contexts take turns on the GPU, and each wait of a stream for
   another process's event costs a turn (an exchange many times slower than MPI's through host buffers). */
static PetscErrorCode SharedReach(GSHalo H, MPI_Comm node, GSHaloShared opt, int *reach, std::string &why)
{
  PetscMPIInt              size, rank, nrank, leader;
  std::vector<PetscMPIInt> leaders, peers(H->sranks);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(H->comm, &size));
  PetscCallMPI(MPI_Comm_rank(H->comm, &rank));
  PetscCallMPI(MPI_Comm_rank(node, &nrank));
  leader = nrank ? size : rank; /* a node is named by its first process in the halo's communicator */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node));
  PetscCallCXX(leaders.resize(size));
  PetscCallMPI(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, H->comm));
  PetscCallCXX(peers.insert(peers.end(), H->rranks.begin(), H->rranks.end()));
  *reach = 1;
  for (PetscMPIInt r : peers)
    if (leaders[r] != leader) {
      *reach = 0;
      why    = "a neighbour on another node";
    }
#if defined(GS_HALO_IPC)
  {
    std::vector<char> ids(32 * (size_t)size, 0);
    char              mine[32] = "";
    int               dev = 0, ok = 1, mps = 0;
    GSIPCTry(cudaGetDevice(&dev));
    GSIPCTry(cudaDeviceGetPCIBusId(mine, sizeof(mine), dev));
    /* cudaDevAttrMpsEnabled (133) is CUDA 12's; runtimes without it answer an error: taken as no MPS */
    if (cudaDeviceGetAttribute(&mps, static_cast<cudaDeviceAttr>(133), dev) != cudaSuccess) {
      (void)cudaGetLastError();
      mps = 0;
    }
    PetscCallMPI(MPI_Allgather(mine, 32, MPI_CHAR, ids.data(), 32, MPI_CHAR, H->comm));
    for (PetscMPIInt r : peers) {
      const char *theirs = ids.data() + 32 * (size_t)r;
      int         ord = -1, can = 0;
      if (!*reach || !ok) continue;
      if (!std::strncmp(theirs, mine, 32)) { /* the same GPU */
        if (!mps && opt == GS_HALO_SHARED_AUTO) {
          *reach = 0;
          why    = "a neighbour on this process's GPU, which MPS does not share";
        }
        continue;
      }
      if (cudaDeviceGetByPCIBusId(&ord, theirs) != cudaSuccess || cudaDeviceCanAccessPeer(&can, dev, ord) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        *reach = 0;
        why    = "a neighbour's GPU that this process's cannot map (no peer access)";
      }
    }
    if (!ok) *reach = 0;
  }
#else
  (void)opt;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The shared path, where the option allows it and every process reaches its neighbours (collective): the buffer,
   the events, what each process tells its neighbours, and their buffers mapped here. Else H->why says why not. */
static PetscErrorCode SharedSetUp(GSHalo H, PetscInt ng, PetscInt ns, GSHaloShared opt, const char prefix[])
{
  std::unique_ptr<SharedPath> S;
  std::string                 why;
  int                         reach = 1, all, ok = 1;
  const size_t                nS = H->sranks.size(), nR = H->rranks.size();
  std::vector<PeerInfo>       out(nS + nR), in(nS + nR);
  std::vector<MPI_Request>    rq(2 * (nS + nR));
  std::vector<std::uintptr_t> fdst(ns), rdst(ng); /* addresses (a view of pointers would be a 2D view) */

  PetscFunctionBegin;
  if (opt == GS_HALO_SHARED_FALSE) {
    H->why = "as asked";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCXX(S.reset(new SharedPath));
  PetscCallMPI(MPI_Comm_split_type(H->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &S->node));
  PetscCall(SharedReach(H, S->node, opt, &reach, why));
  PetscCallMPI(MPI_Allreduce(&reach, &all, 1, MPI_INT, MPI_MIN, H->comm));
  if (!all && why.empty()) why = "a neighbour of another process cannot be reached";
  PetscCheck(all || opt != GS_HALO_SHARED_TRUE, PETSC_COMM_SELF, PETSC_ERR_SUP, "-%smat_gpustream_halo_shared true: %s; use auto or false", prefix ? prefix : "", why.c_str());
  if (!all) {
    H->why = why;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* this process's buffer, ghosts then send entries, and its events */
#if defined(GS_HALO_IPC)
  cudaIpcMemHandle_t   mem;
  cudaIpcEventHandle_t eh[4];
  GSIPCTry(cudaMalloc((void **)&S->base, std::max<size_t>(ng + ns, 1) * sizeof(PetscScalar)));
  for (auto &e : S->ev) GSIPCTry(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess));
  if (ok) GSIPCTry(cudaIpcGetMemHandle(&mem, S->base));
  for (int k = 0; k < 4 && ok; k++) GSIPCTry(cudaIpcGetEventHandle(&eh[k], S->ev[k]));
#else
  PetscCallMPI(MPI_Win_allocate_shared((MPI_Aint)((ng + ns) * sizeof(PetscScalar)), (int)sizeof(PetscScalar), MPI_INFO_NULL, S->node, &S->base, &S->win));
  PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, S->win));
#endif
  PetscCallMPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, H->comm));

  if (all) { /* where each neighbour writes in this buffer, and the events it waits for */
    for (size_t a = 0; a < nS; a++) {
      out[a].offset = ng + H->sdispls[a]; /* its ghosts' products from us, in the reverse exchange */
#if defined(GS_HALO_IPC)
      out[a].mem   = mem;
      out[a].ev[0] = eh[SharedPath::FDONE];
      out[a].ev[1] = eh[SharedPath::RFREE];
#endif
      PetscCallMPI(MPI_Isend(&out[a], (int)sizeof(PeerInfo), MPI_BYTE, H->sranks[a], TAG_INFO_SEND, H->comm, &rq[a]));
      PetscCallMPI(MPI_Irecv(&in[a], (int)sizeof(PeerInfo), MPI_BYTE, H->sranks[a], TAG_INFO_RECV, H->comm, &rq[nS + nR + a]));
    }
    for (size_t b = 0; b < nR; b++) {
      out[nS + b].offset = H->rdispls[b]; /* our ghosts from it */
#if defined(GS_HALO_IPC)
      out[nS + b].mem   = mem;
      out[nS + b].ev[0] = eh[SharedPath::FFREE];
      out[nS + b].ev[1] = eh[SharedPath::RDONE];
#endif
      PetscCallMPI(MPI_Isend(&out[nS + b], (int)sizeof(PeerInfo), MPI_BYTE, H->rranks[b], TAG_INFO_RECV, H->comm, &rq[nS + b]));
      PetscCallMPI(MPI_Irecv(&in[nS + b], (int)sizeof(PeerInfo), MPI_BYTE, H->rranks[b], TAG_INFO_SEND, H->comm, &rq[2 * nS + nR + b]));
    }
    if (!rq.empty()) PetscCallMPI(MPI_Waitall((int)rq.size(), rq.data(), MPI_STATUSES_IGNORE));

      /* the neighbours' buffers here */
#if defined(GS_HALO_IPC)
    const auto Map = [&](PetscMPIInt r, const PeerInfo &p) -> PetscScalar * {
      void *b  = nullptr;
      auto  it = S->opened.find(r);
      if (it != S->opened.end())
        b = it->second;
      else {
        GSIPCTry(cudaIpcOpenMemHandle(&b, p.mem, cudaIpcMemLazyEnablePeerAccess));
        if (b) S->opened[r] = b;
      }
      return b ? (PetscScalar *)b + p.offset : nullptr;
    };
    const auto OpenEvent = [&](const cudaIpcEventHandle_t &h) {
      cudaEvent_t e = nullptr;
      GSIPCTry(cudaIpcOpenEventHandle(&e, h));
      return e;
    };
#else
    MPI_Group world, node;
    PetscCallMPI(MPI_Comm_group(H->comm, &world));
    PetscCallMPI(MPI_Comm_group(S->node, &node));
    const auto Map = [&](PetscMPIInt r, const PeerInfo &p) -> PetscScalar * {
      PetscMPIInt nr = MPI_UNDEFINED, du;
      MPI_Aint    sz;
      void       *b = nullptr;
      if (MPI_Group_translate_ranks(world, 1, &r, node, &nr) != MPI_SUCCESS || nr == MPI_UNDEFINED || MPI_Win_shared_query(S->win, nr, &sz, &du, &b) != MPI_SUCCESS) {
        if (ok) why = "MPI_Win_shared_query() failed";
        ok = 0;
      }
      return b ? (PetscScalar *)b + p.offset : nullptr;
    };
#endif
    for (size_t a = 0; a < nS && ok; a++) {
      PetscScalar *q = Map(H->sranks[a], in[a]);
      for (PetscMPIInt k = 0; k < H->scounts[a] && q; k++) fdst[H->sdispls[a] + k] = (std::uintptr_t)(q + k);
#if defined(GS_HALO_IPC)
      S->sffree.push_back(OpenEvent(in[a].ev[0]));
      S->srdone.push_back(OpenEvent(in[a].ev[1]));
#endif
    }
    for (size_t b = 0; b < nR && ok; b++) {
      PetscScalar *q = Map(H->rranks[b], in[nS + b]);
      for (PetscMPIInt k = 0; k < H->rcounts[b] && q; k++) rdst[H->rdispls[b] + k] = (std::uintptr_t)(q + k);
#if defined(GS_HALO_IPC)
      S->rfdone.push_back(OpenEvent(in[nS + b].ev[0]));
      S->rrfree.push_back(OpenEvent(in[nS + b].ev[1]));
#endif
    }
#if !defined(GS_HALO_IPC)
    PetscCallMPI(MPI_Group_free(&world));
    PetscCallMPI(MPI_Group_free(&node));
#endif
    try {
      S->fdst = DView<std::uintptr_t>("GPUStream::halo_fdst", ns);
      S->rdst = DView<std::uintptr_t>("GPUStream::halo_rdst", ng);
      if (ok) {
        SyncCopy(S->fdst, HostUnmanaged<std::uintptr_t>(fdst.data(), ns));
        SyncCopy(S->rdst, HostUnmanaged<std::uintptr_t>(rdst.data(), ng));
      }
    } catch (const std::exception &e) {
      if (ok) why = e.what();
      ok = 0;
    }
    PetscCallMPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, H->comm));
  }
  if (!all) { /* every process drops what it made (the window together) */
    if (ok) why = "the set-up failed on another process";
    S.reset();
    PetscCheck(opt != GS_HALO_SHARED_TRUE, PETSC_COMM_SELF, PETSC_ERR_LIB, "-%smat_gpustream_halo_shared true: %s", prefix ? prefix : "", why.c_str());
    PetscCall(PetscInfo(NULL, "Halo values through MPI: the shared path's set-up failed (%s)\n", why.c_str()));
    H->why = "its set-up failed: " + why;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCXX(S->reqs.resize(2 * (nS + nR)));
  H->why = opt == GS_HALO_SHARED_TRUE ? "as asked" : "every neighbour on this node";
  H->sh  = std::move(S);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The send list on the device */
static PetscErrorCode HaloIndices(GSHalo H, const std::vector<PetscInt> &sidx)
{
  PetscFunctionBegin;
  GSCallKokkos({
    H->sidx = DView<PetscInt>("GPUStream::halo_sidx", sidx.size());
    SyncCopy(H->sidx, HostUnmanaged<const PetscInt>(sidx.data(), sidx.size()));
  });
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* nlocal: local columns; ranges[size+1]: column ownership; garray[nghost]: the global columns of the ghosts, sorted
   (as MPIAIJ keeps them) so that each rank's ghosts arrive contiguously */
PetscErrorCode GSHaloCreate(MPI_Comm comm, PetscInt nlocal, const PetscInt ranges[], PetscInt nghost, const PetscInt garray[], PetscBool devicempi, GSHaloShared shared, const char prefix[], GSHalo *halo)
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
  PetscCall(GSAllOK(comm, HaloIndices(H.get(), sidx))); /* before the collective set-up of the shared path */
  PetscCall(SharedSetUp(H.get(), nghost, (PetscInt)sidx.size(), shared, prefix));
  if (H->sh) {
    H->devicempi = false;
    H->dghost    = DView<PetscScalar>(H->sh->base, nghost); /* unmanaged: the neighbours write there */
    H->dsend     = DView<PetscScalar>(H->sh->base + nghost, sidx.size());
  } else
    GSCallKokkos({
      H->dsend  = DView<PetscScalar>("GPUStream::halo_send", sidx.size());
      H->dghost = DView<PetscScalar>("GPUStream::halo_ghost", nghost);
      if (!devicempi) {
        H->hsend  = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::halo_hsend", sidx.size());
        H->hghost = Kokkos::View<PetscScalar *, PinnedSpace>("GPUStream::halo_hghost", nghost);
      }
    });
  *halo = H.release();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSHaloDestroy(GSHalo *H)
{
  PetscFunctionBegin;
  if (!*H) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*H)->sh) { /* no neighbour still writes into this buffer, nor this process into theirs */
    GSCallKokkos(FenceAll());
    PetscCallMPI(MPI_Barrier((*H)->comm));
  }
  GSCallKokkos(delete *H); /* frees the communicator too */
  *H = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values this rank sends, values it receives, and the ranks it talks to, per exchange (GSHaloGetPath(): how) */
PetscErrorCode GSHaloGetSizes(GSHalo H, PetscInt *nsend, PetscInt *nghost, PetscInt *neighbors)
{
  PetscFunctionBegin;
  *nsend     = (PetscInt)H->sidx.extent(0);
  *nghost    = (PetscInt)H->dghost.extent(0);
  *neighbors = (PetscInt)(H->sranks.size() + H->rranks.size());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSHaloGetPath(GSHalo H, GSHaloPath *path, const char **why)
{
  PetscFunctionBegin;
  *path = H->sh ? GS_HALO_PATH_SHARED : H->devicempi ? GS_HALO_PATH_DEVICE_MPI : GS_HALO_PATH_HOST_MPI;
  *why  = H->why.c_str();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The buffers MPI reads and writes: the device views where it takes them, else their pinned host twins. The forward
   exchange sends from *owned and receives the ghosts into *ghost; the reverse one goes the other way. */
static void MessageBuffers(GSHalo H, PetscScalar **owned, PetscScalar **ghost)
{
  *owned = H->devicempi ? H->dsend.data() : H->hsend.data();
  *ghost = H->devicempi ? H->dghost.data() : H->hghost.data();
}

/* One direction of the shared path's exchange: the processes this one writes into, whose "free" it waits for, and
   those that write into it, whose "done" it waits for; the tags and this process's events of both. Requests of
   S.reqs: [0, |to|) the "free" of to, [|to|, |to| + |from|) ours to from, [|to| + |from|, |to| + 2 |from|) the "done"
   of from, then ours to to. */
struct Direction {
  const std::vector<PetscMPIInt> &to, &from;
  int                             tfree, tdone, efree, edone;
  const std::vector<Event>       &tofree, &fromdone; /* the events of to's "free" and of from's "done" */
};

/* Forward: the owners write the ghosts' values; reverse (MatMultTranspose()): each process writes its ghosts' products
   into their owners' send entries */
static Direction Forward(GSHalo H)
{
  return {H->sranks, H->rranks, TAG_FFREE, TAG_FDONE, SharedPath::FFREE, SharedPath::FDONE, H->sh->sffree, H->sh->rfdone};
}

static Direction Reverse(GSHalo H)
{
  return {H->rranks, H->sranks, TAG_RFREE, TAG_RDONE, SharedPath::RFREE, SharedPath::RDONE, H->sh->rrfree, H->sh->srdone};
}

/* An empty message to each of ranks with tag (rq: their requests), after recording this process's event on the
   stream (a device) or making its writes visible (host backends) */
static PetscErrorCode Notify(SharedPath &S, MPI_Comm comm, const std::vector<PetscMPIInt> &ranks, int tag, int event, MPI_Request *rq)
{
  PetscFunctionBegin;
  if (ranks.empty()) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(GS_HALO_IPC)
  GSCallKokkos(ThrowIfFailed(cudaEventRecord(S.ev[event], Exec().cuda_stream()), "cudaEventRecord()"));
#else
  (void)event;
  PetscCallMPI(MPI_Win_sync(S.win));
#endif
  for (size_t i = 0; i < ranks.size(); i++) PetscCallMPI(MPI_Isend(&S.token, 0, MPI_INT, ranks[i], tag, comm, &rq[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Expect(SharedPath &S, MPI_Comm comm, const std::vector<PetscMPIInt> &ranks, int tag, MPI_Request *rq)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < ranks.size(); i++) PetscCallMPI(MPI_Irecv(&S.token, 0, MPI_INT, ranks[i], tag, comm, &rq[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the messages rq[0..n) arrived: the stream waits for the events they announce (a device), or the host's view
   of the shared memory is made current (host backends) */
static PetscErrorCode Arrived(SharedPath &S, MPI_Request *rq, size_t n, const std::vector<Event> &events)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Waitall((int)n, rq, MPI_STATUSES_IGNORE));
#if defined(GS_HALO_IPC)
  for (auto e : events) GSCallKokkos(ThrowIfFailed(cudaStreamWaitEvent(Exec().cuda_stream(), e, 0), "cudaStreamWaitEvent()"));
#else
  (void)events;
  PetscCallMPI(MPI_Win_sync(S.win));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first half of an exchange: "free" to the writers; once the processes written into have said theirs, the
   writes by put (a launch, or none) and "done". The host waits here until those processes reach their own start. */
template <class Put> static PetscErrorCode SharedStart(GSHalo H, const Direction &d, const Put &put)
{
  SharedPath  &S  = *H->sh;
  const size_t nt = d.to.size(), nf = d.from.size();
  MPI_Request *rq = S.reqs.data();

  PetscFunctionBegin;
  PetscCall(Expect(S, H->comm, d.to, d.tfree, rq));
  PetscCall(Expect(S, H->comm, d.from, d.tdone, rq + nt + nf));
  PetscCall(Notify(S, H->comm, d.from, d.tfree, d.efree, rq + nt));
  if (nt) {
    PetscCall(Arrived(S, rq, nt, d.tofree));
    PetscCall(put());
    PetscCall(Notify(S, H->comm, d.to, d.tdone, d.edone, rq + nt + 2 * nf));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The second half: the writers' "done", and our own messages sent */
static PetscErrorCode SharedFinish(GSHalo H, const Direction &d)
{
  SharedPath  &S  = *H->sh;
  const size_t nt = d.to.size(), nf = d.from.size();
  MPI_Request *rq = S.reqs.data();

  PetscFunctionBegin;
  PetscCall(Arrived(S, rq + nt + nf, nf, d.fromdone));
  if (nf) PetscCallMPI(MPI_Waitall((int)nf, rq + nt, MPI_STATUSES_IGNORE));
  if (nt) PetscCallMPI(MPI_Waitall((int)nt, rq + nt + 2 * nf, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The forward exchange's writes: the entries sent (scaled by scale where it is not empty) into the receivers' ghosts */
static PetscErrorCode SharedBegin(GSHalo H, const DView<PetscScalar> &x, const DView<PetscScalar> &scale, PetscInt *launches)
{
  PetscFunctionBegin;
  PetscCall(SharedStart(H, Forward(H), [&]() -> PetscErrorCode {
    const size_t                ns     = H->sidx.extent(0);
    const DView<PetscInt>       idx    = H->sidx;
    const DView<std::uintptr_t> dst    = H->sh->fdst;
    const DView<PetscScalar>    d      = scale;
    const bool                  scaled = d.extent(0) > 0;
    if (ns) {
      GSCallKokkos(Kokkos::parallel_for(
          "GPUStream::HaloPut", RangePol(0, ns), KOKKOS_LAMBDA(const size_t k) { *(PetscScalar *)dst(k) = scaled ? d(idx(k)) * x(idx(k)) : x(idx(k)); }));
      *launches = 1;
    }
    return PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reverse exchange's writes: this process's ghosts into their owners' send entries, then their arrival */
static PetscErrorCode SharedReverse(GSHalo H)
{
  const Direction d = Reverse(H);

  PetscFunctionBegin;
  PetscCall(SharedStart(H, d, [&]() -> PetscErrorCode {
    const size_t                ng  = H->dghost.extent(0);
    const DView<std::uintptr_t> dst = H->sh->rdst;
    const DView<PetscScalar>    g   = H->dghost;
    if (ng)
      GSCallKokkos(Kokkos::parallel_for(
          "GPUStream::HaloPutBack", RangePol(0, ng), KOKKOS_LAMBDA(const size_t k) { *(PetscScalar *)dst(k) = g(k); }));
    return PETSC_SUCCESS;
  }));
  PetscCall(SharedFinish(H, d));
  PetscFunctionReturn(PETSC_SUCCESS);
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
  if (H->sh) {
    PetscCall(SharedBegin(H, x, scale, launches));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  MessageBuffers(H, &send, &recv);
  if (!H->devicempi)
    for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], TAG_FORWARD, H->comm, &H->reqs[i]));
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
    for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], TAG_FORWARD, H->comm, &H->reqs[i]));
  }
  for (size_t i = 0; i < H->sranks.size(); i++) PetscCallMPI(MPI_Isend(send + H->sdispls[i], H->scounts[i], MPIU_SCALAR, H->sranks[i], TAG_FORWARD, H->comm, &H->reqs[nr + i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode gpustream::HaloEnd(GSHalo H)
{
  PetscFunctionBegin;
  if (H->sh) {
    PetscCall(SharedFinish(H, Forward(H)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
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
  if (H->sh)
    PetscCall(SharedReverse(H));
  else {
    MessageBuffers(H, &recv, &send);
    if (H->devicempi)
      GSCallKokkos(FenceAll()); /* the ghosts' product is done before MPI reads it */
    else if (ng) {
      GSCallKokkos(SyncCopy(H->hghost, H->dghost));
      if (OnDevice()) PetscCall(PetscLogGpuToCpu((PetscLogDouble)(ng * sizeof(PetscScalar))));
    }
    for (int i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(recv + H->sdispls[i], H->scounts[i], MPIU_SCALAR, H->sranks[i], TAG_REVERSE, H->comm, &H->reqs[i]));
    for (size_t i = 0; i < H->rranks.size(); i++) PetscCallMPI(MPI_Isend(send + H->rdispls[i], H->rcounts[i], MPIU_SCALAR, H->rranks[i], TAG_REVERSE, H->comm, &H->reqs[nr + i]));
    if (!H->reqs.empty()) PetscCallMPI(MPI_Waitall((int)H->reqs.size(), H->reqs.data(), MPI_STATUSES_IGNORE));
  }
  if (ns) {
    if (!H->devicempi && !H->sh) {
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
