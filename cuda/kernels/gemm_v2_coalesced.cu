// cuda/kernels/gemm_v2_coalesced.cu — v2: v1 with the threads of a warp on one row of C.
//
// The only change from v1 is which index threadIdx.x walks: here the columns. The 32
// threads of a warp now share a row i and hold 32 neighbouring columns j, so at each
// step k they load B[k, j..j+31] — 32 neighbours, one coalesced transaction for a
// row-major B — and A[i, k] is one address for all of them (a broadcast). Their writes
// of C are neighbours too. Same arithmetic, same order, far fewer memory transactions.
//
// Invariant: the result is v1's, element for element (the same products, summed in the
// same order).
#include "cuda/kernels/gemm_common.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

constexpr int kCols = 32;  // threadIdx.x: columns of C (a warp spans 32 of them)
constexpr int kRows = 8;   // threadIdx.y: rows of C

template <class T>
__global__ void gemm_v2_coalesced_kernel(GemmShape s, T alpha, gptr<const T> A, gptr<const T> B,
                                         T beta, gptr<T> C) {
  // blockIdx.x still walks M (the grid's long axis), as in every rung.
  const int64_t i = int64_t(blockIdx.x) * kRows + threadIdx.y;
  const int64_t j = int64_t(blockIdx.y) * kCols + threadIdx.x;
  if (i >= s.M || j >= s.N) return;
  const int64_t z = blockIdx.z;
  const gptr<const T> a_row = A + z * s.a.batch + i * s.a.row;
  const gptr<const T> b_col = B + z * s.b.batch + j * s.b.col;
  T sum = 0;
  for (int64_t k = 0; k < s.K; ++k) sum += a_row[k * s.a.col] * b_col[k * s.b.row];
  gemm_store(C + z * s.c.batch + i * s.c.row + j * s.c.col, alpha, sum, beta, s.K);
}

}  // namespace

template <class T>
void gemm_v2_coalesced(const GemmProblem<T>& p) {
  const std::string name = gemm_kernel_name<T>("gemm_v2_coalesced");
  launch_kernel(
      name.c_str(), gemm_v2_coalesced_kernel<T>,
      Dim3(unsigned(ceil_div(p.M, kRows)), unsigned(ceil_div(p.N, kCols)), unsigned(p.batch)),
      Dim3(kCols, kRows), 0, p.stream, shape_of(p), p.alpha, gptr<const T>(p.a), gptr<const T>(p.b),
      p.beta, gptr<T>(p.c));
}

GLASS_GEMM_RUNG_INSTANTIATE(gemm_v2_coalesced);

}  // namespace glass::cuda::GLASS_KERNEL_NS
