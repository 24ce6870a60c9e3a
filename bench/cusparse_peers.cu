// Peers measured in the same run as our kernels (plain CUDA, built on the GPU machine with its nvcc, cuSPARSE, cuBLAS):
//   spmv: cusparseSpMV (CSR, double, default algorithm) on the 2D 5-point Laplacian of about n rows
//   cg:   classical CG built from cusparseSpMV and cuBLAS level-1 calls (as NVIDIA's conjugateGradient sample),
//         30 iterations, no preconditioner, dot products returned to the host as a BLAS-style solver does
//   gmres: GMRES(30) built from cusparseSpMV and cuBLAS: classical Gram-Schmidt as two gemv calls on the basis
//         (one n x (m+1) column-major array), the Hessenberg column and the norm returned to the host, Givens
//         rotations and the triangular solve on the host, x = V y by gemv; one cycle of 30 iterations
// Usage: cusparse_peers N [N ...]   CSV: peer,n,nnz,us,GBps   (us: per SpMV, or per CG or GMRES iteration)
#include <cmath>
#include <cublas_v2.h>
#include <cusparse.h>
#include "cudacheck.h"

#define CKS(x) \
  do { \
    if ((x) != CUSPARSE_STATUS_SUCCESS) { \
      std::fprintf(stderr, "%s:%d %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(1); \
    } \
  } while (0)
#define CKB(x) \
  do { \
    if ((x) != CUBLAS_STATUS_SUCCESS) { \
      std::fprintf(stderr, "%s:%d %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(1); \
    } \
  } while (0)

int main(int argc, char **argv)
{
  cusparseHandle_t sp;
  cublasHandle_t   bl;
  CKS(cusparseCreate(&sp));
  CKB(cublasCreate(&bl));
  std::printf("peer,n,nnz,us,GBps\n");
  for (int a = 1; a < argc; a++) {
    const int m = (int)(std::sqrt(std::atof(argv[a])) + 0.5), n = m * m;
    std::vector<int>    ia(1, 0), ja;
    std::vector<double> va;
    for (int row = 0; row < n; row++) {
      const int i = row % m, j = row / m;
      if (j > 0) ja.push_back(row - m), va.push_back(-1);
      if (i > 0) ja.push_back(row - 1), va.push_back(-1);
      ja.push_back(row), va.push_back(4);
      if (i < m - 1) ja.push_back(row + 1), va.push_back(-1);
      if (j < m - 1) ja.push_back(row + m), va.push_back(-1);
      ia.push_back((int)ja.size());
    }
    const int nnz = (int)ja.size();
    int      *dia, *dja;
    double   *dva, *x, *y, *r, *p, *q;
    CK(cudaMalloc(&dia, sizeof(int) * (n + 1)));
    CK(cudaMalloc(&dja, sizeof(int) * nnz));
    CK(cudaMalloc(&dva, sizeof(double) * nnz));
    for (double **v : {&x, &y, &r, &p, &q}) CK(cudaMalloc(v, sizeof(double) * n));
    CK(cudaMemcpy(dia, ia.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dja, ja.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dva, va.data(), sizeof(double) * nnz, cudaMemcpyHostToDevice));
    std::vector<double> ones(n, 1.0);
    CK(cudaMemcpy(x, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(r, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));

    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t vx, vy, vp, vq;
    CKS(cusparseCreateCsr(&A, n, n, nnz, dia, dja, dva, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vx, n, x, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vy, n, y, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vp, n, p, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vq, n, q, CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    size_t       bytes = 0;
    void        *buf   = nullptr;
    CKS(cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    CK(cudaMalloc(&buf, bytes ? bytes : 1));

    // SpMV: bytes of the matrix, x read once and y written once
    const double us = MedianUs(50, [&] { CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf)); });
    const double mb = 12.0 * nnz + 4.0 * (n + 1) + 16.0 * n;
    std::printf("cusparse_spmv,%d,%d,%.2f,%.1f\n", n, nnz, us, mb / us * 1e-3);

    // classical CG, 30 iterations from x = 0, r = p = b = 1
    const int its = 30;
    auto      cg  = [&] {
      double rr, rrnew, pq;
      CK(cudaMemcpy(p, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(r, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemset(x, 0, sizeof(double) * n));
      CKB(cublasDdot(bl, n, r, 1, r, 1, &rr));
      for (int k = 0; k < its; k++) {
        CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vp, &zero, vq, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
        CKB(cublasDdot(bl, n, p, 1, q, 1, &pq));
        const double alpha = rr / pq, malpha = -alpha;
        CKB(cublasDaxpy(bl, n, &alpha, p, 1, x, 1));
        CKB(cublasDaxpy(bl, n, &malpha, q, 1, r, 1));
        CKB(cublasDdot(bl, n, r, 1, r, 1, &rrnew));
        const double beta = rrnew / rr;
        CKB(cublasDscal(bl, n, &beta, p, 1));
        CKB(cublasDaxpy(bl, n, &one, r, 1, p, 1));
        rr = rrnew;
      }
    };
    // time 30 iterations and the two setup copies, then take the copies out (timed alone)
    const double tcg   = MedianUs(9, cg);
    const double tinit = MedianUs(9, [&] {
      CK(cudaMemcpy(p, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(r, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemset(x, 0, sizeof(double) * n));
    });
    std::printf("cusparse_cublas_cg,%d,%d,%.2f,-\n", n, nnz, (tcg - tinit) / its);

    // GMRES(30), one cycle from x = 0, r = b = 1
    {
      const int            mr = 30;
      double              *V, *hd;
      cusparseDnVecDescr_t vv, vw;
      std::vector<double>  R((size_t)(mr + 1) * mr), h(mr + 1), cs(mr), sn(mr), g(mr + 1), coef(mr);
      CK(cudaMalloc(&V, sizeof(double) * (size_t)n * (mr + 1)));
      CK(cudaMalloc(&hd, sizeof(double) * (mr + 1)));
      CKS(cusparseCreateDnVec(&vv, n, V, CUDA_R_64F));
      CKS(cusparseCreateDnVec(&vw, n, V + n, CUDA_R_64F));
      auto gmres = [&] {
        const double mone = -1.0;
        double       beta, hn;
        CK(cudaMemcpy(V, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
        CKB(cublasDnrm2(bl, n, V, 1, &beta));
        const double ib = 1.0 / beta;
        CKB(cublasDscal(bl, n, &ib, V, 1));
        std::fill(g.begin(), g.end(), 0.0);
        g[0] = beta;
        for (int k = 0; k < mr; k++) {
          double *w = V + (size_t)(k + 1) * n;
          CKS(cusparseDnVecSetValues(vv, V + (size_t)k * n));
          CKS(cusparseDnVecSetValues(vw, w));
          CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vv, &zero, vw, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
          CKB(cublasDgemv(bl, CUBLAS_OP_T, n, k + 1, &one, V, n, w, 1, &zero, hd, 1));
          CKB(cublasDgemv(bl, CUBLAS_OP_N, n, k + 1, &mone, V, n, hd, 1, &one, w, 1));
          CK(cudaMemcpy(h.data(), hd, sizeof(double) * (k + 1), cudaMemcpyDeviceToHost));
          CKB(cublasDnrm2(bl, n, w, 1, &hn));
          const double ih = 1.0 / hn;
          CKB(cublasDscal(bl, n, &ih, w, 1));
          for (int i = 0; i < k; i++) {
            const double t = cs[i] * h[i] + sn[i] * h[i + 1];
            h[i + 1]       = -sn[i] * h[i] + cs[i] * h[i + 1];
            h[i]           = t;
          }
          const double rr = std::hypot(h[k], hn);
          cs[k]           = h[k] / rr;
          sn[k]           = hn / rr;
          h[k]            = rr;
          g[k + 1]        = -sn[k] * g[k];
          g[k]            = cs[k] * g[k];
          for (int i = 0; i <= k; i++) R[(size_t)k * (mr + 1) + i] = h[i];
        }
        for (int i = mr - 1; i >= 0; i--) {
          double t = g[i];
          for (int j = i + 1; j < mr; j++) t -= R[(size_t)j * (mr + 1) + i] * coef[j];
          coef[i] = t / R[(size_t)i * (mr + 1) + i];
        }
        CK(cudaMemcpy(hd, coef.data(), sizeof(double) * mr, cudaMemcpyHostToDevice));
        CKB(cublasDgemv(bl, CUBLAS_OP_N, n, mr, &one, V, n, hd, 1, &zero, x, 1));
      };
      const double tg  = MedianUs(9, gmres);
      const double tg0 = MedianUs(9, [&] { CK(cudaMemcpy(V, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice)); });
      std::printf("cusparse_cublas_gmres,%d,%d,%.2f,-\n", n, nnz, (tg - tg0) / mr);
      for (auto v : {vv, vw}) CKS(cusparseDestroyDnVec(v));
      CK(cudaFree(V));
      CK(cudaFree(hd));
    }

    CKS(cusparseDestroySpMat(A));
    for (auto v : {vx, vy, vp, vq}) CKS(cusparseDestroyDnVec(v));
    for (void *v : {(void *)dia, (void *)dja, (void *)dva, (void *)x, (void *)y, (void *)r, (void *)p, (void *)q, buf}) CK(cudaFree(v));
  }
  CKB(cublasDestroy(bl));
  CKS(cusparseDestroy(sp));
  return 0;
}
