// nn/optim/optimizer.h — the Optimizer base: parameter groups, per-parameter state, zero_grad.
//
// An optimizer holds *handles* to the parameters it updates (the same TensorImpls a Module
// holds), grouped into param groups that each carry their own options, so one model can
// train its biases with another learning rate than its weights. Invariants, checked when a
// group is added: every parameter is a defined floating-point leaf that requires grad, and
// no parameter appears twice in the optimizer (a second update per step would be silently
// wrong). State (momentum buffers, Adam's moments) lives in `state()`, keyed by the
// parameter's TensorImpl, and is created lazily by the first step that sees a gradient. It
// survives Tensor::set_data (the impl stays), as long as the shape, dtype and device do.
//
// Libtorch's shape, as code written against it reads:
//
//   optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
//   for (...) {
//     opt.zero_grad();
//     loss_fn(model(x), y).backward();
//     opt.step();
//   }
//   opt.param_groups()[0].options().set_lr(0.01);  // what a scheduler does
//
// sgd.h, adam.h and adamw.h implement step(); each keeps a readable tensor-op update (the
// oracle, PyTorch's single-tensor path) and a fused per-element loop beside it.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace glass::optim {

// What every optimizer's options share: a learning rate a scheduler can read and set.
// Each optimizer's options class (SGDOptions, AdamOptions, ...) derives from this.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The class name ("SGDOptions"), for error messages.
  virtual const char* name() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // Throws glass::Error naming the first invalid value. Runs when a group is added and at
  // every step, since setters may have changed the values in between.
  virtual void validate() const = 0;
};

// Per-parameter state (SGDParamState, AdamParamState derive from it).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  // The state as named tensors, for checkpoints: per-element ones shaped like the parameter
  // ("exp_avg") and 0-dim counters ("step", int64). Undefined slots are left out.
  // A state type of one's own that does not override these cannot be checkpointed.
  virtual std::vector<std::pair<std::string, Tensor>> state_tensors() const { return {}; }
  // Sets one slot from a tensor of state_tensors()'s kind (a copy is kept); an unknown
  // name is an error naming the state's slots.
  virtual void set_state_tensor(const std::string& name, const Tensor& value);
};

// A list of parameters and, optionally, options of their own. A group without options
// takes a copy of the optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit, as in libtorch
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);  // deep-copies the options
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  // Throws if the group has no options (only possible before it is added).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  // Re-evaluates the model and returns the loss (for optimizers that need it; here only
  // run once, before the update, as libtorch does for SGD and Adam).
  using LossClosure = std::function<Tensor()>;
  using StateMap = std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>;

  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Checks the group (see the invariants above) before changing anything.
  void add_param_group(const OptimizerParamGroup& group);

  // Clears every parameter's .grad(). set_to_none (the default, as in PyTorch 2) drops the
  // tensor, so the next backward writes a fresh one instead of adding into zeros.
  void zero_grad(bool set_to_none = true);

  // One update of every parameter that has a gradient; parameters whose .grad() is
  // undefined are skipped (they did not take part in the loss). Returns the closure's
  // loss, or an undefined tensor without a closure.
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  // Every parameter of every group, in order. (libtorch returns group 0's only.)
  std::vector<Tensor> parameters() const;
  // The number of parameters over all groups.
  size_t size() const;

  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  // Keyed by p.unsafeGetTensorImpl(); an entry appears at the first step that updates p.
  StateMap& state() { return state_; }
  const StateMap& state() const { return state_; }
  // p's state, created empty (as before its first step) if p has none: where a checkpoint
  // loads it. p must be one of this optimizer's parameters.
  OptimizerParamState& state_of(const Tensor& p);
  bool has_parameter(const Tensor& p) const;
  // An empty state of this optimizer's kind (the default: an error, for optimizers written
  // elsewhere that do not say).
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const;

  // Throws unless a state tensor (`name`: "exp_avg", ...) still matches p's shape, dtype and
  // device. State is keyed by p's identity, so it survives Tensor::set_data — and a
  // rebinding to another shape (or Module::to another dtype or device) after the first step
  // would leave it describing other data, which the fused loops would run off the end of.
  static void check_state(const char* op, const Tensor& p, const Tensor& state, const char* name);

 protected:
  Optimizer(std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);

  // Runs the closure with grad mode on (a step itself runs under NoGradGuard).
  static Tensor run_closure(const LossClosure& closure);

  // The group's options as the optimizer's own type, validated. Checked, not assumed:
  // param_groups() is mutable, so set_options() may have put another type there.
  template <class Options>
  static const Options& group_options(const OptimizerParamGroup& group, const char* op) {
    const auto* options = dynamic_cast<const Options*>(&group.options());
    GLASS_CHECK(options != nullptr, op, "::step(): a param group's options are ",
                group.options().name(), ", not this optimizer's; set_options() with ",
                "the optimizer's own options type");
    options->validate();
    return *options;
  }

  // p's state as S, or null before p's first update.
  template <class S>
  S* find_state(const Tensor& p) {
    auto it = state_.find(p.unsafeGetTensorImpl());
    return it == state_.end() ? nullptr : static_cast<S*>(it->second.get());
  }
  template <class S>
  S& create_state(const Tensor& p) {
    auto& slot = state_[p.unsafeGetTensorImpl()];
    slot = std::make_unique<S>();
    return static_cast<S&>(*slot);
  }

  // `op`: the optimizer's name for the message. Throws unless p's gradient has p's shape,
  // dtype and device (a user may assign .mutable_grad() by hand; a broadcastable grad of
  // the wrong shape would otherwise update p silently wrong).
  static void check_grad(const char* op, const Tensor& p, const Tensor& grad);

 private:
  std::vector<OptimizerParamGroup> param_groups_;
  StateMap state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

namespace detail {
// True when the fused per-element loops may run on these tensors: CPU, float32 or
// float64, contiguous, all of one dtype, no two sharing a storage (the loops promise the
// compiler, with __restrict, that their arrays do not overlap). Null pointers and
// undefined tensors are ignored.
bool fusable(std::initializer_list<const Tensor*> tensors);
// Elements per chunk of a fused update's parallel_for: big enough that a small parameter
// (a bias) runs on the calling thread alone.
constexpr int64_t kFusedGrain = 1 << 15;

// Calls f(std::true_type{}) or f(std::false_type{}): turns a runtime option into a
// compile-time one. A fused loop is then compiled once per combination of options as
// straight-line code, which the compiler vectorises; a branch in the loop body (even on a
// loop-invariant value) keeps it scalar.
template <class F>
void with_static_flag(bool flag, F&& f) {
  if (flag) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}
}  // namespace detail

}  // namespace glass::optim
