// Hardware limits measured in the same run as the benchmarks (plain CUDA, built on the GPU machine with its nvcc):
//   d2d_copy_GBps      device-to-device copy, bytes read + written over time (cudaMemcpy, 1 GiB)
//   h2d_pinned_GBps    pinned host to device (256 MiB)
//   launch_readback_us an empty kernel plus an 8-byte device-to-host copy, the floor of one fused iteration's sync
//   chain_us, chain_pinned_us  one of a chain of one-block kernels that each store four doubles to device memory, or
//                      to pinned host memory as the device-scalar finishes do: what such a store adds to a kernel's end
//   host_copy_GBps_tN  memcpy from pageable to pinned host memory by N threads at once (256 MiB in equal parts),
//                      bytes copied over time: what pinned staging of a host vector can reach at most
// Prints CSV: name,value
#include <cstring>
#include <thread>
#include <vector>

#include "cudacheck.h"

__global__ void tiny(double *p, int k)
{
  if (threadIdx.x < k) p[threadIdx.x] += 1.0;
}

int main()
{
  const size_t big = size_t(1) << 30, h2d = size_t(256) << 20;
  char        *x, *y, *h;
  double      *d, *d4, *hs, hv;
  CK(cudaMalloc(&x, big));
  CK(cudaMalloc(&y, big));
  CK(cudaMemset(x, 1, big));
  CK(cudaMallocHost(&h, h2d));
  std::fill(h, h + h2d, 3);
  CK(cudaMalloc(&d, sizeof(double)));
  CK(cudaMemset(d, 0, sizeof(double)));
  const double tc = 1e-3 * MedianUs(20, [&] { CK(cudaMemcpy(y, x, big, cudaMemcpyDeviceToDevice)); });
  const double th = 1e-3 * MedianUs(10, [&] { CK(cudaMemcpy(x, h, h2d, cudaMemcpyHostToDevice)); });
  const double tl = 1e-3 * MedianUs(200, [&] {
                      tiny<<<1, 32>>>(d, 1);
                      CK(cudaGetLastError());
                      CK(cudaMemcpy(&hv, d, sizeof(double), cudaMemcpyDeviceToHost));
                    });
  CK(cudaMallocHost(&hs, 4 * sizeof(double)));
  std::fill(hs, hs + 4, 0.0);
  const int  chain   = 200;
  const auto chained = [&](double *q) {
    for (int i = 0; i < chain; i++) tiny<<<1, 32>>>(q, 4);
    CK(cudaGetLastError());
  };
  CK(cudaMalloc(&d4, 4 * sizeof(double)));
  CK(cudaMemset(d4, 0, 4 * sizeof(double)));
  const double      tk = 1e-3 * MedianUs(20, [&] { chained(d4); }) / chain;
  const double      tp = 1e-3 * MedianUs(20, [&] { chained(hs); }) / chain;
  std::vector<char> pg(h2d, 5);
  const auto        hostcopy = [&](int t) {
    std::vector<std::thread> th;
    const size_t             part = h2d / t;
    for (int i = 0; i < t; i++) th.emplace_back([&, i] { std::memcpy(h + i * part, pg.data() + i * part, part); });
    for (auto &w : th) w.join();
  };
  const int nthreads[] = {1, 4, 8, 16};
  double    thc[4];
  for (int k = 0; k < 4; k++) thc[k] = 1e-3 * MedianUs(10, [&] { hostcopy(nthreads[k]); });
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device,%s\n", p.name);
  std::printf("d2d_copy_GBps,%.1f\n", 2.0 * big / (tc * 1e-3) / 1e9);
  std::printf("h2d_pinned_GBps,%.1f\n", double(h2d) / (th * 1e-3) / 1e9);
  std::printf("launch_readback_us,%.2f\n", tl * 1e3);
  std::printf("chain_us,%.2f\n", tk * 1e3);
  std::printf("chain_pinned_us,%.2f\n", tp * 1e3);
  for (int k = 0; k < 4; k++) std::printf("host_copy_GBps_t%d,%.1f\n", nthreads[k], double(h2d) / (thc[k] * 1e-3) / 1e9);
  return 0;
}
