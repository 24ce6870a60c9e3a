/* Host arrays to and from device memory through pinned staging (kokkosimpl.hpp's HostToDevice() and DeviceToHost()).
   From pageable memory the driver stages a copy itself, through one buffer and one thread, well below the pinned
   rate. Here a few threads each copy their chunks of the array into pinned buffers of their own and queue the
   transfers on the plugin's stream: while one chunk crosses PCIe, the next ones are being copied on the host. */
#include "kokkosimpl.hpp"
#include <cstdlib>

#if defined(KOKKOS_ENABLE_CUDA)
#  include <atomic>
#  include <condition_variable>
#  include <mutex>
#  include <thread>
#  include <vector>
#endif

namespace gpustream
{
static int gs_staging_threads = -1; /* -gpustream_staging_threads; -1: not set yet */

#if defined(KOKKOS_ENABLE_CUDA)
namespace
{
constexpr int    Slots    = 2;       /* pinned chunks per thread: one is filled (or emptied) while the other crosses */
constexpr size_t MinChunk = 1 << 18; /* bytes; smaller chunks cost more in calls than they gain in overlap */
constexpr size_t MaxChunk = 1 << 22;

/* One thread's pinned buffers, each with the event of its last transfer */
struct Lane {
  char       *buf[Slots] = {};
  cudaEvent_t ev[Slots]  = {};
  size_t      size       = 0;
};

/* The copy of one call: chunks c = lane, lane + lanes, ... of bytes at dev and host */
struct Job {
  bool         todevice;
  char        *dev, *host;
  size_t       bytes, chunk;
  int          lanes, device;
  cudaStream_t stream;
};

class Stager {
public:
  ~Stager()
  {
    Stop();
  }

  /* Runs the job on lanes threads (the caller's among them) and returns the first CUDA error any met */
  cudaError_t Run(const Job &job)
  {
    cudaError_t e = Reserve(job.lanes, job.chunk);
    if (e != cudaSuccess) return e;
    error.store(cudaSuccess);
    {
      std::unique_lock<std::mutex> l(m);
      current = job;
      left    = job.lanes - 1;
      gen++;
    }
    go.notify_all();
    Work(job, 0);
    std::unique_lock<std::mutex> l(m);
    done.wait(l, [&] { return left == 0; });
    return error.load();
  }

  void Stop()
  {
    {
      std::unique_lock<std::mutex> l(m);
      quit = true;
    }
    go.notify_all();
    for (auto &t : threads) t.join();
    threads.clear();
    for (auto &L : lanes)
      for (int s = 0; s < Slots; s++) {
        if (L.buf[s]) (void)cudaFreeHost(L.buf[s]);
        if (L.ev[s]) (void)cudaEventDestroy(L.ev[s]);
      }
    lanes.clear();
    quit = false;
  }

private:
  std::vector<Lane>        lanes;
  std::vector<std::thread> threads; /* thread i runs lane i + 1 */
  std::mutex               m;
  std::condition_variable  go, done;
  Job                      current{};
  unsigned                 gen  = 0;
  int                      left = 0;
  bool                     quit = false;
  std::atomic<cudaError_t> error{cudaSuccess};

  /* lanes of chunk bytes, and their threads; the buffers of a lane grow to the largest chunk seen */
  cudaError_t Reserve(int n, size_t chunk)
  {
    if ((int)lanes.size() < n) {
      std::unique_lock<std::mutex> l(m); /* the threads read lanes only inside a job */
      lanes.resize(n);
    }
    for (int i = 0; i < n; i++) {
      Lane &L = lanes[i];
      for (int s = 0; s < Slots; s++) {
        if (!L.ev[s]) {
          const cudaError_t e = cudaEventCreateWithFlags(&L.ev[s], cudaEventDisableTiming);
          if (e != cudaSuccess) return e;
        }
        if (L.size < chunk) {
          if (L.buf[s]) {
            const cudaError_t e = cudaEventSynchronize(L.ev[s]); /* a transfer from it may still run */
            if (e != cudaSuccess) return e;
            (void)cudaFreeHost(L.buf[s]);
            L.buf[s] = nullptr;
          }
          const cudaError_t e = cudaHostAlloc((void **)&L.buf[s], chunk, cudaHostAllocDefault);
          if (e != cudaSuccess) {
            L.buf[s] = nullptr;
            for (int r = 0; r < s; r++) { /* keep the lane consistent: all its buffers of its size, or none */
              (void)cudaFreeHost(L.buf[r]);
              L.buf[r] = nullptr;
            }
            L.size = 0;
            return e;
          }
        }
      }
      L.size = std::max(L.size, chunk);
    }
    while ((int)threads.size() < n - 1) { /* a new thread starts from the generation before the job about to run */
      const int      id   = (int)threads.size() + 1;
      const unsigned seen = gen;
      threads.emplace_back([this, id, seen] { Loop(id, seen); });
    }
    return cudaSuccess;
  }

  void Loop(int id, unsigned seen)
  {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> l(m);
        go.wait(l, [&] { return quit || gen != seen; });
        if (quit) return;
        seen = gen;
        job  = current;
      }
      if (id < job.lanes) {
        Work(job, id);
        std::unique_lock<std::mutex> l(m);
        if (--left == 0) done.notify_one();
      }
    }
  }

  void Fail(cudaError_t e)
  {
    cudaError_t none = cudaSuccess;
    (void)error.compare_exchange_strong(none, e);
  }

  /* Lane id's chunks: to the device, fill a buffer once its previous transfer is over and queue its transfer; to the
     host, queue a chunk's transfer, then empty the buffer of the one before it */
  void Work(const Job &job, int id)
  {
    Lane       &L       = lanes[id];
    const auto  len     = [&](size_t c) { return std::min(job.chunk, job.bytes - c * job.chunk); };
    size_t      pending = (size_t)-1;
    int         s       = 0;
    cudaError_t e       = cudaSetDevice(job.device);
    for (size_t c = id; e == cudaSuccess && c * job.chunk < job.bytes && error.load() == cudaSuccess; c += job.lanes, s ^= 1) {
      const size_t off = c * job.chunk;
      if (job.todevice) {
        e = cudaEventSynchronize(L.ev[s]);
        if (e != cudaSuccess) break;
        std::memcpy(L.buf[s], job.host + off, len(c));
        e = cudaMemcpyAsync(job.dev + off, L.buf[s], len(c), cudaMemcpyHostToDevice, job.stream);
        if (e == cudaSuccess) e = cudaEventRecord(L.ev[s], job.stream);
      } else {
        e = cudaMemcpyAsync(L.buf[s], job.dev + off, len(c), cudaMemcpyDeviceToHost, job.stream);
        if (e == cudaSuccess) e = cudaEventRecord(L.ev[s], job.stream);
        if (e == cudaSuccess && pending != (size_t)-1) e = Drain(job, L, s ^ 1, pending);
        pending = c;
      }
    }
    if (e == cudaSuccess && !job.todevice && pending != (size_t)-1) e = Drain(job, L, s ^ 1, pending);
    if (e != cudaSuccess) Fail(e);
  }

  static cudaError_t Drain(const Job &job, Lane &L, int s, size_t c)
  {
    const cudaError_t e = cudaEventSynchronize(L.ev[s]);
    if (e == cudaSuccess) std::memcpy(job.host + c * job.chunk, L.buf[s], std::min(job.chunk, job.bytes - c * job.chunk));
    return e;
  }
};

Stager *gs_stager = nullptr;

PetscErrorCode StagerDestroy(void)
{
  PetscFunctionBegin;
  delete gs_stager;
  gs_stager = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Chunks of about 1/8 of a lane's share (the first chunk's host copy is not overlapped), within the bounds above */
PetscErrorCode Staged(bool todevice, void *dev, void *host, size_t bytes)
{
  Job          job;
  const size_t share = bytes / (size_t)gs_staging_threads;

  PetscFunctionBegin;
  job.todevice = todevice;
  job.dev      = (char *)dev;
  job.host     = (char *)host;
  job.bytes    = bytes;
  job.chunk    = std::min(MaxChunk, std::max(MinChunk, (share / 8 + 4095) & ~(size_t)4095));
  job.lanes    = (int)std::min<size_t>((size_t)gs_staging_threads, (bytes + job.chunk - 1) / job.chunk);
  job.stream   = Exec().cuda_stream();
  PetscCheck(cudaGetDevice(&job.device) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "cudaGetDevice() failed");
  if (!gs_stager) {
    try {
      gs_stager = new Stager;
    } catch (const std::exception &x) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Pinned staging: %s", x.what());
    }
    PetscCall(PetscRegisterFinalize(StagerDestroy));
  }
  {
    cudaError_t e = cudaSuccess;
    try {
      e = gs_stager->Run(job);
    } catch (const std::exception &x) { /* a thread that could not start */
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "Pinned staging: %s", x.what());
    }
    PetscCheck(e == cudaSuccess, PETSC_COMM_SELF, e == cudaErrorMemoryAllocation ? PETSC_ERR_MEM : PETSC_ERR_GPU, "Copy of %zu bytes %s through pinned staging failed: %s (%s)", bytes, todevice ? "to the device" : "from the device",
               cudaGetErrorName(e), cudaGetErrorString(e));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace
#endif

/* -gpustream_staging_threads n: threads that stage copies between host arrays and the device through pinned memory,
   at most this process's share of the cores of its node (the ranks on the node as the MPI launcher tells them: Open
   MPI's and MPICH's variables); 0, the default, leaves the copies to the driver (pageable memory). Read at first use,
   which is not collective. */
PetscErrorCode StagingThreads(int *n)
{
  PetscFunctionBegin;
  if (gs_staging_threads < 0) {
    PetscInt t = 0;
    PetscCall(GSOptionsCheckValue(NULL, NULL, "-gpustream_staging_threads", GS_OPTION_INT, NULL, 0));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-gpustream_staging_threads", &t, NULL));
    PetscCheck(t >= 0 && t <= 256, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpustream_staging_threads %" PetscInt_FMT " must be in 0..256", t);
#if defined(KOKKOS_ENABLE_CUDA)
    if (t > 1) {
      const int   cores = (int)std::thread::hardware_concurrency();
      const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
      int         ranks = 1;
      if (!local) local = getenv("MPI_LOCALNRANKS");
      if (local) ranks = std::max(1, atoi(local));
      if (cores > 0) t = std::max(1, std::min((int)t, cores / ranks));
    }
#endif
    gs_staging_threads = (int)t;
  }
  *n = gs_staging_threads;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode HostToDevice(PetscScalar *d, const PetscScalar *h, size_t n)
{
  int t;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (OnDevice()) gs_host_copies++;
  PetscCall(StagingThreads(&t));
#if defined(KOKKOS_ENABLE_CUDA)
  if (t > 0 && n * sizeof(PetscScalar) >= StagingMinBytes) {
    PetscCall(Staged(true, d, const_cast<PetscScalar *>(h), n * sizeof(PetscScalar)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  GSCallKokkos(SyncCopy(DView<PetscScalar>(d, n), HostUnmanaged<const PetscScalar>(h, n)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DeviceToHost(PetscScalar *h, const PetscScalar *d, size_t n)
{
  int t;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (OnDevice()) gs_host_copies++;
  PetscCall(StagingThreads(&t));
#if defined(KOKKOS_ENABLE_CUDA)
  if (t > 0 && n * sizeof(PetscScalar) >= StagingMinBytes) {
    PetscCall(Staged(false, const_cast<PetscScalar *>(d), h, n * sizeof(PetscScalar)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  GSCallKokkos(SyncCopy(HostUnmanaged<PetscScalar>(h, n), Kokkos::View<const PetscScalar *, Mem, Kokkos::MemoryUnmanaged>(d, n)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace gpustream

PetscLogDouble gs_host_copies = 0;
