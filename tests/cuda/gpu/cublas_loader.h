// tests/cuda/gpu/cublas_loader.h — cuBLAS, loaded at run time, as the reference gemm on a GPU.
//
// Why dlopen and not a link to CUDA::cublas: libcublas pulls in libcublasLt (about 600 MB
// together with it in CUDA 13), and scripts/gpu_check.sh carries every shared library a
// binary links to the bare GPU machine within 64 MiB. Linked, the GPU tests and the gemm
// benchmark could not be packed at all; loaded, they run everywhere and compare with
// cuBLAS wherever the machine has it (the test skips, the benchmark leaves it out, and
// both say so, where it has not). The library itself never touches cuBLAS.
//
// Invariant: load_cublas() returns every entry or null (with the reason); nothing is
// unloaded, so the pointers stay valid for the process.
#pragma once

#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace glass::cuda::testing {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
};

// cuBLAS from the toolkit this binary was built against (its soname), or null.
inline const Cublas* load_cublas(std::string* why_not) {
  static std::string error;
  static const Cublas* loaded = []() -> const Cublas* {
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = soname + " could not be loaded (" + dlerror() + ")";
      return nullptr;
    }
    static Cublas c;
    const auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr && error.empty()) error = soname + " has no " + name;
    };
    find(c.create, "cublasCreate_v2");
    find(c.destroy, "cublasDestroy_v2");
    find(c.set_stream, "cublasSetStream_v2");
    find(c.set_math_mode, "cublasSetMathMode");
    find(c.sgemm, "cublasSgemm_v2");
    return error.empty() ? &c : nullptr;
  }();
  if (loaded == nullptr && why_not != nullptr) *why_not = error;
  return loaded;
}

// A cuBLAS handle on one stream, in pedantic fp32 (no TF32, no reduced-precision
// shortcuts), so that it is a fair reference for kernels that do plain fp32 FMAs.
class CublasGemm {
 public:
  CublasGemm(const Cublas& blas, cudaStream_t stream) : blas_(blas) {
    if (blas_.create(&handle_) != CUBLAS_STATUS_SUCCESS) {
      handle_ = nullptr;
      return;
    }
    status_ = blas_.set_stream(handle_, stream);
    if (status_ == CUBLAS_STATUS_SUCCESS)
      status_ = blas_.set_math_mode(handle_, CUBLAS_PEDANTIC_MATH);
  }
  ~CublasGemm() {
    if (handle_ != nullptr) blas_.destroy(handle_);  // synchronizes the device
  }
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // "" when ready, else what went wrong.
  std::string error() const {
    if (handle_ == nullptr) return "cublasCreate failed";
    return status_ == CUBLAS_STATUS_SUCCESS ? "" : "cuBLAS status " + std::to_string(int(status_));
  }

  // C = A·B for row-major float matrices with leading dimensions lda, ldb, ldc, queued on
  // the stream. cuBLAS is column-major, and a row-major M×N matrix is a column-major N×M
  // one, its transpose; so it computes Cᵀ = Bᵀ·Aᵀ. Returns error().
  std::string sgemm_row_major(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                              float* C, int ldc) {
    if (!error().empty()) return error();
    const float alpha = 1, beta = 0;
    status_ = blas_.sgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta,
                          C, ldc);
    return error();
  }

 private:
  const Cublas& blas_;
  cublasHandle_t handle_ = nullptr;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
};

}  // namespace glass::cuda::testing
