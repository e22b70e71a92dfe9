// nn/modules/layer_norm.h — LayerNorm: F::layer_norm with a learned per-element affine.
//
// With elementwise_affine (the default) it owns weight (ones) and bias (zeros), both of
// shape normalized_shape, so it starts as the pure normalisation and learns to rescale.
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

// LayerNormOptions({512}).eps(1e-6).elementwise_affine(false)
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit, as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  LayerNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  LayerNormOptions& elementwise_affine(bool on) {
    elementwise_affine_ = on;
    return *this;
  }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};

class LayerNormImpl : public Module {
 public:
  // The common case, normalising over one trailing dim of this size: LayerNorm(512).
  explicit LayerNormImpl(int64_t normalized_size)
      : LayerNormImpl(LayerNormOptions({normalized_size})) {}
  explicit LayerNormImpl(const LayerNormOptions& options);

  // Weight back to ones, bias back to zeros.
  void reset_parameters();

  // x: (*, normalized_shape...) → x's shape
  Tensor forward(const Tensor& x) const;

  // "LayerNorm([512], eps=1e-05, elementwise_affine=true)"
  void pretty_print(std::ostream& os) const override;

  LayerNormOptions options;
  Tensor weight;  // normalized_shape; undefined without elementwise_affine
  Tensor bias;    // normalized_shape; undefined without elementwise_affine
};
GLASS_MODULE(LayerNorm);

}  // namespace glass::nn
