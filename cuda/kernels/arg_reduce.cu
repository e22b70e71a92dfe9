// cuda/kernels/arg_reduce.cu — max/min with their index along one dim (argmax, argmin,
// max(dim), min(dim)) on the device.
//
// The input is contiguous, viewed as (outer, n, inner); output (o, j) scans the n
// elements in[o][0..n)[j], inner apart. Its candidates are (value, index) pairs and the
// rule for which pair wins is the CPU's (core/cpu/cpu_reduce.cpp), restated so that it
// no longer depends on scanning in order: NaN beats every number and, among equals
// (equal numbers, or two NaNs), the lower index wins. That rule is associative and
// commutative, so threads may fold their pairs in any tree and still pick the element
// the CPU's left-to-right scan picks.
//
// Short rows (n <= kShortRow): one thread per output scans its row. Longer rows: a block
// per output, the pairs folded like reduce.cu's values (warp shuffles, one barrier); rows
// longer than one block's 4096 elements get several blocks and a second pass, so that
// argmax() of a whole large tensor does not fall to a single block.
//
// Invariant: values[o][j] and indices[o][j] are the CPU's, bit for bit, written once by
// one thread.
#include <algorithm>
#include <cstdint>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "core/scalar_ops.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/reduce.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

inline constexpr int64_t kShortRow = 32;
inline constexpr int kThreadKernelThreads = 128;

// A candidate: an element's value and its index along n; index -1 is "no candidate yet".
template <class T>
struct Best {
  T value;
  int64_t index;
};

// Whether candidate a should be kept over b.
template <bool IsMax, class T>
__device__ __forceinline__ bool wins(const Best<T>& a, const Best<T>& b) {
  if (b.index < 0) return true;
  if (a.index < 0) return false;
  const bool a_nan = scalar_ops::is_nan(a.value), b_nan = scalar_ops::is_nan(b.value);
  if (a_nan || b_nan) return a_nan && (!b_nan || a.index < b.index);
  if (a.value == b.value) return a.index < b.index;
  return IsMax ? a.value > b.value : a.value < b.value;
}

template <bool IsMax, class T>
__device__ __forceinline__ Best<T> better(const Best<T>& a, const Best<T>& b) {
  return wins<IsMax>(a, b) ? a : b;
}

template <class T>
__device__ __forceinline__ T shuffle_value_down(T value, int delta) {
  if constexpr (std::is_same_v<T, bool>) {
    return __shfl_down_sync(0xffffffffu, static_cast<int>(value), delta) != 0;
  } else {
    return __shfl_down_sync(0xffffffffu, value, delta);
  }
}

template <bool IsMax, class T>
__device__ __forceinline__ Best<T> warp_best(Best<T> best) {
  for (int delta = warpSize / 2; delta > 0; delta /= 2) {
    Best<T> other;
    other.value = shuffle_value_down(best.value, delta);
    other.index = __shfl_down_sync(0xffffffffu, best.index, delta);
    best = better<IsMax>(best, other);
  }
  return best;
}

// The output's first element and the distance between its candidates, in elements.
__device__ __forceinline__ int64_t row_start(int64_t o, int64_t n, int64_t inner) {
  return (o / inner) * n * inner + o % inner;
}

template <bool IsMax, class T>
__global__ void arg_reduce_thread_kernel(int64_t num_outputs, int64_t n, int64_t inner,
                                         gptr<const T> in, gptr<T> values, gptr<int64_t> indices) {
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= num_outputs) return;
  const int64_t start = row_start(o, n, inner);
  Best<T> best{T{}, -1};
  for (int64_t i = 0; i < n; ++i) best = better<IsMax>(best, Best<T>{in[start + i * inner], i});
  values[o] = best.value;
  indices[o] = best.index;
}

// Block (o, y) scans its share of output o's row: each thread the elements gridDim.y *
// blockDim.x apart (grid-stride, as reduce_block_kernel), then the warps and the block
// fold the pairs (block_reduce in reduce.cuh, with two shuffles a step). The block's
// winner goes to element o * gridDim.y + y of `best_values` / `best_indices`: the
// outputs themselves when one block covers the row, else scratch for the second pass.
template <bool IsMax, class T>
__global__ void arg_reduce_block_kernel(int64_t n, int64_t inner, gptr<const T> in,
                                        gptr<T> best_values, gptr<int64_t> best_indices) {
  GLASS_SHARED(T, warp_values, kReduceWarps);
  GLASS_SHARED(int64_t, warp_indices, kReduceWarps);
  const int64_t o = blockIdx.x;
  const int64_t start = row_start(o, n, inner);
  Best<T> best{T{}, -1};
  const int64_t stride = int64_t(gridDim.y) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; i < n; i += stride)
    best = better<IsMax>(best, Best<T>{in[start + i * inner], i});
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  best = warp_best<IsMax>(best);
  if (lane == 0) {
    warp_values[warp] = best.value;
    warp_indices[warp] = best.index;
  }
  __syncthreads();
  if (warp != 0) return;
  const int warps = blockDim.x / warpSize;
  best = lane < warps ? Best<T>{warp_values[lane], warp_indices[lane]} : Best<T>{T{}, -1};
  best = warp_best<IsMax>(best);
  if (lane == 0) {
    const int64_t slot = o * gridDim.y + blockIdx.y;
    best_values[slot] = best.value;
    best_indices[slot] = best.index;
  }
}

// The second pass: one thread per output folds its blocks' winners.
template <bool IsMax, class T>
__global__ void arg_reduce_finish_kernel(int64_t num_outputs, int blocks,
                                         gptr<const T> block_values,
                                         gptr<const int64_t> block_indices, gptr<T> values,
                                         gptr<int64_t> indices) {
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= num_outputs) return;
  Best<T> best{T{}, -1};
  for (int64_t slot = o * blocks; slot < (o + 1) * blocks; ++slot)
    best = better<IsMax>(best, Best<T>{block_values[slot], block_indices[slot]});
  values[o] = best.value;
  indices[o] = best.index;
}

Dim3 blocks_for(int64_t threads_needed) {
  return Dim3(
      static_cast<unsigned>((threads_needed + kThreadKernelThreads - 1) / kThreadKernelThreads));
}

template <bool IsMax, class T>
void run_arg_reduce(const Tensor& in, int64_t outer, int64_t n, int64_t inner, const Tensor& values,
                    const Tensor& indices) {
  const int64_t num_outputs = outer * inner;
  if (num_outputs == 0) return;
  GLASS_INTERNAL_ASSERT(n > 0, IsMax ? "argmax" : "argmin", ": an empty row reached the kernel");
  const gptr<const T> x(in.data_ptr<T>());
  const gptr<T> v(values.data_ptr<T>());
  const gptr<int64_t> idx(indices.data_ptr<int64_t>());
  const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(in.device().index()));
  const std::string name = kernel_name(IsMax ? "argmax" : "argmin", scalar_type_of<T>);
  if (n <= kShortRow) {
    launch_kernel(name.c_str(), arg_reduce_thread_kernel<IsMax, T>, blocks_for(num_outputs),
                  Dim3(kThreadKernelThreads), 0, stream, num_outputs, n, inner, x, v, idx);
    return;
  }
  GLASS_CHECK(num_outputs <= int64_t{0x7fffffff}, name, ": ", num_outputs,
              " outputs are more than one CUDA grid holds (2^31 - 1)");
  const int threads = reduce_block_threads(n);
  const int64_t per_block = threads * kReduceElementsPerThread;
  const auto blocks_per_output =
      static_cast<unsigned>(std::min<int64_t>((n + per_block - 1) / per_block, 65535));
  const Dim3 grid(static_cast<unsigned>(num_outputs), blocks_per_output);
  if (blocks_per_output == 1) {
    launch_kernel(name.c_str(), arg_reduce_block_kernel<IsMax, T>, grid, Dim3(threads), 0, stream,
                  n, inner, x, v, idx);
    return;
  }
  // Each block's winner, from the caching allocator (see run_reduce in reduce.cu).
  const TensorOptions scratch = TensorOptions().device(in.device());
  const Tensor block_values = empty({num_outputs * blocks_per_output}, scratch.dtype(in.dtype()));
  const Tensor block_indices = empty({num_outputs * blocks_per_output}, scratch.dtype(kInt64));
  const gptr<T> bv(block_values.data_ptr<T>());
  const gptr<int64_t> bi(block_indices.data_ptr<int64_t>());
  launch_kernel(name.c_str(), arg_reduce_block_kernel<IsMax, T>, grid, Dim3(threads), 0, stream, n,
                inner, x, bv, bi);
  const std::string finish = name + "_finish";
  launch_kernel(finish.c_str(), arg_reduce_finish_kernel<IsMax, T>, blocks_for(num_outputs),
                Dim3(kThreadKernelThreads), 0, stream, num_outputs,
                static_cast<int>(blocks_per_output), gptr<const T>(bv), gptr<const int64_t>(bi), v,
                idx);
}

}  // namespace

void launch_arg_reduce(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max,
                       const Tensor& values, const Tensor& indices) {
  dispatch_dtype(in.dtype(), is_max ? "argmax" : "argmin", [&]<class T>() {
    if (is_max) return run_arg_reduce<true, T>(in, outer, n, inner, values, indices);
    return run_arg_reduce<false, T>(in, outer, n, inner, values, indices);
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
