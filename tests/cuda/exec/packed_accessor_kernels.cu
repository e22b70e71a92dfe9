// tests/cuda/exec/packed_accessor_kernels.cu — kernels that read and write tensors through
// DeviceAccessor (PackedTensorAccessor32 with DevicePtrTraits), for packed_accessor_test.cpp.
// Their launchers take tensors, as a library kernel's do, so the test sees the whole path:
// Tensor::packed_accessor32 on the host, the launch, a[i][j] in the kernel. Invariant: the
// kernels touch memory only through the accessors, so the simulator counts and bounds-checks
// every access (tests/cuda/gpu/packed_accessor_gpu_kernels.cu is the nvcc twin).
#include "packed_accessor_kernels.h"

#include "cuda/kernel.h"
#include "cuda/stream.h"

namespace exec_test {

namespace {

// y[i][j] = s * x[i][j] + i: one thread per element of a 2-D grid of 16 x 16 blocks.
__global__ void scale_rows_kernel(DeviceAccessor<const float, 2> x, DeviceAccessor<float, 2> y,
                                  float s) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < y.size(0) && j < y.size(1)) y[i][j] = s * x[i][j] + static_cast<float>(i);
}

// Reads x[0][size(1)]: one element past the last column, beyond the allocation when x is
// a contiguous tensor of its own.
__global__ void read_past_the_end_kernel(DeviceAccessor<const float, 2> x,
                                         DeviceAccessor<float, 1> y) {
  y[0] = x[x.size(0) - 1][x.size(1)];
}

}  // namespace

void scale_rows(const glass::Tensor& x, const glass::Tensor& y, float s) {
  const glass::cuda::Dim3 block(16, 16);
  const glass::cuda::Dim3 grid((static_cast<unsigned>(y.size(1)) + 15) / 16,
                               (static_cast<unsigned>(y.size(0)) + 15) / 16);
  GLASS_LAUNCH(scale_rows_kernel, grid, block, 0, glass::cuda::getCurrentCUDAStream(),
               x.packed_accessor32<const float, 2, DevicePtrTraits>(),
               y.packed_accessor32<float, 2, DevicePtrTraits>(), s);
}

void read_past_the_end(const glass::Tensor& x, const glass::Tensor& y) {
  GLASS_LAUNCH(read_past_the_end_kernel, glass::cuda::Dim3(1), glass::cuda::Dim3(1), 0,
               glass::cuda::getCurrentCUDAStream(),
               x.packed_accessor32<const float, 2, DevicePtrTraits>(),
               y.packed_accessor32<float, 1, DevicePtrTraits>());
}

}  // namespace exec_test
