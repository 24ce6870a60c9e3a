// What the plain-CUDA benchmark drivers share: checked CUDA calls and event-timed medians
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                                                                                                                                                                                            \
  do {                                                                                                                                                                                                                                                   \
    cudaError_t e = (x);                                                                                                                                                                                                                                 \
    if (e != cudaSuccess) {                                                                                                                                                                                                                              \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e));                                                                                                                                                             \
      std::exit(1);                                                                                                                                                                                                                                      \
    }                                                                                                                                                                                                                                                    \
  } while (0)

// cuSPARSE and cuBLAS calls, checked the same way (the drivers that use them include their headers)
#define CKS(x)                                                                                                                                                                                                                                           \
  do {                                                                                                                                                                                                                                                   \
    if ((x) != CUSPARSE_STATUS_SUCCESS) {                                                                                                                                                                                                                \
      std::fprintf(stderr, "%s:%d %s failed\n", __FILE__, __LINE__, #x);                                                                                                                                                                                 \
      std::exit(1);                                                                                                                                                                                                                                      \
    }                                                                                                                                                                                                                                                    \
  } while (0)
#define CKB(x)                                                                                                                                                                                                                                           \
  do {                                                                                                                                                                                                                                                   \
    if ((x) != CUBLAS_STATUS_SUCCESS) {                                                                                                                                                                                                                  \
      std::fprintf(stderr, "%s:%d %s failed\n", __FILE__, __LINE__, #x);                                                                                                                                                                                 \
      std::exit(1);                                                                                                                                                                                                                                      \
    }                                                                                                                                                                                                                                                    \
  } while (0)

// Median in microseconds of `reps` runs of f between two events on the default stream, after one warm-up run
template <class F> static double MedianUs(int reps, F f)
{
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t(reps);
  f();
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&t[r], a, b));
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return 1e3 * t[reps / 2];
}
