// tests/nn/optim/adam_test.cpp — optim::Adam against an independent scalar reference.
//
// The reference is AdamReference (optim_test_util.h): the algorithm box of torch.optim.Adam's
// documentation written as a plain double loop, in the docs' form rather than the
// implementation's, so the two are independent. AdamW's reference is the same loop with
// decoupled decay (adamw_test.cpp).
#include "nn/optim/adam.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/test_util.h"
#include "nn/optim/optim_test_util.h"

namespace glass::optim {
namespace {

using glass::testing::AdamReference;
using glass::testing::close;
using glass::testing::param;
using glass::testing::set_grad;
using glass::testing::values;

// Gradients that shrink after the first steps, so v falls and amsgrad's running max
// differs from v.
std::vector<double> gradient_at(int step, size_t n) {
  std::vector<double> g(n);
  double scale = step < 2 ? 2.0 : 0.1;
  for (size_t i = 0; i < n; ++i)
    g[i] = scale * std::cos(0.3 + 0.9 * static_cast<double>(i) + 1.7 * step);
  return g;
}

struct Case {
  const char* name;
  double beta1, beta2, eps, weight_decay;
  bool amsgrad;
};

const Case kCases[] = {
    {"defaults", 0.9, 0.999, 1e-8, 0, false},
    {"weight_decay", 0.9, 0.999, 1e-8, 0.1, false},
    {"amsgrad", 0.9, 0.6, 1e-8, 0, true},
    {"amsgrad+weight_decay", 0.8, 0.5, 1e-6, 0.05, true},
    {"large eps, small betas", 0.5, 0.6, 0.1, 0, false},
    {"beta1 0", 0.0, 0.9, 1e-8, 0, false},
};

TEST(Adam, MatchesScalarReferenceForEveryOptionCombination) {
  const std::vector<double> start = {0.5, -1.25, 2.0, 0.0, -0.75, 3.0};
  const double lr = 0.01;
  for (const Case& c : kCases) {
    for (bool fused : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (fused ? " fused" : " tensor ops"));
      Tensor p = param(start);
      Adam opt({p}, AdamOptions(lr)
                        .betas({c.beta1, c.beta2})
                        .eps(c.eps)
                        .weight_decay(c.weight_decay)
                        .amsgrad(c.amsgrad)
                        .fused(fused));
      AdamReference ref{lr, c.beta1, c.beta2, c.eps, c.weight_decay, c.amsgrad, start, {}, {}, {}};
      for (int step = 0; step < 6; ++step) {
        std::vector<double> g = gradient_at(step, start.size());
        set_grad(p, g);
        opt.step();
        ref.step(g);
        ASSERT_TRUE(close(p, ref.p, 1e-12, 1e-14)) << "after step " << step + 1;
      }
      const auto& s = static_cast<const AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
      EXPECT_EQ(s.step(), 6);
      EXPECT_TRUE(close(s.exp_avg(), ref.m, 1e-12, 1e-15));
      EXPECT_TRUE(close(s.exp_avg_sq(), ref.v, 1e-12, 1e-15));
      EXPECT_EQ(s.max_exp_avg_sq().defined(), c.amsgrad);
      if (c.amsgrad) {
        EXPECT_TRUE(close(s.max_exp_avg_sq(), ref.v_max, 1e-12, 1e-15));
      }
    }
  }
}

// amsgrad must actually change the result on these gradients (else the test above would
// not tell amsgrad from plain Adam): with beta2 = 0.6, v falls once the gradients shrink.
TEST(Adam, AmsgradChangesTheTrajectoryWhenTheSecondMomentFalls) {
  Tensor plain = param({1.0, -1.0, 0.5});
  Tensor ams = param({1.0, -1.0, 0.5});
  Adam plain_opt({plain}, AdamOptions(0.01).betas({0.9, 0.6}));
  Adam ams_opt({ams}, AdamOptions(0.01).betas({0.9, 0.6}).amsgrad(true));
  for (int step = 0; step < 6; ++step) {
    set_grad(plain, gradient_at(step, 3));
    set_grad(ams, gradient_at(step, 3));
    plain_opt.step();
    ams_opt.step();
  }
  const auto& s =
      static_cast<const AdamParamState&>(*ams_opt.state().at(ams.unsafeGetTensorImpl()));
  EXPECT_GT(values(s.max_exp_avg_sq())[0], 5 * values(s.exp_avg_sq())[0]);
  EXPECT_GT(std::abs(values(plain)[0] - values(ams)[0]), 1e-3);
}

// Worked by hand: p = [1, -0.5], grad = [0.2, -0.4] at both steps, lr 0.1, defaults.
//   step 1: m = 0.1 g, v = 0.001 g^2; m_hat = m / 0.1 = g, v_hat = v / 0.001 = g^2, so
//           p -= 0.1 g / (|g| + 1e-8):  0.2 / (0.2 + 1e-8) = 1 - 5e-8 (to 1e-15), so
//           p = [1 - 0.1 (1 - 5e-8), -0.5 + 0.1 (1 - 2.5e-8)] = [0.900000005, -0.4000000025]
//   step 2: m = 0.9 (0.02) + 0.1 (0.2) = 0.038, m_hat = 0.038 / 0.19 = 0.2 (= g again);
//           v = 0.999 (4e-5) + 0.001 (0.04) = 7.996e-5, v_hat = 7.996e-5 / 0.001999 = 0.04;
//           a constant gradient moves p by lr (1 - eps/|g|) per step:
//           p = [0.80000001, -0.300000005]
TEST(Adam, HandWorkedTwoSteps) {
  for (bool fused : {true, false}) {
    Tensor p = param({1.0, -0.5});
    Adam opt({p}, AdamOptions(0.1).fused(fused));
    set_grad(p, {0.2, -0.4});
    opt.step();
    EXPECT_TRUE(close(p, {0.900000005, -0.4000000025}, 0, 1e-14));
    const auto& s = static_cast<const AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
    EXPECT_TRUE(close(s.exp_avg(), {0.02, -0.04}, 0, 1e-15));
    EXPECT_TRUE(close(s.exp_avg_sq(), {4e-5, 1.6e-4}, 0, 1e-15));
    set_grad(p, {0.2, -0.4});
    opt.step();
    EXPECT_TRUE(close(p, {0.80000001, -0.300000005}, 0, 1e-14));
    EXPECT_TRUE(close(s.exp_avg(), {0.038, -0.076}, 0, 1e-15));
  }
}

// Worked by hand, Adam's L2 weight decay: p = [1], grad = [0.2], lr 0.1, weight_decay 0.5.
//   g = 0.2 + 0.5 * 1 = 0.7; step 1 moves p by lr g / (|g| + eps): p = 1 - 0.1 (1 - 1e-8/0.7)
//   = 0.9 + 1.428571...e-9. (AdamW gives 0.850000005 here: adamw_test.cpp.)
TEST(Adam, HandWorkedWeightDecayIsAddedToTheGradient) {
  Tensor p = param({1.0});
  Adam opt({p}, AdamOptions(0.1).weight_decay(0.5));
  set_grad(p, {0.2});
  opt.step();
  EXPECT_TRUE(close(p, {0.9 + 1e-9 / 0.7}, 0, 1e-15));
}

TEST(Adam, LearningRateChangeBetweenStepsTakesEffect) {
  const std::vector<double> start = {1.0, 2.0, -3.0};
  Tensor p = param(start);
  Adam opt({p}, AdamOptions(0.1));
  AdamReference ref{0.1, 0.9, 0.999, 1e-8, 0, false, start, {}, {}, {}};
  for (int step = 0; step < 5; ++step) {
    if (step == 3) {
      static_cast<AdamOptions&>(opt.param_groups()[0].options()).lr(0.003);
      ref.lr = 0.003;
    }
    std::vector<double> g = gradient_at(step, start.size());
    set_grad(p, g);
    opt.step();
    ref.step(g);
    ASSERT_TRUE(close(p, ref.p, 1e-12, 1e-14)) << "after step " << step + 1;
  }
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.003);
}

// Each parameter keeps its own step count: one that missed a step is corrected as at t=1.
TEST(Adam, StepCountIsPerParameterAndSkippedParametersAreUntouched) {
  Tensor a = param({1.0, 2.0});
  Tensor b = param({-1.0});
  Adam opt({a, b}, AdamOptions(0.1));
  set_grad(a, {0.5, 0.5});
  opt.step();
  EXPECT_TRUE(close(b, {-1.0}, 0, 0));
  EXPECT_EQ(opt.state().count(b.unsafeGetTensorImpl()), 0u);
  set_grad(b, {0.3});
  opt.step();
  const auto& sa = static_cast<const AdamParamState&>(*opt.state().at(a.unsafeGetTensorImpl()));
  const auto& sb = static_cast<const AdamParamState&>(*opt.state().at(b.unsafeGetTensorImpl()));
  EXPECT_EQ(sa.step(), 2);
  EXPECT_EQ(sb.step(), 1);
  // b's first update, like any first update, moves it by lr (1 - eps/|g|).
  EXPECT_TRUE(close(b, {-1.0 - 0.1 * (1 - 1e-8 / 0.3)}, 0, 1e-15));
}

TEST(Adam, FusedLoopMatchesTensorOpsOnLargeFloat32) {
  const int64_t n = 100003;
  Tensor start = glass::testing::random_tensor({n}, kFloat32, 11);
  for (bool amsgrad : {false, true}) {
    SCOPED_TRACE(amsgrad ? "amsgrad" : "plain");
    auto [a, b] = glass::testing::run_fused_and_unfused<Adam>(
        AdamOptions(1e-2).weight_decay(1e-2).amsgrad(amsgrad), start, 5, [&](int step) {
          return glass::testing::random_tensor({n}, kFloat32, 200 + step, -1.0 / (step + 1),
                                               1.0 / (step + 1));
        });
    EXPECT_TRUE(close(a, b, 1e-5, 1e-6));
  }
}

TEST(Adam, ConvergesOnATinyQuadratic) {
  Tensor p = glass::testing::minimize_tiny_quadratic<Adam>(AdamOptions(0.05), 2000);
  EXPECT_TRUE(close(p, glass::testing::kTinyQuadraticMinimum, 0, 1e-4));
}

TEST(Adam, RejectsInvalidOptions) {
  Tensor p = param({1.0});
  EXPECT_GLASS_ERROR(Adam({p}, AdamOptions(-1e-3)), "AdamOptions", "invalid learning rate");
  EXPECT_GLASS_ERROR(Adam({p}, AdamOptions().eps(-1e-8)), "invalid epsilon", "eps must be >= 0");
  EXPECT_GLASS_ERROR(Adam({p}, AdamOptions().betas({1.0, 0.999})),
                     "invalid beta parameter at index 0: 1", "[0, 1)");
  EXPECT_GLASS_ERROR(Adam({p}, AdamOptions().betas({0.9, -0.1})),
                     "invalid beta parameter at index 1: -0.1");
  EXPECT_GLASS_ERROR(Adam({p}, AdamOptions().weight_decay(-0.1)), "invalid weight_decay -0.1");
}

TEST(Adam, RejectsAGradientThatDoesNotMatchItsParameter) {
  Tensor p = param({1.0, 2.0});
  Adam opt({p});
  p.mutable_grad() = glass::tensor({{1.0, 2.0}}, TensorOptions(kFloat64));
  EXPECT_GLASS_ERROR(opt.step(), "Adam::step()", "gradient of sizes [1, 2]");
  EXPECT_TRUE(opt.state().empty());
}

TEST(Adam, DefaultsAreTorchs) {
  AdamOptions o;
  EXPECT_DOUBLE_EQ(o.lr(), 1e-3);
  EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(o.betas()), 0.999);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-8);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0);
  EXPECT_FALSE(o.amsgrad());
}

}  // namespace
}  // namespace glass::optim
