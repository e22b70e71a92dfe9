// nn/functional/normalization.h — layer normalisation.
//
// Each sample is normalised over its last len(normalized_shape) dims to mean 0 and
// variance 1, then scaled and shifted per element: y = (x - E[x]) / sqrt(Var[x] + eps)
// · weight + bias. The variance is the biased one (divide by the count, not count - 1),
// as in PyTorch: it is a statistic of this sample, not an estimate of a population's.
#pragma once

#include "core/tensor.h"

namespace glass::nn::functional {

// x: (*, normalized_shape...) · weight, bias: normalized_shape or undefined → x's shape.
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);

}  // namespace glass::nn::functional
