// tests/core/print_test.cpp — printed form, checked against what PyTorch prints.
#include "core/print.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(Print, MatchesPyTorchFormatting) {
  EXPECT_EQ(to_string(tensor({{1., 2.}, {3., 4.}})), "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(to_string(tensor({1, 2, 3})), "tensor([1, 2, 3])");
  EXPECT_EQ(to_string(tensor({0.5, 1.25})), "tensor([0.5000, 1.2500])");
  EXPECT_EQ(to_string(tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(to_string(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(to_string(tensor({1e10, 1.0})), "tensor([1.0000e+10, 1.0000e+00])");
  EXPECT_EQ(to_string(tensor({1.0, -10.0})), "tensor([  1., -10.])");
  EXPECT_EQ(to_string(tensor({1.5}, kFloat64)), "tensor([1.5000], dtype=torch.float64)");
  EXPECT_EQ(to_string(tensor({1}, kInt32)), "tensor([1], dtype=torch.int32)");
  EXPECT_EQ(to_string(zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(to_string(zeros({0})), "tensor([])");
  EXPECT_EQ(to_string(ones({1}).requires_grad_()), "tensor([1.], requires_grad=True)");
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(to_string(tensor({nan, 1.5f, -INFINITY})), "tensor([   nan, 1.5000,   -inf])");
}

TEST(Print, ThreeDimensionsSeparateBlocksWithABlankLine) {
  EXPECT_EQ(to_string(arange(4).view({2, 1, 2})), "tensor([[[0, 1]],\n\n        [[2, 3]]])");
}

TEST(Print, LargeTensorsAreSummarised) {
  // torch.arange(2000.) prints exactly this (sci mode: max/min > 1000).
  EXPECT_EQ(to_string(arange(2000, kFloat)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(to_string(arange(1001)), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
}

}  // namespace
}  // namespace glass
