// cuda/kernels/gemm_v4_register_tiles.cu — v4: each thread computes a 4×4 block of C.
//
// In v3 each multiply-add costs two shared-memory loads, and shared memory, though fast,
// is then the bottleneck. Here a 256-thread block owns a 64×64 tile of C and each thread
// 4×4 of it, kept in registers: per step k it loads 4 values of A and 4 of B from shared
// memory into registers and does their 16 products (an outer product), 8 loads for 16
// multiply-adds instead of 32. Tiles are 64×8 of A and 8×64 of B, staged as in v3, two
// elements per thread.
//
// A's tile is stored transposed (As[k][m]) so that the 4 values of one k a thread needs
// lie in one row of the array, as B's do. A thread's rows are ty, ty+16, ty+32, ty+48 and
// its columns tx, tx+16, ...: neighbouring threads keep neighbouring columns, so reads of
// Bs and writes of C stay coalesced.
//
// Invariant: each element of C still sums its products in increasing k (v1's order).
#include "cuda/kernels/gemm_common.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

constexpr int kThreads = 16;         // the block is kThreads × kThreads
constexpr int kTM = 4, kTN = 4;      // the block of C one thread computes
constexpr int kBM = kThreads * kTM;  // 64 rows of C per block
constexpr int kBN = kThreads * kTN;  // 64 columns
constexpr int kBK = 8;               // k per staged tile

template <class T>
__global__ void gemm_v4_register_tiles_kernel(GemmShape s, T alpha, gptr<const T> A,
                                              gptr<const T> B, T beta, gptr<T> C) {
  GLASS_SHARED(T[kBM], As, kBK);  // As[k][m]: A's 64×8 tile, transposed
  GLASS_SHARED(T[kBN], Bs, kBK);  // Bs[k][n]: B's 8×64 tile
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  const int64_t i0 = int64_t(blockIdx.x) * kBM, j0 = int64_t(blockIdx.y) * kBN;
  const int64_t z = blockIdx.z;
  const gptr<const T> a = A + z * s.a.batch;
  const gptr<const T> b = B + z * s.b.batch;

  T acc[kTM][kTN] = {};
  for (int64_t k0 = 0; k0 < s.K; k0 += kBK) {
    // Neighbouring threads take neighbouring k of A's rows and neighbouring n of B's.
    for (int e = tid; e < kBM * kBK; e += kThreads * kThreads) {
      const int m = e / kBK, k = e % kBK;
      const int64_t gi = i0 + m, gk = k0 + k;
      As[k][m] = gi < s.M && gk < s.K ? a[gi * s.a.row + gk * s.a.col] : T(0);
    }
    for (int e = tid; e < kBK * kBN; e += kThreads * kThreads) {
      const int k = e / kBN, n = e % kBN;
      const int64_t gk = k0 + k, gj = j0 + n;
      Bs[k][n] = gk < s.K && gj < s.N ? b[gk * s.b.row + gj * s.b.col] : T(0);
    }
    __syncthreads();
    for (int k = 0; k < kBK; ++k) {
      T a_reg[kTM], b_reg[kTN];
      for (int r = 0; r < kTM; ++r) a_reg[r] = As[k][ty + r * kThreads];
      for (int c = 0; c < kTN; ++c) b_reg[c] = Bs[k][tx + c * kThreads];
      for (int r = 0; r < kTM; ++r)
        for (int c = 0; c < kTN; ++c) acc[r][c] += a_reg[r] * b_reg[c];
    }
    __syncthreads();
  }
  for (int r = 0; r < kTM; ++r) {
    const int64_t i = i0 + ty + r * kThreads;
    for (int c = 0; c < kTN; ++c) {
      const int64_t j = j0 + tx + c * kThreads;
      if (i < s.M && j < s.N)
        gemm_store(C + z * s.c.batch + i * s.c.row + j * s.c.col, alpha, acc[r][c], beta, s.K);
    }
  }
}

}  // namespace

template <class T>
void gemm_v4_register_tiles(const GemmProblem<T>& p) {
  const std::string name = gemm_kernel_name<T>("gemm_v4_register_tiles");
  launch_kernel(name.c_str(), gemm_v4_register_tiles_kernel<T>,
                Dim3(unsigned(ceil_div(p.M, kBM)), unsigned(ceil_div(p.N, kBN)), unsigned(p.batch)),
                Dim3(kThreads, kThreads), 0, p.stream, shape_of(p), p.alpha, gptr<const T>(p.a),
                gptr<const T>(p.b), p.beta, gptr<T>(p.c));
}

GLASS_GEMM_RUNG_INSTANTIATE(gemm_v4_register_tiles);

}  // namespace glass::cuda::GLASS_KERNEL_NS
