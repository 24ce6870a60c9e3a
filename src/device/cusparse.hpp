/* cuSPARSE's sparse triangular solve (SpSV) for the device factors of CUDA builds, loaded at run time: the plugin links
   no CUDA library beyond the runtime, so it loads into any PETSc program, and a machine without the cuSPARSE of the
   runtime's major version solves with Kokkos-Kernels instead. Never included from C. */
#pragma once

#include "kokkosbase.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#  include <cusparse.h>
#  include <dlfcn.h>

namespace gpustream
{

#  define GS_CUSPARSE_FUNCTIONS(X)                                                                                                                                                                                                                       \
    X(cusparseCreate)                                                                                                                                                                                                                                    \
    X(cusparseDestroy)                                                                                                                                                                                                                                   \
    X(cusparseSetStream)                                                                                                                                                                                                                                 \
    X(cusparseGetErrorString)                                                                                                                                                                                                                            \
    X(cusparseCreateCsr)                                                                                                                                                                                                                                 \
    X(cusparseDestroySpMat)                                                                                                                                                                                                                              \
    X(cusparseSpMatSetAttribute)                                                                                                                                                                                                                         \
    X(cusparseCreateDnVec)                                                                                                                                                                                                                               \
    X(cusparseDestroyDnVec)                                                                                                                                                                                                                              \
    X(cusparseDnVecSetValues)                                                                                                                                                                                                                            \
    X(cusparseSpSV_createDescr)                                                                                                                                                                                                                          \
    X(cusparseSpSV_destroyDescr)                                                                                                                                                                                                                         \
    X(cusparseSpSV_bufferSize)                                                                                                                                                                                                                           \
    X(cusparseSpSV_analysis)                                                                                                                                                                                                                             \
    X(cusparseSpSV_solve)

/* cuSPARSE 12.1 (CUDA 12.2) on: new values for an analysed SpSV without analysing again, where the library has it */
#  if defined(CUSPARSE_VERSION) && CUSPARSE_VERSION >= 12100
#    define GS_CUSPARSE_SPSV_UPDATE 1
#  endif

struct CusparseAPI {
#  define GS_CUSPARSE_POINTER(f) decltype(&::f) f = nullptr;
  GS_CUSPARSE_FUNCTIONS(GS_CUSPARSE_POINTER)
#  undef GS_CUSPARSE_POINTER
#  if defined(GS_CUSPARSE_SPSV_UPDATE)
  decltype(&::cusparseSpSV_updateMatrix) cusparseSpSV_updateMatrix = nullptr; /* optional */
#  endif
  const char *library = nullptr; /* the one loaded; nullptr: none */
};

/* The cuSPARSE of the runtime's major version (CUDA 12 and 13 ship libcusparse.so.12), loaded once; nullptr where the
   machine has none. A process that links it already (a PETSc with CUDA) gets the same library back. */
inline const CusparseAPI *Cusparse()
{
  static CusparseAPI api;
  static bool        tried = false;

  if (!tried) {
    tried = true;
#  if CUDART_VERSION >= 12000
    static const char *const names[] = {"libcusparse.so.12", "libcusparse.so.13"};
#  else
    static const char *const names[] = {"libcusparse.so.11"};
#  endif
    for (const char *name : names) {
      void *h  = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      bool  ok = h != nullptr;
      if (!ok) continue;
#  define GS_CUSPARSE_LOAD(f) ok = ok && (api.f = reinterpret_cast<decltype(&::f)>(dlsym(h, #  f))) != nullptr;
      GS_CUSPARSE_FUNCTIONS(GS_CUSPARSE_LOAD)
#  undef GS_CUSPARSE_LOAD
      if (ok) {
        api.library = name;
#  if defined(GS_CUSPARSE_SPSV_UPDATE)
        api.cusparseSpSV_updateMatrix = reinterpret_cast<decltype(&::cusparseSpSV_updateMatrix)>(dlsym(h, "cusparseSpSV_updateMatrix"));
#  endif
        break;
      }
      dlclose(h);
    }
  }
  return api.library ? &api : nullptr;
}

/* A failed cuSPARSE call as DeviceError (PETSC_ERR_GPU through GSCallKokkos()) */
inline void ThrowIfFailed(const CusparseAPI *api, cusparseStatus_t s, const char *what)
{
  if (s != CUSPARSE_STATUS_SUCCESS) throw DeviceError(std::string(what) + " failed: " + api->cusparseGetErrorString(s));
}

/* PetscScalar's type for cuSPARSE */
#  if defined(PETSC_USE_COMPLEX)
constexpr cudaDataType CusparseScalar = sizeof(PetscReal) == 4 ? CUDA_C_32F : CUDA_C_64F;
#  else
constexpr cudaDataType CusparseScalar = sizeof(PetscReal) == 4 ? CUDA_R_32F : CUDA_R_64F;
#  endif

/* A cuSPARSE handle a factor's solves share */
class CusparseHandle {
public:
  explicit CusparseHandle(const CusparseAPI *api) : api_(api)
  {
    ThrowIfFailed(api_, api_->cusparseCreate(&h_), "cusparseCreate()");
  }
  CusparseHandle(const CusparseHandle &)            = delete;
  CusparseHandle &operator=(const CusparseHandle &) = delete;
  ~CusparseHandle()
  {
    api_->cusparseDestroy(h_);
  }
  const CusparseAPI *API() const
  {
    return api_;
  }
  cusparseHandle_t Get() const
  {
    return h_;
  }

private:
  const CusparseAPI *api_;
  cusparseHandle_t   h_ = nullptr;
};

/* One triangular CSR matrix (n rows, columns sorted, every diagonal entry stored) solved by SpSV. After Stale() (new
   values, which the analysis holds) Solve() hands them to the analysis through cusparseSpSV_updateMatrix where the
   library has it, else analyses again; the arrays stay the matrix's, and must outlive it. */
class CusparseTriSolve {
public:
  CusparseTriSolve(const CusparseHandle &h, bool lower, PetscInt n, PetscInt nnz, PetscInt *row, PetscInt *col, PetscScalar *val) : h_(h), api_(h.API()), lower_(lower), n_(n), nnz_(nnz), row_(row), col_(col), val_(val) {}
  CusparseTriSolve(const CusparseTriSolve &)            = delete;
  CusparseTriSolve &operator=(const CusparseTriSolve &) = delete;
  ~CusparseTriSolve()
  {
    if (sv_) api_->cusparseSpSV_destroyDescr(sv_);
    if (x_) api_->cusparseDestroyDnVec(x_);
    if (y_) api_->cusparseDestroyDnVec(y_);
    if (A_) api_->cusparseDestroySpMat(A_);
  }
  void Stale()
  {
    analysed_ = false;
  }
  /* x = T^-1 b (device arrays of n entries, b != x) on the execution space's stream */
  void Solve(const PetscScalar *b, PetscScalar *x)
  {
    const PetscScalar      one = 1;
    const cusparseHandle_t h   = h_.Get();
    if (!A_) Describe(b, x);
    ThrowIfFailed(api_, api_->cusparseSetStream(h, Exec().cuda_stream()), "cusparseSetStream()");
    ThrowIfFailed(api_, api_->cusparseDnVecSetValues(x_, (void *)b), "cusparseDnVecSetValues()");
    ThrowIfFailed(api_, api_->cusparseDnVecSetValues(y_, x), "cusparseDnVecSetValues()");
    if (!analysed_ && updatable_) {
#  if defined(GS_CUSPARSE_SPSV_UPDATE)
      ThrowIfFailed(api_, api_->cusparseSpSV_updateMatrix(h, sv_, val_, CUSPARSE_SPSV_UPDATE_GENERAL), "cusparseSpSV_updateMatrix()");
#  endif
    } else if (!analysed_) {
      size_t bytes = 0;
      ThrowIfFailed(api_, api_->cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A_, x_, y_, CusparseScalar, CUSPARSE_SPSV_ALG_DEFAULT, sv_, &bytes), "cusparseSpSV_bufferSize()");
      if (buffer_.extent(0) < bytes || buffer_.extent(0) == 0) buffer_ = Kokkos::View<char *, Mem>(Kokkos::ViewAllocateWithoutInitializing("GPUStream::spsv_buffer"), bytes > 0 ? bytes : 1);
      ThrowIfFailed(api_, api_->cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A_, x_, y_, CusparseScalar, CUSPARSE_SPSV_ALG_DEFAULT, sv_, buffer_.data()), "cusparseSpSV_analysis()");
#  if defined(GS_CUSPARSE_SPSV_UPDATE)
      updatable_ = api_->cusparseSpSV_updateMatrix != nullptr;
#  endif
    }
    analysed_ = true;
    ThrowIfFailed(api_, api_->cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A_, x_, y_, CusparseScalar, CUSPARSE_SPSV_ALG_DEFAULT, sv_), "cusparseSpSV_solve()");
  }
  size_t Bytes() const
  {
    return buffer_.extent(0);
  }

private:
  void Describe(const PetscScalar *b, PetscScalar *x)
  {
    const cusparseIndexType_t ix   = sizeof(PetscInt) == 8 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    const cusparseFillMode_t  fill = lower_ ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
    const cusparseDiagType_t  diag = CUSPARSE_DIAG_TYPE_NON_UNIT; /* L's unit diagonal is stored */
    ThrowIfFailed(api_, api_->cusparseCreateCsr(&A_, n_, n_, nnz_, row_, col_, val_, ix, ix, CUSPARSE_INDEX_BASE_ZERO, CusparseScalar), "cusparseCreateCsr()");
    ThrowIfFailed(api_, api_->cusparseSpMatSetAttribute(A_, CUSPARSE_SPMAT_FILL_MODE, (void *)&fill, sizeof(fill)), "cusparseSpMatSetAttribute()");
    ThrowIfFailed(api_, api_->cusparseSpMatSetAttribute(A_, CUSPARSE_SPMAT_DIAG_TYPE, (void *)&diag, sizeof(diag)), "cusparseSpMatSetAttribute()");
    ThrowIfFailed(api_, api_->cusparseCreateDnVec(&x_, n_, (void *)b, CusparseScalar), "cusparseCreateDnVec()");
    ThrowIfFailed(api_, api_->cusparseCreateDnVec(&y_, n_, x, CusparseScalar), "cusparseCreateDnVec()");
    ThrowIfFailed(api_, api_->cusparseSpSV_createDescr(&sv_), "cusparseSpSV_createDescr()");
  }

  const CusparseHandle     &h_;
  const CusparseAPI        *api_;
  bool                      lower_;
  PetscInt                  n_, nnz_;
  PetscInt                 *row_, *col_;
  PetscScalar              *val_;
  cusparseSpMatDescr_t      A_ = nullptr;
  cusparseDnVecDescr_t      x_ = nullptr, y_ = nullptr;
  cusparseSpSVDescr_t       sv_ = nullptr;
  Kokkos::View<char *, Mem> buffer_;
  bool                      analysed_ = false, updatable_ = false; /* updatable_: analysed once, and the library updates values */
};

} // namespace gpustream
#else
namespace gpustream
{
/* No cuSPARSE without CUDA: the factors solve with Kokkos-Kernels and never make one (the type only completes TriCSR) */
struct CusparseTriSolve {
  void Stale() {}
  void Solve(const PetscScalar *, PetscScalar *)
  {
    throw DeviceError("cuSPARSE's SpSV called in a build without CUDA");
  }
  size_t Bytes() const
  {
    return 0;
  }
};
} // namespace gpustream
#endif
