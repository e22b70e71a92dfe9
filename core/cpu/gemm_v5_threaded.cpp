// core/cpu/gemm_v5_threaded.cpp — v5: v4 split over the intra-op thread pool.
//
// What changed: nothing in the arithmetic. For each packed KC×NC block, the threads
// first pack B together, then each computes its own strip of C (rows when C is tall,
// column panels when it is wide), packing the A it needs into its own buffer. The strips
// are disjoint, so no two threads write the same element of C and the result is the same
// bit for bit as v4. See gemm_blocked() in gemm_v3_blocked.cpp.
#include "core/cpu/gemm.h"
#include "core/cpu/gemm_impl.h"
#include "core/parallel.h"

namespace glass::cpu {

// Below this many multiply-adds (about 30 µs of one core) waking a worker costs more
// than it saves, so small products stay on the calling thread.
constexpr double kMinParallelMacs = 1 << 21;

template <class T>
void gemm_v5_threaded(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                      int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC,
                      int64_t csC) {
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const bool threaded = get_num_threads() > 1 && macs >= kMinParallelMacs;
  detail::gemm_blocked(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC,
                       detail::vector_kernel<T>(), threaded);
}

GLASS_GEMM_INSTANTIATE(gemm_v5_threaded);

}  // namespace glass::cpu
