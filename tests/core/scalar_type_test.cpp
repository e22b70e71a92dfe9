// tests/core/scalar_type_test.cpp — dtype facts and the promotion lattice.
#include "core/scalar_type.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(ScalarType, SizesAndNamesMatchPyTorch) {
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(element_size(kInt32), 4u);
  EXPECT_EQ(element_size(kInt64), 8u);
  EXPECT_EQ(element_size(kFloat32), 4u);
  EXPECT_EQ(element_size(kFloat64), 8u);
  EXPECT_STREQ(to_string(kFloat), "Float");
  EXPECT_STREQ(to_string(kLong), "Long");
  EXPECT_STREQ(to_string(kDouble), "Double");
}

TEST(ScalarType, PromoteTypesTable) {
  // torch.promote_types for these five types.
  EXPECT_EQ(promote_types(kBool, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kInt64, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
}

TEST(ScalarType, CanCastMatchesTorchCanCast) {
  EXPECT_TRUE(can_cast(kInt64, kFloat32));
  EXPECT_FALSE(can_cast(kFloat32, kInt64));
  EXPECT_FALSE(can_cast(kInt64, kBool));
  EXPECT_TRUE(can_cast(kBool, kInt64));
  EXPECT_TRUE(can_cast(kFloat64, kFloat32));
}

TEST(ScalarType, DispatchPicksTheCppType) {
  EXPECT_EQ(dispatch_dtype(kInt32, "t", []<class T>() { return sizeof(T); }), 4u);
  EXPECT_GLASS_ERROR(dispatch_floating(kInt64, "softmax", []<class T>() {}), "softmax()", "Long");
  EXPECT_GLASS_ERROR(dispatch_numeric(kBool, "add", []<class T>() {}), "Bool");
}

}  // namespace
}  // namespace glass
