// tests/core/ops/compare_test.cpp — isclose, allclose and equal, against hand-worked values.
//
// Every expectation below was worked out by hand from |a - b| <= atol + rtol * |b| and
// PyTorch's rules for inf and nan (compare.h).
#include "core/ops/compare.h"

#include <limits>

#include "../fake_cuda.h"
#include "../test_util.h"

namespace glass {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<double> bools(const Tensor& t) {
  EXPECT_EQ(t.dtype(), kBool);
  return testing::values(t);
}

TEST(IsClose, TheToleranceIsAtolPlusRtolTimesB) {
  // rtol = 0.1, atol = 0.5: allowed error = 0.5 + 0.1 * |b|.
  Tensor a = tensor({10.0, 10.0, -10.0, 0.0, 0.0}, kFloat64);
  Tensor b = tensor({11.4, 11.6, -11.4, 0.5, 0.6}, kFloat64);
  // |a-b| = 1.4, 1.6, 1.4, 0.5, 0.6; allowed = 1.64, 1.66, 1.64, 0.55, 0.56
  EXPECT_EQ(bools(isclose(a, b, 0.1, 0.5)), (std::vector<double>{1, 1, 1, 1, 0}));
  // Asymmetric in b: a = 11.6, b = 10 allows only 0.5 + 1.0 = 1.5 < 1.6.
  EXPECT_EQ(bools(isclose(tensor({11.6}, kFloat64), tensor({10.0}, kFloat64), 0.1, 0.5)),
            (std::vector<double>{0}));
  // Zero tolerances: exact equality.
  EXPECT_EQ(bools(isclose(a, tensor({10.0, 10.0, -10.0, 0.0, 1e-300}, kFloat64), 0, 0)),
            (std::vector<double>{1, 1, 1, 1, 0}));
}

TEST(IsClose, DefaultTolerances) {
  // rtol 1e-5, atol 1e-8: 1 vs 1 + 9e-6 passes (9e-6 <= 1e-8 + 1.000009e-5), 1 vs 1 + 2e-5
  // does not; 0 vs 5e-9 passes on atol alone, 0 vs 2e-8 does not.
  Tensor a = tensor({1.0, 1.0, 0.0, 0.0}, kFloat64);
  Tensor b = tensor({1.0 + 9e-6, 1.0 + 2e-5, 5e-9, 2e-8}, kFloat64);
  EXPECT_EQ(bools(isclose(a, b)), (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(bools(a.isclose(b)), (std::vector<double>{1, 0, 1, 0}));
}

TEST(IsClose, InfinityAndNan) {
  Tensor a = tensor({kInf, -kInf, kInf, kNan, kNan, 1.0, kInf}, kFloat64);
  Tensor b = tensor({kInf, -kInf, -kInf, kNan, 1.0, kNan, 1e308}, kFloat64);
  // inf == inf is close although inf - inf is nan; inf vs -inf and anything vs nan are
  // not; a finite b can never be close to inf (|inf - b| is not finite).
  EXPECT_EQ(bools(isclose(a, b)), (std::vector<double>{1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bools(isclose(a, b, 1e-5, 1e-8, /*equal_nan=*/true)),
            (std::vector<double>{1, 1, 0, 1, 0, 0, 0}));
  // A huge rtol makes the allowed error inf, but a non-finite difference still fails.
  EXPECT_EQ(bools(isclose(tensor({kInf}, kFloat64), tensor({1.0}, kFloat64), 1e308 * 10, 0)),
            (std::vector<double>{0}));
}

TEST(IsClose, FloatIntegerAndBoolDtypesAndBroadcasting) {
  Tensor f = tensor({1.f, 2.f, 3.f});
  EXPECT_EQ(bools(isclose(f, tensor({1.000005f}))), (std::vector<double>{1, 0, 0}));
  // Integers: |3 - 5| = 2 <= 0 + 0.5 * 5 = 2.5, |3 - 7| = 4 > 3.5.
  EXPECT_EQ(bools(isclose(tensor({3, 3}), tensor({5, 7}), 0.5, 0)), (std::vector<double>{1, 0}));
  EXPECT_EQ(bools(isclose(tensor({true, false}), tensor({true, true}))),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(isclose(zeros({2, 1}), zeros({3})).sizes(), IntArrayRef({2, 3}));
}

TEST(IsClose, BadArguments) {
  EXPECT_GLASS_ERROR(isclose(ones({2}), ones({2}, kFloat64)), "isclose()", "same dtype", "Float",
                     "Double");
  EXPECT_GLASS_ERROR(isclose(ones({2}), ones({2}), -1), "rtol", "-1");
  EXPECT_GLASS_ERROR(isclose(ones({2}), ones({2}), 0, -0.5), "atol", "-0.5");
  EXPECT_GLASS_ERROR(isclose(ones({2}), ones({3})), "isclose()", "[2]", "[3]");
}

TEST(AllClose, TrueOnlyWhenEveryElementIsClose) {
  Tensor a = tensor({1.0, 2.0, kNan}, kFloat64);
  EXPECT_FALSE(allclose(a, a));  // nan
  EXPECT_TRUE(allclose(a, a, 1e-5, 1e-8, true));
  EXPECT_TRUE(a.allclose(tensor({1.0 + 1e-6, 2.0, kNan}, kFloat64), 1e-5, 1e-8, true));
  EXPECT_FALSE(a.allclose(tensor({1.0, 2.1, kNan}, kFloat64), 1e-5, 1e-8, true));
  EXPECT_TRUE(allclose(tensor({1.0, 2.0}, kFloat64), tensor({1.5, 2.5}, kFloat64), 0, 0.5));
  EXPECT_FALSE(allclose(tensor({1.0, 2.0}, kFloat64), tensor({1.5, 2.5}, kFloat64), 0, 0.49));
  EXPECT_TRUE(allclose(zeros({0}), zeros({0})));  // vacuously
}

TEST(Equal, SameShapeAndSameValues) {
  Tensor a = tensor({{1, 2}, {3, 4}});
  EXPECT_TRUE(equal(a, a.clone()));
  EXPECT_TRUE(a.equal(a.t().t()));
  EXPECT_TRUE(a.equal(a.to(kFloat64)));   // values after promotion, as PyTorch
  EXPECT_FALSE(a.equal(a.t()));           // same shape, different values
  EXPECT_FALSE(a.equal(a.view({4})));     // same values, different shape
  EXPECT_FALSE(a.equal(tensor({1, 2})));  // would broadcast, but the shapes differ
  Tensor n = tensor({kNan}, kFloat64);
  EXPECT_FALSE(n.equal(n));  // nan is never equal
  EXPECT_TRUE(equal(zeros({0, 3}), zeros({0, 3})));
  EXPECT_FALSE(equal(zeros({0, 3}), zeros({3, 0})));
  EXPECT_GLASS_ERROR(equal(a, Tensor()), "equal()", "defined");
}

TEST(Equal, RunsOnADeviceAndRefusesMixedDevices) {
  testing::FakeCuda cuda;
  Tensor a = tensor({1.0, 2.0}, kFloat64).to(kCUDA);
  EXPECT_TRUE(a.equal(a.clone()));
  EXPECT_TRUE(a.allclose(a + 1e-9));
  EXPECT_TRUE(a.isclose(a).is_cuda());
  EXPECT_GLASS_ERROR(equal(a, a.cpu()), "equal()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(allclose(a, a.cpu()), "cuda:0 and cpu");
}

}  // namespace
}  // namespace glass
