// lessons/12_the_compiler/exercises/solution.cpp — reference answers to lesson 12's
// exercises (see exercises.h for each contract).
#include "exercises.h"

#include <cstring>

namespace glass::lesson12 {

// ---- exercise 1 ------------------------------------------------------------------------

namespace {
bool is_unary(const compiler::Node& n) { return std::strcmp(n.op->name(), "unary") == 0; }
}  // namespace

std::vector<std::vector<int>> unary_chains(const compiler::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> uses = graph.uses();
  std::vector<bool> is_output(graph.values.size(), false);
  for (int v : graph.outputs) is_output[v] = true;
  // next[i]: the unary node that alone reads unary node i's result, or -1.
  std::vector<int> next(n, -1), prev(n, -1);
  for (int i = 0; i < n; ++i) {
    const compiler::Node& node = graph.nodes[i];
    if (!is_unary(node) || node.outputs.size() != 1) continue;
    const int v = node.outputs[0];
    if (is_output[v] || uses[v].size() != 1) continue;
    const int reader = uses[v][0];
    if (is_unary(graph.nodes[reader])) {
      next[i] = reader;
      prev[reader] = i;
    }
  }
  std::vector<std::vector<int>> chains;
  for (int i = 0; i < n; ++i) {
    if (next[i] < 0 || prev[i] >= 0) continue;  // not the first node of a chain
    std::vector<int> chain{i};
    for (int j = next[i]; j >= 0; j = next[j]) chain.push_back(j);
    chains.push_back(chain);
  }
  return chains;
}

// ---- exercise 2 ------------------------------------------------------------------------

Guard record(const std::vector<Tensor>& inputs) {
  Guard g;
  for (const Tensor& t : inputs) g.tensors.push_back(compiler::TensorMeta::of(t));
  g.grad_mode = GradMode::is_enabled();
  return g;
}

bool accepts(const Guard& guard, const std::vector<Tensor>& inputs) {
  if (inputs.size() != guard.tensors.size() || GradMode::is_enabled() != guard.grad_mode)
    return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const compiler::TensorMeta& m = guard.tensors[i];
    const Tensor& t = inputs[i];
    if (!(t.sizes() == m.sizes) || t.dtype() != m.dtype || t.requires_grad() != m.requires_grad)
      return false;
  }
  return true;
}

// ---- exercise 3 ------------------------------------------------------------------------

Tensor branch_free(const Tensor& x) {
  // Both branches, and a per-call choice between them that stays a tensor: the 0-dim
  // condition broadcasts over x.
  return where(x.sum() > 0, x * 2, x * -0.5);
}

}  // namespace glass::lesson12
