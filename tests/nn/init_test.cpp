// tests/nn/init_test.cpp — nn::init against the formulas of torch/nn/init.py.
//
// Random initialisers are checked the way their contract is stated: every value lies
// within the documented bound, and on a large tensor (hundreds of thousands of draws) the
// sample standard deviation is within 1.5% of the formula's (the estimate's own relative
// error is about 1/sqrt(2n) < 0.2%, so this cannot fail by chance).
#include "nn/init.h"

#include <cmath>

#include "core/test_util.h"

namespace glass::nn {
namespace {

using testing::values;

struct Stats {
  double mean = 0, std = 0, min = 0, max = 0;
};

// Plain double loops over the values: independent of the reductions under test elsewhere.
Stats stats(const Tensor& t) {
  std::vector<double> v = values(t);
  Stats s{0, 0, v[0], v[0]};
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size()));
  return s;
}

void expect_uniform(const Tensor& t, double bound) {
  Stats s = stats(t);
  EXPECT_GE(s.min, -bound);
  EXPECT_LE(s.max, bound);
  EXPECT_GT(s.max, 0.99 * bound);  // the draws fill the interval
  EXPECT_LT(s.min, -0.99 * bound);
  EXPECT_NEAR(s.std, bound / std::sqrt(3.0), 0.015 * bound / std::sqrt(3.0));
  EXPECT_NEAR(s.mean, 0, 0.01 * bound);
}

void expect_normal(const Tensor& t, double mean, double std) {
  Stats s = stats(t);
  EXPECT_NEAR(s.std, std, 0.015 * std);
  EXPECT_NEAR(s.mean, mean, 0.01 * std);
}

TEST(Init, FanInAndFanOut) {
  // Linear weight (out, in) = (3, 5): fan_in = 5, fan_out = 3.
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({3, 5})),
            std::make_pair(int64_t{5}, int64_t{3}));
  // Conv weight (out, in, kh, kw) = (8, 4, 3, 3): receptive field 9, fan_in 36, fan_out 72.
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({8, 4, 3, 3})),
            std::make_pair(int64_t{36}, int64_t{72}));
  EXPECT_GLASS_ERROR(init::calculate_fan_in_and_fan_out(empty({7})), "fewer than 2 dimensions",
                     "[7]");
}

TEST(Init, Gains) {
  EXPECT_DOUBLE_EQ(init::calculate_gain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("conv2d"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  // Linear's a = sqrt(5): gain sqrt(2 / 6) = sqrt(1/3).
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("selu"), 0.75);
  EXPECT_GLASS_ERROR(init::calculate_gain("swish"), "unsupported nonlinearity 'swish'", "relu");
}

TEST(Init, KaimingUniformBoundAndStd) {
  // a = 0, leaky_relu: gain sqrt(2); fan_in 1024: bound = sqrt(3) · sqrt(2) / 32.
  Tensor w = empty({256, 1024});
  init::kaiming_uniform_(w);
  expect_uniform(w, std::sqrt(6.0) / 32);
  // fan_out mode uses 256 = 16²; relu has the same gain as leaky_relu with slope 0.
  init::kaiming_uniform_(w, 0, init::FanMode::FanOut, "relu");
  expect_uniform(w, std::sqrt(6.0) / 16);
  // Linear's default, a = sqrt(5): bound 1 / sqrt(fan_in).
  init::kaiming_uniform_(w, std::sqrt(5.0));
  expect_uniform(w, 1.0 / 32);
}

TEST(Init, KaimingNormalStd) {
  Tensor w = empty({256, 64, 3, 3});  // fan_in = 64 · 9 = 576 = 24²
  init::kaiming_normal_(w, 0, init::FanMode::FanIn, "relu");
  expect_normal(w, 0, std::sqrt(2.0) / 24);
}

TEST(Init, XavierBoundAndStd) {
  Tensor w = empty({300, 500}, kFloat64);  // fan_in + fan_out = 800
  init::xavier_uniform_(w);
  expect_uniform(w, std::sqrt(6.0 / 800));
  init::xavier_uniform_(w, init::calculate_gain("tanh"));
  expect_uniform(w, 5.0 / 3.0 * std::sqrt(6.0 / 800));
  init::xavier_normal_(w);
  expect_normal(w, 0, std::sqrt(2.0 / 800));
}

TEST(Init, UniformNormalConstant) {
  Tensor t = empty({200000});
  init::uniform_(t, -2, 3);
  Stats s = stats(t);
  EXPECT_GE(s.min, -2);
  EXPECT_LT(s.max, 3);
  EXPECT_NEAR(s.mean, 0.5, 0.02);
  init::normal_(t, 1, 2);
  expect_normal(t, 1, 2);
  init::constant_(t, 0.25);
  EXPECT_EQ(stats(t).min, 0.25);
  EXPECT_EQ(stats(t).max, 0.25);
  init::ones_(t);
  EXPECT_EQ(stats(t).min, 1);
  init::zeros_(t);
  EXPECT_EQ(stats(t).max, 0);
}

TEST(Init, ReproducibleWithManualSeed) {
  Tensor a = empty({4, 5}), b = empty({4, 5}), c = empty({4, 5});
  manual_seed(7);
  init::kaiming_uniform_(a);
  manual_seed(7);
  init::kaiming_uniform_(b);
  manual_seed(8);
  init::kaiming_uniform_(c);
  EXPECT_EQ(values(a), values(b));
  EXPECT_NE(values(a), values(c));
}

TEST(Init, WritesParametersWithoutRecordingAGraph) {
  Tensor w = empty({3, 4}).requires_grad_();
  uint32_t version = w._version();
  init::xavier_uniform_(w);  // in place on a leaf that requires grad: allowed under no_grad
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.grad_fn(), nullptr);
  EXPECT_GT(w._version(), version);     // the write is visible to saved-tensor checks
  EXPECT_TRUE(GradMode::is_enabled());  // the guard restored grad mode
}

TEST(Init, ZeroElementTensorIsANoOp) {
  Tensor w = empty({0, 4});
  init::kaiming_uniform_(w);
  init::kaiming_normal_(w);
  EXPECT_EQ(w.numel(), 0);
}

TEST(Init, Errors) {
  Tensor ints = zeros({2, 2}, kLong);
  EXPECT_GLASS_ERROR(init::uniform_(ints), "uniform_", "floating-point", "Long");
  EXPECT_GLASS_ERROR(init::kaiming_uniform_(ints), "kaiming_uniform_", "Long");
  EXPECT_GLASS_ERROR(init::xavier_normal_(empty({5})), "fewer than 2 dimensions", "[5]");
  EXPECT_GLASS_ERROR(init::uniform_(empty({2}), 1, 0), "a <= b", "a = 1", "b = 0");
  EXPECT_GLASS_ERROR(init::normal_(empty({2}), 0, -1), "std >= 0", "-1");
  EXPECT_GLASS_ERROR(init::zeros_(Tensor()), "undefined");
  EXPECT_GLASS_ERROR(init::kaiming_normal_(empty({2, 2}), 0, init::FanMode::FanIn, "softsign"),
                     "unsupported nonlinearity 'softsign'");
}

}  // namespace
}  // namespace glass::nn
