// tests/core/scalar_test.cpp — Scalar keeps the category of the number it was made from.
#include "core/scalar.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(Scalar, RemembersItsCategory) {
  EXPECT_EQ(Scalar(2).type(), kInt64);
  EXPECT_EQ(Scalar(2.5f).type(), kFloat64);
  EXPECT_EQ(Scalar(true).type(), kBool);
  EXPECT_TRUE(Scalar(2.5).is_floating_point());
  EXPECT_TRUE(Scalar(int64_t{3}).is_integral(false));
  EXPECT_EQ(Scalar(2.9).toLong(), 2);
  EXPECT_EQ(Scalar(7).to<float>(), 7.0f);
}

}  // namespace
}  // namespace glass
