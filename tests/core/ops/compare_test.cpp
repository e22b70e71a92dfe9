// tests/core/ops/compare_test.cpp — isclose, allclose and equal, against hand-worked values.
//
// Every expectation below was worked out by hand from |a - b| <= atol + rtol * |b| and
// PyTorch's rules for inf and nan (compare.h).
#include "core/ops/compare.h"

#include <limits>

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<double> bools(const Tensor& t) {
  EXPECT_EQ(t.dtype(), kBool);
  return testing::values(t);
}

class IsClose : public testing::DeviceTest {};
class AllClose : public testing::DeviceTest {};
class Equal : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(IsClose);
GLASS_INSTANTIATE_DEVICE_TESTS(AllClose);
GLASS_INSTANTIATE_DEVICE_TESTS(Equal);

TEST_P(IsClose, TheToleranceIsAtolPlusRtolTimesB) {
  // rtol = 0.1, atol = 0.5: allowed error = 0.5 + 0.1 * |b|.
  Tensor a = on(tensor({10.0, 10.0, -10.0, 0.0, 0.0}, kFloat64));
  Tensor b = on(tensor({11.4, 11.6, -11.4, 0.5, 0.6}, kFloat64));
  // |a-b| = 1.4, 1.6, 1.4, 0.5, 0.6; allowed = 1.64, 1.66, 1.64, 0.55, 0.56
  EXPECT_EQ(bools(isclose(a, b, 0.1, 0.5)), (std::vector<double>{1, 1, 1, 1, 0}));
  // Asymmetric in b: a = 11.6, b = 10 allows only 0.5 + 1.0 = 1.5 < 1.6.
  EXPECT_EQ(bools(isclose(on(tensor({11.6}, kFloat64)), on(tensor({10.0}, kFloat64)), 0.1, 0.5)),
            (std::vector<double>{0}));
  // Zero tolerances: exact equality.
  EXPECT_EQ(bools(isclose(a, on(tensor({10.0, 10.0, -10.0, 0.0, 1e-300}, kFloat64)), 0, 0)),
            (std::vector<double>{1, 1, 1, 1, 0}));
}

TEST_P(IsClose, DefaultTolerances) {
  // rtol 1e-5, atol 1e-8: 1 vs 1 + 9e-6 passes (9e-6 <= 1e-8 + 1.000009e-5), 1 vs 1 + 2e-5
  // does not; 0 vs 5e-9 passes on atol alone, 0 vs 2e-8 does not.
  Tensor a = on(tensor({1.0, 1.0, 0.0, 0.0}, kFloat64));
  Tensor b = on(tensor({1.0 + 9e-6, 1.0 + 2e-5, 5e-9, 2e-8}, kFloat64));
  EXPECT_EQ(bools(isclose(a, b)), (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(bools(a.isclose(b)), (std::vector<double>{1, 0, 1, 0}));
}

TEST_P(IsClose, InfinityAndNan) {
  Tensor a = on(tensor({kInf, -kInf, kInf, kNan, kNan, 1.0, kInf}, kFloat64));
  Tensor b = on(tensor({kInf, -kInf, -kInf, kNan, 1.0, kNan, 1e308}, kFloat64));
  // inf == inf is close although inf - inf is nan; inf vs -inf and anything vs nan are
  // not; a finite b can never be close to inf (|inf - b| is not finite).
  EXPECT_EQ(bools(isclose(a, b)), (std::vector<double>{1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bools(isclose(a, b, 1e-5, 1e-8, /*equal_nan=*/true)),
            (std::vector<double>{1, 1, 0, 1, 0, 0, 0}));
  // A huge rtol makes the allowed error inf, but a non-finite difference still fails.
  EXPECT_EQ(
      bools(isclose(on(tensor({kInf}, kFloat64)), on(tensor({1.0}, kFloat64)), 1e308 * 10, 0)),
      (std::vector<double>{0}));
}

TEST_P(IsClose, FloatIntegerAndBoolDtypesAndBroadcasting) {
  Tensor f = on(tensor({1.f, 2.f, 3.f}));
  EXPECT_EQ(bools(isclose(f, on(tensor({1.000005f})))), (std::vector<double>{1, 0, 0}));
  // Integers: |3 - 5| = 2 <= 0 + 0.5 * 5 = 2.5, |3 - 7| = 4 > 3.5.
  EXPECT_EQ(bools(isclose(on(tensor({3, 3})), on(tensor({5, 7})), 0.5, 0)),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(bools(isclose(on(tensor({true, false})), on(tensor({true, true})))),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(isclose(zeros({2, 1}, opts()), zeros({3}, opts())).sizes(), IntArrayRef({2, 3}));
}

TEST_P(IsClose, BadArguments) {
  EXPECT_GLASS_ERROR(isclose(ones({2}, opts()), ones({2}, opts(kFloat64))), "isclose()",
                     "same dtype", "Float", "Double");
  EXPECT_GLASS_ERROR(isclose(ones({2}, opts()), ones({2}, opts()), -1), "rtol", "-1");
  EXPECT_GLASS_ERROR(isclose(ones({2}, opts()), ones({2}, opts()), 0, -0.5), "atol", "-0.5");
  EXPECT_GLASS_ERROR(isclose(ones({2}, opts()), ones({3}, opts())), "isclose()", "[2]", "[3]");
}

TEST_P(AllClose, TrueOnlyWhenEveryElementIsClose) {
  Tensor a = on(tensor({1.0, 2.0, kNan}, kFloat64));
  EXPECT_FALSE(allclose(a, a));  // nan
  EXPECT_TRUE(allclose(a, a, 1e-5, 1e-8, true));
  EXPECT_TRUE(a.allclose(on(tensor({1.0 + 1e-6, 2.0, kNan}, kFloat64)), 1e-5, 1e-8, true));
  EXPECT_FALSE(a.allclose(on(tensor({1.0, 2.1, kNan}, kFloat64)), 1e-5, 1e-8, true));
  EXPECT_TRUE(allclose(on(tensor({1.0, 2.0}, kFloat64)), on(tensor({1.5, 2.5}, kFloat64)), 0, 0.5));
  EXPECT_FALSE(
      allclose(on(tensor({1.0, 2.0}, kFloat64)), on(tensor({1.5, 2.5}, kFloat64)), 0, 0.49));
  EXPECT_TRUE(allclose(zeros({0}, opts()), zeros({0}, opts())));  // vacuously
}

TEST_P(Equal, SameShapeAndSameValues) {
  Tensor a = on(tensor({{1, 2}, {3, 4}}));
  EXPECT_TRUE(equal(a, a.clone()));
  EXPECT_TRUE(a.equal(a.t().t()));
  EXPECT_TRUE(a.equal(a.to(kFloat64)));       // values after promotion, as PyTorch
  EXPECT_FALSE(a.equal(a.t()));               // same shape, different values
  EXPECT_FALSE(a.equal(a.view({4})));         // same values, different shape
  EXPECT_FALSE(a.equal(on(tensor({1, 2}))));  // would broadcast, but the shapes differ
  Tensor n = on(tensor({kNan}, kFloat64));
  EXPECT_FALSE(n.equal(n));  // nan is never equal
  EXPECT_TRUE(equal(zeros({0, 3}, opts()), zeros({0, 3}, opts())));
  EXPECT_FALSE(equal(zeros({0, 3}, opts()), zeros({3, 0}, opts())));
  EXPECT_GLASS_ERROR(equal(a, Tensor()), "equal()", "defined");
}

}  // namespace
}  // namespace glass
