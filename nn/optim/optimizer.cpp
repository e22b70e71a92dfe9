// nn/optim/optimizer.cpp — param groups, their checks, zero_grad, and the shared helpers.
//
// Every check runs before the group is stored, so a rejected add_param_group leaves the
// optimizer exactly as it was (core/error.h's rule for GLASS_CHECK).
#include "nn/optim/optimizer.h"

#include <typeinfo>
#include <unordered_set>
#include <vector>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::optim {

// ---- OptimizerParamGroup ----------------------------------------------------------------

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  GLASS_CHECK(options_,
              "OptimizerParamGroup::options(): this group has no options yet; it "
              "gets a copy of the optimizer's defaults when it is added");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  return const_cast<OptimizerParamGroup*>(this)->options();
}

// ---- Optimizer --------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  defaults_->validate();
  size_t count = 0;
  for (const auto& group : param_groups) count += group.params().size();
  GLASS_CHECK(count > 0,
              "optimizer got an empty parameter list; pass model->parameters() (does the "
              "model register its parameters with register_parameter?)");
  for (const auto& group : param_groups) add_param_group(group);
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup added(group);
  if (!added.has_options()) added.set_options(defaults_->clone());
  const OptimizerOptions& options = added.options();
  GLASS_CHECK(typeid(options) == typeid(*defaults_), "add_param_group(): the group's options are ",
              options.name(), " but this optimizer takes ", defaults_->name(),
              "; pass options of that type, or none to use the optimizer's defaults");
  options.validate();

  std::unordered_set<const TensorImpl*> seen;
  for (const auto& existing : param_groups_)
    for (const Tensor& p : existing.params()) seen.insert(p.unsafeGetTensorImpl());
  const std::vector<Tensor>& params = added.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    GLASS_CHECK(p.defined(), "add_param_group(): parameter ", i,
                " is an undefined Tensor; pass tensors that hold values");
    GLASS_CHECK(p.is_floating_point(), "add_param_group(): parameter ", i, " has dtype ",
                to_string(p.dtype()),
                ", but only floating-point tensors can be optimized; convert it with "
                ".to(kFloat) before registering it");
    GLASS_CHECK(p.requires_grad(), "add_param_group(): parameter ", i, " (sizes ", p.sizes(),
                ") does not require grad, so it would never be updated; call "
                "p.requires_grad_() on it, or leave it out of the optimizer");
    GLASS_CHECK(p.is_leaf(), "add_param_group(): can't optimize a non-leaf Tensor (parameter ", i,
                " was computed by ", p.grad_fn()->name(),
                "); optimize the leaf it came from, or use .detach().requires_grad_()");
    GLASS_CHECK(seen.insert(p.unsafeGetTensorImpl()).second, "add_param_group(): parameter ", i,
                " (sizes ", p.sizes(),
                ") appears more than once in this optimizer, so it would be updated twice "
                "per step; pass each parameter once");
  }
  param_groups_.push_back(std::move(added));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : param_groups_) {
    for (const Tensor& p : group.params()) autograd::zero_grad(p, set_to_none);
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> all;
  for (const auto& group : param_groups_)
    all.insert(all.end(), group.params().begin(), group.params().end());
  return all;
}

size_t Optimizer::size() const {
  size_t count = 0;
  for (const auto& group : param_groups_) count += group.params().size();
  return count;
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  AutoGradMode enable_grad(true);
  return closure();
}

void Optimizer::check_grad(const char* op, const Tensor& p, const Tensor& grad) {
  GLASS_CHECK(grad.sizes() == p.sizes(), op, "::step(): a parameter of sizes ", p.sizes(),
              " has a gradient of sizes ", grad.sizes(),
              "; a gradient must have its parameter's shape (was .mutable_grad() assigned "
              "by hand?)");
  GLASS_CHECK(grad.dtype() == p.dtype(), op, "::step(): a parameter of dtype ",
              to_string(p.dtype()), " has a gradient of dtype ", to_string(grad.dtype()),
              "; convert the gradient with .to(", to_string(p.dtype()), ")");
  GLASS_CHECK(grad.device() == p.device(), op, "::step(): a parameter on ", p.device(),
              " has a gradient on ", grad.device(),
              "; move the gradient to the parameter's device");
}

void OptimizerParamState::set_state_tensor(const std::string& name, const Tensor&) {
  GLASS_CHECK(false, "this optimizer state has no slot '", name,
              "': its type does not override set_state_tensor()");
}

std::unique_ptr<OptimizerParamState> Optimizer::make_param_state() const {
  GLASS_CHECK(false, "this optimizer does not override make_param_state(), so a checkpoint ",
              "cannot create its state");
  return nullptr;
}

bool Optimizer::has_parameter(const Tensor& p) const {
  for (const auto& group : param_groups_)
    for (const Tensor& q : group.params())
      if (q.is_same(p)) return true;
  return false;
}

OptimizerParamState& Optimizer::state_of(const Tensor& p) {
  GLASS_CHECK(has_parameter(p),
              "Optimizer::state_of(): the tensor is not one of this optimizer's parameters");
  auto& slot = state_[p.unsafeGetTensorImpl()];
  if (!slot) slot = make_param_state();
  return *slot;
}

void Optimizer::check_state(const char* op, const Tensor& p, const Tensor& state,
                            const char* name) {
  if (!state.defined()) return;
  GLASS_CHECK(
      state.sizes() == p.sizes() && state.dtype() == p.dtype() && state.device() == p.device(), op,
      "::step(): a parameter (", dtype_name(p.dtype()), " ", p.sizes(), " on ", p.device(),
      ") has state ", name, " of ", dtype_name(state.dtype()), " ", state.sizes(), " on ",
      state.device(),
      ": the parameter was re-pointed at other data (set_data, Module::to) after the "
      "optimizer's first step; make the optimizer after moving or resharding the model");
}

namespace detail {
bool fusable(std::initializer_list<const Tensor*> tensors) {
  ScalarType dtype = ScalarType::Undefined;
  std::vector<const Tensor*> seen;
  for (const Tensor* t : tensors) {
    if (t == nullptr || !t->defined()) continue;
    if (!t->is_cpu() || !t->is_contiguous()) return false;
    if (t->dtype() != kFloat32 && t->dtype() != kFloat64) return false;
    if (dtype == ScalarType::Undefined) dtype = t->dtype();
    if (t->dtype() != dtype) return false;
    for (const Tensor* other : seen)
      if (t->is_alias_of(*other)) return false;
    seen.push_back(t);
  }
  return true;
}
}  // namespace detail

}  // namespace glass::optim
