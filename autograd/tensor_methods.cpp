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
  if (!m.grad_fn) {
    m.hooks.push_back(std::move(hook));
    return static_cast<unsigned>(m.hooks.size() - 1);
  }
  m.grad_fn->add_pre_hook(m.output_nr, std::move(hook));
  return static_cast<unsigned>(m.grad_fn->pre_hooks().size() - 1);
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
