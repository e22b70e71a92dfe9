// tests/core/ops/random_test.cpp — seeding, ranges and moments of the random factories.
#include "core/ops/random.h"

#include "../test_util.h"

namespace glass {
namespace {

TEST(Random, ManualSeedMakesRunsReproducible) {
  manual_seed(42);
  Tensor a = randn({100});
  manual_seed(42);
  Tensor b = randn({100});
  EXPECT_TRUE(testing::close(a, b, 0, 0));
  EXPECT_EQ(initial_seed(), 42u);
}

TEST(Random, DistributionsHaveTheRightRangeAndMoments) {
  manual_seed(0);
  Tensor u = rand({100000}, kFloat64);
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.01);
  Tensor n = randn({100000}, kFloat64);
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(n.std().item<double>(), 1.0, 0.02);
  Tensor r = randint(-3, 4, {10000});
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.min().item<int64_t>(), -3);
  EXPECT_EQ(r.max().item<int64_t>(), 3);
  Tensor p = randperm(50);
  EXPECT_EQ(p.sum().item<int64_t>(), 49 * 50 / 2);
  Tensor nt = zeros({4, 4}).t();
  nt.normal_(5, 0);  // non-contiguous target
  EXPECT_EQ(nt.mean().item<float>(), 5.0f);
  EXPECT_GLASS_ERROR(randint(3, 3, {2}), "low < high");
  EXPECT_GLASS_ERROR(zeros({2}, kInt64).uniform_(), "floating-point");
}

}  // namespace
}  // namespace glass
