// core/type_promotion.h — which dtype an op computes in, given its operands.
//
// PyTorch's rule, in three tiers. Operands with dims decide first; 0-dim tensors only
// matter if they are of a higher *category* (bool < integer < floating); C++ numbers
// ("wrapped numbers", see TensorImpl::is_wrapped_number) come last, and a floating
// number counts as the default dtype. So:
//   int64 [3] + 2.5        -> Float   (a floating number lifts an integer tensor)
//   float32 [3] + float64 0-dim -> Float (same category: the dimensioned tensor wins)
//   int32 [3] + int64 0-dim -> Int
//   int64 [3] + float64 [3] -> Double
#pragma once

#include "core/tensor.h"

namespace glass {

ScalarType result_type(TensorList operands);
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);

}  // namespace glass
