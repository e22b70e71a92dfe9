// autograd/gradcheck.h — checking backward formulas against finite differences.
//
// gradcheck(f, inputs) builds two Jacobians of f for every (input, output) pair: the
// numerical one column by column (central differences: perturb one input element by
// ±eps), and the analytical one row by row (one backward pass per output element, a
// vector-Jacobian product with a unit vector). They must agree within atol + rtol·|num|.
// Defaults are PyTorch's: eps 1e-6, atol 1e-5, rtol 1e-3 — meant for float64 inputs.
// On failure the result's report shows both Jacobians. gradgradcheck does the same for
// the gradient itself (backward with create_graph), i.e. checks second derivatives.
#pragma once

#include <functional>
#include <string>

#include "autograd/node.h"

namespace glass::autograd {

struct GradcheckResult {
  bool ok = true;
  std::string report;  // empty when ok; otherwise what differed, with both Jacobians
  explicit operator bool() const { return ok; }
};

using DifferentiableFn = std::function<tensor_list(const tensor_list&)>;

// Inputs that should be differentiated must be floating-point; they are made to require
// grad (copies are used, the caller's tensors are not touched).
GradcheckResult gradcheck(const DifferentiableFn& f, const tensor_list& inputs, double eps = 1e-6,
                          double atol = 1e-5, double rtol = 1e-3);

// Checks the second derivatives: gradcheck of (inputs, v) -> grad(f(inputs), inputs, v).
GradcheckResult gradgradcheck(const DifferentiableFn& f, const tensor_list& inputs,
                              double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);

}  // namespace glass::autograd
