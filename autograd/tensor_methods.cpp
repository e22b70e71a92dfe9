// autograd/tensor_methods.cpp — the Tensor methods core declares for autograd.
//
// They are defined in this layer because they need the engine; core only declares them,
// as libtorch's TensorBody.h does. This file also installs the Autograd-key handlers at
// start-up: any program that calls one of these methods links this file, and with it
// the registration (a static library only links the objects a program refers to).
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "core/error.h"

namespace glass {

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      TensorList inputs) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph, inputs.vec());
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  autograd::AutogradMeta* m = autograd::get_meta(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() const { return autograd::materialize_meta(*this).grad; }

bool Tensor::is_leaf() const {
  autograd::AutogradMeta* m = autograd::get_meta(*this);
  return !m || !m->grad_fn;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  autograd::AutogradMeta* m = autograd::get_meta(*this);
  return m ? m->grad_fn : none;
}

void Tensor::retain_grad() const {
  GLASS_CHECK(requires_grad(),
              "retain_grad(): can't retain_grad on a Tensor that has "
              "requires_grad=false");
  autograd::AutogradMeta& m = autograd::materialize_meta(*this);
  if (!m.grad_fn || m.retains_grad) return;  // leaves keep .grad() anyway
  m.retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  m.grad_fn->add_retain_grad_hook(m.output_nr, [weak](const Tensor& g) -> Tensor {
    if (auto impl = weak.lock()) {
      Tensor& grad = autograd::materialize_meta(Tensor(impl)).grad;
      grad = grad.defined() ? grad + g.detach() : g.detach().clone();
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  autograd::AutogradMeta* m = autograd::get_meta(*this);
  return m && m->retains_grad;
}

unsigned Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  GLASS_CHECK(requires_grad(),
              "register_hook(): cannot register a hook on a tensor that doesn't "
              "require gradient");
  autograd::AutogradMeta& m = autograd::materialize_meta(*this);
  autograd::AutogradMeta::HookRef ref;
  if (!m.grad_fn) {
    m.hooks.push_back(std::move(hook));
    ref.slot = m.hooks.size() - 1;
  } else {
    ref.on_grad_fn = true;
    ref.grad_fn = m.grad_fn;
    ref.slot = m.grad_fn->add_pre_hook(m.output_nr, std::move(hook));
  }
  m.hook_refs.push_back(std::move(ref));
  return static_cast<unsigned>(m.hook_refs.size() - 1);
}

void Tensor::remove_hook(unsigned index) const {
  autograd::AutogradMeta* m = autograd::get_meta(*this);
  GLASS_CHECK(m && index < m->hook_refs.size() && !m->hook_refs[index].removed,
              "remove_hook(): this tensor has no hook with index ", index,
              " (it was never returned by register_hook for this tensor, or it was already "
              "removed)");
  autograd::AutogradMeta::HookRef& ref = m->hook_refs[index];
  ref.removed = true;
  if (!ref.on_grad_fn) {
    m->hooks[ref.slot] = nullptr;
  } else if (auto node = ref.grad_fn.lock()) {
    node->remove_pre_hook(ref.slot);
  }  // else the node died with its graph, and the hook with it
}

namespace autograd {
namespace {
const bool g_registered = [] {
  register_autograd_handlers();
  return true;
}();
}  // namespace
}  // namespace autograd

}  // namespace glass
