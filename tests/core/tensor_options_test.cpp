// tests/core/tensor_options_test.cpp — options convert implicitly, as in libtorch.
#include "core/tensor_options.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(TensorOptions, DefaultsAndBuilders) {
  TensorOptions o;
  EXPECT_EQ(o.dtype(), kFloat32);
  EXPECT_FALSE(o.has_dtype());
  EXPECT_EQ(o.device(), Device(kCPU));
  TensorOptions d = TensorOptions().dtype(kFloat64).requires_grad(true);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_TRUE(d.requires_grad());
  EXPECT_EQ(zeros({2}, kInt32).dtype(), kInt32);  // from a ScalarType
  EXPECT_EQ(zeros({2}, Device(kCPU)).device(), Device(kCPU));
  EXPECT_EQ(glass::dtype(kInt64).dtype(), kInt64);
  EXPECT_TRUE(glass::requires_grad().requires_grad());
}

}  // namespace
}  // namespace glass
