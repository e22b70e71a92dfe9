// tests/core/tensor_test.cpp — the Tensor handle: item, requires_grad, undefined tensors.
#include "core/tensor.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(Tensor, CopiesShareTheImpl) {
  Tensor a = zeros({2});
  Tensor b = a;
  b.fill_(3);
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.sum().item<float>(), 6.0f);
}

TEST(Tensor, ItemReadsOneElement) {
  EXPECT_EQ(tensor({7}).item<int64_t>(), 7);
  EXPECT_EQ(tensor(2.5).item<double>(), 2.5);
  EXPECT_TRUE(tensor(true).item().is_boolean());
  EXPECT_GLASS_ERROR(zeros({2}).item(), "item()", "2 elements");
}

TEST(Tensor, RequiresGradOnlyForFloatingPoint) {
  Tensor x = zeros({2});
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_GLASS_ERROR(zeros({2}, kInt64).requires_grad_(), "floating point", "Long");
  EXPECT_TRUE(ones({2}, TensorOptions().requires_grad(true)).requires_grad());
}

TEST(Tensor, UndefinedTensorsFailCleanly) {
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_GLASS_ERROR(u.sizes(), "undefined Tensor");
  EXPECT_GLASS_ERROR(u + ones({1}), "undefined");
  EXPECT_EQ(u.toString(), "UndefinedType");
  EXPECT_EQ(zeros({2, 3}, kFloat64).toString(), "CPUDoubleType{2,3}");
}

}  // namespace
}  // namespace glass
