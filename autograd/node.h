// autograd/node.h — one step of the backward graph: a grad_fn.
//
// When an op runs on inputs that require grad, autograd records a Node for it (the
// output's grad_fn). A Node knows how to turn the gradient of its forward outputs into
// gradients of its forward inputs — a vector-Jacobian product, never a Jacobian (seed
// §IV) — and where to send each of those: next_edges()[i] is the Node that produced
// input i (its grad_fn, or the AccumulateGrad of a leaf), with the index of that
// Node's input the gradient feeds. The graph is a DAG that only points backwards in
// time, so shared_ptrs from later Nodes to earlier ones never form a cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::autograd {

using tensor_list = std::vector<Tensor>;
using variable_list = tensor_list;  // libtorch has both names for the same type
class Node;

// What a tensor saved for backward is, without its values (SavedVariable::info()): read by
// tools that draw the graph (viewer/), never by the engine. version_check_fails() says
// whether unpacking it now would throw because an in-place write came after the save, or
// the tensor was re-pointed at other bytes (set_data).
struct SavedTensorInfo {
  bool defined = false;    // a tensor is held (false: none was saved, or it was released)
  bool released = false;   // freed by a backward that did not retain the graph
  bool is_output = false;  // the node's own output, saved without its grad_fn
  DimVector sizes, strides;
  ScalarType dtype = ScalarType::Undefined;
  Device device = Device(kCPU);
  uint32_t saved_version = 0;  // the tensor's version when it was saved
  uint32_t version = 0;        // its version now
  bool rebound = false;        // it now views another storage than when it was saved
  bool version_check_fails() const { return defined && (rebound || version != saved_version); }
};

// Where a gradient goes: input `input_nr` of `function`. An invalid edge (no function)
// stands for an input that does not require grad.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's name for the node type, e.g. "MulBackward0".
  virtual std::string name() const = 0;

  // grads[i] is the gradient of forward output i (undefined: zero). Returns one gradient
  // per next edge (undefined where there is nothing to send).
  virtual tensor_list apply(tensor_list&& grads) = 0;

  // Drops saved tensors after a backward pass that does not retain the graph.
  virtual void release_variables() {}
  // Read-only descriptions of the tensors this node saved for backward, in save order.
  virtual std::vector<SavedTensorInfo> saved_tensors() const { return {}; }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  // Number of forward outputs, i.e. of gradients this node receives.
  uint32_t num_inputs() const { return num_inputs_; }
  void set_num_inputs(uint32_t n) { num_inputs_ = n; }
  // Creation order: the engine runs later nodes first, which is always a valid order.
  uint64_t sequence_nr() const { return sequence_nr_; }
  // Whether the engine runs this node as soon as it is ready, before any other: AccumulateGrad
  // does, as in PyTorch, so a leaf's gradient is stored (and its hooks fire: DDP's and ZeRO's
  // buckets) when it is ready, and the tensor backward produced is freed then, not at the end.
  virtual bool runs_as_soon_as_ready() const { return false; }

  // A function of the gradient arriving at input `input_nr`, run before apply(): the
  // tensor hooks of a non-leaf output, in registration order, then its retain_grad() hook
  // (which therefore sees the final gradient, as in PyTorch). A hook may return a
  // replacement gradient, or an undefined Tensor to keep the one it got.
  // add_pre_hook returns the hook's slot; remove_pre_hook empties that slot rather than
  // erasing it, so every other slot handed out stays valid (the engine skips empty ones).
  using PreHook = std::function<Tensor(const Tensor&)>;
  size_t add_pre_hook(uint32_t input_nr, PreHook hook) {
    pre_hooks_.emplace_back(input_nr, std::move(hook));
    return pre_hooks_.size() - 1;
  }
  // False when there is no such slot or it was already emptied.
  bool remove_pre_hook(size_t slot) {
    if (slot >= pre_hooks_.size() || !pre_hooks_[slot].second) return false;
    pre_hooks_[slot].second = nullptr;
    return true;
  }
  void add_retain_grad_hook(uint32_t input_nr, PreHook hook) {
    retain_hooks_.emplace_back(input_nr, std::move(hook));
  }
  const std::vector<std::pair<uint32_t, PreHook>>& pre_hooks() const { return pre_hooks_; }

  // Anomaly mode (anomaly_mode.h): which forward op created this node, and on what.
  void set_forward_trace(std::string trace) { forward_trace_ = std::move(trace); }
  const std::string& forward_trace() const { return forward_trace_; }
  const std::vector<std::pair<uint32_t, PreHook>>& retain_grad_hooks() const {
    return retain_hooks_;
  }

 private:
  std::vector<std::pair<uint32_t, PreHook>> pre_hooks_, retain_hooks_;
  std::string forward_trace_;
  std::vector<Edge> next_edges_;
  uint32_t num_inputs_ = 1;
  uint64_t sequence_nr_;
};

}  // namespace glass::autograd
