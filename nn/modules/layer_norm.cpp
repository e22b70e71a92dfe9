// nn/modules/layer_norm.cpp — LayerNorm's parameters and forward (see layer_norm.h).
#include "nn/modules/layer_norm.h"

#include "core/error.h"
#include "core/ops/factories.h"
#include "core/shape.h"
#include "nn/functional/normalization.h"
#include "nn/init.h"

namespace glass::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& opts) : Module("LayerNorm"), options(opts) {
  const std::vector<int64_t>& shape = options.normalized_shape();
  GLASS_CHECK(!shape.empty(), "LayerNorm: normalized_shape must name at least one dim, got []");
  for (int64_t size : shape)
    GLASS_CHECK(size > 0, "LayerNorm: every size in normalized_shape must be positive, got ",
                IntArrayRef(shape));
  GLASS_CHECK(options.eps() >= 0, "LayerNorm: eps must be >= 0, got ", options.eps());
  if (!options.elementwise_affine()) return;
  weight = register_parameter("weight", glass::empty(shape));
  bias = register_parameter("bias", glass::empty(shape));
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& x) const {
  return functional::layer_norm(x, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
     << ", elementwise_affine=" << std::boolalpha << options.elementwise_affine()
     << std::noboolalpha << ")";
}

}  // namespace glass::nn
