// nn/optim/adamw.cpp — AdamW::step: Adam's shared update with decoupled weight decay.
#include "nn/optim/adamw.h"

#include "core/grad_mode.h"

namespace glass::optim {

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
            std::move(defaults)) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(std::move(defaults))) {}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = group_options<AdamWOptions>(group, "AdamW");
    const detail::AdamHyper hyper = detail::adam_hyper(options, /*decoupled=*/true);
    for (Tensor& p : group.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      check_grad("AdamW", p, grad);
      AdamParamState* state = find_state<AdamParamState>(p);
      if (!state) state = &create_state<AdamParamState>(p);
      detail::adam_update(p, grad, *state, hyper);
    }
  }
  return loss;
}

}  // namespace glass::optim
