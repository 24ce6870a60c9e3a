// Peers measured in the same run as our kernels (plain CUDA, built on the GPU machine with its nvcc, cuSPARSE, cuBLAS):
//   spmv: cusparseSpMV (CSR, double, default algorithm) on the 2D 5-point Laplacian of about n rows
//   cg:   classical CG built from cusparseSpMV and cuBLAS level-1 calls (as NVIDIA's conjugateGradient sample),
//         30 iterations, no preconditioner, dot products returned to the host as a BLAS-style solver does
//   bicgstab: classical BiCGStab the same way (2 SpMVs, 4 dots and the residual norm per iteration), 30 iterations
//   gmres: one cycle of GMRES(30) with classical Gram-Schmidt: the basis is one n x 31 column-major array, so the
//         projections and the update are two cublasDgemv calls; the Hessenberg column is copied to the host and
//         its Givens rotations applied there, as a BLAS-style GMRES does
// Usage: cusparse_peers N [N ...]   CSV: peer,n,nnz,us,GBps   (us: per SpMV, or per CG iteration)
#include <cmath>
#include <cublas_v2.h>
#include <cusparse.h>
#include "cudacheck.h"
#include "generators.h"

int main(int argc, char **argv)
{
  cusparseHandle_t sp;
  cublasHandle_t   bl;
  CKS(cusparseCreate(&sp));
  CKB(cublasCreate(&bl));
  std::printf("peer,n,nnz,us,GBps\n");
  for (int a = 1; a < argc; a++) {
    const auto  csr = benchgen::Poisson2D<int, double>(std::atof(argv[a]));
    const auto &ia = csr.ia, &ja = csr.ja;
    const auto &va  = csr.a;
    const int   n   = csr.m;
    const int   nnz = (int)ja.size();
    int        *dia, *dja;
    double     *dva, *x, *y, *r, *p, *q;
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

    // classical BiCGStab from x = 0, r = r0* = p = b = 1; the norm of r is what a convergence test reads
    double *r0, *v, *s, *t;
    for (double **w : {&r0, &v, &s, &t}) CK(cudaMalloc(w, sizeof(double) * n));
    cusparseDnVecDescr_t vv, vs, vt;
    CKS(cusparseCreateDnVec(&vv, n, v, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vs, n, s, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vt, n, t, CUDA_R_64F));
    CK(cudaMemcpy(r0, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    auto bicgstab = [&] {
      double rho, rhonew, vr0, ts, tt, rnorm;
      CK(cudaMemcpy(p, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(r, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      CK(cudaMemset(x, 0, sizeof(double) * n));
      CKB(cublasDdot(bl, n, r, 1, r0, 1, &rho));
      for (int k = 0; k < its; k++) {
        CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vp, &zero, vv, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
        CKB(cublasDdot(bl, n, v, 1, r0, 1, &vr0));
        const double alpha = rho / vr0, malpha = -alpha;
        CK(cudaMemcpyAsync(s, r, sizeof(double) * n, cudaMemcpyDeviceToDevice));
        CKB(cublasDaxpy(bl, n, &malpha, v, 1, s, 1));
        CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vs, &zero, vt, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
        CKB(cublasDdot(bl, n, t, 1, s, 1, &ts));
        CKB(cublasDdot(bl, n, t, 1, t, 1, &tt));
        const double omega = ts / tt, momega = -omega;
        CKB(cublasDaxpy(bl, n, &alpha, p, 1, x, 1));
        CKB(cublasDaxpy(bl, n, &omega, s, 1, x, 1));
        CK(cudaMemcpyAsync(r, s, sizeof(double) * n, cudaMemcpyDeviceToDevice));
        CKB(cublasDaxpy(bl, n, &momega, t, 1, r, 1));
        CKB(cublasDnrm2(bl, n, r, 1, &rnorm));
        CKB(cublasDdot(bl, n, r, 1, r0, 1, &rhonew));
        const double beta = rhonew / rho * alpha / omega;
        rho               = rhonew;
        CKB(cublasDaxpy(bl, n, &momega, v, 1, p, 1));
        CKB(cublasDscal(bl, n, &beta, p, 1));
        CKB(cublasDaxpy(bl, n, &one, r, 1, p, 1));
      }
    };
    const double tbicg = MedianUs(9, bicgstab);
    std::printf("cusparse_cublas_bicgstab,%d,%d,%.2f,-\n", n, nnz, (tbicg - tinit) / its);

    // GMRES(30), one cycle from x = 0: v_0 = b / ||b||; w = A v_j, h = V^T w, w -= V h, v_{j+1} = w / ||w||
    const int mr = its;
    double   *V, *h;
    CK(cudaMalloc(&V, sizeof(double) * (size_t)n * (mr + 1)));
    CK(cudaMalloc(&h, sizeof(double) * (mr + 1)));
    std::vector<double> H((size_t)(mr + 1) * mr), cs(mr), sn(mr), g(mr + 1);
    auto                gmres = [&] {
      CK(cudaMemcpy(V, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      double beta0;
      CKB(cublasDnrm2(bl, n, V, 1, &beta0));
      const double inv0 = 1.0 / beta0;
      CKB(cublasDscal(bl, n, &inv0, V, 1));
      std::fill(g.begin(), g.end(), 0.0);
      g[0] = beta0;
      for (int j = 0; j < mr; j++) {
        double              *w = V + (size_t)(j + 1) * n, mone = -1.0, hn;
        cusparseDnVecDescr_t vin, vout;
        CKS(cusparseCreateDnVec(&vin, n, V + (size_t)j * n, CUDA_R_64F));
        CKS(cusparseCreateDnVec(&vout, n, w, CUDA_R_64F));
        CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vin, &zero, vout, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
        CKB(cublasDgemv(bl, CUBLAS_OP_T, n, j + 1, &one, V, n, w, 1, &zero, h, 1));
        CKB(cublasDgemv(bl, CUBLAS_OP_N, n, j + 1, &mone, V, n, h, 1, &one, w, 1));
        CKB(cublasDnrm2(bl, n, w, 1, &hn));
        const double inv = 1.0 / hn;
        CKB(cublasDscal(bl, n, &inv, w, 1));
        double *col = &H[(size_t)j * (mr + 1)];
        CK(cudaMemcpy(col, h, sizeof(double) * (j + 1), cudaMemcpyDeviceToHost));
        col[j + 1] = hn;
        for (int i = 0; i < j; i++) { // earlier rotations, then a new one that zeroes col[j+1]; g[j+1] is the residual
          const double a = col[i], b = col[i + 1];
          col[i]     = cs[i] * a + sn[i] * b;
          col[i + 1] = -sn[i] * a + cs[i] * b;
        }
        const double d = std::hypot(col[j], col[j + 1]);
        cs[j]          = col[j] / d;
        sn[j]          = col[j + 1] / d;
        col[j]         = d;
        g[j + 1]       = -sn[j] * g[j];
        g[j]           = cs[j] * g[j];
        CKS(cusparseDestroyDnVec(vin));
        CKS(cusparseDestroyDnVec(vout));
      }
      for (int i = mr - 1; i >= 0; i--) { // y = R^{-1} g, then x = V y
        for (int k = i + 1; k < mr; k++) g[i] -= H[(size_t)k * (mr + 1) + i] * g[k];
        g[i] /= H[(size_t)i * (mr + 1) + i];
      }
      CK(cudaMemcpy(h, g.data(), sizeof(double) * mr, cudaMemcpyHostToDevice));
      CKB(cublasDgemv(bl, CUBLAS_OP_N, n, mr, &one, V, n, h, 1, &zero, x, 1));
    };
    const double tgmres = MedianUs(9, gmres);
    std::printf("cusparse_cublas_gmres,%d,%d,%.2f,-\n", n, nnz, tgmres / its);
    for (auto w : {vv, vs, vt}) CKS(cusparseDestroyDnVec(w));
    for (void *w : {(void *)r0, (void *)v, (void *)s, (void *)t, (void *)V, (void *)h}) CK(cudaFree(w));

    CKS(cusparseDestroySpMat(A));
    for (auto v : {vx, vy, vp, vq}) CKS(cusparseDestroyDnVec(v));
    for (void *v : {(void *)dia, (void *)dja, (void *)dva, (void *)x, (void *)y, (void *)r, (void *)p, (void *)q, buf}) CK(cudaFree(v));
  }
  CKB(cublasDestroy(bl));
  CKS(cusparseDestroy(sp));
  return 0;
}
