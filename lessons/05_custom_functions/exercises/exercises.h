// lessons/05_custom_functions/exercises/exercises.h — the custom functions you write in
// lesson 05.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Each is a glass::autograd::Function<T>: you write forward and backward, the tests call
// T::apply and check the gradient with glass::autograd::gradcheck in float64. Use what
// lessons 01 to 05 teach: tensor ops (exp, log, sum, amax, clamp, where, comparisons,
// unsqueeze/squeeze, broadcasting), and the AutogradContext (save_for_backward,
// get_saved_variables, saved_data, needs_input_grad). Not logsumexp(), softmax(),
// log_softmax() or a device's kernels through kernels_for() (any exercise): the tests
// compare you with those, and read your compiled
// file to fail with "exercise N must not call X" when you call one. They also count the ops
// your backward dispatches (core's events): exercise 2's must run no exp, and exercise 3's
// fewer ops when the target needs no gradient. Exercise 4 sums gradients back to its inputs'
// shapes itself: not with autograd's sum_to (lesson 04's "broadcasting in forward is summing
// in backward"), nor by asking autograd (autograd::grad, backward) to do it.
#pragma once

#include <glass/glass.h>

namespace glass::lesson05 {

using autograd::AutogradContext;
using autograd::tensor_list;

// Exercise 1 — a log-sum-exp that does not overflow.
// LogSumExp::apply(x) = log(sum_j exp(x[..., j])), reduced over the last dim:
// x: (..., N) -> (...). exp(1000) is inf in float64, so forward must not exponentiate x
// itself: with m the row's maximum, log(sum_j exp(x_j)) = m + log(sum_j exp(x_j - m)),
// and every exp(x_j - m) lies in (0, 1]. The result is finite for every finite x.
// backward: d lse / d x_j = exp(x_j - lse) = softmax(x)_j, so grad_x is that softmax
// times the incoming gradient, broadcast along the last dim. Save what it needs in forward.
struct LogSumExp : autograd::Function<LogSumExp> {
  static Tensor forward(AutogradContext* ctx, Tensor x);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 2 — an exp that saves its output.
// MyExp::apply(x) = exp(x) elementwise. Its derivative is exp(x) again, which forward has
// just computed: save the *output* for backward (grad_x = grad * y), not the input. Then
// backward costs no exp, and the caller may overwrite x after forward (the tests do).
struct MyExp : autograd::Function<MyExp> {
  static Tensor forward(AutogradContext* ctx, Tensor x);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 3 — the Huber loss, elementwise, with two tensor inputs and a number.
// Huber::apply(x, target, delta), with d = x - target (x and target of the same shape):
//     0.5 * d^2                    where |d| <= delta
//     delta * (|d| - delta / 2)    elsewhere
// Keep delta for backward in ctx->saved_data. The derivative in d is clamp(d, -delta,
// delta): backward returns {grad_x, grad_target, Tensor()} — one entry per forward
// argument, the double gets none — with grad_x = grad * clamp(d, -delta, delta) and
// grad_target = -grad_x, each computed only when ctx->needs_input_grad(i) says so.
struct Huber : autograd::Function<Huber> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor target, double delta);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 4 — a function whose inputs broadcast.
// MulAdd::apply(a, b) = a * b + a, for floating-point a and b of one dtype whose shapes
// broadcast (lesson 03's rule: align on the right; a dim of size 1, or a missing one,
// stretches), e.g. a: (3, 1) and b: (4,) give (3, 4); either may be 0-dim. grad_output[0]
// has the *broadcast* shape, and backward must return {grad_a, grad_b} of the *inputs'*
// shapes (CustomNode refuses any other): an input that was stretched along a dim received
// its value in every position there, so its gradient is the sum over that dim (a dim the
// broadcast added in front: summed away; a dim of size 1 that was stretched: summed with
// keepdim). With g = grad_output[0]: grad_a = g * (b + 1) and grad_b = g * a, each reduced
// to its input's shape, and each computed only when ctx->needs_input_grad(i) says so.
// (The shapes: a.sizes() in forward, kept in saved_data as a std::vector<int64_t>, or the
// saved tensors' own sizes.)
struct MulAdd : autograd::Function<MulAdd> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

}  // namespace glass::lesson05
