// tests/autograd/custom_function_test.cpp — Function<T>: the seed's MyReLU, and misuse.
#include "autograd/custom_function.h"

#include "core/device_test.h"
#include "core/test_util.h"
#include "gradcheck_util.h"

namespace glass {
namespace {

using autograd::AutogradContext;
using autograd::tensor_list;
using testing::close;

class CustomFunction : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(CustomFunction);

// The seed's MyReLU, line for line.
struct MyReLU : autograd::Function<MyReLU> {
  static Tensor forward(AutogradContext* ctx, Tensor input) {
    ctx->save_for_backward({input});  // Save tensor for backward phase
    return input.clamp(0);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    Tensor input = ctx->get_saved_variables()[0];
    Tensor grad_input = grad_output[0].clone();
    grad_input.index_put_({input < 0}, 0);  // Mask gradient for negative inputs
    return {grad_input};
  }
};

TEST_P(CustomFunction, MyReLUMatchesTheBuiltInRelu) {
  Tensor x = on(tensor({-1.5, 0.5, 2.0}, kFloat64)).requires_grad_();
  Tensor y = MyReLU::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "MyReLUBackward");
  EXPECT_TRUE(close(y, {0, 0.5, 2}));
  (y * on(tensor({1., 2., 3.}, kFloat64))).sum().backward();
  EXPECT_TRUE(close(x.grad(), {0, 2, 3}));
  EXPECT_TRUE(testing::gradcheck([](const std::vector<Tensor>& v) { return MyReLU::apply(v[0]); },
                                 {on(tensor({-1.5, 0.5, 2.0, -0.25}, kFloat64))}));
}

// A function with a non-tensor argument, saved_data and a saved output.
struct ScaledExp : autograd::Function<ScaledExp> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double scale) {
    Tensor y = x.exp() * scale;
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = scale;
    return y;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list g) {
    Tensor y = ctx->get_saved_variables()[0];
    EXPECT_GT(std::any_cast<double>(ctx->saved_data["scale"]), 0);
    return {g[0] * y, Tensor()};
  }
};

TEST_P(CustomFunction, NonTensorArgumentsAndSavedOutputs) {
  Tensor x = on(tensor({0.0, 1.0}, kFloat64)).requires_grad_();
  ScaledExp::apply(x, 3.0).sum().backward();
  EXPECT_TRUE(close(x.grad(), {3, 3 * std::exp(1.0)}));
}

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor a, Tensor b) { return a * b; }
  static tensor_list backward(AutogradContext*, tensor_list g) { return {g[0]}; }
};
struct WrongShape : autograd::Function<WrongShape> {
  static Tensor forward(AutogradContext*, Tensor a) { return a.sum(); }
  static tensor_list backward(AutogradContext*, tensor_list g) { return {g[0]}; }
};

TEST_P(CustomFunction, BadBackwardsAreClearErrors) {
  Tensor a = ones({2}, opts()).requires_grad_(), b = ones({2}, opts()).requires_grad_();
  EXPECT_GLASS_ERROR(WrongCount::apply(a, b).sum().backward(), "WrongCountBackward",
                     "incorrect number of gradients (expected 2, got 1)");
  EXPECT_GLASS_ERROR(WrongShape::apply(a).backward(), "WrongShapeBackward", "shape []",
                     "shape [2]");
}

struct ArgMaxAndMax : autograd::Function<ArgMaxAndMax> {
  static tensor_list forward(AutogradContext* ctx, Tensor x) {
    Tensor idx = x.argmax();
    ctx->mark_non_differentiable({idx});
    ctx->save_for_backward({x});
    return {x.max(), idx};
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {(x == x.max()).to(x.dtype()) * g[0]};
  }
};

TEST_P(CustomFunction, NonDifferentiableOutputs) {
  Tensor x = on(tensor({1., 5., 2.})).requires_grad_();
  tensor_list out = ArgMaxAndMax::apply(x);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  out[0].backward();
  EXPECT_TRUE(close(x.grad(), {0, 1, 0}));
}

}  // namespace
}  // namespace glass
