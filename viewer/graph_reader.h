// viewer/graph_reader.h — copies autograd nodes into a Snapshot, one node at a time.
//
// Internal to viewer/: snapshot() walks a backward graph with it, and ForwardRecorder
// (recorders.h) feeds it each node as the forward creates it. It reads autograd's public
// accessors only (name, next_edges, saved_tensors, sequence_nr, and the metadata that
// FormulaNode, CustomNode and AccumulateGrad keep); it never unpacks a saved tensor, runs
// a node or touches a value. Nodes are keyed by sequence_nr, which is unique for the life
// of the process, so a node freed and another allocated at its address are never confused.
// Pointers to autograd nodes are used only while the call that received them runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/node.h"
#include "viewer/snapshot.h"

namespace glass::viz::detail {

class GraphReader {
 public:
  explicit GraphReader(GraphKind kind) { s_.kind = kind; }

  // The id of `node`, adding it (name, op, saved tensors, a leaf's tensor) if it is new.
  int add(const autograd::Node& node);
  // A leaf tensor with no accumulator yet (a snapshot of a bare leaf).
  int add_leaf(const Tensor& leaf);
  // Adds node's inputs (each through add()) and the edges from them to node; returns the
  // inputs that were new, to be expanded in turn. A second call for one node adds nothing.
  std::vector<const autograd::Node*> expand(const autograd::Node& node);
  // Fills in outputs known only through their consumers (Note [What a node knows about its
  // output], snapshot.cpp); names leaves and named tensors' nodes;
  // marks `root`'s node and, for forward graphs, what it depends on.
  void finish(const Tensor& root, const SnapshotOptions& options);

  Snapshot& snapshot() { return s_; }
  // The id of the node with this sequence number, or -1.
  int find(uint64_t sequence_nr) const;

 private:
  std::unordered_map<uint64_t, int> ids_;                      // sequence_nr -> id
  std::unordered_map<int, std::weak_ptr<TensorImpl>> leaves_;  // id -> the leaf, to name it
  std::vector<bool> expanded_;
  Snapshot s_;
};

// "MulBackward0" -> "mul", "LogSoftmaxBackward0" -> "log_softmax", "TBackward0" -> "t":
// the forward op a grad_fn name stands for (PyTorch's names are the op's, CamelCased, plus
// "Backward" and an overload number).
std::string forward_op_name(const std::string& grad_fn_name);

}  // namespace glass::viz::detail
