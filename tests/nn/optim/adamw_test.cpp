// tests/nn/optim/adamw_test.cpp — optim::AdamW: decoupled weight decay, against a scalar
// reference (torch.optim.AdamW's documented algorithm as a double loop: AdamReference with
// `decoupled`, optim_test_util.h) and against Adam.
#include "nn/optim/adamw.h"

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

std::vector<double> gradient_at(int step, size_t n) {
  std::vector<double> g(n);
  double scale = step < 2 ? 1.5 : 0.2;
  for (size_t i = 0; i < n; ++i)
    g[i] = scale * std::sin(0.4 + 1.1 * static_cast<double>(i) - 0.8 * step);
  return g;
}

TEST(AdamW, MatchesScalarReference) {
  const std::vector<double> start = {0.5, -1.25, 2.0, 0.0, -0.75};
  for (bool amsgrad : {false, true}) {
    for (double weight_decay : {0.0, 1e-2, 0.3}) {
      for (bool fused : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "amsgrad " << amsgrad << " weight_decay "
                                          << weight_decay << (fused ? " fused" : " tensor ops"));
        Tensor p = param(start);
        AdamW opt({p}, AdamWOptions(0.02)
                           .betas({0.85, 0.6})
                           .weight_decay(weight_decay)
                           .amsgrad(amsgrad)
                           .fused(fused));
        AdamReference ref{.lr = 0.02,
                          .beta1 = 0.85,
                          .beta2 = 0.6,
                          .eps = 1e-8,
                          .weight_decay = weight_decay,
                          .amsgrad = amsgrad,
                          .p = start,
                          .decoupled = true};
        for (int step = 0; step < 5; ++step) {
          std::vector<double> g = gradient_at(step, start.size());
          set_grad(p, g);
          opt.step();
          ref.step(g);
          ASSERT_TRUE(close(p, ref.p, 1e-12, 1e-14)) << "after step " << step + 1;
        }
      }
    }
  }
}

// The difference the paper is about, worked by hand on p = [1], grad = [0.2], lr 0.1,
// weight_decay 0.5, one step:
//   Adam:  g = 0.2 + 0.5 * 1 = 0.7, p = 1 - 0.1 * 0.7 / (0.7 + 1e-8) = 0.9 + 1e-9 / 0.7
//   AdamW: p = 1 * (1 - 0.1 * 0.5) = 0.95, then p = 0.95 - 0.1 * 0.2 / (0.2 + 1e-8)
//          = 0.95 - 0.1 (1 - 5e-8) = 0.850000005
TEST(AdamW, DecaysTheParameterInsteadOfTheGradient) {
  for (bool fused : {true, false}) {
    Tensor pa = param({1.0});
    Tensor pw = param({1.0});
    Adam adam({pa}, AdamOptions(0.1).weight_decay(0.5).fused(fused));
    AdamW adamw({pw}, AdamWOptions(0.1).weight_decay(0.5).fused(fused));
    set_grad(pa, {0.2});
    set_grad(pw, {0.2});
    adam.step();
    adamw.step();
    EXPECT_TRUE(close(pa, {0.9 + 1e-9 / 0.7}, 0, 1e-15));
    EXPECT_TRUE(close(pw, {0.850000005}, 0, 1e-15));
    // The moments saw the raw gradient in AdamW and the decayed one in Adam.
    const auto& sw =
        static_cast<const AdamWParamState&>(*adamw.state().at(pw.unsafeGetTensorImpl()));
    const auto& sa = static_cast<const AdamParamState&>(*adam.state().at(pa.unsafeGetTensorImpl()));
    EXPECT_TRUE(close(sw.exp_avg(), {0.1 * 0.2}, 0, 1e-16));
    EXPECT_TRUE(close(sa.exp_avg(), {0.1 * 0.7}, 0, 1e-16));
  }
}

// With weight_decay 0 the two are the same algorithm, to the last bit.
TEST(AdamW, WithoutWeightDecayEqualsAdam) {
  Tensor pa = param({0.3, -0.7, 1.1});
  Tensor pw = param({0.3, -0.7, 1.1});
  Adam adam({pa}, AdamOptions(0.05).amsgrad(true));
  AdamW adamw({pw}, AdamWOptions(0.05).weight_decay(0).amsgrad(true));
  for (int step = 0; step < 4; ++step) {
    set_grad(pa, gradient_at(step, 3));
    set_grad(pw, gradient_at(step, 3));
    adam.step();
    adamw.step();
  }
  EXPECT_TRUE(close(pw, pa, 0, 0));
}

TEST(AdamW, DefaultWeightDecayIsOneHundredth) {
  AdamWOptions o;
  EXPECT_DOUBLE_EQ(o.lr(), 1e-3);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 1e-2);
  EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(o.betas()), 0.999);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-8);
  // The chain keeps the type: this compiles only if .betas() returns AdamWOptions&.
  AdamWOptions chained = AdamWOptions(1e-2).betas({0.8, 0.9}).eps(1e-6);
  EXPECT_DOUBLE_EQ(chained.eps(), 1e-6);
}

TEST(AdamW, FusedLoopMatchesTensorOpsOnLargeFloat32) {
  const int64_t n = 70001;
  Tensor start = glass::testing::random_tensor({n}, kFloat32, 5);
  auto [a, b] = glass::testing::run_fused_and_unfused<AdamW>(
      AdamWOptions(1e-2).weight_decay(0.1), start, 5,
      [&](int step) { return glass::testing::random_tensor({n}, kFloat32, 300 + step); });
  EXPECT_TRUE(close(a, b, 1e-5, 1e-6));
}

TEST(AdamW, RejectsInvalidOptionsNamingTheClass) {
  Tensor p = param({1.0});
  EXPECT_GLASS_ERROR(AdamW({p}, AdamWOptions(-1)), "AdamWOptions: invalid learning rate -1");
  EXPECT_GLASS_ERROR(AdamW({p}, AdamWOptions().betas({0.9, 1.0})),
                     "AdamWOptions: invalid beta parameter at index 1: 1");
  EXPECT_GLASS_ERROR(AdamW({p}, AdamWOptions().weight_decay(-0.01)), "invalid weight_decay");
  EXPECT_GLASS_ERROR(AdamW({p}, AdamWOptions().eps(-1)), "invalid epsilon -1");
}

}  // namespace
}  // namespace glass::optim
