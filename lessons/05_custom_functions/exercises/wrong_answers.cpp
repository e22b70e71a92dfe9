// lessons/05_custom_functions/exercises/wrong_answers.cpp — the deliberately wrong answers
// of wrong_answers.h: right values and right gradients, each with one broken rule, which
// exercises_test.cpp asserts its graders catch.
#include "wrong_answers.h"

#include <any>

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

}  // namespace glass::lesson05::wrong
