// nn/optim/adamw.h — AdamW (Loshchilov & Hutter), as torch.optim.AdamW.
//
// AdamW is Adam with *decoupled* weight decay: instead of adding weight_decay * p to the
// gradient (which the second-moment scaling then shrinks for parameters with large
// gradients), each step first shrinks the parameter itself,
//
//   p = p * (1 - lr * weight_decay)
//
// and then runs Adam's update with weight_decay = 0 (adam.h has the full algorithm). The
// default weight_decay is 1e-2, not 0. State and its invariant are Adam's.
#pragma once

#include <vector>

#include "nn/optim/adam.h"

namespace glass::optim {

class AdamWOptions : public detail::AdamFamilyOptions<AdamWOptions> {
 public:
  explicit AdamWOptions(double lr = 1e-3) : AdamFamilyOptions(lr, /*weight_decay=*/1e-2) {}
  const char* name() const override { return "AdamWOptions"; }
};

using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = AdamWOptions());
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = AdamWOptions());

  Tensor step(LossClosure closure = nullptr) override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamWParamState>();
  }
};

}  // namespace glass::optim
