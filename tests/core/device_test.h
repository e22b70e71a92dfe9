// tests/core/device_test.h — one test body, run once per device: the device-parameterised
// suites.
//
// A test written as TEST_P on DeviceTest (or a fixture derived from it) builds every
// tensor on device(): CPU values go through on(), factories take opts(). The list of
// devices is not in this header: each test binary links exactly one definition of
// test_devices() — tests/core/test_devices_cpu.cpp gives {cpu} (core_tests, autograd_tests),
// tests/cuda/suites/test_devices_cuda.cpp gives {cuda:0} (cuda_suites_tests) — so the same
// source is the CPU suite in one binary and the CUDA suite in the other, never a copy.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <glass/glass.h>

namespace glass::testing {

// The devices this test binary runs the parameterised suites on.
std::vector<Device> test_devices();

class DeviceTest : public ::testing::TestWithParam<Device> {
 protected:
  Device device() const { return GetParam(); }

  // A copy of a CPU tensor on the test's device (on the CPU: the tensor itself). For a
  // leaf that requires grad, write on(x).requires_grad_(): x.requires_grad_() first and
  // then on(x) would give a non-leaf on the device (to() is recorded as a copy node), whose
  // .grad() stays undefined. on() refuses such tensors so that mistake cannot pass.
  Tensor on(const Tensor& cpu_tensor) const {
    EXPECT_FALSE(cpu_tensor.requires_grad())
        << "on(x) of an x that requires grad is not a leaf; write on(x).requires_grad_()";
    return cpu_tensor.to(device());
  }

  // Factory options: this device, and the dtype if given (else the factory's default).
  TensorOptions opts(ScalarType dtype) const { return TensorOptions(dtype).device(device()); }
  TensorOptions opts() const { return TensorOptions(device()); }
};

// "cpu" / "cuda": the last part of a test's name, Devices/Suite.Test/cpu.
inline std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return info.param.is_cpu() ? "cpu" : "cuda";
}

}  // namespace glass::testing

// Runs every TEST_P of `Suite` on each of the binary's test_devices().
#define GLASS_INSTANTIATE_DEVICE_TESTS(Suite)                                                     \
  INSTANTIATE_TEST_SUITE_P(Devices, Suite, ::testing::ValuesIn(::glass::testing::test_devices()), \
                           ::glass::testing::device_test_name)
