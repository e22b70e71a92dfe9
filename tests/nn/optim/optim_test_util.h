// tests/nn/optim/optim_test_util.h — helpers the optimizer tests share: float64
// parameters with hand-set gradients, the scalar reference for Adam and AdamW, and the
// runs that the SGD, Adam and AdamW tests each make (fused loop against tensor ops, a
// tiny quadratic to converge on).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include <glass/glass.h>

namespace glass::testing {

// A float64 leaf that requires grad, holding `v`.
inline Tensor param(const std::vector<double>& v) {
  return glass::tensor(v, TensorOptions(kFloat64)).requires_grad_();
}

// Sets p's gradient to `g` (float64), as backward() would.
inline void set_grad(const Tensor& p, const std::vector<double>& g) {
  p.mutable_grad() = glass::tensor(g, TensorOptions(kFloat64));
}

// The algorithm box of torch.optim.Adam's documentation as a plain double loop, in the
// docs' form (bias-corrected m_hat and v_hat, then p -= lr * m_hat / (sqrt(v_hat) + eps))
// rather than the implementation's rearranged step_size / denom form, so the two are
// independent. With `decoupled` it is torch.optim.AdamW's: the parameter itself shrinks by
// lr * weight_decay first, and the gradient never sees the decay.
struct AdamReference {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad;
  std::vector<double> p;
  std::vector<double> m{}, v{}, v_max{};
  int t = 0;
  bool decoupled = false;

  void step(const std::vector<double>& grad) {
    if (t == 0) m = v = v_max = std::vector<double>(p.size(), 0.0);
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grad[i];
      if (decoupled) {
        p[i] = p[i] - lr * weight_decay * p[i];  // AdamW: the gradient never sees it
      } else {
        g = g + weight_decay * p[i];
      }
      m[i] = beta1 * m[i] + (1 - beta1) * g;
      v[i] = beta2 * v[i] + (1 - beta2) * g * g;
      double m_hat = m[i] / (1 - std::pow(beta1, t));
      double v_hat;
      if (amsgrad) {
        v_max[i] = std::max(v_max[i], v[i]);
        v_hat = v_max[i] / (1 - std::pow(beta2, t));
      } else {
        v_hat = v[i] / (1 - std::pow(beta2, t));
      }
      p[i] = p[i] - lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
};

// Runs optimizer Opt with `options`, once with the fused loop and once with the tensor-op
// update, on two copies of `start` and the same gradients (gradient(step) for each of
// `steps` steps). Returns the two parameters: fused first.
template <class Opt, class Options>
std::pair<Tensor, Tensor> run_fused_and_unfused(const Options& options, const Tensor& start,
                                                int steps,
                                                const std::function<Tensor(int)>& gradient) {
  Tensor a = start.clone().requires_grad_();
  Tensor b = start.clone().requires_grad_();
  Opt fused({a}, Options(options).fused(true));
  Opt unfused({b}, Options(options).fused(false));
  for (int step = 0; step < steps; ++step) {
    Tensor g = gradient(step);
    a.mutable_grad() = g;
    b.mutable_grad() = g.clone();
    fused.step();
    unfused.step();
  }
  return {a, b};
}

// Where loss = sum(c (p - t)^2), with c = [1, 0.5, 2], has its minimum: p = t.
inline const std::vector<double> kTinyQuadraticMinimum = {3.0, -1.0, 0.5};

// Runs `steps` steps of optimizer Opt with `options` on that loss from p = 0; returns p.
template <class Opt, class Options>
Tensor minimize_tiny_quadratic(const Options& options, int steps) {
  Tensor target = glass::tensor(kTinyQuadraticMinimum, TensorOptions(kFloat64));
  Tensor c = glass::tensor({1.0, 0.5, 2.0}, TensorOptions(kFloat64));
  Tensor p = glass::zeros({3}, TensorOptions(kFloat64)).requires_grad_();
  Opt opt({p}, options);
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    Tensor d = p - target;
    (c * d * d).sum().backward();
    opt.step();
  }
  return p;
}

}  // namespace glass::testing
