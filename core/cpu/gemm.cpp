// core/cpu/gemm.cpp — the process-wide version switch in front of the gemm ladder.
//
// Invariant: gemm() always runs exactly the version get_gemm_version() reports. The
// switch is an atomic read once per call, so tests and benchmarks may flip it between
// calls on any thread.
#include "core/cpu/gemm.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace glass::cpu {
namespace {

bool is_valid(int v) {
  return v >= static_cast<int>(GemmVersion::kNaive) &&
         v <= static_cast<int>(GemmVersion::kThreaded);
}

int version_from_env() {
  const char* value = std::getenv("GLASS_GEMM_VERSION");
  if (value != nullptr && std::strlen(value) == 1 && is_valid(value[0] - '0')) {
    return value[0] - '0';
  }
  return static_cast<int>(GemmVersion::kThreaded);
}

std::atomic<int>& current_version() {
  static std::atomic<int> version{version_from_env()};
  return version;
}

}  // namespace

void set_gemm_version(GemmVersion v) {
  GLASS_CHECK(is_valid(static_cast<int>(v)), "set_gemm_version(): unknown version ",
              static_cast<int>(v), "; expected 1 (naive) to 5 (threaded)");
  current_version() = static_cast<int>(v);
}

GemmVersion get_gemm_version() { return static_cast<GemmVersion>(current_version().load()); }

template <class T>
void gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
          const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC) {
  switch (get_gemm_version()) {
    case GemmVersion::kNaive:
      return gemm_v1_naive(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC);
    case GemmVersion::kLoopOrder:
      return gemm_v2_loop_order(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC);
    case GemmVersion::kBlocked:
      return gemm_v3_blocked(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC);
    case GemmVersion::kMicroKernel:
      return gemm_v4_microkernel(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC);
    case GemmVersion::kThreaded:
      return gemm_v5_threaded(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC);
  }
}

template void gemm<float>(int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t,
                          const float*, int64_t, int64_t, float, float*, int64_t, int64_t);
template void gemm<double>(int64_t, int64_t, int64_t, double, const double*, int64_t, int64_t,
                           const double*, int64_t, int64_t, double, double*, int64_t, int64_t);
template void gemm<int32_t>(int64_t, int64_t, int64_t, int32_t, const int32_t*, int64_t, int64_t,
                            const int32_t*, int64_t, int64_t, int32_t, int32_t*, int64_t, int64_t);
template void gemm<int64_t>(int64_t, int64_t, int64_t, int64_t, const int64_t*, int64_t, int64_t,
                            const int64_t*, int64_t, int64_t, int64_t, int64_t*, int64_t, int64_t);

}  // namespace glass::cpu
