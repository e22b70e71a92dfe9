// lessons/04_autograd/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: right numbers by a banned route, which exercises_test.cpp asserts the
// symbol check catches.
#include "wrong_answers.h"

#include <vector>

namespace glass::lesson04::wrong {

namespace {

// y's VJPs with the unit vectors, stacked: the Jacobian of y with respect to leaf.
Tensor rows_by_vjp(const Tensor& y, const Tensor& leaf) {
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < y.size(0); ++i) {
    Tensor e = zeros({y.size(0)}, y.dtype());
    e.select(0, i).fill_(1.0);
    rows.push_back(autograd::grad({y}, {leaf}, {e}, /*retain_graph=*/true)[0]);
  }
  return stack(rows);
}

// f as gradcheck takes it: a list of tensors in, a list out.
autograd::DifferentiableFn as_list_fn(const TensorFn& f) {
  return [f](const autograd::tensor_list& in) -> autograd::tensor_list { return {f(in[0])}; };
}

}  // namespace

Tensor jacobian_checked_by_gradcheck(const TensorFn& f, const Tensor& x) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor J = rows_by_vjp(f(leaf), leaf).to(x.dtype());
  const autograd::GradcheckResult check =
      autograd::gradcheck(as_list_fn(f), {x.detach().to(kDouble)});
  GLASS_CHECK(check.ok, "gradcheck disagrees: ", check.report);
  return J;
}

Tensor jvp_by_double_vjp(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor y = f(leaf);
  Tensor u = zeros_like(y).requires_grad_();  // any u: g(u) = J^T u is linear in it
  Tensor g = autograd::grad({y}, {leaf}, {u}, std::nullopt, /*create_graph=*/true)[0];
  return autograd::grad({g}, {u}, {v})[0].detach();
}

Tensor hessian_vector_product_checked(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor g = autograd::grad({f(leaf)}, {leaf}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor hv = g.requires_grad() ? autograd::grad({g}, {leaf}, {v})[0] : zeros_like(x);
  const autograd::GradcheckResult check =
      autograd::gradgradcheck(as_list_fn(f), {x.detach().to(kDouble)});
  GLASS_CHECK(check.ok, "gradgradcheck disagrees: ", check.report);
  return hv;
}

}  // namespace glass::lesson04::wrong
