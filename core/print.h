// core/print.h — PyTorch's printed form of a tensor, and the hook autograd uses.
//
//   tensor([[1., 2.],
//           [3., 4.]], dtype=torch.float64, requires_grad=True)
//
// Formatting follows torch._tensor_str: integer-valued floats print as "1.", others
// with 4 decimals, scientific notation when the magnitudes span more than 1000x (or
// exceed 1e8, or go below 1e-4); tensors over 1000 elements are summarised with 3
// items at each edge and "...".
#pragma once

#include <string>

#include "core/tensor.h"

namespace glass {

std::string to_string(const Tensor& t);

// Autograd registers a function that names a tensor's grad_fn ("MulBackward0") so
// printing can show ", grad_fn=<MulBackward0>"; core itself knows no grad_fns.
using GradFnNameHook = std::string (*)(const Tensor&);
void set_grad_fn_name_hook(GradFnNameHook hook);

}  // namespace glass
