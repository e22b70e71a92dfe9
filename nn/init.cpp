// nn/init.cpp — the initialisation formulas of torch/nn/init.py (see init.h for why).
//
// Every writer checks its tensor first and writes only after every check has passed, so
// a rejected call leaves the tensor as it was.
#include "nn/init.h"

#include <cmath>

#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::nn::init {

namespace {

void check_defined(const Tensor& tensor, const char* fn) {
  GLASS_CHECK(tensor.defined(), "nn::init::", fn, "(): got an undefined tensor");
}

void check_floating(const Tensor& tensor, const char* fn) {
  check_defined(tensor, fn);
  GLASS_CHECK(tensor.is_floating_point(), "nn::init::", fn,
              "(): expected a floating-point tensor, got dtype ", tensor.dtype(),
              " (random initialisation only makes sense for Float or Double)");
}

int64_t fan_for(const Tensor& tensor, FanMode mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == FanMode::FanIn ? fan_in : fan_out;
}

double kaiming_std(const Tensor& tensor, double a, FanMode mode, const std::string& nonlinearity) {
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan_for(tensor, mode)));
}

double xavier_std(const Tensor& tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

}  // namespace

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  check_defined(tensor, "calculate_fan_in_and_fan_out");
  GLASS_CHECK(tensor.dim() >= 2,
              "nn::init: fan in and fan out can not be computed for a tensor with fewer than 2 "
              "dimensions (got shape ",
              tensor.sizes(), "); a weight has shape (out_features, in_features, ...)");
  // Dims 2.. are a convolution's kernel: every kernel position is one more input (and
  // output) connection of each unit.
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  static const char* const kUnit[] = {"linear",           "conv1d",           "conv2d",
                                      "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                      "conv_transpose3d", "sigmoid"};
  for (const char* name : kUnit)
    if (nonlinearity == name) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  // SELU's gain keeps the variance of the input, not of the gradient (PyTorch's choice).
  if (nonlinearity == "selu") return 3.0 / 4.0;
  GLASS_CHECK(false, "nn::init::calculate_gain(): unsupported nonlinearity '", nonlinearity,
              "'; expected one of linear, conv1d, conv2d, conv3d, conv_transpose1d, "
              "conv_transpose2d, conv_transpose3d, sigmoid, tanh, relu, leaky_relu, selu");
  return 0;
}

Tensor uniform_(Tensor tensor, double a, double b) {
  check_floating(tensor, "uniform_");
  GLASS_CHECK(a <= b, "nn::init::uniform_(): expected a <= b, got a = ", a, " and b = ", b);
  NoGradGuard no_grad;
  tensor.uniform_(a, b);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_floating(tensor, "normal_");
  GLASS_CHECK(std >= 0, "nn::init::normal_(): expected std >= 0, got ", std);
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  check_defined(tensor, "constant_");
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0.0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1.0); }

Tensor xavier_uniform_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_uniform_");
  double bound = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  check_floating(tensor, "xavier_normal_");
  return normal_(tensor, 0.0, xavier_std(tensor, gain));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, const std::string& nonlinearity) {
  check_floating(tensor, "kaiming_uniform_");
  // A zero-element weight has fan 0: nothing to fill, and the formula would divide by 0.
  if (tensor.numel() == 0) return tensor;
  double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, const std::string& nonlinearity) {
  check_floating(tensor, "kaiming_normal_");
  if (tensor.numel() == 0) return tensor;
  return normal_(tensor, 0.0, kaiming_std(tensor, a, mode, nonlinearity));
}

}  // namespace glass::nn::init
