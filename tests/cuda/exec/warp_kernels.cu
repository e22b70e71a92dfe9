// tests/cuda/exec/warp_kernels.cu — kernels built on warp shuffles and votes.
#include "exec_kernels.h"

namespace exec_test {

__device__ int global_thread() {
  return blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
}

__global__ void warp_sum_down(gptr<const int> in, gptr<int> out) {
  const int i = global_thread();
  int v = in[i];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (i % 32 == 0) out[i / 32] = v;
}

__global__ void warp_sum_xor(gptr<const float> in, gptr<float> out, int width) {
  const int i = global_thread();
  float v = in[i];
  for (int m = width / 2; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m, width);
  out[i] = v;
}

__global__ void warp_inclusive_scan(gptr<const int> in, gptr<int> out) {
  const int i = global_thread();
  const int lane = i % 32;
  int v = in[i];
  for (int d = 1; d < 32; d *= 2) {
    const int up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += up;
  }
  out[i] = v;
}

__global__ void warp_broadcast(gptr<const double> in, gptr<double> out, int src, int width) {
  const int i = global_thread();
  out[i] = __shfl_sync(0xffffffffu, in[i], src, width);
}

__global__ void warp_shift_down(gptr<const int> in, gptr<int> out, unsigned delta) {
  const int i = global_thread();
  out[i] = __shfl_down_sync(0xffffffffu, in[i], delta);
}

__global__ void warp_votes(gptr<const int> in, int threshold, gptr<unsigned> ballots, gptr<int> any,
                           gptr<int> all) {
  const int i = global_thread();
  const int p = in[i] > threshold;
  const unsigned ballot = __ballot_sync(0xffffffffu, p);
  const int a = __any_sync(0xffffffffu, p);
  const int b = __all_sync(0xffffffffu, p);
  if (i % 32 == 0) {
    ballots[i / 32] = ballot;
    any[i / 32] = a;
    all[i / 32] = b;
  }
}

__global__ void block_sum_two_level(gptr<const float> in, gptr<float> out, int n) {
  GLASS_SHARED(float, warp_sums, 32);
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0) warp_sums[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    const int warps = (blockDim.x + 31) / 32;
    v = t < warps ? warp_sums[t] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0) out[blockIdx.x] = v;
  }
}

__global__ void split_warp_swaps(gptr<const int> in, gptr<int> out) {
  const int i = global_thread();
  int v = in[i];
  if (i % 32 < 16) {
    v = __shfl_xor_sync(0x0000ffffu, v, 1);
  } else {
    v = __shfl_xor_sync(0xffff0000u, v, 2);
  }
  __syncwarp();
  out[i] = v;
}

}  // namespace exec_test
