// tests/nn/clip_grad_test.cpp — clip_grad_norm_ and clip_grad_value_ on hand-worked
// gradients: [3, 4] and [12] have L2 norm 13, L1 norm 19 and ∞-norm 12.
#include "nn/utils/clip_grad.h"

#include <cmath>

#include "core/test_util.h"

namespace glass::nn::utils {
namespace {

using testing::close;

std::vector<Tensor> params_with_grads() {
  Tensor a = zeros({2}).requires_grad_(), b = zeros({1}).requires_grad_(), c = zeros({3});
  a.mutable_grad() = tensor({3., 4.});
  b.mutable_grad() = tensor({12.});
  return {a, b, c.requires_grad_()};  // c has no gradient: skipped
}

TEST(ClipGradNorm, ScalesEveryGradientWhenTheTotalNormIsAboveTheBound) {
  auto params = params_with_grads();
  EXPECT_NEAR(clip_grad_norm_(params, 6.5), 13.0, 1e-5);
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_TRUE(close(params[0].grad(), {3 * coef, 4 * coef}));
  EXPECT_TRUE(close(params[1].grad(), {12 * coef}));
  EXPECT_FALSE(params[2].grad().defined());
}

TEST(ClipGradNorm, LeavesGradientsWithinTheBoundAlone) {
  auto params = params_with_grads();
  EXPECT_NEAR(clip_grad_norm_(params, 100.0), 13.0, 1e-5);
  EXPECT_TRUE(close(params[0].grad(), {3., 4.}));
}

TEST(ClipGradNorm, OtherNormsAndOneParameter) {
  auto params = params_with_grads();
  EXPECT_NEAR(clip_grad_norm_(params, 100.0, 1.0), 19.0, 1e-5);
  EXPECT_NEAR(clip_grad_norm_(params, 100.0, INFINITY), 12.0, 1e-6);
  EXPECT_NEAR(clip_grad_norm_(params[0], 2.5), 5.0, 1e-6);
  EXPECT_TRUE(close(params[0].grad(), {1.5, 2.}, 1e-5));
  EXPECT_EQ(clip_grad_norm_(std::vector<Tensor>{zeros({2}).requires_grad_()}, 1.0), 0.0);
}

TEST(ClipGradNorm, ANonFiniteNormIsAnErrorWhenAskedAndChangesNothing) {
  auto params = params_with_grads();
  params[1].mutable_grad() = tensor({INFINITY});
  EXPECT_GLASS_ERROR(clip_grad_norm_(params, 1.0, 2.0, /*error_if_nonfinite=*/true),
                     "the total norm of the gradients is inf");
  EXPECT_TRUE(close(params[0].grad(), {3., 4.}));
  EXPECT_GLASS_ERROR(clip_grad_norm_(params, 1.0, -1.0), "norm_type must be positive");
}

TEST(ClipGradValue, ClampsEveryElement) {
  auto params = params_with_grads();
  clip_grad_value_(params, 3.5);
  EXPECT_TRUE(close(params[0].grad(), {3., 3.5}));
  EXPECT_TRUE(close(params[1].grad(), {3.5}));
  EXPECT_GLASS_ERROR(clip_grad_value_(params, -1), "clip_value must be >= 0");
}

}  // namespace
}  // namespace glass::nn::utils
