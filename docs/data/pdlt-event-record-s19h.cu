// Does a cudaEventRecord between two kernels keep the second from being launched dependent? (s19 experiment)
#include <cstdio>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(256, 5) Copy(const double *a, double *b, long n, unsigned *count, double *host)
{
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (long i = blockIdx.x * 256L + threadIdx.x; i < n; i += (long)gridDim.x * 256) b[i] = a[i] + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    __threadfence();
    if (atomicAdd(count, 1u) == gridDim.x - 1) { /* a last-team finish of about 3 us */
      long t0 = clock64();
      while (clock64() - t0 < 5000) {}
      host[0] = b[0];
      *count = 0;
    }
  }
}
int main()
{
  const long n = 1L << 22; /* 32 MB each */
  double *a, *b, *h;
  unsigned *c;
  cudaMalloc(&a, n * 8); cudaMalloc(&b, n * 8); cudaMalloc(&c, 4); cudaMemset(c, 0, 4); cudaMemset(a, 0, n * 8);
  cudaHostAlloc(&h, 64, 0);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaStream_t s; cudaStreamCreate(&s);
  cudaEvent_t e0, e1, ev[2]; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming); cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming);
  const char *names[] = {"plain", "pdl", "pdl+event each", "pdl+event every 2nd", "plain+event each"};
  for (int rep = 0; rep < 2; rep++)
    for (int mode = 0; mode < 5; mode++) {
      cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(sms * 5); cfg.blockDim = dim3(256); cfg.stream = s; cfg.attrs = at;
      cfg.numAttrs = (mode == 1 || mode == 2 || mode == 3) ? 1 : 0;
      const int its = 400;
      cudaStreamSynchronize(s);
      cudaEventRecord(e0, s);
      for (int i = 0; i < its; i++) {
        cudaLaunchKernelEx(&cfg, Copy, (const double *)(i % 2 ? b : a), i % 2 ? a : b, n, c, h);
        if (mode == 2 || mode == 4 || (mode == 3 && i % 2)) cudaEventRecord(ev[i % 2], s);
      }
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      if (rep) printf("%-22s %8.2f us a kernel\n", names[mode], 1e3 * ms / its);
    }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
