// tests/cuda/exec/packed_accessor_test.cpp — kernels reading and writing tensors through
// DeviceAccessor (Tensor::packed_accessor32<T, N, DevicePtrTraits>) on the simulated GPU:
// the values match the CPU on non-contiguous views, an accessor argument feeds the stream
// race checker and the bounds check as a gptr argument does, and host code is told which
// PtrTraits go with which device.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <glass/glass.h>

#include "cuda/kernel.h"  // DevicePtrTraits
#include "cuda/sim/sim_runtime.h"
#include "packed_accessor_kernels.h"

namespace exec_test {
namespace {

using glass::Tensor;
using glass::cuda::sim::simulator;

class PackedAccessorKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    glass::cuda::use_simulator();
    was_on_ = simulator().race_check();
    simulator().set_race_check(true);
  }
  void TearDown() override {
    glass::cuda::synchronize();
    simulator().set_race_check(was_on_);
  }

 private:
  bool was_on_ = false;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const glass::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The same formula on the CPU: y[i][j] = s * x[i][j] + i.
Tensor reference(const Tensor& x, float s) {
  const Tensor rows = glass::arange(x.size(0)).to(glass::kFloat).unsqueeze(1);
  return x.cpu() * s + rows;
}

TEST_F(PackedAccessorKernel, ReadsAndWritesThroughNonContiguousStrides) {
  glass::manual_seed(3);
  const Tensor base = glass::randn({37, 21});
  // x: a transpose (strides 1, 21); y: every other column of a wider tensor (strides 42, 2).
  const Tensor x = base.to(glass::kCUDA).t();
  Tensor wide = glass::zeros({21, 74}, glass::TensorOptions().device(glass::kCUDA));
  const Tensor y = wide.slice(1, 0, 74, 2);
  ASSERT_FALSE(x.is_contiguous());
  ASSERT_FALSE(y.is_contiguous());
  scale_rows(x, y, 2.0f);
  EXPECT_TRUE(glass::allclose(y.cpu(), reference(base.t(), 2.0f)));
  // The columns between were not touched.
  EXPECT_EQ(wide.slice(1, 1, 74, 2).abs().sum().item<float>(), 0.0f);
}

TEST_F(PackedAccessorKernel, AnAccessorArgumentFeedsTheStreamRaceChecker) {
  const Tensor x = glass::ones({8, 8}, glass::TensorOptions().device(glass::kCUDA));
  const Tensor y = glass::empty({8, 8}, glass::TensorOptions().device(glass::kCUDA));
  const Tensor z = glass::empty({8, 8}, glass::TensorOptions().device(glass::kCUDA));
  glass::cuda::synchronize();
  glass::cuda::CUDAStream a = glass::cuda::getStreamFromPool();
  glass::cuda::CUDAStream b = glass::cuda::getStreamFromPool();
  simulator().hold(a);  // the writer has certainly not run when the reader is queued
  {
    glass::cuda::CUDAStreamGuard guard(a);
    scale_rows(x, y, 1.0f);  // writes y
  }
  const std::string msg = error_of([&] {
    glass::cuda::CUDAStreamGuard guard(b);
    scale_rows(y, z, 1.0f);  // reads y, nothing ordering it after the write
  });
  simulator().release(a);
  EXPECT_NE(msg.find("stream race"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scale_rows_kernel"), std::string::npos) << msg;
}

TEST_F(PackedAccessorKernel, AnAccessorArgumentIsBoundsChecked) {
  // 8 x 16 floats: 512 bytes, exactly a block of the caching allocator (which rounds
  // requests up to 512), so one element more is outside it.
  // y first: the block after x's is free, not y's (which the check would accept).
  const Tensor y = glass::zeros({1}, glass::TensorOptions().device(glass::kCUDA));
  const Tensor x = glass::ones({8, 16}, glass::TensorOptions().device(glass::kCUDA));
  const std::string msg = error_of([&] {
    read_past_the_end(x, y);
    glass::cuda::synchronize();
  });
  simulator().reset_sticky_error(0);
  EXPECT_NE(msg.find("read_past_the_end_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out-of-bounds global load of 4 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ends 4 bytes past its end"), std::string::npos) << msg;
}

TEST_F(PackedAccessorKernel, HostCodeIsToldWhichTraitsGoWithWhichDevice) {
  const Tensor on_gpu = glass::zeros({2, 3}, glass::TensorOptions().device(glass::kCUDA));
  const Tensor on_cpu = glass::zeros({2, 3});
  const std::string default_on_gpu = error_of([&] { (void)on_gpu.packed_accessor32<float, 2>(); });
  EXPECT_NE(default_on_gpu.find("the tensor is on cuda:0"), std::string::npos) << default_on_gpu;
  EXPECT_NE(default_on_gpu.find("DevicePtrTraits"), std::string::npos) << default_on_gpu;
  const std::string device_on_cpu =
      error_of([&] { (void)on_cpu.packed_accessor32<float, 2, DevicePtrTraits>(); });
  EXPECT_NE(device_on_cpu.find("the tensor is on cpu"), std::string::npos) << device_on_cpu;
  const std::string wrong_dtype =
      error_of([&] { (void)on_gpu.packed_accessor32<double, 2, DevicePtrTraits>(); });
  EXPECT_NE(wrong_dtype.find("expected scalar type Double but found Float"), std::string::npos)
      << wrong_dtype;
  // A launcher passes the error on before anything is queued.
  const std::string in_launcher = error_of([&] { scale_rows(on_cpu, on_gpu, 1.0f); });
  EXPECT_NE(in_launcher.find("the tensor is on cpu"), std::string::npos) << in_launcher;
}

}  // namespace
}  // namespace exec_test
