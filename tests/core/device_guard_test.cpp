// tests/core/device_guard_test.cpp — the current device, its registry, and DeviceGuard.
//
// The guard implementation is the fake CUDA backend's (fake_cuda.h): two devices and a
// per-thread current device, as cudaSetDevice has.
#include "core/device_guard.h"

#include <thread>

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

using testing::FakeCuda;
using testing::WithoutCuda;

TEST(DeviceGuard, RegistryHoldsOneImplPerType) {
  EXPECT_EQ(get_device_guard_impl(kCPU), nullptr);  // one CPU: nothing to guard
  {
    WithoutCuda none;
    EXPECT_EQ(get_device_guard_impl(kCUDA), nullptr);
  }
  FakeCuda cuda;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(kCUDA);
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(impl->type(), kCUDA);
  EXPECT_EQ(impl->deviceCount(), 2);
  EXPECT_GLASS_ERROR(register_device_guard_impl(kCPU, impl), "the CPU has no current device");
}

TEST(DeviceGuard, SetsAndRestoresTheCurrentDevice) {
  FakeCuda cuda;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(kCUDA);
  EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));
  {
    DeviceGuard g(Device(kCUDA, 1));
    EXPECT_EQ(impl->getDevice(), Device(kCUDA, 1));
    EXPECT_EQ(g.original_device(), Device(kCUDA, 0));
    EXPECT_EQ(g.current_device(), Device(kCUDA, 1));
    g.set_index(0);
    EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));
    EXPECT_EQ(g.current_device(), Device(kCUDA, 0));
    g.reset_device(Device(kCUDA, 1));
    EXPECT_GLASS_ERROR(g.reset_device(Device(kCPU)), "reset_device()", "cuda devices", "cpu");
  }
  EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));  // restored
}

TEST(DeviceGuard, RestoresEvenWhenTheGuardedCodeChangedTheDeviceItself) {
  FakeCuda cuda;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(kCUDA);
  {
    DeviceGuard g(Device(kCUDA, 0));
    impl->setDevice(Device(kCUDA, 1));  // behind the guard's back (cuda::set_device)
  }
  EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));
}

TEST(DeviceGuard, NestsAndRestoresOnException) {
  FakeCuda cuda;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(kCUDA);
  try {
    DeviceGuard outer(Device(kCUDA, 1));
    {
      DeviceGuard inner(Device(kCUDA, 0));
      EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));
    }
    EXPECT_EQ(impl->getDevice(), Device(kCUDA, 1));
    throw Error("boom");
  } catch (const Error&) {
  }
  EXPECT_EQ(impl->getDevice(), Device(kCUDA, 0));
}

TEST(DeviceGuard, NoIndexKeepsTheCurrentDeviceAndCpuIsANoOp) {
  FakeCuda cuda;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(kCUDA);
  impl->setDevice(Device(kCUDA, 1));
  {
    DeviceGuard g{Device(kCUDA)};
    EXPECT_EQ(g.original_device(), Device(kCUDA, 1));
    EXPECT_EQ(g.current_device(), Device(kCUDA, 1));
  }
  EXPECT_EQ(impl->getDevice(), Device(kCUDA, 1));
  DeviceGuard cpu{Device(kCPU)};
  EXPECT_EQ(cpu.current_device(), Device(kCPU));
}

TEST(DeviceGuard, TheCurrentDeviceIsPerThread) {
  FakeCuda cuda;
  DeviceGuard g(Device(kCUDA, 1));
  Device seen = Device(kCPU);
  std::thread([&] { seen = resolve_device(Device(kCUDA)); }).join();
  EXPECT_EQ(seen, Device(kCUDA, 0));  // another thread starts on device 0, as in CUDA
  EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA, 1));
}

TEST(DeviceGuard, ResolveDeviceFillsInTheIndex) {
  EXPECT_EQ(resolve_device(Device(kCPU)), Device(kCPU));
  {
    WithoutCuda none;  // no backend: left as it is, for allocation to report
    EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA));
    EXPECT_GLASS_ERROR(DeviceGuard(Device(kCUDA, 0)), "DeviceGuard", "no cuda runtime",
                       "GLASS_CUDA=sim");
  }
  FakeCuda cuda;
  EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA, 0));
  EXPECT_EQ(resolve_device(Device(kCUDA, 1)), Device(kCUDA, 1));
  DeviceGuard g(Device(kCUDA, 1));
  EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA, 1));
}

}  // namespace
}  // namespace glass
