// core/cpu/cpu_linalg.cpp — the CPU bmm entry: one gemm (core/cpu/gemm.h) per batch.
//
// gemm takes a row and a column stride per matrix, so transposed, sliced and
// expanded operands go in as they are, with no copy.
#include "core/cpu/cpu_kernels.h"
#include "core/cpu/gemm.h"

namespace glass::cpu {

void bmm_kernel(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,
                const Scalar& alpha) {
  dispatch_numeric(a.dtype(), "bmm", [&]<class T>() {
    const T* pa = a.data_ptr<T>();
    const T* pb = b.data_ptr<T>();
    T* pc = out.data_ptr<T>();
    int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
    for (int64_t i = 0; i < batch; ++i) {
      gemm<T>(m, n, k, alpha.to<T>(), pa + i * a.stride(0), a.stride(1), a.stride(2),
              pb + i * b.stride(0), b.stride(1), b.stride(2), beta.to<T>(), pc + i * out.stride(0),
              out.stride(1), out.stride(2));
    }
  });
}

}  // namespace glass::cpu
