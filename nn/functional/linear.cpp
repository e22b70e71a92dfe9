// nn/functional/linear.cpp — linear as one addmm (see linear.h).
#include "nn/functional/linear.h"

#include "core/error.h"
#include "core/ops/linalg.h"
#include "core/shape.h"

namespace glass::nn::functional {

namespace {

void check_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  GLASS_CHECK(x.defined() && weight.defined(), "linear(): got an undefined input or weight");
  GLASS_CHECK(weight.dim() == 2, "linear(): expected a 2-D weight of shape (out_features, ",
              "in_features), got shape ", weight.sizes());
  GLASS_CHECK(x.dim() >= 1, "linear(): expected an input with at least 1 dim (*, in_features), ",
              "got a 0-dim tensor");
  GLASS_CHECK(x.size(-1) == weight.size(1), "linear(): input of shape ", x.sizes(), " has ",
              x.size(-1), " features in its last dim, but weight of shape ", weight.sizes(),
              " expects in_features = ", weight.size(1));
  GLASS_CHECK(x.dtype() == weight.dtype(), "linear(): input has dtype ", x.dtype(),
              " but weight has dtype ", weight.dtype(), "; convert one with .to()");
  if (!bias.defined()) return;
  GLASS_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0),
              "linear(): expected a bias of shape [", weight.size(0),
              "] (out_features), got shape ", bias.sizes());
  GLASS_CHECK(bias.dtype() == weight.dtype(), "linear(): bias has dtype ", bias.dtype(),
              " but weight has dtype ", weight.dtype());
}

// x: (N, in) → (N, out). weight.t() is a view: the gemm reads Wᵀ through strides.
Tensor linear_2d(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return bias.defined() ? addmm(bias, x, weight.t()) : mm(x, weight.t());
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_linear(x, weight, bias);
  if (x.dim() == 2) return linear_2d(x, weight, bias);
  if (x.dim() == 1) return linear_2d(x.unsqueeze(0), weight, bias).squeeze(0);
  // (*, in) → (prod(*), in): a view when x is contiguous, which it usually is.
  Shape out_shape = x.sizes().vec();
  out_shape.back() = weight.size(0);
  int64_t rows = 1;  // not -1: a batch with a 0 dim has no inferable row count
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  return linear_2d(x.reshape({rows, x.size(-1)}), weight, bias).view(out_shape);
}

}  // namespace glass::nn::functional
