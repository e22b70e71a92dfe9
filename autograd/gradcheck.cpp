// autograd/gradcheck.cpp — numerical vs analytical Jacobians (see gradcheck.h).
#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/engine.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "core/print.h"

namespace glass::autograd {
namespace {

// Copies of the inputs as fresh float64 leaves (the differentiable ones require grad).
// Fresh leaves with the inputs' values *and layouts*: a transposed, sliced or offset input
// reaches the formulas as such (the layout is what non-contiguous gradchecks are about).
// An input whose elements overlap (expanded, stride 0) is made contiguous instead:
// perturbing one of its elements would move all its aliases at once.
tensor_list prepare(const tensor_list& inputs) {
  NoGradGuard no_grad;
  tensor_list out;
  for (const Tensor& t : inputs) {
    bool overlaps = false;
    int64_t extent = t.numel() > 0 ? t.storage_offset() + 1 : 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
      overlaps |= t.stride(d) == 0 && t.size(d) > 1;
      if (t.numel() > 0) extent += (t.size(d) - 1) * std::abs(t.stride(d));
    }
    Tensor c;
    if (overlaps || (t.is_contiguous() && t.storage_offset() == 0)) {
      c = t.detach().clone();
    } else {
      c = zeros({extent}, t.options().requires_grad(false))
              .as_strided(t.sizes(), t.strides(), t.storage_offset());
      c.copy_(t);
    }
    if (c.is_floating_point()) c.requires_grad_(true);
    out.push_back(c);
  }
  return out;
}

// Jacobian (n_out x n_in) of output `o` w.r.t. input `k`, numerically.
Tensor numerical_jacobian(const DifferentiableFn& f, const tensor_list& inputs, size_t k, size_t o,
                          double eps) {
  NoGradGuard no_grad;
  tensor_list in;
  for (const Tensor& t : inputs) in.push_back(t.detach().clone());
  Tensor flat = in[k].view({-1});
  int64_t n_in = flat.numel();
  int64_t n_out = f(in)[o].numel();
  Tensor jac = zeros({n_out, n_in}, kFloat64);
  for (int64_t i = 0; i < n_in; ++i) {
    Tensor cell = flat.select(0, i);
    double v = cell.item<double>();
    cell.fill_(v + eps);
    // clone(): an output may be a view of the input we are about to change again.
    Tensor plus = f(in)[o].to(kFloat64).reshape({-1}).clone();
    cell.fill_(v - eps);
    Tensor minus = f(in)[o].to(kFloat64).reshape({-1}).clone();
    cell.fill_(v);
    jac.select(1, i).copy_((plus - minus) / (2 * eps));
  }
  return jac;
}

// Jacobian of output `o` w.r.t. input `k` from backward passes, one row per output element.
Tensor analytical_jacobian(const tensor_list& outs, const tensor_list& inputs, size_t k, size_t o) {
  int64_t n_out = outs[o].numel(), n_in = inputs[k].numel();
  Tensor jac = zeros({n_out, n_in}, kFloat64);
  for (int64_t r = 0; r < n_out; ++r) {
    Tensor v = zeros_like(outs[o]);
    {
      NoGradGuard no_grad;
      v.view({-1}).select(0, r).fill_(1);
    }
    tensor_list g = grad({outs[o]}, {inputs[k]}, {v}, /*retain_graph=*/true, false, true);
    if (g[0].defined()) {
      NoGradGuard no_grad;
      jac.select(0, r).copy_(g[0].to(kFloat64).reshape({-1}));
    }
  }
  return jac;
}

}  // namespace

GradcheckResult gradcheck(const DifferentiableFn& f, const tensor_list& raw_inputs, double eps,
                          double atol, double rtol) {
  tensor_list inputs = prepare(raw_inputs);
  tensor_list outs = f(inputs);
  GradcheckResult result;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].requires_grad()) continue;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!outs[o].defined() || !outs[o].requires_grad()) continue;
      Tensor num = numerical_jacobian(f, inputs, k, o, eps);
      Tensor ana = analytical_jacobian(outs, inputs, k, o);
      Tensor diff = (num - ana).abs();
      Tensor bound = num.abs() * rtol + atol;
      // Written as "not within the bound" so that a NaN anywhere (which compares false
      // with everything) fails the check instead of passing it.
      if ((diff <= bound).logical_not().sum().item<int64_t>() == 0) continue;
      std::ostringstream r;
      r << "gradcheck: Jacobian mismatch for output " << o << " with respect to input " << k
        << " (eps " << eps << ", atol " << atol << ", rtol " << rtol << ")\n"
        << "numerical:\n"
        << num << "\nanalytical:\n"
        << ana << "\n";
      result.ok = false;
      result.report += r.str();
    }
  }
  return result;
}

GradcheckResult gradgradcheck(const DifferentiableFn& f, const tensor_list& raw_inputs, double eps,
                              double atol, double rtol) {
  tensor_list inputs = prepare(raw_inputs);
  tensor_list outs = f(inputs);
  // Random but fixed cotangents v, one per output; they are inputs of the checked function.
  manual_seed(0);
  tensor_list vs;
  // Drawn on the CPU (the same numbers on every device), then moved to the output's.
  for (const Tensor& o : outs) vs.push_back(randn(o.sizes(), kFloat64).to(o.device(), o.dtype()));
  size_t n = inputs.size();
  DifferentiableFn first_derivative = [&](const tensor_list& xs_and_vs) -> tensor_list {
    tensor_list xs(xs_and_vs.begin(), xs_and_vs.begin() + static_cast<int64_t>(n));
    tensor_list v(xs_and_vs.begin() + static_cast<int64_t>(n), xs_and_vs.end());
    tensor_list ys = f(xs);
    tensor_list diff_inputs;
    for (const Tensor& x : xs)
      if (x.requires_grad()) diff_inputs.push_back(x);
    if (!GradMode::is_enabled()) {  // numerical evaluation: recompute with a graph
      AutoGradMode enable(true);
      tensor_list leaves;
      for (const Tensor& x : xs) {
        Tensor c = x.detach();
        if (c.is_floating_point()) c.requires_grad_(true);
        leaves.push_back(c);
      }
      ys = f(leaves);
      diff_inputs.clear();
      for (const Tensor& x : leaves)
        if (x.requires_grad()) diff_inputs.push_back(x);
      tensor_list g = grad(ys, diff_inputs, v, std::nullopt, false, true);
      for (Tensor& t : g) t = t.defined() ? t.detach() : t;
      return g;
    }
    return grad(ys, diff_inputs, v, std::nullopt, /*create_graph=*/true, true);
  };
  tensor_list all = inputs;
  all.insert(all.end(), vs.begin(), vs.end());
  return gradcheck(first_derivative, all, eps, atol, rtol);
}

}  // namespace glass::autograd
