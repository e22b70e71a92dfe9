// lessons/05_custom_functions/exercises/solution.cpp — the reference answers to lesson
// 05's exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <any>
#include <vector>

#include "exercises.h"

namespace glass::lesson05 {

// ---- exercise 1 ------------------------------------------------------------------------

Tensor LogSumExp::forward(AutogradContext* ctx, Tensor x) {  // x: (..., N)
  Tensor m = x.amax({-1}, /*keepdim=*/true);                 // (..., 1): the row maxima
  // Every x - m is <= 0, so every exp lies in (0, 1] and at least one is exactly 1: the
  // sum is in [1, N] and its log is finite, however large |x| is.
  Tensor lse = m.squeeze(-1) + (x - m).exp().sum({-1}).log();  // (...)
  ctx->save_for_backward({x, lse});  // lse is the output: saved without a cycle
  return lse;
}

tensor_list LogSumExp::backward(AutogradContext* ctx, tensor_list grad_output) {
  tensor_list saved = ctx->get_saved_variables();
  const Tensor &x = saved[0], &lse = saved[1];
  // softmax(x)_j = exp(x_j - lse): stable for the same reason, since x_j <= lse.
  Tensor softmax = (x - lse.unsqueeze(-1)).exp();   // (..., N)
  return {softmax * grad_output[0].unsqueeze(-1)};  // (..., 1) broadcast along N
}

// ---- exercise 2 ------------------------------------------------------------------------

Tensor MyExp::forward(AutogradContext* ctx, Tensor x) {
  Tensor y = x.exp();
  ctx->save_for_backward({y});  // the output: d exp(x)/dx = exp(x) = y
  return y;
}

tensor_list MyExp::backward(AutogradContext* ctx, tensor_list grad_output) {
  Tensor y = ctx->get_saved_variables()[0];
  return {grad_output[0] * y};
}

// ---- exercise 3 ------------------------------------------------------------------------

Tensor Huber::forward(AutogradContext* ctx, Tensor x, Tensor target, double delta) {
  Tensor d = x - target;
  ctx->save_for_backward({d});  // backward needs only the difference
  ctx->saved_data["delta"] = delta;
  Tensor a = d.abs();
  return where(a <= delta, d * d * 0.5, (a - delta / 2) * delta);
}

tensor_list Huber::backward(AutogradContext* ctx, tensor_list grad_output) {
  Tensor d = ctx->get_saved_variables()[0];
  double delta = std::any_cast<double>(ctx->saved_data["delta"]);
  // Inside the band the loss is 0.5 d^2 (slope d); outside it is linear with slope
  // ±delta. Both at once: clamp(d, -delta, delta).
  Tensor grad_d = grad_output[0] * d.clamp(-delta, delta);
  Tensor grad_x, grad_target;
  if (ctx->needs_input_grad(0)) grad_x = grad_d;
  if (ctx->needs_input_grad(1)) grad_target = -grad_d;
  return {grad_x, grad_target, Tensor()};
}

// ---- exercise 4 ------------------------------------------------------------------------

namespace {

// The gradient of an input of shape `shape` that forward broadcast to g's shape: summed
// over every dim the broadcast added in front, then over every dim where the input had
// size 1 and g has more (keepdim, so the 1 stays). Broadcasting copies; its backward sums.
Tensor reduce_to_shape(const Tensor& g, IntArrayRef shape) {  // g: broadcast shape
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> leading;
  for (int64_t d = 0; d < lead; ++d) leading.push_back(d);
  Tensor r = leading.empty() ? g : g.sum(leading);  // now r.dim() == shape.size()
  std::vector<int64_t> stretched;
  for (int64_t d = 0; d < r.dim(); ++d)
    if (shape[static_cast<size_t>(d)] == 1 && r.size(d) != 1) stretched.push_back(d);
  return stretched.empty() ? r : r.sum(stretched, /*keepdim=*/true);
}

}  // namespace

Tensor MulAdd::forward(AutogradContext* ctx, Tensor a, Tensor b) {  // a, b: broadcastable
  ctx->save_for_backward({a, b});  // their sizes are the shapes to reduce to
  return a * b + a;                // the broadcast shape
}

tensor_list MulAdd::backward(AutogradContext* ctx, tensor_list grad_output) {
  tensor_list saved = ctx->get_saved_variables();
  const Tensor &a = saved[0], &b = saved[1];
  const Tensor& g = grad_output[0];  // the broadcast shape
  Tensor grad_a, grad_b;
  if (ctx->needs_input_grad(0)) grad_a = reduce_to_shape(g * (b + 1), a.sizes());
  if (ctx->needs_input_grad(1)) grad_b = reduce_to_shape(g * a, b.sizes());
  return {grad_a, grad_b};
}

}  // namespace glass::lesson05
