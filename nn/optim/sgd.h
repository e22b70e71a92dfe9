// nn/optim/sgd.h — stochastic gradient descent with momentum, dampening, Nesterov and
// weight decay, as torch.optim.SGD.
//
// The update for each parameter p with gradient grad (PyTorch's documented algorithm):
//
//   g = grad + weight_decay * p                      (if weight_decay != 0)
//   buf = g                                          (first step with momentum)
//   buf = momentum * buf + (1 - dampening) * g       (later steps)
//   g = nesterov ? g + momentum * buf : buf          (if momentum != 0)
//   p = p - lr * g
//
// Invariant: the momentum buffer exists exactly for the parameters that have been updated
// with momentum != 0; its first value is the first gradient, undamped (as PyTorch).
#pragma once

#include <vector>

#include "nn/optim/optimizer.h"

namespace glass::optim {

class SGDOptions : public OptimizerOptions {
 public:
  explicit SGDOptions(double lr) : lr_(lr) {}

  SGDOptions& lr(double lr) {
    lr_ = lr;
    return *this;
  }
  SGDOptions& momentum(double momentum) {
    momentum_ = momentum;
    return *this;
  }
  SGDOptions& dampening(double dampening) {
    dampening_ = dampening;
    return *this;
  }
  SGDOptions& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return *this;
  }
  SGDOptions& nesterov(bool nesterov) {
    nesterov_ = nesterov;
    return *this;
  }
  // Use the fused per-element loop where the tensors allow it (CPU, float32/float64,
  // contiguous); false always runs the tensor-op update. Both compute the same values.
  SGDOptions& fused(bool fused) {
    fused_ = fused;
    return *this;
  }

  double lr() const { return lr_; }
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }
  bool fused() const { return fused_; }

  std::unique_ptr<OptimizerOptions> clone() const override;
  const char* name() const override { return "SGDOptions"; }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // lr, momentum, weight_decay >= 0; nesterov needs momentum > 0 and dampening == 0.
  void validate() const override;

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
  bool fused_ = true;
};

class SGDParamState : public OptimizerParamState {
 public:
  // Same shape and dtype as the parameter.
  Tensor& momentum_buffer() { return momentum_buffer_; }
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  SGDParamState& momentum_buffer(Tensor buffer) {
    momentum_buffer_ = std::move(buffer);
    return *this;
  }
  // "momentum_buffer", once there is one.
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  void set_state_tensor(const std::string& name, const Tensor& value) override;

 private:
  Tensor momentum_buffer_;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults);
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);

  Tensor step(LossClosure closure = nullptr) override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<SGDParamState>();
  }
};

}  // namespace glass::optim
