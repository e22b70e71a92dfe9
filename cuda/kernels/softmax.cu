// cuda/kernels/softmax.cu — softmax and log_softmax along n of an (outer, n, inner) tensor.
//
// softmax(x)_i = exp(x_i - m) / d with m = max_j x_j and d = sum_j exp(x_j - m): subtracting
// the max keeps exp() from overflowing and leaves the result unchanged. The textbook way
// reads the row three times: the max, the sum, the output. The online normaliser
// (Milakov & Gimelshein, "Online normalizer calculation for softmax", 2018) finds m and d
// in ONE read: keep a running max m and a running sum d of exp(x - m); when a larger x
// arrives, the old sum is rescaled to the new max, d * exp(m_old - m_new). Two partial
// results (m1, d1), (m2, d2) merge the same way, and the merge is associative, so the
// threads of a block each fold their part of the row and then merge their pairs with warp
// shuffles and a block tree — like a sum. Then one more read writes the outputs: 2 reads
// and a write instead of 3 reads and a write, on an op that is memory-bound.
//
// Layouts: inner == 1 (softmax over the last dim, the common case) gives one block per
// row, its threads reading neighbouring elements (coalesced). inner > 1 gives one thread
// per (outer, inner) column, walking down its column; neighbouring threads read
// neighbouring columns, so those loads are coalesced too.
//
// launch_softmax_three_pass is the textbook version, kept for the lesson's comparison
// (bench and tests). Both match the CPU kernel (core/cpu/cpu_reduce.cpp) up to rounding:
// an all -inf row gives NaN there and here, as in PyTorch.
//
// Invariant: in and out are contiguous (the contract of DeviceKernels::softmax); every
// output element is written once, by the thread that owns its row or column.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/device_kernels.h"
#include "core/scalar_ops.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/pointwise_ops.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

inline constexpr int kSoftmaxRowThreads = 128;  // at most: a short row gets fewer
inline constexpr int kWarp = 32;                // warpSize, as a host-side constant
inline constexpr int kSoftmaxColumnThreads = 128;

template <class T>
__device__ __forceinline__ T minus_infinity() {
  return -std::numeric_limits<T>::infinity();
}

// ---- the online normaliser -----------------------------------------------------------------

// The running max m of the elements seen and d = sum of exp(x - m) over them.
template <class T>
struct MaxSum {
  T m;
  T d;
};

template <class T>
__device__ __forceinline__ MaxSum<T> empty_max_sum() {
  return {minus_infinity<T>(), T(0)};
}

// Folds in one element: one exp per element. A -inf adds exp(-inf) = 0, and is skipped so
// that -inf - -inf (NaN) is never computed. A NaN or a +inf makes the sum, and so the whole
// row, NaN — what x - max gives on the CPU and in PyTorch (inf - inf is NaN) — so the
// answer does not depend on which kernel or which merge order saw the +inf first.
template <class T>
__device__ __forceinline__ void add(MaxSum<T>& s, T x) {
  if (x > s.m) {
    // Rescale the old sum to the new max; exp(x - x) is 1, or NaN when x is +inf.
    s.d = s.d * d_exp(s.m - x) + d_exp(x - x);
    s.m = x;
  } else if (x != minus_infinity<T>()) {
    s.d += d_exp(x - s.m);
  }
}

// Merges two partial results: both sums rescaled to the larger max.
template <class T>
__device__ __forceinline__ MaxSum<T> merge(MaxSum<T> a, MaxSum<T> b) {
  const T m = a.m > b.m ? a.m : b.m;
  // Nothing but -inf so far: no exp to rescale (-inf - -inf is NaN). The sums are 0, or
  // NaN when a NaN was folded in, which must survive merging with idle threads.
  if (m == minus_infinity<T>()) return {m, a.d + b.d};
  return {m, a.d * d_exp(a.m - m) + b.d * d_exp(b.m - m)};
}

// A shuffle moves at most 8 bytes, so m and d travel separately.
template <class T>
__device__ __forceinline__ MaxSum<T> warp_merge(MaxSum<T> s) {
  for (int lane_mask = warpSize / 2; lane_mask > 0; lane_mask /= 2) {
    const MaxSum<T> other{__shfl_xor_sync(0xffffffffu, s.m, lane_mask),
                          __shfl_xor_sync(0xffffffffu, s.d, lane_mask)};
    s = merge(s, other);
  }
  return s;
}

// Every thread of the block gets the merge of all the block's pairs. blockDim.x is a
// multiple of 32. Ends with a barrier, so the shared arrays may be used again.
template <class T>
__device__ MaxSum<T> block_merge(MaxSum<T> s) {
  GLASS_SHARED(T, warp_m, 32);
  GLASS_SHARED(T, warp_d, 32);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  s = warp_merge(s);
  if (lane == 0) {
    warp_m[warp] = s.m;
    warp_d[warp] = s.d;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / warpSize;
    s = lane < warps ? MaxSum<T>{warp_m[lane], warp_d[lane]} : empty_max_sum<T>();
    s = warp_merge(s);
    if (lane == 0) {
      warp_m[0] = s.m;
      warp_d[0] = s.d;
    }
  }
  __syncthreads();
  const MaxSum<T> all{warp_m[0], warp_d[0]};
  __syncthreads();
  return all;
}

// ---- the textbook reductions (three-pass version) ---------------------------------------------

template <class T, class F>
__device__ __forceinline__ T warp_reduce(T v, F f) {
  for (int lane_mask = warpSize / 2; lane_mask > 0; lane_mask /= 2)
    v = f(v, __shfl_xor_sync(0xffffffffu, v, lane_mask));
  return v;
}

// Every thread gets f over the block's values; `identity` fills the missing warps.
template <class T, class F>
__device__ T block_reduce(T v, F f, T identity) {
  GLASS_SHARED(T, partial, 32);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_reduce(v, f);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_reduce(lane < int(blockDim.x / warpSize) ? partial[lane] : identity, f);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const T all = partial[0];
  __syncthreads();
  return all;
}

template <class T>
struct MaxOp {
  __device__ T operator()(T a, T b) const { return scalar_ops::max_propagate_nan(a, b); }
};
template <class T>
struct SumOp {
  __device__ T operator()(T a, T b) const { return a + b; }
};

// ---- the output -------------------------------------------------------------------------------

// What the output needs of (m, d): log d for log_softmax, 1 / d for softmax.
template <class T>
struct Normaliser {
  T m, log_d, inv_d;
};
template <class T>
__device__ __forceinline__ Normaliser<T> normaliser(T m, T d) {
  return {m, d_log(d), T(1) / d};
}
template <class T>
__device__ __forceinline__ T softmax_value(T x, const Normaliser<T>& z, bool log) {
  return log ? (x - z.m) - z.log_d : d_exp(x - z.m) * z.inv_d;
}

// ---- kernels ------------------------------------------------------------------------------------

// inner == 1: block r owns row r; thread t reads elements t, t + blockDim.x, ...
template <class T>
__global__ void softmax_rows_online_kernel(int64_t n, gptr<const T> in, gptr<T> out, bool log) {
  const gptr<const T> x = in + int64_t(blockIdx.x) * n;
  const gptr<T> y = out + int64_t(blockIdx.x) * n;
  MaxSum<T> s = empty_max_sum<T>();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) add(s, x[i]);  // read 1
  s = block_merge(s);
  const Normaliser<T> z = normaliser(s.m, s.d);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = softmax_value(x[i], z, log);  // read 2
}

template <class T>
__global__ void softmax_rows_three_pass_kernel(int64_t n, gptr<const T> in, gptr<T> out, bool log) {
  const gptr<const T> x = in + int64_t(blockIdx.x) * n;
  const gptr<T> y = out + int64_t(blockIdx.x) * n;
  T m = minus_infinity<T>();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = MaxOp<T>{}(m, x[i]);  // read 1
  m = block_reduce(m, MaxOp<T>{}, minus_infinity<T>());
  T d = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) d += d_exp(x[i] - m);  // read 2
  d = block_reduce(d, SumOp<T>{}, T(0));
  const Normaliser<T> z = normaliser(m, d);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = softmax_value(x[i], z, log);  // read 3
}

// inner > 1: thread c owns column c = (o, j), the elements o*n*inner + j + i*inner.
template <class T>
__global__ void softmax_columns_kernel(int64_t outer, int64_t n, int64_t inner, gptr<const T> in,
                                       gptr<T> out, bool log, bool online) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= outer * inner) return;
  const int64_t start = (c / inner) * n * inner + c % inner;
  const gptr<const T> x = in + start;
  const gptr<T> y = out + start;
  T m, d;
  if (online) {
    MaxSum<T> s = empty_max_sum<T>();
    for (int64_t i = 0; i < n; ++i) add(s, x[i * inner]);
    m = s.m;
    d = s.d;
  } else {
    m = minus_infinity<T>();
    for (int64_t i = 0; i < n; ++i) m = MaxOp<T>{}(m, x[i * inner]);
    d = 0;
    for (int64_t i = 0; i < n; ++i) d += d_exp(x[i * inner] - m);
  }
  const Normaliser<T> z = normaliser(m, d);
  for (int64_t i = 0; i < n; ++i) y[i * inner] = softmax_value(x[i * inner], z, log);
}

// ---- host side ----------------------------------------------------------------------------------

void launch_softmax_impl(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                         const Tensor& out, bool online) {
  if (outer == 0 || n == 0 || inner == 0) return;
  const char* op = log ? "log_softmax" : "softmax";
  GLASS_CHECK(inner > 1 || outer <= std::numeric_limits<int32_t>::max(), op,
              "(): CUDA runs one block per row, and ", outer,
              " rows exceed the grid's limit of 2^31 - 1 blocks");
  dispatch_floating(in.dtype(), op, [&]<class T>() {
    const gptr<const T> x(static_cast<const T*>(in.data_ptr()));
    const gptr<T> y(static_cast<T*>(out.data_ptr()));
    const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(in.device().index()));
    if (inner == 1) {
      // Whole warps (the block tree needs them), no more than the row can use.
      // (kWarp, not warpSize: warpSize is a device-side variable under nvcc.)
      const int64_t warps = std::min<int64_t>((n + kWarp - 1) / kWarp, kSoftmaxRowThreads / kWarp);
      const Dim3 block(static_cast<unsigned>(warps * kWarp));
      const std::string name = kernel_name(
          online ? "softmax_rows_online" : "softmax_rows_three_pass", scalar_type_of<T>);
      launch_kernel(name.c_str(),
                    online ? softmax_rows_online_kernel<T> : softmax_rows_three_pass_kernel<T>,
                    Dim3(static_cast<unsigned>(outer)), block, 0, stream, n, x, y, log);
    } else {
      const int64_t columns = outer * inner;
      const std::string name = kernel_name("softmax_columns", scalar_type_of<T>);
      launch_kernel(name.c_str(), softmax_columns_kernel<T>,
                    Dim3(static_cast<unsigned>((columns + kSoftmaxColumnThreads - 1) /
                                               kSoftmaxColumnThreads)),
                    Dim3(kSoftmaxColumnThreads), 0, stream, outer, n, inner, x, y, log, online);
    }
  });
}

}  // namespace

void launch_softmax(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                    const Tensor& out) {
  launch_softmax_impl(in, outer, n, inner, log, out, /*online=*/true);
}

void launch_softmax_three_pass(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                               const Tensor& out) {
  launch_softmax_impl(in, outer, n, inner, log, out, /*online=*/false);
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
