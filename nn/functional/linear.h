// nn/functional/linear.h — the affine map y = x Wᵀ + b that Linear applies.
//
// For 2-D x this is exactly one addmm (the bias is the "add", fused into the gemm's
// output pass) — the op a training step spends most of its time in. Other ranks are
// reshaped to 2-D around that one call: leading dims are a batch.
#pragma once

#include "core/tensor.h"

namespace glass::nn::functional {

// x: (*, in) · weight: (out, in) · bias: (out) or undefined → (*, out).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

}  // namespace glass::nn::functional
