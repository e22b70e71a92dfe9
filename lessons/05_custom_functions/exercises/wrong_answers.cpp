// lessons/05_custom_functions/exercises/wrong_answers.cpp — the deliberately wrong answers
// of wrong_answers.h: right values and right gradients, each with one broken rule, which
// exercises_test.cpp asserts its graders catch.
#include "wrong_answers.h"

#include <any>

#include "autograd/formula.h"  // autograd's internal sum_to, which exercise 4 bans

namespace glass::lesson05::wrong {

Tensor LogSumExpByLibrary::forward(AutogradContext* ctx, Tensor x) {
  ctx->save_for_backward({x});
  return x.logsumexp({-1});
}

tensor_list LogSumExpByLibrary::backward(AutogradContext* ctx, tensor_list grad_output) {
  Tensor x = ctx->get_saved_variables()[0];
  return {x.softmax(-1) * grad_output[0].unsqueeze(-1)};
}

Tensor ExpSavingInput::forward(AutogradContext* ctx, Tensor x) {
  ctx->save_for_backward({x.clone()});  // a copy: overwriting x later does not show
  return x.exp();
}

tensor_list ExpSavingInput::backward(AutogradContext* ctx, tensor_list grad_output) {
  return {grad_output[0] * ctx->get_saved_variables()[0].exp()};  // exp a second time
}

Tensor HuberIgnoringNeedsInputGrad::forward(AutogradContext* ctx, Tensor x, Tensor target,
                                            double delta) {
  Tensor d = x - target;
  ctx->save_for_backward({d});
  ctx->saved_data["delta"] = delta;
  Tensor a = d.abs();
  return where(a <= delta, d * d * 0.5, (a - delta / 2) * delta);
}

tensor_list HuberIgnoringNeedsInputGrad::backward(AutogradContext* ctx, tensor_list grad_output) {
  Tensor d = ctx->get_saved_variables()[0];
  double delta = std::any_cast<double>(ctx->saved_data["delta"]);
  Tensor grad_x = grad_output[0] * d.clamp(-delta, delta);
  return {grad_x, -grad_x, Tensor()};  // -grad_x whether or not the target needs it
}

Tensor MulAddUnreduced::forward(AutogradContext* ctx, Tensor a, Tensor b) {
  ctx->save_for_backward({a, b});
  return a * b + a;
}

tensor_list MulAddUnreduced::backward(AutogradContext* ctx, tensor_list grad_output) {
  tensor_list saved = ctx->get_saved_variables();
  const Tensor& g = grad_output[0];
  return {g * (saved[1] + 1), g * saved[0]};  // the broadcast shape, not the inputs'
}

Tensor MulAddSummingEveryDim::forward(AutogradContext* ctx, Tensor a, Tensor b) {
  ctx->save_for_backward({a, b});
  return a * b + a;
}

tensor_list MulAddSummingEveryDim::backward(AutogradContext* ctx, tensor_list grad_output) {
  tensor_list saved = ctx->get_saved_variables();
  const Tensor &a = saved[0], &b = saved[1], &g = grad_output[0];
  // expand() of the 0-dim total, then contiguous(): a tensor of the input's shape.
  return {(g * (b + 1)).sum().expand(a.sizes()).contiguous(),
          (g * a).sum().expand(b.sizes()).contiguous()};
}

Tensor MulAddByLibrarySumTo::forward(AutogradContext* ctx, Tensor a, Tensor b) {
  ctx->save_for_backward({a, b});
  return a * b + a;
}

tensor_list MulAddByLibrarySumTo::backward(AutogradContext* ctx, tensor_list grad_output) {
  tensor_list saved = ctx->get_saved_variables();
  const Tensor &a = saved[0], &b = saved[1], &g = grad_output[0];
  return {autograd::sum_to(g * (b + 1), a.sizes()), autograd::sum_to(g * a, b.sizes())};
}

}  // namespace glass::lesson05::wrong
