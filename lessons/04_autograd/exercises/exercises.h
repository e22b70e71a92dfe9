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
// mode only: no autograd::grad or backward. The tests read your compiled file and fail with
// "exercise N must not call X" when you call a banned function.
#pragma once

#include <glass/glass.h>

#include <functional>

namespace glass::lesson04 {

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

}  // namespace glass::lesson04
