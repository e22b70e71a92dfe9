// tests/cuda/exec/watch_kernels.cu — the kernels of watch_kernels.h.
#include "watch_kernels.h"

namespace watch_test {

__global__ void neighbour_exchange(gptr<int> out, bool barrier) {
  GLASS_SHARED(int, cells, 64);
  const int t = threadIdx.x;
  cells[t] = 100 + t;
  if (barrier) __syncthreads();
  out[t] = cells[(t + 1) % blockDim.x];
}

__global__ void warp_tree_sum(gptr<const int> in, gptr<int> out, bool syncwarp) {
  GLASS_SHARED(int, partial, 32);
  const int t = threadIdx.x;
  partial[t] = in[t];
  if (syncwarp) __syncwarp();
  for (int offset = 16; offset > 0; offset /= 2) {
    const int other = t < offset ? partial[t + offset] : 0;
    if (syncwarp) __syncwarp();  // every lane has read before any lane writes
    // Unsigned: without __syncwarp a lane may read a word nobody wrote yet (the simulator
    // fills shared memory with a pattern), and a signed overflow would be UB of its own.
    if (t < offset) partial[t] = int(unsigned(partial[t]) + unsigned(other));
    if (syncwarp) __syncwarp();  // every lane has written before the next step reads
  }
  if (t == 0) out[0] = partial[0];
}

__global__ void shuffle_block_sum(gptr<const float> in, gptr<float> out) {
  GLASS_SHARED(float, warp_sums, 32);
  const int t = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + t];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0) warp_sums[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < int(blockDim.x / 32) ? warp_sums[t] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0) out[blockIdx.x] = v;
  }
}

__global__ void shared_atomic_count(gptr<int> out) {
  GLASS_SHARED(int, count, 1);
  if (threadIdx.x == 0) count[0] = 0;
  __syncthreads();
  atomicAdd(&count[0], 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = count[0];
}

__global__ void tile_transpose(gptr<const float> in, gptr<float> out, int n, bool barrier) {
  GLASS_SHARED(float[17], tile, 16);  // padded against bank conflicts, as on a GPU
  const int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  if (barrier) __syncthreads();
  const int tx = blockIdx.y * 16 + threadIdx.x, ty = blockIdx.x * 16 + threadIdx.y;
  out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

__global__ void copy(gptr<const float> in, gptr<float> out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void read_shifted(gptr<const float> in, gptr<float> out, int n, int shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + shift];
}

__global__ void write_shifted(gptr<const float> in, gptr<float> out, int n, int shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i + shift] = in[i];
}

__global__ void copy_vec4(gptr<const float> in, gptr<float> out, int n4, int shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) gptr_cast<Float4>(out)[i] = gptr_cast<const Float4>(in)[i + shift];
}

__global__ void affine(gptr<const float> x, gptr<float> out, float a, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = a * x[i] + b;
    GLASS_FLOPS(2);
  }
}

}  // namespace watch_test
