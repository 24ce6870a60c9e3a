/* The engine of pinned staging (staging.kokkos.cxx): a few threads each copy chunks of a host array into pinned
   buffers of their own and queue the transfers on one stream, so that while one chunk crosses to the device the next
   ones are being copied on the host (and the reverse towards the host). Its device calls come from API: CUDA's in the
   plugin, a host twin with a deferred stream in the unit tests (tests/unit/test_staging.cxx). API provides the types
   Error, Event and Stream, Success, and EventCreate, EventDestroy, EventSync, EventRecord, HostAlloc, HostFree,
   SetDevice, ToDevice and ToHost (queued copies on a stream). Plain C++, no Kokkos and no PETSc. */
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace gpustream
{
namespace staging
{
constexpr int    Slots    = 2;       /* pinned chunks per thread: one is filled (or emptied) while the other crosses */
constexpr size_t MinChunk = 1 << 18; /* bytes; smaller chunks cost more in calls than they gain in overlap */
constexpr size_t MaxChunk = 1 << 22;

/* One thread's pinned buffers, each with the event of its last transfer */
template <class API> struct Lane {
  char               *buf[Slots] = {};
  typename API::Event ev[Slots]  = {};
  size_t              size       = 0;
};

/* The copy of one call: chunks c = lane, lane + lanes, ... of bytes at dev and host */
template <class API> struct Job {
  bool                 todevice;
  char                *dev, *host;
  size_t               bytes, chunk;
  int                  lanes, device;
  typename API::Stream stream;
};

template <class API> class Stager {
public:
  ~Stager()
  {
    Stop();
  }

  /* Runs the job on lanes threads (the caller's among them) and returns the first CUDA error any met */
  typename API::Error Run(const Job<API> &job)
  {
    typename API::Error e = Reserve(job.lanes, job.chunk);
    if (e != API::Success) return e;
    error.store(API::Success);
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
        if (L.buf[s]) API::HostFree(L.buf[s]);
        if (L.ev[s]) API::EventDestroy(L.ev[s]);
      }
    lanes.clear();
    quit = false;
  }

private:
  std::vector<Lane<API>>           lanes;
  std::vector<std::thread>         threads; /* thread i runs lane i + 1 */
  std::mutex                       m;
  std::condition_variable          go, done;
  Job<API>                         current{};
  unsigned                         gen  = 0;
  int                              left = 0;
  bool                             quit = false;
  std::atomic<typename API::Error> error{API::Success};

  /* lanes of chunk bytes, and their threads; the buffers of a lane grow to the largest chunk seen */
  typename API::Error Reserve(int n, size_t chunk)
  {
    if ((int)lanes.size() < n) {
      std::unique_lock<std::mutex> l(m); /* the threads read lanes only inside a job */
      lanes.resize(n);
    }
    for (int i = 0; i < n; i++) {
      Lane<API> &L = lanes[i];
      for (int s = 0; s < Slots; s++) {
        if (!L.ev[s]) {
          const typename API::Error e = API::EventCreate(&L.ev[s]);
          if (e != API::Success) return e;
        }
        if (L.size < chunk) {
          if (L.buf[s]) {
            const typename API::Error e = API::EventSync(L.ev[s]); /* a transfer from it may still run */
            if (e != API::Success) return e;
            API::HostFree(L.buf[s]);
            L.buf[s] = nullptr;
          }
          const typename API::Error e = API::HostAlloc((void **)&L.buf[s], chunk);
          if (e != API::Success) {
            L.buf[s] = nullptr;
            for (int r = 0; r < s; r++) { /* keep the lane consistent: all its buffers of its size, or none */
              API::HostFree(L.buf[r]);
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
    return API::Success;
  }

  void Loop(int id, unsigned seen)
  {
    for (;;) {
      Job<API> job;
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

  void Fail(typename API::Error e)
  {
    typename API::Error none = API::Success;
    (void)error.compare_exchange_strong(none, e);
  }

  /* Lane id's chunks: to the device, fill a buffer once its previous transfer is over and queue its transfer; to the
     host, queue a chunk's transfer, then empty the buffer of the one before it */
  void Work(const Job<API> &job, int id)
  {
    Lane<API>          &L       = lanes[id];
    const auto          len     = [&](size_t c) { return std::min(job.chunk, job.bytes - c * job.chunk); };
    size_t              pending = (size_t)-1;
    int                 s       = 0;
    typename API::Error e       = API::SetDevice(job.device);
    for (size_t c = id; e == API::Success && c * job.chunk < job.bytes && error.load() == API::Success; c += job.lanes, s ^= 1) {
      const size_t off = c * job.chunk;
      if (job.todevice) {
        e = API::EventSync(L.ev[s]);
        if (e != API::Success) break;
        std::memcpy(L.buf[s], job.host + off, len(c));
        e = API::ToDevice(job.dev + off, L.buf[s], len(c), job.stream);
        if (e == API::Success) e = API::EventRecord(L.ev[s], job.stream);
      } else {
        e = API::ToHost(L.buf[s], job.dev + off, len(c), job.stream);
        if (e == API::Success) e = API::EventRecord(L.ev[s], job.stream);
        if (e == API::Success && pending != (size_t)-1) e = Drain(job, L, s ^ 1, pending);
        pending = c;
      }
    }
    if (e == API::Success && !job.todevice && pending != (size_t)-1) e = Drain(job, L, s ^ 1, pending);
    if (e != API::Success) Fail(e);
  }

  static typename API::Error Drain(const Job<API> &job, Lane<API> &L, int s, size_t c)
  {
    const typename API::Error e = API::EventSync(L.ev[s]);
    if (e == API::Success) std::memcpy(job.host + c * job.chunk, L.buf[s], std::min(job.chunk, job.bytes - c * job.chunk));
    return e;
  }
};

/* The chunk of a copy of bytes on threads lanes: about 1/8 of a lane's share (the first chunk's host copy is not
   overlapped), within the bounds above, whole pages */
inline size_t ChunkBytes(size_t bytes, int threads)
{
  const size_t share = bytes / (size_t)std::max(1, threads);
  return std::min(MaxChunk, std::max(MinChunk, (share / 8 + 4095) & ~(size_t)4095));
}

/* The lanes a copy of bytes in chunks of chunk bytes takes, at most threads */
inline int Lanes(size_t bytes, size_t chunk, int threads)
{
  return (int)std::min<size_t>((size_t)std::max(1, threads), (bytes + chunk - 1) / chunk);
}
} // namespace staging
} // namespace gpustream
