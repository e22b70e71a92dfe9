// nn/utils/clip_grad.cpp — the norm of many gradients as one vector, and scaling to a bound.
#include "nn/utils/clip_grad.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::nn::utils {
namespace detail {

std::vector<Tensor> defined_grads(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    GLASS_CHECK(p.defined(), "clip_grad_norm_: a parameter is undefined");
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

double local_norm_share(const std::vector<Tensor>& grads, double norm_type) {
  GLASS_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive (or INFINITY), got ",
              norm_type);
  NoGradGuard no_grad;
  double share = 0;
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    if (std::isinf(norm_type)) {
      const double largest = g.abs().max().item<double>();
      if (std::isnan(largest) || largest > share) share = largest;  // a NaN stays: not max()'s
    } else {
      share += std::pow(g.norm(norm_type).item<double>(), norm_type);
    }
  }
  return share;
}

double total_norm_from_share(double share, double norm_type) {
  return std::isinf(norm_type) ? share : std::pow(share, 1.0 / norm_type);
}

void scale_to_max_norm(const std::vector<Tensor>& grads, double total_norm, double max_norm,
                       bool error_if_nonfinite) {
  GLASS_CHECK(!error_if_nonfinite || std::isfinite(total_norm),
              "clip_grad_norm_: the total norm of the gradients is ", total_norm,
              ", so they cannot be clipped (error_if_nonfinite=true)");
  const double coef = max_norm / (total_norm + 1e-6);
  if (coef >= 1.0) return;  // within the bound; a NaN norm scales by NaN, as in PyTorch
  NoGradGuard no_grad;
  for (const Tensor& g : grads) Tensor(g).mul_(coef);
}

}  // namespace detail

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  const std::vector<Tensor> grads = detail::defined_grads(parameters);
  if (grads.empty()) return 0.0;
  const double total =
      detail::total_norm_from_share(detail::local_norm_share(grads, norm_type), norm_type);
  detail::scale_to_max_norm(grads, total, max_norm, error_if_nonfinite);
  return total;
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  GLASS_CHECK(clip_value >= 0, "clip_grad_value_: clip_value must be >= 0, got ", clip_value);
  NoGradGuard no_grad;
  for (const Tensor& g : detail::defined_grads(parameters))
    Tensor(g).clamp_(-clip_value, clip_value);
}

}  // namespace glass::nn::utils
