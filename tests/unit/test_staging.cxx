/* The pinned-staging engine (src/sys/stager.hpp) against a host twin of its device calls: a "device" of host memory
   and a stream that runs its copies only when an event after them is waited for (or at the end), in the order they
   were queued, as a CUDA stream does. Copies whose buffers the engine reused too early, a chunk copied twice or not at
   all, a lane left waiting (a hang, caught by the test's timeout), or data read back before its transfer ran all show
   up as differences from the source. Random sizes, thread counts and chunk sizes, the chunks of a job growing the
   lanes' buffers. */
#include "stager.hpp"

#include <cstdio>
#include <deque>
#include <functional>
#include <random>
#include <vector>

namespace
{
struct FakeStream {
  std::mutex                        m;
  std::deque<std::function<void()>> q; /* queued copies, not run yet */
  long                              queued = 0, done = 0;
  void                              RunTo(long pos) /* with m held */
  {
    while (done < pos) {
      q.front()();
      q.pop_front();
      done++;
    }
  }
};

struct FakeEvent {
  FakeStream *s   = nullptr;
  long        pos = 0;
};

int allocs = 0; /* pinned buffers held */

struct HostAPI {
  using Error                    = int;
  using Event                    = FakeEvent *;
  using Stream                   = FakeStream *;
  static constexpr Error Success = 0;
  static Error           EventCreate(Event *e)
  {
    *e = new FakeEvent;
    return 0;
  }
  static void EventDestroy(Event e)
  {
    delete e;
  }
  static Error EventSync(Event e)
  {
    if (!e->s) return 0; /* never recorded */
    std::lock_guard<std::mutex> l(e->s->m);
    e->s->RunTo(e->pos);
    return 0;
  }
  static Error EventRecord(Event e, Stream s)
  {
    std::lock_guard<std::mutex> l(s->m);
    e->s   = s;
    e->pos = s->queued;
    return 0;
  }
  static Error HostAlloc(void **p, size_t n)
  {
    *p = std::malloc(n);
    if (*p) allocs++;
    return *p ? 0 : 2;
  }
  static void HostFree(void *p)
  {
    if (p) allocs--;
    std::free(p);
  }
  static Error SetDevice(int)
  {
    return 0;
  }
  static Error Queue(void *d, const void *h, size_t n, Stream s)
  {
    std::lock_guard<std::mutex> l(s->m);
    s->q.push_back([=] { std::memcpy(d, h, n); });
    s->queued++;
    return 0;
  }
  static Error ToDevice(void *d, const void *h, size_t n, Stream s)
  {
    return Queue(d, h, n, s);
  }
  static Error ToHost(void *h, const void *d, size_t n, Stream s)
  {
    return Queue(h, d, n, s);
  }
};

using namespace gpustream::staging;

int  passed = 0, failed = 0;
void Check(bool ok, const std::string &what)
{
  if (ok)
    passed++;
  else {
    failed++;
    std::printf("not ok %s\n", what.c_str());
  }
}
} // namespace

int main()
{
  std::mt19937 rng(7);
  {
    Stager<HostAPI> st;
    FakeStream      stream;
    for (int rep = 0; rep < 120; rep++) {
      const size_t        n       = 1 + rng() % (rep % 3 == 0 ? 3000000 : 200000); /* doubles */
      const int           threads = 1 + (int)(rng() % 9);
      const size_t        bytes   = n * sizeof(double);
      std::vector<double> h(n), d(n, -1), back(n, -2);
      for (auto &x : h) x = (double)rng();
      Job<HostAPI> job;
      job.todevice          = true;
      job.dev               = (char *)d.data();
      job.host              = (char *)h.data();
      job.bytes             = bytes;
      job.chunk             = rep % 5 == 4 ? MinChunk : ChunkBytes(bytes, threads); /* small chunks: many per lane */
      job.lanes             = Lanes(bytes, job.chunk, threads);
      job.device            = 0;
      job.stream            = &stream;
      const std::string tag = " n=" + std::to_string(n) + " lanes=" + std::to_string(job.lanes) + " chunk=" + std::to_string(job.chunk);
      Check(st.Run(job) == 0, "to the device" + tag);
      {
        std::lock_guard<std::mutex> l(stream.m); /* the stream's work, then the "device" is read */
        stream.RunTo(stream.queued);
      }
      Check(std::memcmp(d.data(), h.data(), bytes) == 0, "device array equals the host's" + tag);
      job.todevice = false;
      job.host     = (char *)back.data();
      Check(st.Run(job) == 0, "to the host" + tag);
      Check(std::memcmp(back.data(), h.data(), bytes) == 0, "host array equals the device's when the copy returns" + tag);
      Check(job.lanes >= 1 && job.lanes <= threads && (size_t)(job.lanes - 1) * job.chunk < bytes, "at most one lane per thread, each with a chunk" + tag);
    }
    st.Stop();
  }
  Check(allocs == 0, "every pinned buffer freed");
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
