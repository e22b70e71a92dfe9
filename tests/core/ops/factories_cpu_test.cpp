// tests/core/ops/factories_cpu_test.cpp — factories whose subject is the CPU or the
// choice of device: from_blob over host memory, and the *_like factories' device rules on
// the fake CUDA backend (fake_cuda.h). CPU binaries only; the values tests, run on every
// device, are in factories_test.cpp.
#include "core/ops/factories.h"

#include "../fake_cuda.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

TEST(Factories, FromBlobWrapsWithoutCopying) {
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(buf.data(), {2, 3});
  EXPECT_EQ(t.data_ptr(), buf.data());
  buf[4] = 50;
  EXPECT_EQ(testing::ref_at(t, {1, 1}), 50);
  Tensor s = from_blob(buf.data(), {3, 2}, {1, 3});  // a transposed view of the same memory
  EXPECT_TRUE(close(s, {1, 4, 2, 50, 3, 6}));
}

// zeros_like(x, options) takes from x whatever the options leave unset (libtorch's
// merge_in), so nothing made from a device tensor silently lands on the CPU.
TEST(Factories, LikeFactoriesTakeTheUnsetFieldsFromTheTensor) {
  Tensor x = zeros({2, 3}, kFloat64);
  EXPECT_EQ(zeros_like(x, kBool).dtype(), kBool);
  EXPECT_EQ(zeros_like(x, TensorOptions().requires_grad(true)).dtype(), kFloat64);
  EXPECT_TRUE(zeros_like(x, TensorOptions().requires_grad(true)).requires_grad());
  EXPECT_EQ(ones_like(x, kInt64).sizes(), (Shape{2, 3}));
  Tensor f = full_like(x, 7, kInt32);
  EXPECT_EQ(f.dtype(), kInt32);
  EXPECT_EQ(f.sum().item<int64_t>(), 42);
  EXPECT_EQ(full_like(x, 2.5, TensorOptions()).dtype(), kFloat64);  // x's dtype

  testing::FakeCuda cuda;
  Tensor c = x.to(Device(kCUDA, 1));
  for (const Tensor& t :
       {empty_like(c, kBool), zeros_like(c, kBool), ones_like(c, kInt64), full_like(c, 3, kInt64),
        empty_like(c), zeros_like(c), ones_like(c), full_like(c, 3)})
    EXPECT_EQ(t.device(), Device(kCUDA, 1));
  EXPECT_TRUE(testing::close(ones_like(c, kInt64).cpu(), {1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(zeros_like(c, Device(kCPU)).device(), Device(kCPU));  // unless the options say
  EXPECT_EQ(zeros_like(c, kCUDA).device(), Device(kCUDA, 0));     // current device
  // Factories without a device still mean the CPU.
  EXPECT_TRUE(zeros({2}).is_cpu());
  EXPECT_TRUE(arange(3).is_cpu());
  EXPECT_EQ(arange(3, TensorOptions(kCUDA)).device(), Device(kCUDA, 0));
  EXPECT_EQ(tensor({1, 2}, Device(kCUDA, 1)).device(), Device(kCUDA, 1));
  EXPECT_EQ(eye(2, kCUDA).device(), Device(kCUDA, 0));
  float host[2] = {1, 2};  // from_blob: memory on "the current device" gets its index
  DeviceGuard g(Device(kCUDA, 1));
  EXPECT_EQ(from_blob(host, {2}, TensorOptions(kCUDA)).device(), Device(kCUDA, 1));
}

}  // namespace
}  // namespace glass
