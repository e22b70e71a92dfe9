// lessons/04_autograd/exercises/solution.cpp — the reference answers to lesson 04's
// exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <vector>

#include "exercises.h"

namespace glass::lesson04 {
namespace {

// e_i: the unit vector that picks output i (exercise 1) or input i.
Tensor unit_vector(int64_t n, int64_t i, ScalarType dtype) {
  Tensor e = zeros({n}, dtype);
  e.select(0, i).fill_(1.0);
  return e;
}

}  // namespace

Tensor jacobian_by_vjp(const TensorFn& f, const Tensor& x) {
  GLASS_CHECK(x.dim() == 1 && x.is_floating_point(),
              "jacobian_by_vjp(): expects a 1-D floating-point x, got ", x.toString());
  Tensor leaf = x.detach().requires_grad_();  // same values, a fresh leaf: x is untouched
  Tensor y = f(leaf);                         // the one forward pass; its graph serves all rows
  GLASS_CHECK(y.dim() == 1, "jacobian_by_vjp(): f(x) must be 1-D, got ", y.toString());
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < y.size(0); ++i) {
    // e_i^T J is row i. retain_graph keeps the saved tensors for the next row's pass.
    Tensor e = unit_vector(y.size(0), i, y.dtype());
    rows.push_back(autograd::grad({y}, {leaf}, {e}, /*retain_graph=*/true)[0]);
  }
  return stack(rows).to(x.dtype());
}

Tensor jvp(const TensorFn& f, const Tensor& x, const Tensor& v) {
  autograd::forward_ad::DualLevel level;  // ends (and strips every tangent) on return
  Tensor y = f(autograd::forward_ad::make_dual(x, v));
  Tensor tangent = autograd::forward_ad::unpack_dual(y).tangent;
  // An output that does not depend on x carries no tangent: its derivative is zero.
  return tangent.defined() ? tangent : zeros_like(y);
}

Tensor hessian_vector_product(const TensorFn& f, const Tensor& x, const Tensor& v) {
  Tensor leaf = x.detach().requires_grad_();
  Tensor loss = f(leaf);
  GLASS_CHECK(loss.numel() == 1, "hessian_vector_product(): f(x) must have one element, got ",
              loss.toString());
  // First pass: the gradient, recorded as a graph of its own (create_graph).
  Tensor g = autograd::grad({loss}, {leaf}, {}, std::nullopt, /*create_graph=*/true)[0];
  if (!g.requires_grad()) return zeros_like(x);  // a constant gradient: f is linear
  // Second pass: v^T (dg/dx) = v^T H, which is (H v)^T since H is symmetric. (allow_unused:
  // g may have a graph that never reaches x, if f also reads other tensors that need grad.)
  Tensor hv = autograd::grad({g}, {leaf}, {v}, std::nullopt, false, /*allow_unused=*/true)[0];
  return hv.defined() ? hv : zeros_like(x);
}

// ---- exercise 4 ------------------------------------------------------------------------

namespace {

using autograd::Edge;
using autograd::Node;

// Phase 1: for every node reachable from `start`, how many valid edges point into it.
std::map<Node*, int> count_dependencies(Node* start) {
  std::map<Node*, int> deps;
  std::set<Node*> seen = {start};
  std::vector<Node*> todo = {start};
  while (!todo.empty()) {
    Node* node = todo.back();
    todo.pop_back();
    for (const Edge& e : node->next_edges()) {
      if (!e.is_valid()) continue;
      ++deps[e.function.get()];
      if (seen.insert(e.function.get()).second) todo.push_back(e.function.get());
    }
  }
  return deps;
}

// The ready queue pops the newest node first, as engine.cpp's does (any order that waits
// for the counts gives the same sums; this one frees memory early).
struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

}  // namespace

tensor_list engine_grad(const Tensor& root, const tensor_list& inputs) {
  GLASS_CHECK(root.numel() == 1 && root.grad_fn() != nullptr,
              "engine_grad(): root must be a one-element tensor with a grad_fn, got ",
              root.toString());
  const Edge start = autograd::gradient_edge(root);
  std::vector<Edge> targets;  // where each input's gradient arrives
  for (const Tensor& input : inputs) {
    GLASS_CHECK(input.requires_grad(), "engine_grad(): every input must require grad");
    targets.push_back(autograd::gradient_edge(input));
  }
  std::map<Node*, int> deps = count_dependencies(start.function.get());

  // Phase 2. buffers[n]: the gradients waiting at n's inputs, one slot per forward output.
  // The edges' shared_ptrs keep every node alive while we hold the root's.
  std::map<Node*, tensor_list> buffers;
  auto add_to = [&](const Edge& e, const Tensor& g) {
    tensor_list& buffer =
        buffers.try_emplace(e.function.get(), e.function->num_inputs()).first->second;
    if (!g.defined()) return;  // undefined: zero, nothing to add
    Tensor& slot = buffer[e.input_nr];
    slot = slot.defined() ? slot + g : g;  // paths meet: sum
  };
  add_to(start, ones_like(root));
  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  ready.push(start.function.get());

  tensor_list grads(inputs.size());
  NoGradGuard no_grad;  // the VJPs compute gradients; they record no graph
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    tensor_list buffer = std::move(buffers[node]);  // complete: its count reached zero
    buffers.erase(node);
    for (size_t k = 0; k < targets.size(); ++k)
      if (targets[k].function.get() == node) grads[k] = buffer[targets[k].input_nr];
    if (dynamic_cast<autograd::AccumulateGrad*>(node) != nullptr) continue;  // a leaf: done
    tensor_list out = node->apply(std::move(buffer));  // one gradient per next edge
    const std::vector<Edge>& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      if (!edges[i].is_valid()) continue;
      add_to(edges[i], i < out.size() ? out[i] : Tensor());
      if (--deps[edges[i].function.get()] == 0) ready.push(edges[i].function.get());
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!grads[k].defined()) grads[k] = zeros_like(inputs[k]);  // root does not depend on it
  return grads;
}

}  // namespace glass::lesson04
