// lessons/09_cuda_kernels/exercises/solution.cu — the reference answers to lesson 09's
// exercises (exercises.h has the contracts), what the build grades by default. Invariant:
// each launcher only launches its kernel (no tensor op, no copy), with the contract's grid.
// Try the exercises yourself first, in student.cu.
#include <algorithm>

#include "cuda/stream.h"
#include "exercises.h"

namespace glass::lesson09 {

using cuda::Dim3;

// ---- exercise 1 ------------------------------------------------------------------------

// The 32 lanes' values added into lane 0 by halving shuffles.
__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void row_sumsq_kernel(DeviceAccessor<const float, 2> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, warp_sums, kBlock / kWarp);
  const int row = blockIdx.x, t = threadIdx.x;
  const int lane = t % kWarp, warp = t / kWarp;
  float v = 0.0f;  // a thread past the row's end adds nothing
  for (int j = t; j < x.size(1); j += kBlock) {
    const float e = x[row][j];  // one load: x[row][j] * x[row][j] would read it twice
    v += e * e;
  }
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();  // every warp's sum is in shared memory
  if (warp == 0) {
    v = warp_sum(lane < kBlock / kWarp ? warp_sums[lane] : 0.0f);
    if (lane == 0) out[row] = v;
  }
}

void row_sumsq(const Tensor& x, const Tensor& out) {
  GLASS_LAUNCH(row_sumsq_kernel, Dim3(static_cast<unsigned>(x.size(0))), Dim3(kBlock), 0,
               cuda::getCurrentCUDAStream(), x.packed_accessor32<const float, 2, DevicePtrTraits>(),
               out.packed_accessor32<float, 1, DevicePtrTraits>());
}

// ---- exercise 2 ------------------------------------------------------------------------

__global__ void tiled_matmul_kernel(DeviceAccessor<const float, 2> a,
                                    DeviceAccessor<const float, 2> b, DeviceAccessor<float, 2> c) {
  GLASS_SHARED(float[kTile], a_tile, kTile);
  GLASS_SHARED(float[kTile], b_tile, kTile);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int m = c.size(0), n = c.size(1), k = a.size(1);
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    // Out-of-range elements are staged as 0, so they add nothing to any dot product.
    a_tile[ty][tx] = row < m && k0 + tx < k ? a[row][k0 + tx] : 0.0f;
    b_tile[ty][tx] = k0 + ty < k && col < n ? b[k0 + ty][col] : 0.0f;
    __syncthreads();  // the tiles are complete
    for (int j = 0; j < kTile; ++j) acc += a_tile[ty][j] * b_tile[j][tx];
    GLASS_FLOPS(2 * kTile);
    __syncthreads();  // everyone has read them before the next k0 overwrites them
  }
  if (row < m && col < n) c[row][col] = acc;
}

void tiled_matmul(const Tensor& a, const Tensor& b, const Tensor& c) {
  const Dim3 grid(static_cast<unsigned>((c.size(1) + kTile - 1) / kTile),
                  static_cast<unsigned>((c.size(0) + kTile - 1) / kTile));
  GLASS_LAUNCH(tiled_matmul_kernel, grid, Dim3(kTile, kTile), 0, cuda::getCurrentCUDAStream(),
               a.packed_accessor32<const float, 2, DevicePtrTraits>(),
               b.packed_accessor32<const float, 2, DevicePtrTraits>(),
               c.packed_accessor32<float, 2, DevicePtrTraits>());
}

// ---- exercise 3 ------------------------------------------------------------------------

__global__ void blur_kernel(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> y) {
  GLASS_SHARED(float, tile, kBlock + 2);  // tile[t + 1] is x[base + t]; a halo at each end
  const int n = x.size(0);
  const int t = threadIdx.x;
  for (int base = blockIdx.x * kBlock; base < n; base += gridDim.x * kBlock) {
    const int i = base + t;
    tile[t + 1] = i < n ? x[i] : 0.0f;
    if (t == 0) tile[0] = i > 0 ? x[i - 1] : 0.0f;
    if (t == kBlock - 1) tile[kBlock + 1] = i + 1 < n ? x[i + 1] : 0.0f;
    // Every thread reaches both barriers, also those past the end (i >= n): a barrier
    // inside `if (i < n)` would be one that only some threads reach.
    __syncthreads();  // the neighbours' writes are done before anyone reads them
    if (i < n) y[i] = tile[t] + tile[t + 1] + tile[t + 2];
    __syncthreads();  // the reads are done before the next tile overwrites them
  }
}

void blur(const Tensor& x, const Tensor& y) {
  const int64_t tiles = (x.size(0) + kBlock - 1) / kBlock;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(tiles, 1), kBlurBlocks));
  GLASS_LAUNCH(blur_kernel, Dim3(blocks), Dim3(kBlock), 0, cuda::getCurrentCUDAStream(),
               x.packed_accessor32<const float, 1, DevicePtrTraits>(),
               y.packed_accessor32<float, 1, DevicePtrTraits>());
}

}  // namespace glass::lesson09
