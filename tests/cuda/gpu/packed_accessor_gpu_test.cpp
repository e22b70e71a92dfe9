// tests/cuda/gpu/packed_accessor_gpu_test.cpp — packed_accessor32 on a real GPU: a kernel
// compiled by nvcc (packed_accessor_gpu_kernels.cu) reads a transposed tensor and writes
// another through DeviceAccessor. GPU-only, in cuda_gpu_tests (whose main() exits 77
// without a GPU). Invariant: the expected values are computed on the CPU from the same
// inputs.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "packed_accessor_gpu_kernels.h"

namespace glass {
namespace {

TEST(PackedAccessorGpu, AKernelFollowsTheStridesOfAView) {
  manual_seed(19);
  const Tensor x = randn({5, 37});
  const Tensor x_t = x.to(kCUDA).t();  // 37 x 5, strides (1, 37): not contiguous
  const Tensor y = empty({37, 5}, TensorOptions().device(kCUDA));
  gpu_test::scale_rows(x_t, y, 2.0f);
  const Tensor rows = arange(37).to(kFloat).unsqueeze(1);
  EXPECT_TRUE(allclose(y.cpu(), x.t() * 2 + rows, 1e-6, 1e-6));
}

}  // namespace
}  // namespace glass
