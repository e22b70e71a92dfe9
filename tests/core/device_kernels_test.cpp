// tests/core/device_kernels_test.cpp — the kernel-table registry.
#include "core/device_kernels.h"

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(DeviceKernels, CpuIsRegisteredAndComplete) {
  const DeviceKernels& k = kernels_for(Device(kCPU));
  // Every entry of the contract but the cross-device copy is filled for the CPU.
  EXPECT_NE(k.copy, nullptr);
  EXPECT_NE(k.fill, nullptr);
  EXPECT_NE(k.unary, nullptr);
  EXPECT_NE(k.binary, nullptr);
  EXPECT_NE(k.clamp, nullptr);
  EXPECT_NE(k.where, nullptr);
  EXPECT_NE(k.masked_fill, nullptr);
  EXPECT_NE(k.reduce, nullptr);
  EXPECT_NE(k.arg_reduce, nullptr);
  EXPECT_NE(k.softmax, nullptr);
  EXPECT_NE(k.bmm, nullptr);
  EXPECT_NE(k.index, nullptr);
  EXPECT_NE(k.index_put, nullptr);
  EXPECT_NE(k.nonzero, nullptr);
  EXPECT_NE(k.uniform, nullptr);
  EXPECT_NE(k.normal, nullptr);
  EXPECT_NE(k.random_int, nullptr);
}

TEST(DeviceKernels, MissingBackendIsAClearError) {
  testing::WithoutCuda none;
  EXPECT_GLASS_ERROR(kernels_for(Device(kCUDA, 0)), "no kernels are registered for device cuda:0",
                     "without CUDA");
}

}  // namespace
}  // namespace glass
