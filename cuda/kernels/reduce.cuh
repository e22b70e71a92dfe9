// cuda/kernels/reduce.cuh — the pieces every reduction kernel shares: accumulator types,
// the combine step of each ReduceOp, and the warp and block trees.
//
// Accumulation follows the CPU backend (core/cpu/cpu_reduce.cpp), so results agree:
//   * float32 sums accumulate in float inside a block (BlockAcc) and in double across
//     blocks (GridAcc), as the CPU adds float blocks of 1024 into double lanes; float32
//     products accumulate in double throughout, as on the CPU (a float running product
//     overflows to inf where the double one does not, and inf * 0 is NaN, not 0);
//   * integer sums and products accumulate in uint64_t: they wrap modulo 2^64, as
//     PyTorch's do, and unsigned arithmetic wraps by definition (signed overflow would be
//     undefined behaviour); converting the result back to int64 is modular (C++20);
//   * max and min keep the input type and let NaN win (core/scalar_ops.h).
//
// Invariant: combine<Op> is associative and commutative up to float rounding, and
// identity<Op, A>() is its neutral element, so any tree of combines over a set of values
// gives the CPU's result (exactly for integers, bools, max and min).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/device_kernels.h"
#include "core/scalar_ops.h"
#include "cuda/kernel.h"

namespace glass::cuda::GLASS_KERNEL_NS {

inline constexpr int kMaxReduceThreads = 256;  // a block; a multiple of the warp size
inline constexpr int kReduceWarps = kMaxReduceThreads / 32;
// Elements each thread folds in one pass before any cooperation: a block of 256 threads
// covers 4096 elements, then the next block of the same output takes over.
inline constexpr int64_t kReduceElementsPerThread = 16;

constexpr bool is_sum_or_prod(ReduceOp op) { return op == ReduceOp::Sum || op == ReduceOp::Prod; }

template <class T>
using IntegerAcc = std::conditional_t<std::is_same_v<T, bool>, bool, uint64_t>;

// What a block accumulates in.
template <ReduceOp Op, class T>
using BlockAcc = std::conditional_t<
    !is_sum_or_prod(Op), T,
    std::conditional_t<Op == ReduceOp::Prod && std::is_same_v<T, float>, double,
                       std::conditional_t<std::is_floating_point_v<T>, T, IntegerAcc<T>>>>;
// What the blocks of one output are combined in (and the output's old value with them).
template <ReduceOp Op, class T>
using GridAcc =
    std::conditional_t<is_sum_or_prod(Op) && std::is_same_v<T, float>, double, BlockAcc<Op, T>>;

template <ReduceOp Op, class A>
__device__ __forceinline__ A identity() {
  if constexpr (Op == ReduceOp::Sum) {
    return A(0);  // false for bool
  } else if constexpr (Op == ReduceOp::Prod) {
    return A(1);  // true for bool
  } else if constexpr (Op == ReduceOp::Max && std::is_floating_point_v<A>) {
    return -std::numeric_limits<A>::infinity();
  } else if constexpr (Op == ReduceOp::Max) {
    return std::numeric_limits<A>::lowest();
  } else if constexpr (std::is_floating_point_v<A>) {
    return std::numeric_limits<A>::infinity();
  } else {
    return std::numeric_limits<A>::max();
  }
}

template <ReduceOp Op, class A>
__device__ __forceinline__ A combine(A a, A b) {
  if constexpr (Op == ReduceOp::Sum && std::is_same_v<A, bool>) {
    return a || b;
  } else if constexpr (Op == ReduceOp::Sum) {
    return static_cast<A>(a + b);
  } else if constexpr (Op == ReduceOp::Prod && std::is_same_v<A, bool>) {
    return a && b;
  } else if constexpr (Op == ReduceOp::Prod) {
    return static_cast<A>(a * b);
  } else if constexpr (Op == ReduceOp::Max) {
    return scalar_ops::max_propagate_nan(a, b);
  } else {
    return scalar_ops::min_propagate_nan(a, b);
  }
}

// __shfl_down_sync for every accumulator type: CUDA has no bool overload.
template <class A>
__device__ __forceinline__ A shuffle_down(A value, int delta) {
  if constexpr (std::is_same_v<A, bool>) {
    return __shfl_down_sync(0xffffffffu, static_cast<int>(value), delta) != 0;
  } else {
    return __shfl_down_sync(0xffffffffu, value, delta);
  }
}

// The warp's 32 values folded into lane 0, in five shuffle steps: no shared memory, no
// barrier (rung 4 of the ladder). Every lane of the warp must call it.
template <ReduceOp Op, class A>
__device__ __forceinline__ A warp_reduce(A acc) {
  for (int delta = warpSize / 2; delta > 0; delta /= 2)
    acc = combine<Op, A>(acc, shuffle_down(acc, delta));
  return acc;
}

// The block's values folded into thread 0: each warp folds its own, the warps' results
// meet in shared memory, and the first warp folds those. One barrier in all. Every
// thread of the block must call it, once per kernel; blockDim.x is a multiple of 32.
template <ReduceOp Op, class A>
__device__ __forceinline__ A block_reduce(A acc) {
  GLASS_SHARED(A, warp_results, kReduceWarps);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  acc = warp_reduce<Op, A>(acc);
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / warpSize;
    acc = warp_reduce<Op, A>(lane < warps ? warp_results[lane] : identity<Op, A>());
  }
  return acc;
}

// Threads per block for reductions of n elements: enough that each folds about
// kReduceElementsPerThread, a power of two from one warp up to kMaxReduceThreads. Short
// reductions get small blocks instead of 256 threads that mostly hold the identity.
inline int reduce_block_threads(int64_t n) {
  int threads = 32;
  while (threads < kMaxReduceThreads && threads * kReduceElementsPerThread < n) threads *= 2;
  return threads;
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
