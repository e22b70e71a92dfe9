// cuda/kernels/gemm_common.cuh — what the gemm rungs (gemm_v*.cu) share.
//
// The kernel-side view of a GemmProblem (sizes and strides, no pointers: pointers are
// kernel parameters of their own, so the simulator sees which memory a launch reads and
// writes), the epilogue every rung ends with, and the launch-side helpers.
//
// Invariant: every rung maps blockIdx.x over M, blockIdx.y over N and blockIdx.z over
// the batch, and writes each element of C exactly once, through gemm_store().
#pragma once

#include <cstdint>
#include <string>

#include "core/scalar_type.h"
#include "cuda/kernel.h"
#include "cuda/kernels/gemm.h"

namespace glass::cuda::GLASS_KERNEL_NS {

// Sizes and strides: what a kernel needs of a GemmProblem besides its pointers.
struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  MatrixStrides a, b, c;
};

template <class T>
GemmShape shape_of(const GemmProblem<T>& p) {
  return GemmShape{p.M, p.N, p.K, p.sa, p.sb, p.sc};
}

// C[i, j] = alpha·sum + beta·C[i, j], written as the CPU's v1 writes it, so integer
// results match it exactly. beta == 0: C is not read.
// k: the length of the dot product, declared as 2k flops (GLASS_FLOPS, counted by the
// simulator) so every rung reports the same work and their arithmetic intensities
// (flops per global byte) differ only by their memory traffic.
template <class T>
__device__ __forceinline__ void gemm_store(gptr<T> c, T alpha, T sum, T beta, int64_t k) {
  GLASS_FLOPS(2 * k);
  *c = beta == T(0) ? alpha * sum : alpha * sum + beta * *c;
}

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// v5's loads move 16 bytes: kVecWidth<T> elements (4 floats, 2 doubles).
inline constexpr int kVecBytes = 16;
template <class T>
inline constexpr int kVecWidth = kVecBytes / int(sizeof(T));

// Can the rows of this operand (batch × rows × cols) be read as aligned 16-byte vectors?
// Unit column stride, and every row of every batch on a 16-byte boundary. The strides of
// size-1 dims are never used, so they do not count.
template <class T>
bool rows_are_vectors(const T* base, const MatrixStrides& st, int64_t batch, int64_t rows,
                      int64_t cols) {
  const auto aligned = [](int64_t stride) { return stride % kVecWidth<T> == 0; };
  return (cols <= 1 || st.col == 1) && (rows <= 1 || aligned(st.row)) &&
         (batch <= 1 || aligned(st.batch)) && reinterpret_cast<uintptr_t>(base) % kVecBytes == 0;
}

// "gemm_v3_shared_tiles<Float>": what the timeline and error messages call a launch.
template <class T>
std::string gemm_kernel_name(const char* rung) {
  return std::string(rung) + "<" + to_string(scalar_type_of<T>) + ">";
}

}  // namespace glass::cuda::GLASS_KERNEL_NS

// Instantiates a rung's host launcher for every dtype the CPU's bmm supports.
#define GLASS_GEMM_RUNG_INSTANTIATE(rung)                   \
  template void rung<float>(const GemmProblem<float>&);     \
  template void rung<double>(const GemmProblem<double>&);   \
  template void rung<int32_t>(const GemmProblem<int32_t>&); \
  template void rung<int64_t>(const GemmProblem<int64_t>&)
