// autograd/tensor_methods.cpp — the Tensor methods core declares for autograd.
//
// They are defined in this layer because they need the engine; core only declares them,
// as libtorch's TensorBody.h does. This file also installs the Autograd-key handlers at
// start-up: any program that calls one of these methods links this file, and with it
// the registration (a static library only links the objects a program refers to).
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "autograd/variable.h"

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

namespace autograd {
namespace {
const bool g_registered = [] {
  register_autograd_handlers();
  return true;
}();
}  // namespace
}  // namespace autograd

}  // namespace glass
