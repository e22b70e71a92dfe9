// cuda/kernels/gemm.h — C = alpha·A·B + beta·C on the CUDA device, as a ladder of five kernels.
//
// The GPU twin of core/cpu/gemm.h. Every rung computes the same thing, and each changes
// one idea; tests/cuda/backend/gemm_test.cpp checks every rung against v1 (the oracle)
// and the CPU backend. The slow rungs stay, because the differences are the lesson.
//
//   rung                                  what changes                         reads of A, B
//   v1 naive ........................... one thread per C element; threadIdx.x  uncoalesced A
//                                        walks rows, so a warp's 32 loads of A     (32 rows apart)
//                                        land on 32 different rows
//   v2 coalesced ....................... the same, but threadIdx.x walks columns: coalesced B,
//                                        a warp reads one row of B, 32 neighbours  broadcast A
//   v3 shared-memory tiles ............. a 16×16 block stages 16×16 tiles of A   each element read
//                                        and B in shared memory; each global       16× less often
//                                        element is then reused 16 times
//   v4 register blocking ............... 64×64 tiles, each thread a 4×4 block     4× fewer shared
//                                        of C in registers: 8 shared loads feed    loads per FMA
//                                        16 multiply-adds instead of 2 feeding 1
//   v5 vectorised ...................... 128×128 tiles, 8×8 per thread; 16-byte  one 16-byte load
//                                        loads of A and B where the rows are       for 4 floats
//                                        aligned (scalar loads where not)
// Timings: bench/bench_cuda_gemm.cpp runs the rungs against the CPU gemm and, on a GPU,
// cuBLAS. On the simulated GPU (n = 128, float, a loaded 2-core VM, 2026-12-01), in
// GFLOP/s: v1 2.0, v2 2.2, v3 0.15, v4 1.1, v5 2.0; the CPU gemm 46. There the cost is
// simulated threads and barriers, not memory traffic: v3's 64 blocks of 256 fibers meet
// at 16 barriers each. The GPU numbers (n = 4096, against cuBLAS) await a GPU run.
//
// Summation order: every rung adds the K products of an element in increasing k, one at
// a time, as v1 does; the rungs differ only in where the operands come from. So on one
// build (the simulator, or one GPU) they agree with v1 up to the compiler's fused
// multiply-adds, and integers agree exactly.
//
// Strides: every matrix comes with a batch, row and column stride in elements (BLIS style,
// as on the CPU: Note [GEMM strides] in core/cpu/gemm.h), so transposed, sliced and
// expanded operands go in without a copy. Only v5 ever copies an operand, to gain its
// vector loads (cuda/kernels/bmm.cu says when). C must not alias A or B.
//
// beta == 0 means C is write-only (NaN in C is ignored), as in BLAS. K == 0 gives beta·C.
//
// Invariant: every rung writes each element of C exactly once, summing in v1's order, so
// switching rungs (GLASS_CUDA_GEMM_VERSION) never changes a result beyond FMA rounding.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "cuda/runtime.h"

namespace glass::cuda {

enum class GemmVersion : int {
  kNaive = 1,          // v1: one thread per element, threads of a warp on different rows
  kCoalesced = 2,      // v2: one thread per element, threads of a warp on neighbouring columns
  kSharedTiles = 3,    // v3: 16×16 tiles of A and B staged in shared memory
  kRegisterTiles = 4,  // v4: 64×64 tiles, a 4×4 block of C per thread, in registers
  kVectorized = 5,     // v5: 128×128 tiles, 8×8 per thread, 16-byte loads where aligned
};

namespace detail {
inline bool is_gemm_version(int v) {
  return v >= static_cast<int>(GemmVersion::kNaive) &&
         v <= static_cast<int>(GemmVersion::kVectorized);
}
// The process-wide switch: GLASS_CUDA_GEMM_VERSION=1..5, read once, else the best (v5).
// Inline, with one static, so the simulator's and the GPU's builds share one switch.
inline std::atomic<int>& gemm_version_switch() {
  static std::atomic<int> version{[] {
    const char* value = std::getenv("GLASS_CUDA_GEMM_VERSION");
    if (value != nullptr && std::strlen(value) == 1 && is_gemm_version(value[0] - '0')) {
      return value[0] - '0';
    }
    return static_cast<int>(GemmVersion::kVectorized);
  }()};
  return version;
}
}  // namespace detail

// Which rung the kCUDA bmm entry (and so matmul, mm, bmm, addmm, linear) runs. Tests and
// benchmarks flip it between calls; a launch reads it once, when it is queued.
inline void set_gemm_version(GemmVersion v) {
  GLASS_CHECK(detail::is_gemm_version(static_cast<int>(v)), "cuda::set_gemm_version(): unknown ",
              "version ", static_cast<int>(v), "; expected 1 (naive) to 5 (vectorized)");
  detail::gemm_version_switch() = static_cast<int>(v);
}
inline GemmVersion get_gemm_version() {
  return static_cast<GemmVersion>(detail::gemm_version_switch().load());
}

// Sets the rung for a scope and restores the previous one.
class GemmVersionGuard {
 public:
  explicit GemmVersionGuard(GemmVersion v) : previous_(get_gemm_version()) { set_gemm_version(v); }
  ~GemmVersionGuard() { set_gemm_version(previous_); }
  GemmVersionGuard(const GemmVersionGuard&) = delete;
  GemmVersionGuard& operator=(const GemmVersionGuard&) = delete;

 private:
  GemmVersion previous_;
};

// ---- what a rung is given (host side; cuda/kernels/bmm.cu fills it in) ------------------

// Strides of one operand, in elements: element (z, i, j) is at z*batch + i*row + j*col.
struct MatrixStrides {
  int64_t batch = 0, row = 0, col = 0;
};

// `batch` problems C[z] = alpha·A[z]·B[z] + beta·C[z], A: M×K, B: K×N, C: M×N. The
// pointers are device addresses of batch 0. batch <= the device's max grid z (65535):
// a rung puts the batch on blockIdx.z, so bmm.cu splits larger batches.
template <class T>
struct GemmProblem {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  T alpha = 1, beta = 0;
  const T* a = nullptr;
  MatrixStrides sa;
  const T* b = nullptr;
  MatrixStrides sb;
  T* c = nullptr;
  MatrixStrides sc;
  StreamHandle stream = nullptr;
};

// The rungs' host launchers: each queues one kernel on p.stream and returns. Defined in
// gemm_v<n>_*.cu for float, double, int32_t and int64_t, in both builds.
#define GLASS_DECLARE_GEMM_RUNGS                        \
  template <class T>                                    \
  void gemm_v1_naive(const GemmProblem<T>& p);          \
  template <class T>                                    \
  void gemm_v2_coalesced(const GemmProblem<T>& p);      \
  template <class T>                                    \
  void gemm_v3_shared_tiles(const GemmProblem<T>& p);   \
  template <class T>                                    \
  void gemm_v4_register_tiles(const GemmProblem<T>& p); \
  template <class T>                                    \
  void gemm_v5_vectorized(const GemmProblem<T>& p);

namespace sim {
GLASS_DECLARE_GEMM_RUNGS
}  // namespace sim

namespace gpu {
GLASS_DECLARE_GEMM_RUNGS
}  // namespace gpu

#undef GLASS_DECLARE_GEMM_RUNGS

}  // namespace glass::cuda
