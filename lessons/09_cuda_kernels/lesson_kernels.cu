// lessons/09_cuda_kernels/lesson_kernels.cu — the reduction ladder (Mark Harris, "Optimizing
// Parallel Reduction in CUDA", condensed to five rungs) and a racy reduction, written to the
// project's kernel conventions (cuda/kernel.h) and reading tensors through DeviceAccessor.
// Compiled for the simulated GPU only (lessons/CMakeLists.txt).
//
// Every rung computes per-block partial sums of blockDim.x == kBlock threads; each changes
// one thing. Invariant: every rung sums exactly the elements of x, in some order, once.
#include <algorithm>

#include "cuda/kernel.h"
#include "cuda/stream.h"
#include "lesson_kernels.h"

namespace lesson09 {
namespace {

using glass::cuda::Dim3;

// Rung 1: interleaved addressing. At step s, threads whose index is a multiple of 2s add
// their neighbour s away. The test tid % (2 * s) leaves most lanes of every warp idle: the
// warps diverge, and the modulo is slow.
__global__ void reduce_interleaved(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < x.size(0) ? x[i] : 0.0f;
  __syncthreads();
  for (int s = 1; s < static_cast<int>(blockDim.x); s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Rung 2: sequential addressing. The first s threads add the element s away: the active
// threads are contiguous, so whole warps finish instead of every warp idling in part.
__global__ void reduce_sequential(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < x.size(0) ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Rung 3: first add during load. Half of rung 2's threads were idle from the first step;
// here each thread loads two elements and adds them, so a block covers 2 * kBlock.
__global__ void reduce_first_add(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  const int n = x.size(0);
  const int i = blockIdx.x * (2 * blockDim.x) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + static_cast<int>(blockDim.x) < n) v += x[i + blockDim.x];
  sdata[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Rung 4: rung 3, with the last 32 steps' worth done by one warp's shuffles.
__global__ void reduce_warp_shuffle(DeviceAccessor<const float, 1> x,
                                    DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  const int n = x.size(0);
  const int i = blockIdx.x * (2 * blockDim.x) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + static_cast<int>(blockDim.x) < n) v += x[i + blockDim.x];
  sdata[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 32; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    v = sdata[tid] + sdata[tid + 32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// Rung 5: grid-stride loop. A fixed grid of blocks (kGridStrideBlocks) walks the whole
// input, each thread adding many elements in a register before the block reduces once:
// fewer blocks, fewer barriers, fewer partial sums. The library's reduce.cu keeps this
// loop but reduces the block differently (block_reduce in reduce.cuh: warps shuffle first).
constexpr int kGridStrideBlocks = 16;
__global__ void reduce_grid_stride(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  const int n = x.size(0);
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) v += x[i];
  sdata[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 32; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    v = sdata[tid] + sdata[tid + 32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// Rung 2 without the barrier in its loop: a thread may read sdata[tid + s] before the
// thread that owns it has added into it.
__global__ void reduce_racy(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> out) {
  GLASS_SHARED(float, sdata, kBlock);
  const int tid = threadIdx.x;
  sdata[tid] = tid < x.size(0) ? x[tid] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    // __syncthreads() missing here
  }
  if (tid == 0) out[0] = sdata[0];
}

using Kernel = void (*)(DeviceAccessor<const float, 1>, DeviceAccessor<float, 1>);

Kernel kernel_of(int rung) {
  switch (rung) {
    case 1: return reduce_interleaved;
    case 2: return reduce_sequential;
    case 3: return reduce_first_add;
    case 4: return reduce_warp_shuffle;
    default: return reduce_grid_stride;
  }
}

// Elements one block covers: rungs 3 and 4 load two per thread.
int64_t per_block(int rung) { return rung == 3 || rung == 4 ? 2 * kBlock : kBlock; }

void launch(int rung, const glass::Tensor& in, const glass::Tensor& out, int64_t blocks) {
  glass::cuda::launch_kernel(rung_name(rung), kernel_of(rung), Dim3(static_cast<unsigned>(blocks)),
                             Dim3(kBlock), 0, glass::cuda::getCurrentCUDAStream(),
                             in.packed_accessor32<const float, 1, DevicePtrTraits>(),
                             out.packed_accessor32<float, 1, DevicePtrTraits>());
}

}  // namespace

const char* rung_name(int rung) {
  static const char* const names[] = {"reduce_interleaved", "reduce_sequential", "reduce_first_add",
                                      "reduce_warp_shuffle", "reduce_grid_stride"};
  return names[std::clamp(rung, 1, 5) - 1];
}

int64_t partials_needed(int rung, int64_t n) {
  if (rung == 5) return kGridStrideBlocks;
  return (n + per_block(rung) - 1) / per_block(rung);
}

void ladder_sum(int rung, const glass::Tensor& x, const glass::Tensor& partials,
                const glass::Tensor& out) {
  const int64_t blocks = partials_needed(rung, x.size(0));
  GLASS_CHECK(partials.size(0) == blocks && blocks <= per_block(rung), "ladder_sum: rung ", rung,
              " needs ", blocks, " partial sums (at most ", per_block(rung), " for one block)");
  launch(rung, x, partials, blocks);
  launch(rung, partials, out, 1);  // one block sums the partial sums
}

void racy_block_sum(const glass::Tensor& x, const glass::Tensor& out) {
  GLASS_LAUNCH(reduce_racy, Dim3(1), Dim3(kBlock), 0, glass::cuda::getCurrentCUDAStream(),
               x.packed_accessor32<const float, 1, DevicePtrTraits>(),
               out.packed_accessor32<float, 1, DevicePtrTraits>());
}

void fixed_block_sum(const glass::Tensor& x, const glass::Tensor& out) { launch(2, x, out, 1); }

}  // namespace lesson09
