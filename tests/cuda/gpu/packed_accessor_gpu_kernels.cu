// tests/cuda/gpu/packed_accessor_gpu_kernels.cu — DeviceAccessor in a __global__ kernel
// compiled by nvcc: DevicePtrTraits' GPU side (T* __restrict__), packed_accessor32 made on
// the host and passed by value, a[i][j] following the strides on the device. Only the GPU
// build compiles it (tests/CMakeLists.txt, where nvcc is on). Invariant: the same kernel
// text as tests/cuda/exec/packed_accessor_kernels.cu, which the simulator runs.
#include "cuda/kernel.h"
#include "cuda/stream.h"
#include "packed_accessor_gpu_kernels.h"

namespace gpu_test {
namespace {

__global__ void scale_rows_kernel(DeviceAccessor<const float, 2> x, DeviceAccessor<float, 2> y,
                                  float s) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < y.size(0) && j < y.size(1)) y[i][j] = s * x[i][j] + static_cast<float>(i);
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

}  // namespace gpu_test
