// autograd/variable.h — the autograd state of a tensor, and how outputs join the graph.
//
// core's TensorImpl keeps a requires_grad flag and an opaque AutogradMetaInterface slot;
// this layer puts an AutogradMeta there. Invariant: a tensor with a grad_fn is a
// non-leaf (it was computed from tensors that require grad); a leaf that requires grad
// reaches the graph through an AccumulateGrad node, created on first use and shared by
// every op that reads the leaf (held weakly here, so it dies with the graph).
#pragma once

#include <functional>
#include <memory>

#include "autograd/node.h"
#include "core/tensor.h"

namespace glass::autograd {

struct AutogradMeta : AutogradMetaInterface {
  Tensor grad;                           // accumulated .grad() of a leaf (or a retained one)
  std::shared_ptr<Node> grad_fn;         // the node that produced this tensor; null for leaves
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, while a graph uses it
  uint32_t output_nr = 0;                // which output of grad_fn this tensor is
  bool retains_grad = false;             // a non-leaf whose .grad() is kept (retain_grad())
  // A leaf's hooks live here (its AccumulateGrad comes and goes with each graph); a
  // non-leaf's are pre-hooks of its grad_fn (Node::add_pre_hook). register_hook()'s index
  // is a position in hook_refs, which says where each of this tensor's hooks went. Removal
  // leaves tombstones (a removed ref, an empty function) so later indices keep meaning.
  struct HookRef {
    bool on_grad_fn = false;      // a pre-hook of grad_fn (else: hooks[slot])
    std::weak_ptr<Node> grad_fn;  // the grad_fn it was added to (an in-place op may move on)
    size_t slot = 0;
    bool removed = false;
  };
  std::vector<HookRef> hook_refs;
  std::vector<std::function<Tensor(const Tensor&)>> hooks;
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;  // index = position
  // Forward mode (forward_ad.h): the tangent, while a dual level is active.
  Tensor fw_grad;
  // Note [In-place ops in a graph] (inplace_functions.cpp): a view recorded by autograd
  // keeps its root base; a non-leaf base keeps weak references to its live views.
  Tensor view_base;
  std::vector<std::weak_ptr<TensorImpl>> views;
};

// Runs a leaf's tensor hooks on an incoming gradient (the engine calls this).
Tensor run_leaf_hooks(const Tensor& leaf, Tensor grad);

// Called after a leaf's .grad() has been updated, with the leaf (DDP starts its
// all-reduce from here). Hooks may read or change leaf.grad(); they run in registration
// order. Returns an index for remove_post_accumulate_grad_hook, which stays valid when
// other hooks are removed; removing an index twice, or one never returned, is an error.
unsigned register_post_accumulate_grad_hook(const Tensor& leaf,
                                            std::function<void(const Tensor&)> hook);
void remove_post_accumulate_grad_hook(const Tensor& leaf, unsigned index);

// Clears t.grad(): drops it (set_to_none, PyTorch's default since 2.0: the next backward
// allocates it afresh) or zeroes it in place. A grad built with create_graph is part of a
// graph, so the zeroing writes through a detached handle and is not recorded.
// Module::zero_grad and Optimizer::zero_grad call this for each parameter.
void zero_grad(const Tensor& t, bool set_to_none = true);

// The tensor's AutogradMeta, or null if it never took part in autograd.
AutogradMeta* get_meta(const Tensor& t);
AutogradMeta& materialize_meta(const Tensor& t);

// The edge a gradient for `t` must follow: its grad_fn, or its leaf accumulator (created
// if needed), or an invalid edge when `t` does not require grad.
Edge gradient_edge(const Tensor& t);

// Makes `fn` the grad_fn of output `output_nr` (`t` then requires grad and is no leaf).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr = 0);

// Accumulates incoming gradients into a leaf's .grad().
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {}
  std::string name() const override { return "AccumulateGrad"; }
  tensor_list apply(tensor_list&& grads) override;
  bool runs_as_soon_as_ready() const override { return true; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace glass::autograd
