// tests/core/ops/factories_test.cpp — factories against PyTorch's results.
#include "core/ops/factories.h"

#include "../fake_cuda.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

TEST(Factories, FilledTensors) {
  EXPECT_TRUE(close(zeros({2, 2}), {0, 0, 0, 0}));
  EXPECT_TRUE(close(ones({3}, kInt64), {1, 1, 1}));
  EXPECT_EQ(full({2}, 7).dtype(), kInt64);      // torch.full((2,), 7) is Long
  EXPECT_EQ(full({2}, 7.5).dtype(), kFloat32);  // and with 7.5, Float
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_TRUE(close(full({2}, 7.5), {7.5, 7.5}));
  Tensor x = ones({2, 3}, kFloat64);
  EXPECT_EQ(zeros_like(x).dtype(), kFloat64);
  EXPECT_EQ(ones_like(x).sizes(), (Shape{2, 3}));
  EXPECT_EQ(empty_like(x).sizes(), (Shape{2, 3}));
  EXPECT_EQ(full_like(x, 2).sum().item<double>(), 12.0);
}

TEST(Factories, RangesInferTheirDtype) {
  EXPECT_EQ(arange(5).dtype(), kInt64);
  EXPECT_TRUE(close(arange(5), {0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(0, 1, 0.25).dtype(), kFloat32);
  EXPECT_TRUE(close(arange(0, 1, 0.25), {0, 0.25, 0.5, 0.75}));
  EXPECT_TRUE(close(arange(5, 0, -2), {5, 3, 1}));
  EXPECT_TRUE(close(linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(linspace(0, 1, 5).dtype(), kFloat32);                   // the default dtype, as PyTorch
  EXPECT_EQ(linspace(-1, 1, 7).select(0, -1).item<float>(), 1.0f);  // end is exact
  EXPECT_TRUE(close(eye(2, 3), {1, 0, 0, 0, 1, 0}));
  EXPECT_GLASS_ERROR(arange(0, 5, -1), "arange()");
  EXPECT_GLASS_ERROR(arange(0, 5, 0), "step must be nonzero");
}

TEST(Factories, NestedInitializerLists) {
  Tensor t = tensor({{1., 2.}, {3., 4.}});
  EXPECT_EQ(t.sizes(), (Shape{2, 2}));
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(tensor({{1, 2}, {3, 4}}).dtype(), kInt64);
  EXPECT_EQ(tensor({1, 2}, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(tensor({1, 2.5}).dtype(), kFloat32);  // mixed promotes
  EXPECT_EQ(tensor(3).dim(), 0);
  EXPECT_GLASS_ERROR(tensor({{1, 2}, {3}}), "ragged", "data[1]", "expected a list of 2");
  EXPECT_GLASS_ERROR(tensor({{1, 2}, 3}), "ragged", "data[1]");
  EXPECT_TRUE(close(tensor(std::vector<double>{1.5, 2.5}), {1.5, 2.5}));
}

TEST(Factories, FromBlobWrapsWithoutCopying) {
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(buf.data(), {2, 3});
  EXPECT_EQ(t.data_ptr(), buf.data());
  buf[4] = 50;
  EXPECT_EQ(testing::ref_at(t, {1, 1}), 50);
  Tensor s = from_blob(buf.data(), {3, 2}, {1, 3});  // a transposed view of the same memory
  EXPECT_TRUE(close(s, {1, 4, 2, 50, 3, 6}));
}

TEST(Factories, BadSizes) {
  EXPECT_GLASS_ERROR(zeros({2, -3}), "negative size -3", "dim 1");
  EXPECT_GLASS_ERROR(empty({1LL << 62, 8}), "overflow");
  EXPECT_GLASS_ERROR(eye(-1), "non-negative");
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
