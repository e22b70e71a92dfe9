// tests/nn/optim/optimizer_test.cpp — what every optimizer shares (optimizer.h): param
// groups and their checks, zero_grad, parameters(), state, the closure, and use with a
// Module's parameters. Plain SGD (p -= lr * grad) is the probe, since its effect is
// obvious by hand.
#include "nn/optim/optimizer.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/test_util.h"
#include "nn/module.h"
#include "nn/optim/adam.h"
#include "nn/optim/optim_test_util.h"
#include "nn/optim/sgd.h"

namespace glass::optim {
namespace {

using glass::testing::close;
using glass::testing::param;
using glass::testing::set_grad;

TEST(Optimizer, TakesAModulesParameters) {
  auto model = std::make_shared<nn::Module>("Net");
  Tensor w = model->register_parameter("w", glass::tensor({1.0, 2.0}, TensorOptions(kFloat64)));
  Tensor b = model->register_parameter("b", glass::tensor({0.5}, TensorOptions(kFloat64)));
  SGD opt(model->parameters(), SGDOptions(0.5));
  ASSERT_EQ(opt.size(), 2u);
  set_grad(w, {1.0, -1.0});
  set_grad(b, {2.0});
  opt.step();
  // The optimizer updated the very tensors the module holds.
  EXPECT_TRUE(close(model->named_parameters()[0].second, {0.5, 2.5}, 0, 0));
  EXPECT_TRUE(close(model->named_parameters()[1].second, {-0.5}, 0, 0));
}

TEST(Optimizer, ParamGroupsHaveTheirOwnOptions) {
  Tensor a = param({1.0});
  Tensor b = param({1.0});
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});  // takes the defaults (lr 0.1)
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<SGDOptions>(0.01));
  SGD opt(groups, SGDOptions(0.1));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  set_grad(a, {1.0});
  set_grad(b, {1.0});
  opt.step();
  EXPECT_TRUE(close(a, {0.9}, 1e-15, 0));
  EXPECT_TRUE(close(b, {0.99}, 1e-15, 0));
  // A group's options are its own copy: changing the defaults afterwards changes neither.
  static_cast<SGDOptions&>(opt.defaults()).lr(5.0);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options().get_lr(), 0.01);
}

TEST(Optimizer, AddParamGroupExtendsTheOptimizer) {
  Tensor a = param({1.0});
  Tensor b = param({2.0, 3.0});
  Adam opt({a}, AdamOptions(0.1));
  opt.add_param_group(OptimizerParamGroup({b}, std::make_unique<AdamOptions>(0.2)));
  EXPECT_EQ(opt.size(), 2u);
  std::vector<Tensor> all = opt.parameters();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].is_same(a));
  EXPECT_TRUE(all[1].is_same(b));
  set_grad(b, {1.0, -1.0});
  opt.step();
  // First Adam step moves by lr (1 - eps/|g|): b's group lr is 0.2.
  EXPECT_TRUE(close(b, {2.0 - 0.2 * (1 - 1e-8), 3.0 + 0.2 * (1 - 1e-8)}, 0, 1e-15));
  EXPECT_TRUE(close(a, {1.0}, 0, 0));
}

TEST(Optimizer, ZeroGradSetToNoneDropsTheGradients) {
  Tensor a = param({1.0, 2.0});
  Tensor b = param({3.0});
  SGD opt({a, b}, SGDOptions(0.1));
  set_grad(a, {1.0, 1.0});  // b has none: zero_grad must cope
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(Optimizer, ZeroGradInPlaceKeepsZeroedTensors) {
  Tensor a = param({1.0, 2.0});
  SGD opt({a}, SGDOptions(0.1));
  (a * a).sum().backward();
  ASSERT_TRUE(close(a.grad(), {2.0, 4.0}, 0, 0));
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(a.grad().defined());
  EXPECT_TRUE(close(a.grad(), {0.0, 0.0}, 0, 0));
  // The next backward accumulates into the zeros.
  (a * a).sum().backward();
  EXPECT_TRUE(close(a.grad(), {2.0, 4.0}, 0, 0));
}

TEST(Optimizer, ZeroGradInPlaceDetachesAGradThatIsPartOfAGraph) {
  Tensor a = param({1.0, 2.0});
  SGD opt({a}, SGDOptions(0.1));
  (a * a * a).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  ASSERT_TRUE(a.grad().requires_grad());
  opt.zero_grad(false);
  EXPECT_TRUE(close(a.grad(), {0.0, 0.0}, 0, 0));
  EXPECT_FALSE(a.grad().requires_grad());
}

TEST(Optimizer, StepWithClosureReturnsTheLossAndRunsWithGradEnabled) {
  Tensor p = param({1.0, -2.0});
  SGD opt({p}, SGDOptions(0.25));
  NoGradGuard no_grad;  // step must turn grad mode back on for the closure
  Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (p * p).sum();  // 5, grad 2p = [2, -4]
    l.backward();
    return l;
  });
  ASSERT_TRUE(loss.defined());
  EXPECT_DOUBLE_EQ(loss.item<double>(), 5.0);
  EXPECT_TRUE(close(p, {0.5, -1.0}, 0, 0));
  EXPECT_FALSE(opt.step().defined());  // no closure, no loss
}

TEST(Optimizer, StepRecordsNoGraph) {
  Tensor p = param({1.0});
  SGD opt({p}, SGDOptions(0.1).fused(false));  // the tensor-op path is the one at risk
  set_grad(p, {1.0});
  opt.step();
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(p.grad_fn(), nullptr);
}

TEST(Optimizer, RejectsAnEmptyParameterList) {
  EXPECT_GLASS_ERROR(SGD(std::vector<Tensor>{}, SGDOptions(0.1)),
                     "optimizer got an empty parameter list", "register_parameter");
}

TEST(Optimizer, RejectsParametersItCouldNotUpdate) {
  Tensor ok = param({1.0});
  EXPECT_GLASS_ERROR(SGD({ok, Tensor()}, SGDOptions(0.1)), "parameter 1 is an undefined Tensor");
  Tensor ints = glass::tensor({1, 2, 3});
  EXPECT_GLASS_ERROR(SGD({ints}, SGDOptions(0.1)), "parameter 0 has dtype Long",
                     "only floating-point tensors", ".to(kFloat)");
  Tensor frozen = glass::tensor({1.0, 2.0}, TensorOptions(kFloat64));
  EXPECT_GLASS_ERROR(SGD({ok, frozen}, SGDOptions(0.1)), "parameter 1 (sizes [2])",
                     "does not require grad", "requires_grad_()");
  Tensor computed = ok * 2;
  EXPECT_GLASS_ERROR(SGD({computed}, SGDOptions(0.1)), "can't optimize a non-leaf Tensor",
                     "MulBackward0", ".detach().requires_grad_()");
}

TEST(Optimizer, RejectsDuplicatedParameters) {
  Tensor a = param({1.0});
  Tensor b = param({2.0});
  EXPECT_GLASS_ERROR(SGD({a, b, a}, SGDOptions(0.1)), "parameter 2 (sizes [1])",
                     "appears more than once", "updated twice");
  SGD opt({a}, SGDOptions(0.1));
  EXPECT_GLASS_ERROR(opt.add_param_group(OptimizerParamGroup({b, a})), "parameter 1",
                     "appears more than once");
  EXPECT_EQ(opt.param_groups().size(), 1u);  // the rejected group left nothing behind
  EXPECT_EQ(opt.size(), 1u);
}

TEST(Optimizer, RejectsAGroupWithAnotherOptimizersOptions) {
  Tensor a = param({1.0});
  Tensor b = param({2.0});
  SGD opt({a}, SGDOptions(0.1));
  EXPECT_GLASS_ERROR(
      opt.add_param_group(OptimizerParamGroup({b}, std::make_unique<AdamOptions>(0.1))),
      "the group's options are AdamOptions but this optimizer takes SGDOptions");
  EXPECT_GLASS_ERROR(
      opt.add_param_group(OptimizerParamGroup({b}, std::make_unique<SGDOptions>(-2))),
      "invalid learning rate -2");
  EXPECT_EQ(opt.size(), 1u);
}

TEST(Optimizer, StepRejectsOptionsOfAnotherTypeSetAfterTheFact) {
  Tensor a = param({1.0});
  SGD opt({a}, SGDOptions(0.1));
  set_grad(a, {1.0});
  opt.param_groups()[0].set_options(std::make_unique<AdamOptions>(0.1));
  EXPECT_GLASS_ERROR(opt.step(), "SGD::step(): a param group's options are AdamOptions");
  EXPECT_TRUE(close(a, {1.0}, 0, 0));
}

TEST(Optimizer, AGroupWithoutOptionsSaysSoWhenAsked) {
  OptimizerParamGroup group({param({1.0})});
  EXPECT_FALSE(group.has_options());
  EXPECT_GLASS_ERROR(group.options(), "this group has no options yet");
}

// State is keyed by the parameter's identity: re-pointing it at other data of the same
// shape (set_data, what FSDP does between steps) keeps the moments; another shape after the
// first step is an error that says what happened, not a fused loop running off the end.
TEST(Optimizer, StateSurvivesSetDataAndAnotherShapeIsAnError) {
  for (bool fused : {false, true}) {
    Tensor p = tensor({1., 2.}).requires_grad_();
    Adam adam({p}, AdamOptions(0.1).fused(fused));
    p.mutable_grad() = tensor({1., 1.});
    adam.step();
    const auto* state = dynamic_cast<const AdamParamState*>(adam.state().begin()->second.get());
    ASSERT_NE(state, nullptr);
    const Tensor moments = state->exp_avg().clone();
    p.set_data(tensor({5., 6.}));
    p.mutable_grad() = tensor({1., 1.});
    adam.step();
    EXPECT_EQ(adam.state().size(), 1u);
    EXPECT_EQ(state->step(), 2);  // the same state, one step further
    EXPECT_TRUE(testing::close(state->exp_avg(), moments * 0.9 + 0.1));
    p.set_data(tensor({1., 2., 3.}));
    p.mutable_grad() = tensor({1., 1., 1.});
    EXPECT_GLASS_ERROR(adam.step(), "Adam::step(): a parameter (float32 [3] on cpu)",
                       "has state exp_avg of float32 [2] on cpu", "re-pointed at other data");
  }
  Tensor q = tensor({1., 2.}).requires_grad_();
  SGD sgd({q}, SGDOptions(0.1).momentum(0.9));
  q.mutable_grad() = tensor({1., 1.});
  sgd.step();
  q.set_data(tensor({1., 2.}).to(kFloat64));  // Module::to(kDouble) does this
  q.mutable_grad() = tensor({1., 1.}).to(kFloat64);
  EXPECT_GLASS_ERROR(sgd.step(), "SGD::step()", "momentum_buffer of float32 [2]");
}

// Checkpoints read and write state as named tensors; a state made by state_of() and filled
// from another's tensors steps exactly like the original.
TEST(Optimizer, StateAsNamedTensorsRoundTrips) {
  Tensor p = tensor({1., 2.}).requires_grad_();
  Tensor q = tensor({1., 2.}).requires_grad_();
  Adam a({p}, AdamOptions(0.1)), b({q}, AdamOptions(0.1));
  p.mutable_grad() = tensor({0.5, -1.});
  a.step();
  const auto& state = *a.state().begin()->second;
  std::vector<std::string> names;
  for (const auto& [name, t] : state.state_tensors()) {
    names.push_back(name);
    b.state_of(q).set_state_tensor(name, t);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"step", "exp_avg", "exp_avg_sq"}));
  {
    NoGradGuard no_grad;
    q.copy_(p);
  }
  p.mutable_grad() = tensor({0.25, 2.});
  q.mutable_grad() = tensor({0.25, 2.});
  a.step();
  b.step();
  EXPECT_TRUE(p.equal(q));
  EXPECT_GLASS_ERROR(b.state_of(q).set_state_tensor("momentum", tensor({1.})),
                     "AdamParamState has no slot 'momentum'");
  EXPECT_GLASS_ERROR(b.state_of(tensor({1.})), "not one of this optimizer's parameters");
  SGD sgd({q}, SGDOptions(0.1).momentum(0.9));
  EXPECT_TRUE(sgd.state_of(q).state_tensors().empty());  // no momentum buffer before a step
}

}  // namespace
}  // namespace glass::optim
