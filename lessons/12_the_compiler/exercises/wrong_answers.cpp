// lessons/12_the_compiler/exercises/wrong_answers.cpp — see wrong_answers.h.
#include "wrong_answers.h"

#include <cstring>

#include "compiler/passes.h"

namespace glass::lesson12::wrong {
namespace {

bool is_unary(const compiler::Node& n) { return std::strcmp(n.op->name(), "unary") == 0; }

// Links unary node i to the unary node that reads its result, under a rule for "may link".
template <class MayLink>
std::vector<std::vector<int>> chains(const compiler::Graph& graph, size_t min_length,
                                     MayLink may_link) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> uses = graph.uses();
  std::vector<int> next(n, -1), prev(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!is_unary(graph.nodes[i])) continue;
    const int v = graph.nodes[i].outputs[0];
    for (int reader : uses[v])
      if (is_unary(graph.nodes[reader]) && prev[reader] < 0 && next[i] < 0 &&
          may_link(v, uses[v])) {
        next[i] = reader;
        prev[reader] = i;
      }
  }
  std::vector<std::vector<int>> out;
  for (int i = 0; i < n; ++i) {
    if (!is_unary(graph.nodes[i]) || prev[i] >= 0) continue;
    std::vector<int> chain{i};
    for (int j = next[i]; j >= 0; j = next[j]) chain.push_back(j);
    if (chain.size() >= min_length) out.push_back(chain);
  }
  return out;
}

bool is_output(const compiler::Graph& g, int v) {
  for (int o : g.outputs)
    if (o == v) return true;
  return false;
}

}  // namespace

// Links a result that other nodes read too: those readers then need a value the fused
// kernel never stores.
std::vector<std::vector<int>> chains_ignore_other_readers(const compiler::Graph& graph) {
  return chains(graph, 2, [&](int v, const std::vector<int>&) { return !is_output(graph, v); });
}

// Links through a result the function returns: the caller needs it stored.
std::vector<std::vector<int>> chains_through_outputs(const compiler::Graph& graph) {
  return chains(graph, 2, [](int, const std::vector<int>& uses) { return uses.size() == 1; });
}

// Reports single unary nodes as chains: nothing to fuse.
std::vector<std::vector<int>> chains_of_one(const compiler::Graph& graph) {
  return chains(graph, 1, [&](int v, const std::vector<int>& uses) {
    return uses.size() == 1 && !is_output(graph, v);
  });
}

// The library's fusion pass, filtered to groups of unary nodes: banned.
std::vector<std::vector<int>> chains_from_the_library(const compiler::Graph& graph) {
  std::vector<std::vector<int>> out;
  for (const compiler::FusionGroup& g : compiler::find_fusion_groups(graph)) {
    bool all_unary = true;
    for (int n : g.nodes) all_unary &= is_unary(graph.nodes[n]);
    if (all_unary) out.push_back(g.nodes);
  }
  return out;
}

bool accepts_same_numel(const Guard& guard, const std::vector<Tensor>& inputs) {
  if (inputs.size() != guard.tensors.size() || GradMode::is_enabled() != guard.grad_mode)
    return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    int64_t numel = 1;
    for (int64_t s : guard.tensors[i].sizes) numel *= s;
    if (inputs[i].numel() != numel || inputs[i].dtype() != guard.tensors[i].dtype ||
        inputs[i].requires_grad() != guard.tensors[i].requires_grad)
      return false;
  }
  return true;
}

bool accepts_any_dtype(const Guard& guard, const std::vector<Tensor>& inputs) {
  if (inputs.size() != guard.tensors.size() || GradMode::is_enabled() != guard.grad_mode)
    return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!(inputs[i].sizes() == guard.tensors[i].sizes) ||
        inputs[i].requires_grad() != guard.tensors[i].requires_grad)
      return false;
  return true;
}

bool accepts_any_grad_mode(const Guard& guard, const std::vector<Tensor>& inputs) {
  if (inputs.size() != guard.tensors.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!(inputs[i].sizes() == guard.tensors[i].sizes) ||
        inputs[i].dtype() != guard.tensors[i].dtype ||
        inputs[i].requires_grad() != guard.tensors[i].requires_grad)
      return false;
  return true;
}

// Asks the library's compiled function instead of comparing: banned.
bool accepts_by_compiling(const Guard&, const std::vector<Tensor>& inputs) {
  compiler::CompiledFunction engine(CompileOptions{});
  return engine.accepts(inputs, {});
}

Tensor branch_by_item(const Tensor& x) {
  if (x.sum().item<double>() > 0) return x * 2;
  return x * -0.5;
}

// Reads the sum through data_ptr: no op the trace sees, so the branch the first call took is
// baked into the graph.
Tensor branch_by_data_ptr(const Tensor& x) {
  Tensor s = x.sum();
  if (*s.data_ptr<float>() > 0) return x * 2;
  return x * -0.5;
}

// >= where branchy has >: the two differ at a sum of exactly 0.
Tensor branch_at_zero_too(const Tensor& x) { return where(x.sum() >= 0, x * 2, x * -0.5); }

// Chooses per element, not by the sum.
Tensor branch_per_element(const Tensor& x) { return where(x > 0, x * 2, x * -0.5); }

}  // namespace glass::lesson12::wrong
