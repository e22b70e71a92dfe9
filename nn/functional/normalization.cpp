// nn/functional/normalization.cpp — layer_norm composed from reductions and pointwise ops,
// so autograd differentiates it (to any order) with no formula of its own.
#include "nn/functional/normalization.h"

#include "core/error.h"
#include "core/ops/reduce.h"
#include "core/shape.h"

namespace glass::nn::functional {

namespace {

void check_affine(const Tensor& t, const char* what, IntArrayRef normalized_shape,
                  const Tensor& x) {
  if (!t.defined()) return;
  GLASS_CHECK(t.sizes() == normalized_shape, "layer_norm(): expected ", what,
              " of shape normalized_shape = ", normalized_shape, ", got shape ", t.sizes());
  GLASS_CHECK(t.dtype() == x.dtype(), "layer_norm(): ", what, " has dtype ", t.dtype(),
              " but the input has dtype ", x.dtype());
}

}  // namespace

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  GLASS_CHECK(x.defined(), "layer_norm(): got an undefined input");
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  GLASS_CHECK(k >= 1, "layer_norm(): normalized_shape must name at least one dim, got []");
  GLASS_CHECK(x.is_floating_point(), "layer_norm(): expected a floating-point input, got dtype ",
              x.dtype());
  GLASS_CHECK(x.dim() >= k && x.sizes().slice(x.dim() - k) == normalized_shape,
              "layer_norm(): normalized_shape ", normalized_shape, " must equal the last ", k,
              " dims of the input, but the input has shape ", x.sizes(),
              " (normalized_shape names the trailing dims each sample is normalised over)");
  GLASS_CHECK(eps >= 0, "layer_norm(): eps must be >= 0, got ", eps);
  check_affine(weight, "weight", normalized_shape, x);
  check_affine(bias, "bias", normalized_shape, x);

  Shape dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  Tensor centered = x - x.mean(dims, /*keepdim=*/true);
  Tensor var = (centered * centered).mean(dims, /*keepdim=*/true);  // biased
  Tensor y = centered * (var + eps).rsqrt();
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

}  // namespace glass::nn::functional
