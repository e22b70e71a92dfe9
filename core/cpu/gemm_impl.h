// core/cpu/gemm_impl.h — what the gemm_v*.cpp files share; not part of the public API.
//
// The blocked versions (v3, v4, v5) run one driver, gemm_blocked() in gemm_v3_blocked.cpp,
// and differ only in the micro-kernel they hand it and in whether it may use threads.
// The contract between the two is the packed-panel layout below: the driver packs, the
// micro-kernel only ever reads packed panels, so it never sees a stride except C's.
//
// Note [Packed panel layout]
// A block of A (mb × kb) is cut into row panels of MR rows; each panel is stored
// k-major: element (i, p) of a panel sits at p*MR + i. Likewise a block of B (kb × nb)
// is cut into column panels of NR columns, element (p, j) at p*NR + j. So step p of
// the micro-kernel reads MR consecutive values of A and NR consecutive values of B.
// Panels at the bottom or right edge are padded with zeros up to MR or NR, which lets
// every micro-kernel call run full MR×NR arithmetic; only its write to C is clipped.
#pragma once

#include <cstdint>

#include "core/cpu/gemm.h"

namespace glass::cpu::detail {

// C[M,N] = beta * C, where beta == 0 writes zeros without reading C (it may hold NaN).
template <class T>
void scale_c(int64_t M, int64_t N, T beta, T* C, int64_t rsC, int64_t csC) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      T& c = C[i * rsC + j * csC];
      c = beta == T(0) ? T(0) : beta * c;
    }
  }
}

// c[0:m, 0:n] = alpha * (a_panel · b_panel) + beta * c, for an MR×NR tile of packed
// panels of depth kc (Note [Packed panel layout]); m <= MR and n <= NR clip the edges.
template <class T>
using MicroKernelFn = void (*)(int64_t kc, const T* a_panel, const T* b_panel, T alpha, T beta,
                               T* c, int64_t rsC, int64_t csC, int64_t m, int64_t n);

// A micro-kernel with the tile it computes and the cache blocking tuned for it: an
// MC×KC block of packed A is reused from L2 across the whole NC-wide panel of B, and
// each KC×NR micro-panel of B is reused by every MR-row panel of that A block.
template <class T>
struct GemmKernel {
  MicroKernelFn<T> fn;
  int64_t mr, nr;      // register tile
  int64_t mc, kc, nc;  // cache blocks: mc a multiple of mr, nc a multiple of nr
};

// Note [Register tile]
// v3 and v4 compute the same MR×NR tile of C per micro-kernel call; v4 holds it in
// vector registers. Its MR·(NR/L) accumulators (L = lanes per vector), NR/L vectors of B
// and one broadcast of A must all fit in the register file: with 32 vector registers
// (AVX-512, NEON) a 6×4 tile of vectors uses 24 + 4 + 1 = 29, with 16 (AVX2, SSE) a 6×2
// tile uses 12 + 2 + 1 = 15. That leaves 24 (or 12) independent multiply-adds per step
// of k, enough to keep two FMA units busy through their 4-cycle latency, for 6 + NR/L
// loads. (Measured on AVX-512: 6×4 beat 12×2, 14×2, 8×3 and 4×4 by 5-15%, as it needs
// the fewest loads per multiply-add.)
#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
inline constexpr int kVectorRegisters = 32;
#elif defined(__AVX__)
inline constexpr int kVectorBytes = 32;
inline constexpr int kVectorRegisters = 16;
#elif defined(__aarch64__)
inline constexpr int kVectorBytes = 16;
inline constexpr int kVectorRegisters = 32;
#else
inline constexpr int kVectorBytes = 16;
inline constexpr int kVectorRegisters = 16;
#endif

template <class T>
struct Tile {
  static constexpr int kLanes = kVectorBytes / sizeof(T);
  static constexpr int kVectorsPerRow = kVectorRegisters >= 32 ? 4 : 2;
  static constexpr int kMR = 6;
  static constexpr int kNR = kVectorsPerRow * kLanes;
};

// The cache blocking for Tile<T>, sized in bytes so it holds for every T. A row of
// packed B is 2 KiB deep in k (KC = 512 floats): long enough that loading and storing
// the C tile is a small cost next to KC steps of multiply-adds. The MC×KC block of A is
// 768 KiB, well inside a 2 MiB L2; the KC×NC panel of B (8 MiB for float) lives in L3.
// Tuned on the benchmark machine (bench/RESULTS.md); KC of 256-1024 and MC of 96-384
// were all within 10%.
template <class T>
GemmKernel<T> tiled_kernel(MicroKernelFn<T> fn) {
  constexpr int64_t mr = Tile<T>::kMR, nr = Tile<T>::kNR;
  constexpr int64_t kc = 2048 / sizeof(T);
  constexpr int64_t mc = (768 * 1024 / (kc * sizeof(T))) / mr * mr;
  constexpr int64_t nc = 4096 / nr * nr;
  return GemmKernel<T>{fn, mr, nr, mc, kc, nc};
}

// The GotoBLAS/BLIS five-loop driver (gemm_v3_blocked.cpp). With threaded = true it
// splits each packed block over glass::parallel_for (v5).
template <class T>
void gemm_blocked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                  const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC,
                  const GemmKernel<T>& kernel, bool threaded);

// v4's vector micro-kernel with its blocking (gemm_v4_microkernel.cpp); v5 runs it too.
template <class T>
GemmKernel<T> vector_kernel();

}  // namespace glass::cpu::detail

// Explicit instantiation of one ladder entry point for the four dtypes gemm supports.
// Only the gemm_v*.cpp files use it, each for the function it defines.
#define GLASS_GEMM_INSTANTIATE_ONE(fn, T)                                                          \
  template void fn<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, \
                      int64_t, T, T*, int64_t, int64_t)
#define GLASS_GEMM_INSTANTIATE(fn)         \
  GLASS_GEMM_INSTANTIATE_ONE(fn, float);   \
  GLASS_GEMM_INSTANTIATE_ONE(fn, double);  \
  GLASS_GEMM_INSTANTIATE_ONE(fn, int32_t); \
  GLASS_GEMM_INSTANTIATE_ONE(fn, int64_t)
