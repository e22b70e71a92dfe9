// core/cpu/gemm_v4_microkernel.cpp — v4: v3's driver with a register-blocked micro-kernel.
//
// What changed: v3 left the MR×NR tile to the compiler. Here the tile is held in vector
// registers for the whole KC loop, and each step is an outer product: NR/L vectors of
// packed B (L = lanes per vector) times MR broadcast values of packed A, as MR·NR/L fused
// multiply-adds. C is loaded and stored once per tile, not once per k.
//
// The vectors are GCC/Clang vector extensions (__attribute__((vector_size))), not
// intrinsics: the same code becomes AVX-512, AVX2, SSE or NEON depending on -march, and
// stays correct (just slower) wherever the width is emulated.
//
// The tile shape is in Note [Register tile] (gemm_impl.h).
#include <cstring>

#include "core/cpu/gemm.h"
#include "core/cpu/gemm_impl.h"

namespace glass::cpu {
namespace detail {
namespace {

template <class T>
struct VectorOf {
  typedef T type __attribute__((vector_size(kVectorBytes)));
};
template <class T>
using Vec = typename VectorOf<T>::type;

// Loads and stores through memcpy: no alignment is assumed, and the compiler emits a
// single (unaligned) vector move.
template <class T>
Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(T* p, Vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T>
void vector_micro_kernel(int64_t kc, const T* a, const T* b, T alpha, T beta, T* c, int64_t rsC,
                         int64_t csC, int64_t m, int64_t n) {
  constexpr int MR = Tile<T>::kMR, NR = Tile<T>::kNR, L = Tile<T>::kLanes;
  constexpr int NV = Tile<T>::kVectorsPerRow;

  Vec<T> acc[MR][NV] = {};  // the C tile, in registers for the whole loop
  for (int64_t p = 0; p < kc; ++p) {
    Vec<T> b_row[NV];
    for (int v = 0; v < NV; ++v) b_row[v] = load(b + v * L);
      // Fully unrolled (MR is a constant), so each acc[i][v] can live in its own register.
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      for (int v = 0; v < NV; ++v) acc[i][v] += a[i] * b_row[v];  // a[i] is broadcast
    }
    a += MR;
    b += NR;
  }

  if (m == MR && n == NR && csC == 1) {
    // Full tile, row-major C: whole vectors straight to memory.
    for (int i = 0; i < MR; ++i) {
      for (int v = 0; v < NV; ++v) {
        T* out = c + i * rsC + v * L;
        store(out, beta == T(0) ? alpha * acc[i][v] : alpha * acc[i][v] + beta * load(out));
      }
    }
    return;
  }
  // Edge tile or strided C: spill the accumulators, then write element by element.
  T tile[MR][NR];
  std::memcpy(tile, acc, sizeof tile);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T& out = c[i * rsC + j * csC];
      out = beta == T(0) ? alpha * tile[i][j] : alpha * tile[i][j] + beta * out;
    }
  }
}

}  // namespace

template <class T>
GemmKernel<T> vector_kernel() {
  return tiled_kernel<T>(vector_micro_kernel<T>);
}

template GemmKernel<float> vector_kernel<float>();
template GemmKernel<double> vector_kernel<double>();
template GemmKernel<int32_t> vector_kernel<int32_t>();
template GemmKernel<int64_t> vector_kernel<int64_t>();

}  // namespace detail

template <class T>
void gemm_v4_microkernel(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                         int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C,
                         int64_t rsC, int64_t csC) {
  detail::gemm_blocked(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC,
                       detail::vector_kernel<T>(), /*threaded=*/false);
}

GLASS_GEMM_INSTANTIATE(gemm_v4_microkernel);

}  // namespace glass::cpu
