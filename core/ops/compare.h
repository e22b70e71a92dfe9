// core/ops/compare.h — closeness and equality of whole tensors: isclose, allclose, equal.
//
// Built only from elementwise ops and a sum, so they run on every device that has those
// kernels; allclose and equal return a C++ bool and so read one number back from the
// device (a sync point, like item()). The closeness test is PyTorch's, asymmetric in b:
//     |a - b| <= atol + rtol * |b|
// plus: equal values are always close (so inf == inf is close), a non-finite difference
// never is (inf vs -inf, anything vs nan), and nan is close to nan only with equal_nan.
#pragma once

#include "core/tensor.h"

namespace glass {

// Elementwise (broadcasting a against b): a Bool tensor. a and b must have the same dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
// True when every element of isclose(a, b, ...) is true.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// True when a and b have the same shape and the same values (nan is never equal to nan);
// dtypes may differ, as in PyTorch (values are compared after type promotion).
bool equal(const Tensor& a, const Tensor& b);

}  // namespace glass
