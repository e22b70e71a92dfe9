// viewer/snapshot.h — a plain-data picture of a computation graph, for the renderers.
//
// A Snapshot copies out of the autograd graph what a drawing needs: each node's grad_fn
// name and forward op, the metadata of the tensor it produced, the tensors it saved (and
// whether their version check would fail), the edges, the parameter names of the leaves,
// which module each node belongs to and, once a backward has run under a
// GradientRecorder (recorders.h), the statistics of the gradient each node received. It
// holds no pointer into the graph, so it outlives it, can be copied to another thread and
// compared in tests. Building one costs a walk of the graph and never touches tensor values.
//
// Invariants: nodes[i].id == i; every edge's endpoints index into nodes; and
//
// Note [Edge direction]
// edges always point the way data flows in forward: `from` is an input of the op `to`
// (the producer), whichever graph was read. The backward graph's own pointers
// (Node::next_edges) run the other way, from an op to its inputs' grad_fns; the gradient
// travels along them. Storing one direction keeps the layout the same for both views: a
// renderer that wants to show gradients only flips the arrowheads (dot.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/scalar_type.h"
#include "core/tensor.h"

namespace glass::nn {
class Module;
}

namespace glass::viz {

// Shape, strides, dtype and device of a tensor, without its values. What is known depends
// on where it came from (Note [What a node knows about its output], snapshot.cpp): a leaf
// or the root is read from the tensor itself; an inner node's output only through the ops
// that consumed it, which recorded its shape and dtype but not its strides or device.
struct TensorMeta {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;              // empty when not known
  ScalarType dtype = ScalarType::Undefined;  // Undefined when nothing is known
  std::optional<Device> device;              // unset when not known
  bool known() const { return dtype != ScalarType::Undefined || !sizes.empty(); }
};
TensorMeta meta_of(const Tensor& t);
// "[64, 512] float32" (", cuda:0" when on a GPU); "?" when nothing is known.
std::string to_string(const TensorMeta& m);

// A tensor a node saved for backward (autograd::SavedTensorInfo, copied).
struct SavedTensor {
  TensorMeta meta;
  bool released = false;   // freed by a backward that did not retain the graph
  bool is_output = false;  // the node's own output
  uint32_t saved_version = 0, version = 0;
  // Whether unpacking it now would throw: an in-place write came after the save.
  bool version_check_fails() const { return meta.known() && !released && version != saved_version; }
};

// Statistics of one gradient tensor (grad_stats()), or of the sum of those a node received.
struct GradStats {
  int64_t numel = 0;
  double norm = 0;     // sqrt(sum g^2): inf or nan when an element is
  double max_abs = 0;  // max |g| over the finite and infinite elements; nan when all are nan
  int64_t nan_count = 0, inf_count = 0;
};
// Reads g's values (any dtype or layout, copied to float64 on the CPU). An undefined g is
// a zero gradient: numel 0, norm 0.
GradStats grad_stats(const Tensor& g);

enum class GraphKind : uint8_t { Backward, Forward };
enum class NodeKind : uint8_t {
  Op,      // a grad_fn: one recorded op
  Leaf,    // a leaf tensor (its AccumulateGrad in the backward graph)
  Module,  // a folded module standing for several nodes (modules.h)
};

struct GraphNode {
  int id = 0;  // its index in Snapshot::nodes
  NodeKind kind = NodeKind::Op;
  std::string name;   // grad_fn name ("MulBackward0", "AccumulateGrad") or module type ("Linear")
  std::string op;     // forward op ("mul", "addmm"); empty for leaves and modules
  std::string label;  // a leaf's parameter or given name ("fc1.weight", "x"); a module's path
  TensorMeta output;  // the tensor it produced in forward (a leaf: the leaf itself)
  std::vector<SavedTensor> saved;
  uint64_t sequence_nr = 0;       // autograd's creation counter: orders nodes, keys gradients
  uint32_t num_inputs = 0;        // tensor inputs of its op, with or without an edge (a constant
                                  // input needs no gradient, so no edge leads to it)
  std::string module;             // dotted path of the module it belongs to; "" for none
  bool is_root = false;           // produced the tensor the snapshot was taken from
  bool reachable = true;          // forward graphs: false when the root does not depend on it
  std::optional<GradStats> grad;  // the gradient it received in backward, when recorded
  std::vector<int> members;       // Module nodes: the ids they stand for, before collapsing

  bool version_check_fails() const;
};

struct GraphEdge {
  int from = 0;            // the producer: an input of `to` (Note [Edge direction])
  int to = 0;              // the op that read it
  uint32_t input_nr = 0;   // which input of `to` (its next_edges() index)
  uint32_t output_nr = 0;  // which output of `from`
  TensorMeta tensor = {};  // the tensor passed along, as `to` recorded it
};

// A module of the model given to the snapshot: "fc1" → "Linear".
struct ModuleInfo {
  std::string path;
  std::string type;
};

// One op call seen while a ForwardRecorder listened: the op ("mul", "mul_"), the dispatcher
// entry that served it ("binary"; the op itself for entries that serve one op), the
// dispatch key that ran it, and the graph node it recorded (-1: none, e.g. an op on
// tensors that need no grad, or an op a kernel ran internally).
struct OpRecord {
  std::string op;
  std::string entry;
  std::string key;
  int node = -1;
};

struct Snapshot {
  GraphKind kind = GraphKind::Backward;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::vector<ModuleInfo> modules;  // depth-first, as nn::Module::named_modules lists them
  std::vector<OpRecord> ops;        // forward snapshots: every op dispatched, in order

  // The first node with this name (grad_fn name, or a leaf's label); null if none.
  const GraphNode* find(const std::string& name_or_label) const;
  int count(NodeKind kind) const;
  // Ids of the nodes whose outputs `id` reads (its inputs), in input order.
  std::vector<int> inputs_of(int id) const;
  const ModuleInfo* module_info(const std::string& path) const;
};

// What to attach to a snapshot besides the graph itself.
struct SnapshotOptions {
  // Names the parameter leaves ("fc1.weight") and assigns nodes to modules (modules.h).
  // Read during the call only.
  nn::Module* module = nullptr;
  // Other tensors to name: leaves (inputs) by identity, inner tensors by their grad_fn.
  std::vector<std::pair<std::string, Tensor>> names = {};
};

// The backward graph behind `root`: every node reachable from root.grad_fn(), each once.
// A root without a grad_fn gives one Leaf node (if it requires grad) or an empty snapshot.
Snapshot snapshot(const Tensor& root, const SnapshotOptions& options = {});

}  // namespace glass::viz
