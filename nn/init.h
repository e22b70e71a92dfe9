// nn/init.h — filling parameters with their starting values, PyTorch's way.
//
// Every function here writes into `tensor` in place, under NoGradGuard (initialising a
// parameter is not part of any graph), and returns it. The formulas are exactly those of
// torch/nn/init.py, so a glasstorch layer starts from the same distribution a PyTorch one
// does; the random numbers come from glass::manual_seed's generator, so the same seed
// gives the same values (not PyTorch's values: the generators differ).
//
// Why the scales: for y = W x with n inputs of variance v, Var(y) = n · Var(W) · v. Keeping
// the variance of activations (Xavier: of activations and gradients, averaging fan_in and
// fan_out) constant through depth needs Var(W) = gain² / fan. A uniform U(-b, b) has
// variance b²/3, hence the sqrt(3) in every uniform bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/tensor.h"

namespace glass::nn::init {

// Which fan kaiming_* keeps the variance for: fan_in preserves it in the forward pass,
// fan_out in the backward pass.
enum class FanMode { FanIn, FanOut };

// (fan_in, fan_out) of a weight of shape (out, in, k...): fan_in = in · prod(k),
// fan_out = out · prod(k). Needs at least 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

// The gain a nonlinearity needs: "linear", "conv1d/2d/3d", "conv_transpose1d/2d/3d",
// "sigmoid" → 1; "tanh" → 5/3; "relu" → sqrt(2); "leaky_relu" → sqrt(2 / (1 + slope²))
// with slope = param (default 0.01); "selu" → 3/4.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

Tensor uniform_(Tensor tensor, double a = 0, double b = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

// U(-b, b) with b = gain · sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1);
// N(0, std²) with std = gain · sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1);

// U(-b, b) with b = sqrt(3) · gain / sqrt(fan), gain = calculate_gain(nonlinearity, a).
// Linear's default is kaiming_uniform_(w, sqrt(5)), which gives b = 1 / sqrt(fan_in).
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                        const std::string& nonlinearity = "leaky_relu");
// N(0, std²) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                       const std::string& nonlinearity = "leaky_relu");

}  // namespace glass::nn::init
