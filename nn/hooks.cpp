// nn/hooks.cpp — registering, removing and running module hooks, and the backward node
// that runs the backward pre-hooks.
//
// Invariant: a backward pre-hook runs once per backward pass through a call's outputs, with
// every output's gradient at once — the node below receives them together, as PyTorch's
// BackwardHookFunction does, because the engine calls a node once, after all its inputs'
// gradients have arrived.
#include <algorithm>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/module.h"

namespace glass::nn {
namespace {

template <class Hook>
void erase_id(std::vector<std::pair<uint64_t, Hook>>& hooks, uint64_t id) {
  hooks.erase(std::remove_if(hooks.begin(), hooks.end(),
                             [id](const auto& entry) { return entry.first == id; }),
              hooks.end());
}

void check_same_count(const Module& module, const char* kind, size_t before, size_t after) {
  GLASS_CHECK(before == after, "a ", kind, " of ", module.name(),
              " changed the number of tensors from ", before, " to ", after,
              "; a hook may replace tensors, not add or remove them");
}

// Identity on the gradients of one call's outputs, running the module's backward
// pre-hooks on the way. Holds the module weakly: a graph may outlive it.
class BackwardHookNode : public autograd::Node {
 public:
  BackwardHookNode(Module& module, std::weak_ptr<detail::ModuleHooks> hooks)
      : module_(&module), hooks_(std::move(hooks)) {}
  std::string name() const override { return "BackwardHookFunctionBackward"; }

  autograd::tensor_list apply(autograd::tensor_list&& grads) override {
    const std::shared_ptr<detail::ModuleHooks> hooks = hooks_.lock();
    if (!hooks) return std::move(grads);  // the module is gone; so are its hooks
    const auto snapshot = hooks->backward_pre;
    for (const auto& [id, hook] : snapshot) {
      const size_t before = grads.size();
      hook(*module_, grads);
      check_same_count(*module_, "backward pre-hook", before, grads.size());
    }
    return std::move(grads);
  }

 private:
  Module* module_;
  std::weak_ptr<detail::ModuleHooks> hooks_;
};

}  // namespace

void RemovableHandle::remove() {
  const std::shared_ptr<detail::ModuleHooks> hooks = hooks_.lock();
  if (!hooks) return;
  erase_id(hooks->forward_pre, id_);
  erase_id(hooks->forward, id_);
  erase_id(hooks->backward_pre, id_);
}

namespace {

// Appends `hook` to `list` under a fresh id of `hooks` (made on first use) and returns its
// handle. `what`: the registering method, for the message about an empty function.
template <class Hook>
RemovableHandle add_hook(std::shared_ptr<detail::ModuleHooks>& hooks,
                         std::vector<std::pair<uint64_t, Hook>> detail::ModuleHooks::*list,
                         Hook hook, const std::string& module, const char* what) {
  GLASS_CHECK(hook != nullptr, module, ": ", what, "() got an empty function");
  if (!hooks) hooks = std::make_shared<detail::ModuleHooks>();
  const uint64_t id = hooks->next_id++;
  ((*hooks).*list).emplace_back(id, std::move(hook));
  return RemovableHandle(hooks, id);
}

}  // namespace

RemovableHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  return add_hook(hooks_, &detail::ModuleHooks::forward_pre, std::move(hook), name_,
                  "register_forward_pre_hook");
}

RemovableHandle Module::register_forward_hook(ForwardHook hook) {
  return add_hook(hooks_, &detail::ModuleHooks::forward, std::move(hook), name_,
                  "register_forward_hook");
}

RemovableHandle Module::register_full_backward_pre_hook(BackwardPreHook hook) {
  return add_hook(hooks_, &detail::ModuleHooks::backward_pre, std::move(hook), name_,
                  "register_full_backward_pre_hook");
}

void Module::run_forward_pre_hooks(std::vector<Tensor>& inputs) {
  const auto snapshot = hooks_->forward_pre;  // a hook may remove hooks
  for (const auto& [id, hook] : snapshot) {
    const size_t before = inputs.size();
    hook(*this, inputs);
    check_same_count(*this, "forward pre-hook", before, inputs.size());
  }
}

void Module::run_forward_hooks(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const auto snapshot = hooks_->forward;
  for (const auto& [id, hook] : snapshot) {
    const size_t before = outputs.size();
    hook(*this, inputs, outputs);
    check_same_count(*this, "forward hook", before, outputs.size());
  }
}

void Module::attach_backward_pre_hooks(std::vector<Tensor>& outputs) {
  if (hooks_->backward_pre.empty() || !GradMode::is_enabled()) return;
  std::vector<size_t> wrapped;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].defined() && outputs[i].requires_grad()) wrapped.push_back(i);
  }
  if (wrapped.empty()) return;  // no gradient will flow back through this call
  auto node = std::make_shared<BackwardHookNode>(*this, hooks_);
  node->set_num_inputs(static_cast<uint32_t>(wrapped.size()));
  for (size_t k = 0; k < wrapped.size(); ++k) {
    Tensor& out = outputs[wrapped[k]];
    node->add_next_edge(autograd::gradient_edge(out));
    Tensor handle = out.detach();  // the same values; its history goes through the node
    autograd::set_history(handle, node, static_cast<uint32_t>(k));
    out = handle;
  }
}

}  // namespace glass::nn
