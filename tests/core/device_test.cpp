// tests/core/device_test.cpp — parsing and comparing devices.
#include "core/device.h"

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device("cpu"), Device(kCPU));
  EXPECT_EQ(Device("cuda:1"), Device(kCUDA, 1));
  EXPECT_EQ(Device(kCUDA, 1).str(), "cuda:1");
  EXPECT_EQ(Device(kCPU).str(), "cpu");
  EXPECT_NE(Device(kCUDA, 0), Device(kCUDA, 1));
  EXPECT_GLASS_ERROR(Device("tpu"), "\"tpu\"");
  EXPECT_GLASS_ERROR(Device("cuda:x"), "invalid device index");
}

TEST(Device, CudaTensorsNeedACudaBackend) {
  // Without a CUDA backend, asking for one is a clear error, not a crash.
  testing::WithoutCuda none;
  EXPECT_GLASS_ERROR(zeros({2}, Device(kCUDA, 0)), "cuda");
}

}  // namespace
}  // namespace glass
