// autograd/variable.cpp — AutogradMeta bookkeeping and gradient accumulation.
#include "autograd/variable.h"

#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::autograd {

AutogradMeta* get_meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}

AutogradMeta& materialize_meta(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *static_cast<AutogradMeta*>(impl->autograd_meta());
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& m = materialize_meta(t);
  if (m.grad_fn) return {m.grad_fn, m.output_nr};
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m.grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = materialize_meta(t);
  m.grad_fn = fn;
  m.output_nr = output_nr;
  t.unsafeGetTensorImpl()->set_requires_grad(true);
}

void zero_grad(const Tensor& t, bool set_to_none) {
  AutogradMeta* m = get_meta(t);
  if (!m || !m->grad.defined()) return;
  if (set_to_none) {
    m->grad = Tensor();
    return;
  }
  NoGradGuard no_grad;
  m->grad = m->grad.detach();
  m->grad.zero_();
}

tensor_list AccumulateGrad::apply(tensor_list&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  AutogradMeta& m = materialize_meta(variable_);
  if (!m.grad.defined()) {
    // Keep the graph of g only when building a higher-order graph (create_graph). Else
    // .grad() must own its memory: g is taken as it is when nothing else can see it (the
    // engine made it and holds the only reference, as PyTorch's AccumulateGrad checks),
    // and copied otherwise — a user's `gradient` argument, or an expanded view.
    const bool only_owner = g.use_count() == 1 &&
                            g.unsafeGetTensorImpl()->storage().use_count() == 1 &&
                            g.is_contiguous();
    m.grad = GradMode::is_enabled() ? g : only_owner ? g.detach() : g.detach().clone();
  } else if (GradMode::is_enabled()) {
    m.grad = m.grad + g;
  } else {
    m.grad.add_(g);
  }
  // Indexed, each hook copied before it runs: a hook may register another on this leaf.
  for (size_t i = 0; i < m.post_accumulate_hooks.size(); ++i) {
    auto hook = m.post_accumulate_hooks[i];
    if (hook) hook(variable_);  // empty: removed
  }
  return {};
}

}  // namespace glass::autograd

namespace glass::autograd {

Tensor run_leaf_hooks(const Tensor& leaf, Tensor grad) {
  AutogradMeta* m = get_meta(leaf);
  if (!m || !grad.defined()) return grad;
  for (size_t i = 0; i < m->hooks.size(); ++i) {
    auto hook = m->hooks[i];  // a copy: a hook may register another on this leaf
    if (!hook) continue;      // removed
    Tensor r = hook(grad);
    if (r.defined()) grad = r;
  }
  return grad;
}

unsigned register_post_accumulate_grad_hook(const Tensor& leaf,
                                            std::function<void(const Tensor&)> hook) {
  GLASS_CHECK(leaf.requires_grad() && leaf.is_leaf(),
              "register_post_accumulate_grad_hook(): "
              "expected a leaf tensor that requires grad");
  auto& hooks = materialize_meta(leaf).post_accumulate_hooks;
  hooks.push_back(std::move(hook));
  return static_cast<unsigned>(hooks.size() - 1);
}

void remove_post_accumulate_grad_hook(const Tensor& leaf, unsigned index) {
  AutogradMeta* m = get_meta(leaf);
  const bool live =
      m && index < m->post_accumulate_hooks.size() && m->post_accumulate_hooks[index] != nullptr;
  GLASS_CHECK(live, "remove_post_accumulate_grad_hook(): this tensor has no hook with index ",
              index, " (it was never returned by register_post_accumulate_grad_hook for this ",
              "tensor, or it was already removed)");
  m->post_accumulate_hooks[index] = nullptr;
}

}  // namespace glass::autograd
