// core/cpu/gemm_v2_loop_order.cpp — v2: the same arithmetic as v1 in i-k-j order.
//
// What changed: k moved out of the innermost loop. Row i of C is first scaled by beta,
// then gets alpha·A[i,k]·B[k,:] added for each k, so the inner loop walks a row of B
// and a row of C side by side. For row-major B and C (csB == csC == 1) those are
// contiguous and the compiler vectorizes the loop; v1 instead strode down a column of B.
// Still no reuse beyond one row: each row of C re-reads all of B from memory (v3 fixes
// that with blocking).
#include "core/cpu/gemm.h"
#include "core/cpu/gemm_impl.h"

namespace glass::cpu {

template <class T>
void gemm_v2_loop_order(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                        int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C,
                        int64_t rsC, int64_t csC) {
  for (int64_t i = 0; i < M; ++i) {
    T* c_row = C + i * rsC;
    detail::scale_c<T>(1, N, beta, c_row, rsC, csC);
    for (int64_t k = 0; k < K; ++k) {
      const T a = alpha * A[i * rsA + k * csA];
      const T* b_row = B + k * rsB;
      if (csB == 1 && csC == 1) {
        // Unit strides spelled out, so the compiler sees contiguous rows and vectorizes.
        for (int64_t j = 0; j < N; ++j) c_row[j] += a * b_row[j];
      } else {
        for (int64_t j = 0; j < N; ++j) c_row[j * csC] += a * b_row[j * csB];
      }
    }
  }
}

GLASS_GEMM_INSTANTIATE(gemm_v2_loop_order);

}  // namespace glass::cpu
