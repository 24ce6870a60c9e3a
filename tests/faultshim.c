/* Fault injection for the GPU tests (tests/faultinject.py), preloaded with LD_PRELOAD into a program whose CUDA
   runtime is a shared library: the Nth call of one kind fails as a real fault would.
     launch: a kernel launch (cudaLaunchKernel() and the like) fails and the kernel does not run:
             cudaErrorLaunchOutOfResources, which cudaGetLastError() reports once (the context stays usable)
     fault:  a kernel faults as it runs (an illegal address): its launch succeeds, and from then on every
             synchronization, copy and launch fails with cudaErrorIllegalAddress, which cudaGetLastError() keeps
             reporting, as the CUDA runtime does after such a fault
     copy:   cudaMemcpy(), cudaMemcpyAsync(), cudaMemsetAsync(): nothing is copied; cudaErrorInvalidValue
   Synchronizations (cudaEventSynchronize(), cudaStreamSynchronize(), cudaDeviceSynchronize()) are counted as "sync".
   GS_FAULT_KIND=launch|fault|copy and GS_FAULT_AT=N (1 for the first call); without GS_FAULT_AT nothing fails. The
   injection prints "faultshim: <kind> <N> failed" on stdout; GS_FAULT_COUNTS=file: each process that made CUDA calls
   appends its counts there at exit ("launch L copy C sync S"; MPI's helper processes make none). CUDA 12 and later
   launch the kernels of nvcc's <<<>>> through __cudaLaunchKernel(), earlier ones through cudaLaunchKernel(). */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LAUNCH, COPY, SYNC, FAULT, NKINDS };
static const char *const kinds[NKINDS] = {"launch", "copy", "sync", "fault"};
static long              calls[NKINDS];
static int               target = -1;
static long              at     = 0;
static cudaError_t       pending; /* the injected error, until cudaGetLastError() */
static cudaError_t       sticky;  /* after a fault: every call's error */

static void *Real(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "faultshim: %s not found\n", name);
    abort();
  }
  return f;
}

static void Report(void)
{
  const char *file = getenv("GS_FAULT_COUNTS");
  FILE       *f;
  if (!file || calls[LAUNCH] + calls[COPY] + calls[SYNC] == 0 || !(f = fopen(file, "a"))) return;
  fprintf(f, "launch %ld copy %ld sync %ld fault %ld\n", calls[LAUNCH], calls[COPY], calls[SYNC], calls[LAUNCH]);
  fclose(f);
}

__attribute__((constructor)) static void Init(void)
{
  const char *k = getenv("GS_FAULT_KIND"), *n = getenv("GS_FAULT_AT");
  for (int i = 0; k && i < NKINDS; i++)
    if (!strcmp(k, kinds[i])) target = i;
  if (n) at = atol(n);
  atexit(Report);
}

/* Whether this call of kind k fails (and then the error it leaves): the Nth of the kind asked for, or any call after a
   fault. A fault is the Nth launch, which itself succeeds. */
static int Hit(int k, cudaError_t e)
{
  ++calls[k];
  if (sticky) return 1;
  if (k == LAUNCH && target == FAULT && calls[k] == at) {
    sticky = cudaErrorIllegalAddress;
    printf("faultshim: fault %ld failed\n", at);
    fflush(stdout);
    return 0;
  }
  if (calls[k] != at || k != target) return 0;
  pending = e;
  printf("faultshim: %s %ld failed\n", kinds[k], at);
  fflush(stdout);
  return 1;
}

/* The error a failing call returns: a fault's, or its own */
#define FAIL(e) return sticky ? sticky : (e)

/* the next definition of name (the CUDA runtime's), looked up once */
#define REAL(name)                                                                                                                                                                                                                                       \
  static __typeof__(&name) real_##name;                                                                                                                                                                                                                  \
  if (!real_##name) real_##name = (__typeof__(&name))Real(#name)

cudaError_t cudaGetLastError(void)
{
  REAL(cudaGetLastError);
  cudaError_t e = real_cudaGetLastError();
  if (e == cudaSuccess) e = sticky ? sticky : pending;
  pending = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void)
{
  REAL(cudaPeekAtLastError);
  const cudaError_t e = real_cudaPeekAtLastError();
  return e == cudaSuccess ? (sticky ? sticky : pending) : e;
}

cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
  REAL(cudaLaunchKernel);
  if (Hit(LAUNCH, cudaErrorLaunchOutOfResources)) FAIL(cudaErrorLaunchOutOfResources);
  return real_cudaLaunchKernel(f, g, b, args, shmem, s);
}

/* the kernel handle of __cudaGetKernel(), passed through */
cudaError_t __cudaLaunchKernel(void *k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
  REAL(__cudaLaunchKernel);
  if (Hit(LAUNCH, cudaErrorLaunchOutOfResources)) FAIL(cudaErrorLaunchOutOfResources);
  return real___cudaLaunchKernel(k, g, b, args, shmem, s);
}

#if CUDART_VERSION >= 11080
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f, void **args)
{
  REAL(cudaLaunchKernelExC);
  if (Hit(LAUNCH, cudaErrorLaunchOutOfResources)) FAIL(cudaErrorLaunchOutOfResources);
  return real_cudaLaunchKernelExC(c, f, args);
}
#endif

cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
  REAL(cudaMemcpy);
  if (Hit(COPY, cudaErrorInvalidValue)) FAIL(cudaErrorInvalidValue);
  return real_cudaMemcpy(d, s, n, k);
}

cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
  REAL(cudaMemcpyAsync);
  if (Hit(COPY, cudaErrorInvalidValue)) FAIL(cudaErrorInvalidValue);
  return real_cudaMemcpyAsync(d, s, n, k, st);
}

cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
  REAL(cudaMemsetAsync);
  if (Hit(COPY, cudaErrorInvalidValue)) FAIL(cudaErrorInvalidValue);
  return real_cudaMemsetAsync(d, v, n, st);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
  REAL(cudaEventSynchronize);
  if (Hit(SYNC, cudaErrorIllegalAddress)) FAIL(cudaErrorIllegalAddress);
  return real_cudaEventSynchronize(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
  REAL(cudaStreamSynchronize);
  if (Hit(SYNC, cudaErrorIllegalAddress)) FAIL(cudaErrorIllegalAddress);
  return real_cudaStreamSynchronize(s);
}

cudaError_t cudaDeviceSynchronize(void)
{
  REAL(cudaDeviceSynchronize);
  if (Hit(SYNC, cudaErrorIllegalAddress)) FAIL(cudaErrorIllegalAddress);
  return real_cudaDeviceSynchronize();
}
