// lessons/04_autograd/exercises/exercises.h — the functions you write in lesson 04.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Use only what lessons 01 to 04 teach: tensor ops and views, requires_grad_(), detach(),
// zeros()/zeros_like(), select() and fill_() or stack() to build unit vectors and results,
// glass::autograd::grad (with grad_outputs, retain_graph and create_graph), and forward
// mode: glass::autograd::forward_ad::DualLevel, make_dual and unpack_dual. Not gradcheck
// or gradgradcheck, and no finite differences: the tests compare you with Jacobians and
// Hessians derived by hand, and count how many times you evaluate f. Exercise 2 is forward
// mode only: no autograd::grad or backward. Exercise 4 *is* the engine: it walks the graph
// with the Node API (autograd/node.h: next_edges(), Edge, apply(), num_inputs(),
// sequence_nr(); autograd/variable.h: gradient_edge(), AccumulateGrad) and NoGradGuard, and
// may call no autograd::grad or backward. The tests read your compiled file and fail with
// "exercise N must not call X" when you call a banned function.
#pragma once

#include <glass/glass.h>

#include <functional>

namespace glass::lesson04 {

using autograd::tensor_list;

// A differentiable function of one 1-D tensor, written with glass's ops, e.g.
//   [](const Tensor& x) { return x.tanh() * 2; }
using TensorFn = std::function<Tensor(const Tensor&)>;

// Exercise 1 — a Jacobian, one row per vector-Jacobian product.
// x is a 1-D floating-point tensor of n elements and f(x) a 1-D tensor of m elements
// that depends on x. Returns the [m, n] Jacobian J[i][j] = d f(x)_i / d x_j, in x's dtype.
// Evaluate f exactly once, on a leaf made from x that requires grad, then get row i as
// the VJP e_i^T J: autograd::grad({y}, {leaf}, {e_i}, /*retain_graph=*/true). Leave x
// itself alone: it must not start requiring grad, and its .grad() must stay undefined.
Tensor jacobian_by_vjp(const TensorFn& f, const Tensor& x);

// Exercise 2 — a Jacobian-vector product by forward mode.
// Returns J(x) v, an m-element tensor (the derivative of f at x in the direction v), for
// x and v 1-D floating-point tensors of the same shape and dtype. Evaluate f exactly once,
// on make_dual(x, v) inside a forward_ad::DualLevel, and return the tangent of its result:
// no backward pass, no graph. When you return, no dual level may be active any more.
// When f's result does not depend on x, it carries no tangent (unpack_dual(y).tangent is
// undefined) and its derivative is zero: return zeros of the result's shape and dtype,
// zeros_like(y), never an undefined tensor.
Tensor jvp(const TensorFn& f, const Tensor& x, const Tensor& v);

// Exercise 3 — a Hessian-vector product by double backward.
// f maps a 1-D floating-point x of n elements to a one-element tensor (a scalar loss).
// Returns H(x) v, where H[i][j] = d^2 f / dx_i dx_j, as an n-element tensor that does not
// require grad; v has x's shape. Never form H: evaluate f once, take g = df/dx with
// create_graph=true (so that g has a graph of its own), then one more VJP of g with the
// vector v gives v^T H = (H v)^T, H being symmetric. When f is linear, its gradient is a
// constant with no graph at all, and H v is zero: return zeros then. Leave x alone, as in
// exercise 1.
Tensor hessian_vector_product(const TensorFn& f, const Tensor& x, const Tensor& v);

// Exercise 4 — the backward engine, written from next_edges (section 2's two phases).
// root is a one-element floating-point tensor with a grad_fn, computed from `inputs`, each
// of which requires grad: a leaf or an intermediate result (even root itself). Returns one
// tensor per input, d root / d input, of the input's shape and dtype, requiring no grad;
// for an input that root does not depend on, zeros_like(input) (autograd::grad with
// allow_unused=true would give an undefined tensor there).
//   - Start at gradient_edge(root), with the gradient ones_like(root) in slot input_nr of
//     that node's input buffer (a buffer has num_inputs() slots; undefined means zero).
//   - Phase 1: count, for every node reachable through next_edges(), the valid edges that
//     point into it. Phase 2: run a node (node->apply(buffer), under a NoGradGuard) only
//     once that count has reached zero, i.e. every gradient it will get has arrived; add
//     what it returns for edge i into slot next_edges()[i].input_nr of that edge's node
//     (summed with what is already there: that is where paths meet), and count down.
//   - Input k's gradient is what has arrived, once complete, in slot input_nr of the node
//     gradient_edge(inputs[k]) names: the grad_fn of an intermediate, the AccumulateGrad of
//     a leaf. Never apply an AccumulateGrad (it would write the leaf's .grad()), and leave
//     the graph as you found it (no release_variables()): the tests run autograd::grad on
//     it afterwards. The graphs have no hooks.
// Not autograd::grad, autograd::backward or Tensor::backward: they would answer it.
tensor_list engine_grad(const Tensor& root, const tensor_list& inputs);

}  // namespace glass::lesson04
