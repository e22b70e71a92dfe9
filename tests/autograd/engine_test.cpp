// tests/autograd/engine_test.cpp — the engine on hand-worked graphs, and its errors.
#include "autograd/engine.h"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/custom_function.h"
#include "autograd/node.h"
#include "core/device_test.h"
#include "core/test_util.h"

namespace glass {
namespace {

using testing::close;

class Engine : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Engine);

TEST_P(Engine, ChainRuleByHand) {
  // y = sum((a * b + c).relu()) with a = [1, -2], b = [3, 4], c = [1, 1]:
  // a*b + c = [4, -7] -> relu mask [1, 0]; dy/da = b*mask = [3, 0], dy/db = a*mask = [1, 0].
  Tensor a = on(tensor({1., -2.})).requires_grad_(), b = on(tensor({3., 4.})).requires_grad_();
  Tensor c = on(tensor({1., 1.})).requires_grad_();
  Tensor y = (a * b + c).relu().sum();
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  y.backward();
  EXPECT_TRUE(close(a.grad(), {3, 0}));
  EXPECT_TRUE(close(b.grad(), {1, 0}));
  EXPECT_TRUE(close(c.grad(), {1, 0}));
  EXPECT_TRUE(a.is_leaf());
  EXPECT_FALSE(y.is_leaf());
}

TEST_P(Engine, SharedInputsAccumulate) {
  // y = a + a  and  z = a * a: dy/da = 2, dz/da = 2a.
  Tensor a = on(tensor({3.})).requires_grad_();
  (a + a).sum().backward();
  EXPECT_TRUE(close(a.grad(), {2}));
  (a * a).sum().backward();  // accumulates into the same .grad()
  EXPECT_TRUE(close(a.grad(), {2 + 6}));
}

TEST_P(Engine, DiamondGraphRunsEachNodeOnce) {
  // h = x * 2; y = h.exp() + h.sin(): dy/dx = 2 (e^h + cos h).
  Tensor x = on(tensor({0.3}, kFloat64)).requires_grad_();
  Tensor h = x * 2;
  Tensor y = (h.exp() + h.sin()).sum();
  y.backward();
  EXPECT_TRUE(close(x.grad(), {2 * (std::exp(0.6) + std::cos(0.6))}));
}

TEST_P(Engine, ARootAnotherRootReachesWaitsForIt) {
  // y = e^x, z = 2y; grad of (y, z) with seeds (1, 1): e^x + 2 e^x. y's node is a root and
  // also z's input: it runs once, after z's, with both contributions.
  Tensor x = on(tensor({0.5}, kFloat64)).requires_grad_();
  Tensor y = x.exp(), z = y * 2;
  auto g = autograd::grad({y, z}, {x}, {ones_like(y), ones_like(z)});
  EXPECT_TRUE(close(g[0], {3 * std::exp(0.5)}));
  Tensor y2 = x.exp(), z2 = y2 * 2;
  autograd::backward({z2, y2}, {ones_like(z2), ones_like(y2)});
  EXPECT_TRUE(close(x.grad(), {3 * std::exp(0.5)}));
}

// Two outputs of one node, each a root: the node runs once, with both seeds.
struct SinCos : autograd::Function<SinCos> {
  static int backward_calls;
  static autograd::tensor_list forward(autograd::AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return {x.sin(), x.cos()};
  }
  static autograd::tensor_list backward(autograd::AutogradContext* ctx, autograd::tensor_list g) {
    ++backward_calls;
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * x.cos() - g[1] * x.sin()};
  }
};
int SinCos::backward_calls = 0;

TEST_P(Engine, TwoRootsOfOneNodeRunItOnce) {
  Tensor x = on(tensor({0.25}, kFloat64)).requires_grad_();
  autograd::tensor_list out = SinCos::apply(x);
  SinCos::backward_calls = 0;
  auto g = autograd::grad({out[0], out[1]}, {x}, {ones_like(out[0]), full_like(out[1], 2.0)});
  EXPECT_EQ(SinCos::backward_calls, 1);
  EXPECT_TRUE(close(g[0], {std::cos(0.25) - 2 * std::sin(0.25)}));
}

TEST_P(Engine, GradDoesNotTouchDotGradAndSupportsCreateGraph) {
  Tensor x = on(tensor({2.}, kFloat64)).requires_grad_();
  Tensor y = (x * x * x).sum();  // y = x^3
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(close(g[0], {12}));  // 3x^2
  EXPECT_FALSE(x.grad().defined());
  auto gg = autograd::grad({g[0].sum()}, {x});  // second derivative: 6x
  EXPECT_TRUE(close(gg[0], {12}));
}

TEST_P(Engine, RetainGraphAndSecondBackward) {
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(close(x.grad(), {4, 8}));
  Tensor z = (x * x).sum();
  z.backward();
  EXPECT_GLASS_ERROR(z.backward(), "backward through the graph a second time", "retain_graph");
}

TEST_P(Engine, BackwardInputsRestrictAccumulation) {
  Tensor a = on(tensor({1.})).requires_grad_(), b = on(tensor({2.})).requires_grad_();
  (a * b).sum().backward(Tensor(), std::nullopt, false, {a});
  EXPECT_TRUE(close(a.grad(), {2}));
  EXPECT_FALSE(b.grad().defined());
}

TEST_P(Engine, NoGradAndDetachStopRecording) {
  Tensor a = on(tensor({1.})).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = a * 2;
    EXPECT_FALSE(y.requires_grad());
  }
  Tensor d = a.detach() * 2;
  EXPECT_FALSE(d.requires_grad());
  EXPECT_FALSE((a > 0).requires_grad());  // comparisons are not differentiable
}

TEST_P(Engine, ErrorsAreClear) {
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  EXPECT_GLASS_ERROR((x * 2).backward(), "implicitly created only for scalar outputs", "[2]");
  EXPECT_GLASS_ERROR((x * 2).backward(ones({3}, opts())), "mismatch in shape", "[3]", "[2]");
  EXPECT_GLASS_ERROR(ones({2}, opts()).sum().backward(),
                     "does not require grad and does not have a grad_fn");
  EXPECT_GLASS_ERROR(x.add_(1), "leaf tensor that requires grad", "in-place");
  EXPECT_GLASS_ERROR(x.select(0, 1).mul_(2), "view of a leaf tensor that requires grad",
                     "NoGradGuard");
  EXPECT_GLASS_ERROR(on(tensor({1, 2})).requires_grad_(), "floating point dtype", "Long");
  Tensor u = on(tensor({1.})).requires_grad_(), v = on(tensor({1.})).requires_grad_();
  EXPECT_GLASS_ERROR(autograd::grad({(u * 2).sum()}, {v}), "not have been used in the graph",
                     "allow_unused");
  EXPECT_FALSE(autograd::grad({(u * 2).sum()}, {v}, {}, std::nullopt, false, true)[0].defined());
}

TEST_P(Engine, SavedTensorModifiedInPlaceIsCaught) {
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  Tensor w = on(tensor({3., 4.}));
  Tensor y = (x * w).sum();  // saves w
  w.add_(1);                 // w does not require grad: allowed, but bumps its version
  EXPECT_GLASS_ERROR(y.backward(), "modified by an inplace operation", "[Float [2]]",
                     "is at version 1; expected version 0", "MulBackward0");
}

TEST_P(Engine, PrintsGradFn) {
  Tensor x = on(tensor({1.})).requires_grad_();
  // PyTorch names a device other than the CPU first: tensor([2.], device='cuda:0', ...).
  std::string dev = device().is_cpu() ? "" : "device='" + device().str() + "', ";
  EXPECT_EQ(to_string(x * 2), "tensor([2.], " + dev + "grad_fn=<MulBackward0>)");
  EXPECT_EQ(to_string(x), "tensor([1.], " + dev + "requires_grad=True)");
}

TEST_P(Engine, BroadcastGradientsSumBackToTheInputShape) {
  Tensor a = ones({2, 3}, opts()).requires_grad_(), b = ones({3}, opts()).requires_grad_();
  (a * b).sum().backward();
  EXPECT_EQ(b.grad().sizes(), (Shape{3}));
  EXPECT_TRUE(close(b.grad(), {2, 2, 2}));
  Tensor d = ones({3}, opts(kFloat64)).requires_grad_();
  (d.to(kFloat32) * 2).sum().backward();
  EXPECT_EQ(d.grad().dtype(), kFloat64);  // cast back to the input's dtype
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

// A leaf's gradient is stored as soon as it is ready (AccumulateGrad before any other ready
// node, as in PyTorch), not when the engine reaches the accumulator's creation order: w's
// accumulator is created first here, so by creation order it would run last.
TEST_P(Engine, AccumulateGradRunsAsSoonAsItIsReady) {
  Tensor w = on(tensor({1., 2.})).requires_grad_(), v = on(tensor({0.5, 1.})).requires_grad_();
  Tensor early = w * 1;  // creates w's AccumulateGrad before everything below
  std::vector<std::string> order;
  autograd::register_post_accumulate_grad_hook(w, [&](const Tensor&) { order.push_back("w"); });
  autograd::register_post_accumulate_grad_hook(v, [&](const Tensor&) { order.push_back("v"); });
  (w * v.exp()).sum().backward();  // MulBackward readies w's accumulator and v's ExpBackward
  EXPECT_EQ(order, (std::vector<std::string>{"w", "v"}));
  EXPECT_TRUE(close(w.grad(), {std::exp(0.5), std::exp(1.)}));
}

TEST_P(Engine, HooksAndRetainGrad) {
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  Tensor h = x * 3;
  h.retain_grad();
  std::vector<double> seen;
  h.register_hook([&](const Tensor& g) {
    seen.push_back(g.sum().item<double>());
    return g * 10;  // replaces the gradient flowing on from h
  });
  x.register_hook([&](const Tensor& g) {
    seen.push_back(g.sum().item<double>());
    return Tensor();  // observe only
  });
  int accumulated = 0;
  autograd::register_post_accumulate_grad_hook(x, [&](const Tensor& leaf) {
    ++accumulated;
    EXPECT_TRUE(leaf.grad().defined());
  });
  (h * h).sum().backward();  // d/dh = 2h = [6, 12]; x gets 10 * 3 * that
  EXPECT_TRUE(h.retains_grad());
  EXPECT_TRUE(close(h.grad(), {60, 120}));  // retain_grad runs after h's own hook
  EXPECT_TRUE(close(x.grad(), {180, 360}));
  EXPECT_EQ(seen, (std::vector<double>{18, 540}));
  EXPECT_EQ(accumulated, 1);
  EXPECT_GLASS_ERROR(ones({1}, opts()).register_hook([](const Tensor& g) { return g; }),
                     "doesn't require");
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

TEST_P(Engine, AnomalyModeNamesTheNodeThatProducedNaN) {
  Tensor x = on(tensor({0., 1.})).requires_grad_();
  {
    autograd::DetectAnomalyGuard anomaly;
    Tensor y = x.sqrt();  // d/dx sqrt(x) at 0 is inf; times the 0 from mul below: nan
    Tensor z = (y * 0).sum();
    EXPECT_GLASS_ERROR(z.backward(),
                       "Function 'SqrtBackward0' returned nan values in its 0th output",
                       "SqrtBackward0 ran on inputs [Float [2]]");
  }
  EXPECT_FALSE(autograd::AnomalyMode::is_enabled());
  Tensor w = x.sqrt();
  (w * 0).sum().backward();  // without anomaly mode the nan just flows into .grad()
  EXPECT_TRUE(std::isnan(x.grad().select(0, 0).item<float>()));
}

}  // namespace
}  // namespace glass
