// cusparseSpMV (CSR, double, 32-bit indices, default algorithm) on the matrices of bench/generators.h: the peer of
// bench_spmv.cxx, run on the same matrices in the same run. Matrices of full D x D blocks (cube27:E:D, D > 1) also
// run cusparseDbsrmv (BSR, blocks row-major), the peer of our block column indices.
//   cusparse_spmv SPEC [SPEC ...]     CSV: peer,matrix,n,nnz,us,GBps   (GBps: the bytes of the format's arrays and
//   the vectors over the time)
#include <cusparse.h>
#include "cudacheck.h"
#include "generators.h"
#include <vector>

int main(int argc, char **argv)
{
  cusparseHandle_t sp;
  CKS(cusparseCreate(&sp));
  std::printf("peer,matrix,n,nnz,us,GBps\n");
  for (int k = 1; k < argc; k++) {
    const auto h = benchgen::FromSpec<int, double>(argv[k]);
    const int  n = h.m, nnz = h.nnz();
    int       *dia, *dja;
    double    *dva, *x, *y;
    CK(cudaMalloc(&dia, sizeof(int) * (n + 1)));
    CK(cudaMalloc(&dja, sizeof(int) * (size_t)nnz));
    CK(cudaMalloc(&dva, sizeof(double) * (size_t)nnz));
    CK(cudaMalloc(&x, sizeof(double) * n));
    CK(cudaMalloc(&y, sizeof(double) * n));
    CK(cudaMemcpy(dia, h.ia.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dja, h.ja.data(), sizeof(int) * (size_t)nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dva, h.a.data(), sizeof(double) * (size_t)nnz, cudaMemcpyHostToDevice));
    std::vector<double> ones(n, 1.0);
    CK(cudaMemcpy(x, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t vx, vy;
    CKS(cusparseCreateCsr(&A, n, n, nnz, dia, dja, dva, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vx, n, x, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&vy, n, y, CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    size_t       bytes = 0;
    void        *buf   = nullptr;
    CKS(cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    CK(cudaMalloc(&buf, bytes ? bytes : 1));
    const double us = MedianUs(50, [&] { CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf)); });
    std::printf("cusparse_spmv,%s,%d,%d,%.2f,%.1f\n", argv[k], n, nnz, us, (12.0 * nnz + 4.0 * (n + 1) + 16.0 * n) / us * 1e-3);
    std::fflush(stdout);
    CKS(cusparseDestroySpMat(A));
    CKS(cusparseDestroyDnVec(vx));
    CKS(cusparseDestroyDnVec(vy));
    if (const int bs = benchgen::BlockSize(argv[k]); bs > 1) { /* BSR from the CSR's full blocks */
      const int           mb = n / bs, nnzb = nnz / (bs * bs);
      std::vector<int>    bia(mb + 1), bja(nnzb);
      std::vector<double> bva((size_t)nnz);
      for (int br = 0; br < mb; br++) {
        const int b0 = h.ia[br * bs] / (bs * bs), nk = (h.ia[br * bs + 1] - h.ia[br * bs]) / bs;
        bia[br] = b0;
        for (int q = 0; q < nk; q++) {
          bja[b0 + q] = h.ja[h.ia[br * bs] + q * bs] / bs;
          for (int i = 0; i < bs; i++)
            for (int c = 0; c < bs; c++) bva[(size_t)(b0 + q) * bs * bs + i * bs + c] = h.a[h.ia[br * bs + i] + q * bs + c];
        }
      }
      bia[mb] = nnzb;
      CK(cudaMemcpy(dia, bia.data(), sizeof(int) * (mb + 1), cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dja, bja.data(), sizeof(int) * (size_t)nnzb, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dva, bva.data(), sizeof(double) * (size_t)nnz, cudaMemcpyHostToDevice));
      cusparseMatDescr_t d;
      CKS(cusparseCreateMatDescr(&d));
      const double bus = MedianUs(50, [&] { CKS(cusparseDbsrmv(sp, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, mb, nnzb, &one, d, dva, dia, dja, bs, x, &zero, y)); });
      std::printf("cusparse_bsrmv,%s,%d,%d,%.2f,%.1f\n", argv[k], n, nnz, bus, (8.0 * nnz + 4.0 * nnzb + 4.0 * (mb + 1) + 16.0 * n) / bus * 1e-3);
      std::fflush(stdout);
      CKS(cusparseDestroyMatDescr(d));
    }
    for (void *v : {(void *)dia, (void *)dja, (void *)dva, (void *)x, (void *)y, buf}) CK(cudaFree(v));
  }
  CKS(cusparseDestroy(sp));
  return 0;
}
