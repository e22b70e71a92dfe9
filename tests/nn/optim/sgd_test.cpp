// tests/nn/optim/sgd_test.cpp — optim::SGD against an independent scalar reference.
//
// The reference is torch.optim.SGD's documented algorithm written as a plain double loop
// (SgdReference below); every option combination runs several steps with gradients that
// change from step to step, through both the fused loop and the tensor-op update.
#include "nn/optim/sgd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/test_util.h"
#include "nn/optim/optim_test_util.h"

namespace glass::optim {
namespace {

using glass::testing::close;
using glass::testing::param;
using glass::testing::set_grad;
using glass::testing::values;

// torch.optim.SGD's pseudo-code, one element at a time, in double.
struct SgdReference {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  std::vector<double> p;
  std::vector<double> buf;  // empty until the first momentum step

  void step(const std::vector<double>& grad) {
    bool first = buf.empty();
    if (first) buf.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grad[i];
      if (weight_decay != 0) g = g + weight_decay * p[i];
      if (momentum != 0) {
        if (first) {
          buf[i] = g;
        } else {
          buf[i] = momentum * buf[i] + (1 - dampening) * g;
        }
        if (nesterov) {
          g = g + momentum * buf[i];
        } else {
          g = buf[i];
        }
      }
      p[i] = p[i] - lr * g;
    }
  }
};

// A gradient that changes sign and size from step to step.
std::vector<double> gradient_at(int step, size_t n) {
  std::vector<double> g(n);
  for (size_t i = 0; i < n; ++i)
    g[i] = std::sin(1.0 + 0.7 * static_cast<double>(i) + 1.3 * step) * (1.0 + 0.5 * step);
  return g;
}

struct Case {
  const char* name;
  double momentum, dampening, weight_decay;
  bool nesterov;
};

const Case kCases[] = {
    {"plain", 0, 0, 0, false},
    {"momentum", 0.9, 0, 0, false},
    {"momentum+dampening", 0.9, 0.3, 0, false},
    {"nesterov", 0.9, 0, 0, true},
    {"weight_decay", 0, 0, 0.1, false},
    {"momentum+weight_decay", 0.8, 0, 0.05, false},
    {"nesterov+weight_decay+dampening0", 0.7, 0, 0.2, true},
};

TEST(SGD, MatchesScalarReferenceForEveryOptionCombination) {
  const std::vector<double> start = {0.5, -1.25, 2.0, 0.0, -0.75};
  const double lr = 0.05;
  for (const Case& c : kCases) {
    for (bool fused : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (fused ? " fused" : " tensor ops"));
      Tensor p = param(start);
      SGD opt({p}, SGDOptions(lr)
                       .momentum(c.momentum)
                       .dampening(c.dampening)
                       .weight_decay(c.weight_decay)
                       .nesterov(c.nesterov)
                       .fused(fused));
      SgdReference ref{lr, c.momentum, c.dampening, c.weight_decay, c.nesterov, start, {}};
      for (int step = 0; step < 5; ++step) {
        std::vector<double> g = gradient_at(step, start.size());
        set_grad(p, g);
        opt.step();
        ref.step(g);
        ASSERT_TRUE(close(p, ref.p, 1e-13, 1e-14)) << "after step " << step + 1;
      }
      if (c.momentum != 0) {
        const auto& state =
            static_cast<const SGDParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
        EXPECT_TRUE(close(state.momentum_buffer(), ref.buf, 1e-13, 1e-14));
      } else {
        EXPECT_TRUE(opt.state().empty());  // no momentum, nothing to remember
      }
    }
  }
}

// Worked by hand: p = [1, -2], grad = [0.5, 1] at both steps, lr 0.1, momentum 0.9,
// weight_decay 0.1.
//   step 1: g = grad + 0.1 p = [0.6, 0.8]; buf = g = [0.6, 0.8];
//           p = p - 0.1 buf = [0.94, -2.08]
//   step 2: g = [0.5 + 0.094, 1 - 0.208] = [0.594, 0.792];
//           buf = 0.9 [0.6, 0.8] + [0.594, 0.792] = [1.134, 1.512];
//           p = [0.94 - 0.1134, -2.08 - 0.1512] = [0.8266, -2.2312]
TEST(SGD, HandWorkedMomentumAndWeightDecay) {
  for (bool fused : {true, false}) {
    Tensor p = param({1.0, -2.0});
    SGD opt({p}, SGDOptions(0.1).momentum(0.9).weight_decay(0.1).fused(fused));
    set_grad(p, {0.5, 1.0});
    opt.step();
    EXPECT_TRUE(close(p, {0.94, -2.08}, 1e-14, 1e-14));
    set_grad(p, {0.5, 1.0});
    opt.step();
    EXPECT_TRUE(close(p, {0.8266, -2.2312}, 1e-14, 1e-14));
    const auto& state = static_cast<const SGDParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
    EXPECT_TRUE(close(state.momentum_buffer(), {1.134, 1.512}, 1e-14, 1e-14));
  }
}

TEST(SGD, LearningRateChangeBetweenStepsTakesEffect) {
  const std::vector<double> start = {1.0, 2.0, -3.0};
  Tensor p = param(start);
  SGD opt({p}, SGDOptions(0.1).momentum(0.5));
  SgdReference ref{0.1, 0.5, 0, 0, false, start, {}};
  for (int step = 0; step < 4; ++step) {
    if (step == 2) {
      opt.param_groups()[0].options().set_lr(0.01);  // what a scheduler does
      ref.lr = 0.01;
    }
    std::vector<double> g = gradient_at(step, start.size());
    set_grad(p, g);
    opt.step();
    ref.step(g);
    ASSERT_TRUE(close(p, ref.p, 1e-13, 1e-14)) << "after step " << step + 1;
  }
  // The typed options are the same object the generic setter changed.
  EXPECT_DOUBLE_EQ(static_cast<SGDOptions&>(opt.param_groups()[0].options()).lr(), 0.01);
}

// Gradients from a real backward: loss = sum(c * p * p) has grad 2 c p.
TEST(SGD, StepsOnGradientsFromBackward) {
  const std::vector<double> start = {1.0, -0.5, 0.25};
  const std::vector<double> c = {1.0, 2.0, 3.0};
  Tensor p = param(start);
  Tensor cw = glass::tensor(c, TensorOptions(kFloat64));
  SGD opt({p}, SGDOptions(0.1).momentum(0.9).nesterov(true));
  SgdReference ref{0.1, 0.9, 0, 0, true, start, {}};
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    (cw * p * p).sum().backward();
    std::vector<double> g(start.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = 2 * c[i] * ref.p[i];
    opt.step();
    ref.step(g);
    ASSERT_TRUE(close(p, ref.p, 1e-13, 1e-14)) << "after step " << step + 1;
  }
}

// A float32 parameter large enough to be split across threads: the fused loop and the
// tensor-op update agree to float32 rounding.
TEST(SGD, FusedLoopMatchesTensorOpsOnLargeFloat32) {
  const int64_t n = 100003;  // several parallel chunks, and a ragged last one
  Tensor start = glass::testing::random_tensor({n}, kFloat32, 7);
  auto [a, b] = glass::testing::run_fused_and_unfused<SGD>(
      SGDOptions(0.05).momentum(0.9).weight_decay(1e-3).nesterov(true), start, 4,
      [&](int step) { return glass::testing::random_tensor({n}, kFloat32, 100 + step); });
  EXPECT_TRUE(close(a, b, 1e-5, 1e-6));
}

// A non-contiguous parameter cannot take the fused loop; the tensor-op update serves it.
TEST(SGD, NonContiguousParameterUsesTensorOps) {
  Tensor base = glass::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, TensorOptions(kFloat64));
  Tensor p = base.t();  // (3, 2), strides [1, 3]
  p.requires_grad_();
  ASSERT_FALSE(p.is_contiguous());
  SGD opt({p}, SGDOptions(0.5).momentum(0.9));
  SgdReference ref{0.5, 0.9, 0, 0, false, values(p), {}};
  for (int step = 0; step < 3; ++step) {
    std::vector<double> g = gradient_at(step, 6);
    p.mutable_grad() = glass::tensor(g, TensorOptions(kFloat64)).view({3, 2});
    opt.step();
    ref.step(g);
    ASSERT_TRUE(close(p, ref.p, 1e-13, 1e-14));
  }
  EXPECT_TRUE(close(base, {ref.p[0], ref.p[2], ref.p[4], ref.p[1], ref.p[3], ref.p[5]}, 1e-13,
                    1e-14));  // the update went through the view into base
}

TEST(SGD, ParameterWithoutGradientIsUntouched) {
  for (bool fused : {true, false}) {
    Tensor a = param({1.0, 2.0});
    Tensor b = param({3.0, 4.0});
    SGD opt({a, b}, SGDOptions(0.1).momentum(0.9).fused(fused));
    set_grad(a, {1.0, 1.0});
    uint32_t version = b._version();
    opt.step();
    EXPECT_TRUE(close(a, {0.9, 1.9}, 1e-15, 1e-15));
    EXPECT_TRUE(close(b, {3.0, 4.0}, 0, 0));
    EXPECT_EQ(b._version(), version);
    EXPECT_EQ(opt.state().count(b.unsafeGetTensorImpl()), 0u);
    EXPECT_EQ(opt.state().count(a.unsafeGetTensorImpl()), 1u);
  }
}

TEST(SGD, StepBumpsTheParameterVersion) {
  for (bool fused : {true, false}) {
    Tensor p = param({1.0});
    SGD opt({p}, SGDOptions(0.1).fused(fused));
    set_grad(p, {1.0});
    uint32_t before = p._version();
    opt.step();
    EXPECT_GT(p._version(), before) << (fused ? "fused" : "tensor ops");
  }
}

TEST(SGD, ConvergesOnATinyQuadratic) {
  // 600 steps: the error shrinks ~0.95x per step.
  Tensor p = glass::testing::minimize_tiny_quadratic<SGD>(SGDOptions(0.1).momentum(0.9), 600);
  EXPECT_TRUE(close(p, glass::testing::kTinyQuadraticMinimum, 0, 1e-8));
}

TEST(SGD, RejectsInvalidOptions) {
  Tensor p = param({1.0});
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(-0.1)), "invalid learning rate -0.1", "lr must be >= 0");
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(0.1).momentum(-0.5)), "invalid momentum -0.5");
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(0.1).weight_decay(-1)), "invalid weight_decay -1");
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(0.1).nesterov(true)),
                     "Nesterov momentum requires a momentum and zero dampening", "momentum 0");
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
                     "Nesterov", "dampening 0.1", ".dampening(0)");
  EXPECT_GLASS_ERROR(SGD({p}, SGDOptions(std::nan(""))), "invalid learning rate");
}

TEST(SGD, OptionsChangedToInvalidValuesFailAtStepBeforeUpdating) {
  Tensor p = param({1.0, 2.0});
  SGD opt({p}, SGDOptions(0.1));
  set_grad(p, {1.0, 1.0});
  opt.param_groups()[0].options().set_lr(-1);
  EXPECT_GLASS_ERROR(opt.step(), "invalid learning rate -1");
  EXPECT_TRUE(close(p, {1.0, 2.0}, 0, 0));
}

TEST(SGD, RejectsAGradientThatDoesNotMatchItsParameter) {
  Tensor p = param({1.0, 2.0});
  SGD opt({p}, SGDOptions(0.1));
  p.mutable_grad() = glass::tensor({1.0}, TensorOptions(kFloat64));  // would broadcast
  EXPECT_GLASS_ERROR(opt.step(), "SGD::step()", "sizes [2]", "gradient of sizes [1]");
  p.mutable_grad() = glass::tensor({1.0f, 1.0f}, TensorOptions(kFloat32));
  EXPECT_GLASS_ERROR(opt.step(), "gradient of dtype Float", ".to(Double)");
  EXPECT_TRUE(close(p, {1.0, 2.0}, 0, 0));
}

}  // namespace
}  // namespace glass::optim
