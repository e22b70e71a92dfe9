// tests/nn/hooks_test.cpp — module hooks: forward pre-hooks and hooks see (and may replace)
// a call's tensors, in registration order, wherever the library calls forward; backward
// pre-hooks run once per backward with every output's gradient, before any of it reaches
// the module's parameters. References are hand-worked values for a Linear with known weights.
#include "nn/hooks.h"

#include <string>
#include <tuple>
#include <vector>

#include "core/grad_mode.h"
#include "core/test_util.h"
#include "nn/module.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"

namespace glass::nn {
namespace {

using testing::close;

// y = 2x + 1 for one input and one output: every value below is worked by hand.
Linear affine() {
  Linear fc(1, 1);
  NoGradGuard no_grad;
  fc->weight.fill_(2.0);
  fc->bias.fill_(1.0);
  return fc;
}

TEST(ModuleHooks, PreHooksAndHooksRunInOrderAndMayReplaceTensors) {
  Linear fc = affine();
  std::vector<std::string> order;
  fc->register_forward_pre_hook([&](Module& m, std::vector<Tensor>& inputs) {
    order.push_back("pre1 " + m.name());
    ASSERT_EQ(inputs.size(), 1u);
    inputs[0] = inputs[0] * 10;  // forward sees 10x
  });
  fc->register_forward_pre_hook([&](Module&, std::vector<Tensor>&) { order.push_back("pre2"); });
  fc->register_forward_hook(
      [&](Module&, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
        order.push_back("post");
        EXPECT_TRUE(close(inputs[0], {{30.}}));  // the replaced input
        outputs[0] = outputs[0] + 100;
      });
  Tensor y = fc(tensor({{3.}}));
  EXPECT_TRUE(close(y, {{2. * 30 + 1 + 100}}));
  EXPECT_EQ(order, (std::vector<std::string>{"pre1 Linear", "pre2", "post"}));
}

TEST(ModuleHooks, RemovedHooksNoLongerRunAndDirectForwardRunsNone) {
  Linear fc = affine();
  int calls = 0;
  RemovableHandle handle =
      fc->register_forward_pre_hook([&](Module&, std::vector<Tensor>&) { ++calls; });
  fc(tensor({{1.}}));
  fc->forward(tensor({{1.}}));  // not through the library: no hooks
  EXPECT_EQ(calls, 1);
  handle.remove();
  handle.remove();  // idempotent
  EXPECT_FALSE(fc->has_hooks());
  fc(tensor({{1.}}));
  EXPECT_EQ(calls, 1);
}

TEST(ModuleHooks, SequentialRunsEachLayersHooks) {
  Linear fc = affine();
  Sequential net(fc, ReLU());
  std::vector<double> seen;
  fc->register_forward_hook([&](Module&, const std::vector<Tensor>&, std::vector<Tensor>& out) {
    seen.push_back(out[0].item<double>());
  });
  Tensor y = net->forward(tensor({{-4.}}));  // 2·(−4) + 1 = −7, then ReLU
  EXPECT_EQ(seen, (std::vector<double>{-7.}));
  EXPECT_TRUE(close(y, {{0.}}));
}

TEST(ModuleHooks, AHookThatChangesTheNumberOfTensorsIsAnError) {
  Linear fc = affine();
  fc->register_forward_hook(
      [](Module&, const std::vector<Tensor>&, std::vector<Tensor>& out) { out.push_back(out[0]); });
  EXPECT_GLASS_ERROR(fc(tensor({{1.}})), "a forward hook of Linear",
                     "changed the number of tensors from 1 to 2");
}

// Two outputs, so the backward pre-hook must get both gradients in one call.
struct TwoHeadsImpl : Module {
  TwoHeadsImpl() : Module("TwoHeads") { w = register_parameter("w", tensor({3.})); }
  std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x * w, x * w * w}; }
  Tensor w;
};
GLASS_MODULE(TwoHeads);

TEST(ModuleHooks, BackwardPreHookRunsOnceWithEveryGradientBeforeTheParameters) {
  TwoHeads heads;
  std::vector<std::vector<Tensor>> calls;
  bool grad_reached_w_first = false;
  heads->register_full_backward_pre_hook([&](Module&, std::vector<Tensor>& grads) {
    grad_reached_w_first = grad_reached_w_first || heads->w.grad().defined();
    calls.push_back(grads);
    grads[0] = grads[0] * 2;  // doubles what flows back through the first head
  });
  const Tensor x = tensor({2.});
  auto [a, b] = heads(x);
  (a * 5 + b * 7).sum().backward();
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0].size(), 2u);
  EXPECT_TRUE(close(calls[0][0], {5.}));
  EXPECT_TRUE(close(calls[0][1], {7.}));
  EXPECT_FALSE(grad_reached_w_first);
  // a = xw, b = xw²: dL/dw = (2·5)·x + 7·2xw = 20 + 84.
  EXPECT_TRUE(close(heads->w.grad(), {104.}));

  // An output that takes no part in the loss has an undefined gradient.
  calls.clear();
  heads->w.mutable_grad() = Tensor();
  auto [a2, b2] = heads(x);
  a2.sum().backward();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0][0].defined());
  EXPECT_FALSE(calls[0][1].defined());
}

TEST(ModuleHooks, NoBackwardNodeWithoutGradMode) {
  TwoHeads heads;
  int calls = 0;
  heads->register_full_backward_pre_hook([&](Module&, std::vector<Tensor>&) { ++calls; });
  NoGradGuard no_grad;
  auto [a, b] = heads(tensor({2.}));
  EXPECT_FALSE(a.requires_grad());
  EXPECT_EQ(a.grad_fn(), nullptr);
}

TEST(ModuleHooks, AHandleOrAGraphOutlivingItsModuleIsHarmless) {
  RemovableHandle handle;
  Tensor loss;
  int calls = 0;
  {
    TwoHeads heads;
    handle =
        heads->register_full_backward_pre_hook([&](Module&, std::vector<Tensor>&) { ++calls; });
    auto [a, b] = heads(tensor({2.}));
    loss = (a + b).sum();
  }
  loss.backward();  // the module is gone: its hooks with it
  EXPECT_EQ(calls, 0);
  handle.remove();
}

}  // namespace
}  // namespace glass::nn
