// cuda/kernels/gemm_v3_shared_tiles.cu — v3: 16×16 tiles of A and B staged in shared memory.
//
// In v2 every thread reads its own row of A and column of B from global memory: a
// 16×16 block of C reads each element of A 16 times and each of B 16 times. Here the
// block's 256 threads first copy a 16×16 tile of A and one of B into shared memory —
// one element each, neighbouring threads on neighbouring addresses — wait for each
// other (__syncthreads), and then each computes its 16 products from the fast shared
// copies. Global traffic falls 16×; the second barrier keeps the next tile's copy from
// overwriting one that slower threads are still reading.
//
// Edges: elements outside A or B are staged as 0, so the inner loop needs no bounds
// checks and adds exact zeros; only the final store is guarded.
//
// Invariant: each element of C still sums its products in increasing k (v1's order).
#include "cuda/kernels/gemm_common.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

constexpr int kTile = 16;  // the block is kTile × kTile threads; tiles are kTile × kTile

template <class T>
__global__ void gemm_v3_shared_tiles_kernel(GemmShape s, T alpha, gptr<const T> A, gptr<const T> B,
                                            T beta, gptr<T> C) {
  GLASS_SHARED(T[kTile], As, kTile);  // As[r][k]: rows of this block's strip of A
  GLASS_SHARED(T[kTile], Bs, kTile);  // Bs[k][c]: columns of this block's strip of B
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = int64_t(blockIdx.x) * kTile + ty;
  const int64_t j = int64_t(blockIdx.y) * kTile + tx;
  const int64_t z = blockIdx.z;
  const gptr<const T> a = A + z * s.a.batch;
  const gptr<const T> b = B + z * s.b.batch;

  T sum = 0;
  for (int64_t k0 = 0; k0 < s.K; k0 += kTile) {
    // Thread (ty, tx) copies A[i, k0 + tx] and B[k0 + ty, j]: a warp reads rows of both.
    As[ty][tx] = i < s.M && k0 + tx < s.K ? a[i * s.a.row + (k0 + tx) * s.a.col] : T(0);
    Bs[ty][tx] = k0 + ty < s.K && j < s.N ? b[(k0 + ty) * s.b.row + j * s.b.col] : T(0);
    __syncthreads();  // the tiles are complete
    for (int k = 0; k < kTile; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done with them before the next copy
  }
  if (i < s.M && j < s.N)
    gemm_store(C + z * s.c.batch + i * s.c.row + j * s.c.col, alpha, sum, beta, s.K);
}

}  // namespace

template <class T>
void gemm_v3_shared_tiles(const GemmProblem<T>& p) {
  const std::string name = gemm_kernel_name<T>("gemm_v3_shared_tiles");
  launch_kernel(
      name.c_str(), gemm_v3_shared_tiles_kernel<T>,
      Dim3(unsigned(ceil_div(p.M, kTile)), unsigned(ceil_div(p.N, kTile)), unsigned(p.batch)),
      Dim3(kTile, kTile), 0, p.stream, shape_of(p), p.alpha, gptr<const T>(p.a), gptr<const T>(p.b),
      p.beta, gptr<T>(p.c));
}

GLASS_GEMM_RUNG_INSTANTIATE(gemm_v3_shared_tiles);

}  // namespace glass::cuda::GLASS_KERNEL_NS
