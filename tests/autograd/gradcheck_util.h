// tests/autograd/gradcheck_util.h — a float64 finite-difference check for the formulas.
//
// The independent reference: for every input element, perturb it by ±eps and take the
// central difference of a random projection sum(f(x) * w) (one reverse pass gives the
// same projection's gradient). PyTorch's defaults: eps 1e-6, atol 1e-5, rtol 1e-3.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include <glass/glass.h>

namespace glass::testing {

inline ::testing::AssertionResult gradcheck(
    const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
    double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3) {
  for (Tensor& t : inputs) t.requires_grad_(true);
  Tensor out = f(inputs);
  manual_seed(123);
  Tensor w = randn(out.sizes(), kFloat64);
  std::vector<Tensor> analytic =
      autograd::grad({(out * w).sum()}, inputs, {}, std::nullopt, false, true);
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor x = inputs[k];
    // Perturb a detached copy element by element (values through the address formula).
    Tensor base = x.detach().clone();
    Tensor flat = base.view({-1});
    for (int64_t i = 0; i < base.numel(); ++i) {
      double v = flat.select(0, i).item<double>();
      auto eval = [&](double delta) {
        NoGradGuard no_grad;
        flat.select(0, i).fill_(v + delta);
        std::vector<Tensor> in = inputs;
        for (Tensor& t : in) t = t.detach();
        in[k] = base;
        return (f(in) * w).sum().item<double>();
      };
      double numeric = (eval(eps) - eval(-eps)) / (2 * eps);
      {
        NoGradGuard no_grad;
        flat.select(0, i).fill_(v);
      }
      double a =
          analytic[k].defined() ? analytic[k].reshape({-1}).select(0, i).item<double>() : 0.0;
      if (std::abs(a - numeric) > atol + rtol * std::abs(numeric))
        return ::testing::AssertionFailure() << "input " << k << " element " << i << ": analytical "
                                             << a << " vs numerical " << numeric;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace glass::testing
