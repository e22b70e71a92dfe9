// cuda/kernels/gemm_v1_naive.cu — v1, the oracle: one thread per element of C.
//
// The plainest correct kernel: thread (x, y) of the grid computes C[i, j] as one dot
// product read straight from global memory. It is slow for a reason worth seeing:
// threadIdx.x walks the rows of C, so the 32 threads of a warp hold 32 different rows
// i and, at each step k, load A[i, k] from 32 addresses a whole row apart — 32 memory
// transactions where one would do — and write C 32 rows apart too. (B[k, j] is the same
// address for the whole warp: one broadcast load.) v2 swaps the mapping.
//
// Invariant: every rung is tested against this one, so it stays obvious, not fast.
#include "cuda/kernels/gemm_common.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

constexpr int kRows = 32;  // threadIdx.x: rows of C (a warp spans 32 rows)
constexpr int kCols = 8;   // threadIdx.y: columns of C

template <class T>
__global__ void gemm_v1_naive_kernel(GemmShape s, T alpha, gptr<const T> A, gptr<const T> B, T beta,
                                     gptr<T> C) {
  const int64_t i = int64_t(blockIdx.x) * kRows + threadIdx.x;
  const int64_t j = int64_t(blockIdx.y) * kCols + threadIdx.y;
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
void gemm_v1_naive(const GemmProblem<T>& p) {
  const std::string name = gemm_kernel_name<T>("gemm_v1_naive");
  launch_kernel(
      name.c_str(), gemm_v1_naive_kernel<T>,
      Dim3(unsigned(ceil_div(p.M, kRows)), unsigned(ceil_div(p.N, kCols)), unsigned(p.batch)),
      Dim3(kRows, kCols), 0, p.stream, shape_of(p), p.alpha, gptr<const T>(p.a), gptr<const T>(p.b),
      p.beta, gptr<T>(p.c));
}

GLASS_GEMM_RUNG_INSTANTIATE(gemm_v1_naive);

}  // namespace glass::cuda::GLASS_KERNEL_NS
