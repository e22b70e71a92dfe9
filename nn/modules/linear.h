// nn/modules/linear.h — Linear, the fully connected layer: y = x Wᵀ + b.
//
// Owns weight (out_features, in_features) and, unless bias(false), bias (out_features).
// Both start as PyTorch's do (reset_parameters), so a network built here trains like the
// same network in PyTorch. forward is F::linear: one addmm for a 2-D batch.
#pragma once

#include <cstdint>
#include <ostream>

#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

// LinearOptions(784, 512).bias(false): libtorch's chained-setter options.
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_features_;
  int64_t out_features_;
  bool bias_ = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool with_bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(with_bias)) {}
  explicit LinearImpl(const LinearOptions& options);

  // Kaiming-uniform with a = sqrt(5) for the weight, i.e. U(-1/sqrt(in), 1/sqrt(in)),
  // and the same bound for the bias: PyTorch's defaults, redrawn from the current seed.
  void reset_parameters();

  // x: (*, in_features) → (*, out_features)
  Tensor forward(const Tensor& x) const;

  // "Linear(in_features=784, out_features=512, bias=true)"
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;  // (out_features, in_features)
  Tensor bias;    // (out_features), undefined with bias(false)
};

GLASS_MODULE(Linear);

}  // namespace glass::nn
