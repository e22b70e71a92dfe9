// lessons/04_autograd/exercises/solution.cpp — the reference answers to lesson 04's
// exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <vector>

#include "exercises.h"

namespace glass::lesson04 {
namespace {

// e_i: the unit vector that picks output i (exercise 1) or input i.
Tensor unit_vector(int64_t n, int64_t i, ScalarType dtype) {
  Tensor e = zeros({n}, dtype);
  e.select(0, i).fill_(1.0);
  return e;
}

}  // namespace

Tensor jacobian_by_vjp(const TensorFn& f, const Tensor& x) {
  GLASS_CHECK(x.dim() == 1 && x.is_floating_point(),
              "jacobian_by_vjp(): expects a 1-D floating-point x, got ", x.toString());
  Tensor leaf = x.detach().requires_grad_();  // same values, a fresh leaf: x is untouched
  Tensor y = f(leaf);                         // the one forward pass; its graph serves all rows
  GLASS_CHECK(y.dim() == 1, "jacobian_by_vjp(): f(x) must be 1-D, got ", y.toString());
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < y.size(0); ++i) {
    // e_i^T J is row i. retain_graph keeps the saved tensors for the next row's pass.
    Tensor e = unit_vector(y.size(0), i, y.dtype());
    rows.push_back(autograd::grad({y}, {leaf}, {e}, /*retain_graph=*/true)[0]);
  }
  return stack(rows).to(x.dtype());
}

Tensor jvp(const TensorFn& f, const Tensor& x, const Tensor& v) {
  autograd::forward_ad::DualLevel level;  // ends (and strips every tangent) on return
  Tensor y = f(autograd::forward_ad::make_dual(x, v));
  Tensor tangent = autograd::forward_ad::unpack_dual(y).tangent;
  // An output that does not depend on x carries no tangent: its derivative is zero.
  return tangent.defined() ? tangent : zeros_like(y);
}

Tensor hessian_vector_product(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor loss = f(leaf);
  GLASS_CHECK(loss.numel() == 1, "hessian_vector_product(): f(x) must have one element, got ",
              loss.toString());
  // First pass: the gradient, recorded as a graph of its own (create_graph).
  Tensor g = autograd::grad({loss}, {leaf}, {}, std::nullopt, /*create_graph=*/true)[0];
  if (!g.requires_grad()) return zeros_like(x);  // a constant gradient: f is linear
  // Second pass: v^T (dg/dx) = v^T H, which is (H v)^T since H is symmetric. (allow_unused:
  // g may have a graph that never reaches x, if f also reads other tensors that need grad.)
  Tensor hv = autograd::grad({g}, {leaf}, {v}, std::nullopt, false, /*allow_unused=*/true)[0];
  return hv.defined() ? hv : zeros_like(x);
}

}  // namespace glass::lesson04
