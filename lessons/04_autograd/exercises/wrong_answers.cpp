// lessons/04_autograd/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: right numbers by a banned route, which exercises_test.cpp asserts the
// symbol check catches, and engines with a bug, which it asserts the grader catches.
#include "wrong_answers.h"

#include <deque>
#include <map>
#include <set>
#include <vector>

namespace glass::lesson04::wrong {

namespace {

// y's VJPs with the unit vectors, stacked: the Jacobian of y with respect to leaf.
Tensor rows_by_vjp(const Tensor& y, const Tensor& leaf) {
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < y.size(0); ++i) {
    Tensor e = zeros({y.size(0)}, y.dtype());
    e.select(0, i).fill_(1.0);
    rows.push_back(autograd::grad({y}, {leaf}, {e}, /*retain_graph=*/true)[0]);
  }
  return stack(rows);
}

// f as gradcheck takes it: a list of tensors in, a list out.
autograd::DifferentiableFn as_list_fn(const TensorFn& f) {
  return [f](const autograd::tensor_list& in) -> autograd::tensor_list { return {f(in[0])}; };
}

}  // namespace

Tensor jacobian_checked_by_gradcheck(const TensorFn& f, const Tensor& x) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor J = rows_by_vjp(f(leaf), leaf).to(x.dtype());
  const autograd::GradcheckResult check =
      autograd::gradcheck(as_list_fn(f), {x.detach().to(kDouble)});
  GLASS_CHECK(check.ok, "gradcheck disagrees: ", check.report);
  return J;
}

Tensor jvp_by_double_vjp(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor y = f(leaf);
  Tensor u = zeros_like(y).requires_grad_();  // any u: g(u) = J^T u is linear in it
  Tensor g = autograd::grad({y}, {leaf}, {u}, std::nullopt, /*create_graph=*/true)[0];
  return autograd::grad({g}, {u}, {v})[0].detach();
}

Tensor hessian_vector_product_checked(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor g = autograd::grad({f(leaf)}, {leaf}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor hv = g.requires_grad() ? autograd::grad({g}, {leaf}, {v})[0] : zeros_like(x);
  const autograd::GradcheckResult check =
      autograd::gradgradcheck(as_list_fn(f), {x.detach().to(kDouble)});
  GLASS_CHECK(check.ok, "gradgradcheck disagrees: ", check.report);
  return hv;
}

namespace {

using autograd::Edge;
using autograd::Node;

// The part both buggy engines share: seed the root, run nodes (never an AccumulateGrad),
// collect the inputs' gradients, zeros for the unreached. `wait` says whether a node must
// wait for all its gradients (dependency counts); `sum` whether arrivals are summed.
tensor_list buggy_engine(const Tensor& root, const tensor_list& inputs, bool wait, bool sum) {
  const Edge start = autograd::gradient_edge(root);
  std::vector<Edge> targets;
  for (const Tensor& input : inputs) targets.push_back(autograd::gradient_edge(input));
  std::map<Node*, int> deps;
  std::set<Node*> seen = {start.function.get()};
  std::vector<Node*> todo = {start.function.get()};
  while (!todo.empty()) {
    Node* node = todo.back();
    todo.pop_back();
    for (const Edge& e : node->next_edges())
      if (e.is_valid()) {
        ++deps[e.function.get()];
        if (seen.insert(e.function.get()).second) todo.push_back(e.function.get());
      }
  }
  std::map<Node*, tensor_list> buffers;
  std::set<Node*> queued = {start.function.get()};
  std::deque<Node*> ready = {start.function.get()};  // first in, first out
  auto add_to = [&](const Edge& e, const Tensor& g) {
    tensor_list& buffer =
        buffers.try_emplace(e.function.get(), e.function->num_inputs()).first->second;
    if (!g.defined()) return;
    Tensor& slot = buffer[e.input_nr];
    slot = sum && slot.defined() ? slot + g : g;  // the overwriting bug: = instead of +=
  };
  add_to(start, ones_like(root));
  tensor_list grads(inputs.size());
  NoGradGuard no_grad;
  while (!ready.empty()) {
    Node* node = ready.front();
    ready.pop_front();
    tensor_list buffer = std::move(buffers[node]);
    buffers.erase(node);
    for (size_t k = 0; k < targets.size(); ++k)
      if (targets[k].function.get() == node) grads[k] = buffer[targets[k].input_nr];
    if (dynamic_cast<autograd::AccumulateGrad*>(node) != nullptr) continue;
    tensor_list out = node->apply(std::move(buffer));
    const std::vector<Edge>& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      if (!edges[i].is_valid()) continue;
      add_to(edges[i], i < out.size() ? out[i] : Tensor());
      Node* next = edges[i].function.get();
      // The missing-counts bug: queue a node on its first gradient, not on its last.
      bool now = wait ? --deps[next] == 0 : queued.insert(next).second;
      if (now) ready.push_back(next);
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!grads[k].defined()) grads[k] = zeros_like(inputs[k]);
  return grads;
}

}  // namespace

tensor_list engine_grad_without_dependency_counts(const Tensor& root, const tensor_list& inputs) {
  return buggy_engine(root, inputs, /*wait=*/false, /*sum=*/true);
}

tensor_list engine_grad_overwriting(const Tensor& root, const tensor_list& inputs) {
  return buggy_engine(root, inputs, /*wait=*/true, /*sum=*/false);
}

tensor_list engine_grad_by_library(const Tensor& root, const tensor_list& inputs) {
  tensor_list grads = autograd::grad({root}, inputs, {}, /*retain_graph=*/true,
                                     /*create_graph=*/false, /*allow_unused=*/true);
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!grads[k].defined()) grads[k] = zeros_like(inputs[k]);
  return grads;
}

}  // namespace glass::lesson04::wrong
