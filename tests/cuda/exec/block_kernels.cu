// tests/cuda/exec/block_kernels.cu — kernels with block barriers and shared memory.
#include "exec_kernels.h"

namespace exec_test {

__global__ void write_builtins(gptr<int> out) {
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const int b = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
  gptr<int> o = out + 12 * (b * threads + t);
  const dim3 values[4] = {threadIdx, blockIdx, blockDim, gridDim};
  for (int k = 0; k < 4; ++k) {
    o[3 * k] = values[k].x;
    o[3 * k + 1] = values[k].y;
    o[3 * k + 2] = values[k].z;
  }
}

__global__ void block_sum_static(gptr<const float> in, gptr<float> out, int n) {
  GLASS_SHARED(float, partial, 256);
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void block_sum_dynamic(gptr<const float> in, gptr<float> out, int n) {
  GLASS_DYNAMIC_SHARED(float, partial);
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void reverse_blocks(gptr<int> data) {
  GLASS_DYNAMIC_SHARED(int, s);
  const int t = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  s[t] = data[base + t];
  __syncthreads();
  data[base + t] = s[blockDim.x - 1 - t];
}

__global__ void transpose_tiled(gptr<const float> in, gptr<float> out, int rows, int cols) {
  GLASS_SHARED(float[17], tile, 16);  // one column of padding, as on a GPU (bank conflicts)
  int x = blockIdx.x * 16 + threadIdx.x;
  int y = blockIdx.y * 16 + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * 16 + threadIdx.x;
  y = blockIdx.x * 16 + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void block_scan(gptr<const int> in, gptr<int> out) {
  GLASS_SHARED(int, buf, 2 * 256);
  const int t = threadIdx.x;
  int src = 0;
  buf[t] = in[t];
  __syncthreads();
  for (unsigned d = 1; d < blockDim.x; d *= 2) {
    const int dst = 1 - src;
    buf[dst * 256 + t] = buf[src * 256 + t] + (t >= int(d) ? buf[src * 256 + t - d] : 0);
    __syncthreads();
    src = dst;
  }
  out[t] = buf[src * 256 + t];
}

__global__ void sum_with_trailing_exits(gptr<const int> in, gptr<int> out, int active) {
  GLASS_SHARED(int, s, 256);
  const int t = threadIdx.x;
  if (t >= active) return;
  s[t] = in[t];
  __syncthreads();
  if (t == 0) {
    int total = 0;
    for (int k = 0; k < active; ++k) total += s[k];
    out[0] = total;
  }
}

__global__ void sum_with_interleaved_exits(gptr<const int> in, gptr<int> out) {
  GLASS_SHARED(int, s, 256);
  const int t = threadIdx.x;
  if (t % 3 == 0) return;
  s[t] = in[t];
  __syncthreads();
  if (t == 1) {
    int total = 0;
    for (unsigned k = 0; k < blockDim.x; ++k)
      if (k % 3 != 0) total += s[k];
    out[0] = total;
  }
}

__global__ void barrier_in_last_thread(gptr<int> out) {
  if (threadIdx.x + 1 < blockDim.x) return;
  __syncthreads();
  out[0] = 1;
}

__global__ void barrier_votes(gptr<const int> pred, gptr<int> out) {
  const int p = pred[threadIdx.x];
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  if (threadIdx.x == 0) {
    out[0] = count;
    out[1] = all;
    out[2] = any;
  }
}

}  // namespace exec_test
