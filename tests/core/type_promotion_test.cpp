// tests/core/type_promotion_test.cpp — PyTorch's result_type, case by case.
//
// Each expectation is what torch.result_type / torch.add gives for the same operands.
#include "core/type_promotion.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(TypePromotion, DimensionedTensorsPromoteNormally) {
  EXPECT_EQ(result_type(ones({2}, kInt64), ones({2}, kFloat64)), kFloat64);
  EXPECT_EQ(result_type(ones({2}, kInt32), ones({2}, kInt64)), kInt64);
  EXPECT_EQ(result_type(ones({2}, kBool), ones({2}, kInt32)), kInt32);
}

TEST(TypePromotion, ZeroDimTensorsOnlyWinAcrossCategories) {
  EXPECT_EQ(result_type(ones({2}, kFloat32), scalar_tensor(1.0, kFloat64)), kFloat32);
  EXPECT_EQ(result_type(ones({2}, kInt32), scalar_tensor(1, kInt64)), kInt32);
  EXPECT_EQ(result_type(ones({2}, kInt32), scalar_tensor(1.0, kFloat64)), kFloat64);
  EXPECT_EQ(result_type(scalar_tensor(1, kInt64), scalar_tensor(1.0, kFloat64)), kFloat64);
}

TEST(TypePromotion, PythonStyleScalars) {
  EXPECT_EQ(result_type(ones({2}, kInt64), Scalar(2)), kInt64);
  EXPECT_EQ(result_type(ones({2}, kInt64), Scalar(2.5)), kFloat32);  // default dtype
  EXPECT_EQ(result_type(ones({2}, kInt32), Scalar(2)), kInt32);
  EXPECT_EQ(result_type(ones({2}, kFloat64), Scalar(2.5)), kFloat64);
  EXPECT_EQ(result_type(ones({2}, kBool), Scalar(2)), kInt64);
  // Through the ops themselves:
  EXPECT_EQ((ones({2}, kInt64) * 2).dtype(), kInt64);
  EXPECT_EQ((ones({2}, kInt64) * 2.5).dtype(), kFloat32);
  EXPECT_EQ((ones({2}, kInt32) + ones({}, kInt64)).dtype(), kInt32);
  EXPECT_EQ((ones({2}, kInt64) / 2).dtype(), kFloat32);  // true division
  EXPECT_EQ(ones({2}, kInt64).sqrt().dtype(), kFloat32);
}

TEST(TypePromotion, DefaultDtypeAffectsFloatScalars) {
  set_default_dtype(kFloat64);
  EXPECT_EQ((ones({2}, kInt64) * 2.5).dtype(), kFloat64);
  EXPECT_EQ(tensor({1.5}).dtype(), kFloat64);
  set_default_dtype(kFloat32);
  EXPECT_GLASS_ERROR(set_default_dtype(kInt64), "floating");
}

}  // namespace
}  // namespace glass
