// nn/functional/dropout.h — inverted dropout.
//
// In training, each element is zeroed with probability p and the survivors are scaled by
// 1 / (1 - p), so the expected value of every output equals its input and evaluation
// needs no rescaling: out of training (or with p = 0) dropout is the identity and returns
// `x` itself. p = 1 zeroes everything (x · 0, so the gradient is 0, not undefined).
#pragma once

#include "core/tensor.h"

namespace glass::nn::functional {

// x: any shape; p must lie in [0, 1].
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace glass::nn::functional
