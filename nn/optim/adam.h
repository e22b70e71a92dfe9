// nn/optim/adam.h — Adam (Kingma & Ba), as torch.optim.Adam, and the update AdamW shares.
//
// The update for each parameter p with gradient grad at step t = 1, 2, ... (PyTorch's
// documented algorithm):
//
//   g = grad + weight_decay * p                    (Adam: L2 penalty folded into g)
//   p = p * (1 - lr * weight_decay)                (AdamW instead: decoupled decay, adamw.h)
//   m = beta1 * m + (1 - beta1) * g                (first moment, "exp_avg")
//   v = beta2 * v + (1 - beta2) * g * g            (second moment, "exp_avg_sq")
//   v_max = max(v_max, v)                          (amsgrad only; then v_max replaces v below)
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p = p - (lr / (1 - beta1^t)) * m / denom
//
// Invariant: a parameter's state exists from its first update on; step() counts the updates
// that parameter received (not the optimizer's calls), so a parameter that skips a step
// because it had no gradient keeps its own bias correction.
#pragma once

#include <tuple>
#include <vector>

#include "nn/optim/optimizer.h"

namespace glass::optim {

namespace detail {
// lr, eps, weight_decay >= 0 and 0 <= beta < 1 (beta = 1 would never forget, and the bias
// correction 1 - beta^t would divide by zero). `name`: the options class, for the message.
void validate_adam_options(const char* name, double lr, std::tuple<double, double> betas,
                           double eps, double weight_decay);

// Adam's and AdamW's options are the same fields with different defaults; the setters
// return the derived type so chains like AdamWOptions(1e-3).betas({0.9, 0.99}) keep it.
template <class Self>
class AdamFamilyOptions : public OptimizerOptions {
 public:
  Self& lr(double lr) {
    lr_ = lr;
    return self();
  }
  Self& betas(std::tuple<double, double> betas) {
    betas_ = betas;
    return self();
  }
  Self& eps(double eps) {
    eps_ = eps;
    return self();
  }
  Self& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return self();
  }
  Self& amsgrad(bool amsgrad) {
    amsgrad_ = amsgrad;
    return self();
  }
  // Use the fused per-element loop where the tensors allow it (CPU, float32/float64,
  // contiguous); false always runs the tensor-op update. Both compute the same values.
  Self& fused(bool fused) {
    fused_ = fused;
    return self();
  }

  double lr() const { return lr_; }
  const std::tuple<double, double>& betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }
  bool fused() const { return fused_; }

  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Self>(static_cast<const Self&>(*this));
  }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  void validate() const override;

 protected:
  AdamFamilyOptions(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}

 private:
  Self& self() { return static_cast<Self&>(*this); }

  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
  bool fused_ = true;
};
template <class Self>
void AdamFamilyOptions<Self>::validate() const {
  validate_adam_options(name(), lr_, betas_, eps_, weight_decay_);
}
}  // namespace detail

class AdamOptions : public detail::AdamFamilyOptions<AdamOptions> {
 public:
  explicit AdamOptions(double lr = 1e-3) : AdamFamilyOptions(lr, /*weight_decay=*/0) {}
  const char* name() const override { return "AdamOptions"; }
};

class AdamParamState : public OptimizerParamState {
 public:
  int64_t& step() { return step_; }
  int64_t step() const { return step_; }
  AdamParamState& step(int64_t step) {
    step_ = step;
    return *this;
  }
  // exp_avg, exp_avg_sq, max_exp_avg_sq: the parameter's shape and dtype;
  // max_exp_avg_sq is undefined unless amsgrad is on.
  Tensor& exp_avg() { return exp_avg_; }
  const Tensor& exp_avg() const { return exp_avg_; }
  AdamParamState& exp_avg(Tensor t) {
    exp_avg_ = std::move(t);
    return *this;
  }
  Tensor& exp_avg_sq() { return exp_avg_sq_; }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  AdamParamState& exp_avg_sq(Tensor t) {
    exp_avg_sq_ = std::move(t);
    return *this;
  }
  Tensor& max_exp_avg_sq() { return max_exp_avg_sq_; }
  const Tensor& max_exp_avg_sq() const { return max_exp_avg_sq_; }
  AdamParamState& max_exp_avg_sq(Tensor t) {
    max_exp_avg_sq_ = std::move(t);
    return *this;
  }
  // "step" (0-dim int64), "exp_avg", "exp_avg_sq" and, with amsgrad, "max_exp_avg_sq".
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  void set_state_tensor(const std::string& name, const Tensor& value) override;

 private:
  int64_t step_ = 0;
  Tensor exp_avg_;
  Tensor exp_avg_sq_;
  Tensor max_exp_avg_sq_;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = AdamOptions());
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = AdamOptions());

  Tensor step(LossClosure closure = nullptr) override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamParamState>();
  }
};

namespace detail {
// One group's hyperparameters, as the shared update reads them.
struct AdamHyper {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad;
  bool decoupled_weight_decay;  // false: Adam's L2 penalty; true: AdamW's decay of p
  bool fused;
};

template <class Self>
AdamHyper adam_hyper(const AdamFamilyOptions<Self>& o, bool decoupled) {
  return {o.lr(),
          std::get<0>(o.betas()),
          std::get<1>(o.betas()),
          o.eps(),
          o.weight_decay(),
          o.amsgrad(),
          decoupled,
          o.fused()};
}

// One Adam/AdamW update of p (*) with gradient grad (*), creating the state on p's first
// update. Runs the fused loop when h.fused and the tensors allow it.
void adam_update(Tensor& p, const Tensor& grad, AdamParamState& state, const AdamHyper& h);
}  // namespace detail

}  // namespace glass::optim
