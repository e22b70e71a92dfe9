// core/cpu/gemm_v1_naive.cpp — v1, the oracle: one dot product per element of C.
//
// The plainest correct gemm: read straight from the strided inputs, accumulate in T,
// touch C once. Every faster version is tested against this one, so it stays obvious
// rather than fast. Its inner loop walks a column of B with stride rsB, which is why it
// is slow: for a row-major B each step lands on a new cache line (v2 fixes that).
#include "core/cpu/gemm.h"
#include "core/cpu/gemm_impl.h"

namespace glass::cpu {

template <class T>
void gemm_v1_naive(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                   const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      T sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += A[i * rsA + k * csA] * B[k * rsB + j * csB];
      T& c = C[i * rsC + j * csC];
      c = beta == T(0) ? alpha * sum : alpha * sum + beta * c;  // beta == 0: C is not read
    }
  }
}

GLASS_GEMM_INSTANTIATE(gemm_v1_naive);

}  // namespace glass::cpu
