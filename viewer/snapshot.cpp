// viewer/snapshot.cpp — reading the autograd graph into a Snapshot.
//
// Index:
//   [SECTION] tensor metadata and gradient statistics
//   [SECTION] GraphReader: one autograd node at a time
//   [SECTION] snapshot(): the backward graph behind a tensor
//   [SECTION] Snapshot's queries
#include "viewer/snapshot.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/custom_function.h"
#include "autograd/formula.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/module.h"
#include "viewer/graph_reader.h"
#include "viewer/modules.h"

namespace glass::viz {

// [SECTION] tensor metadata and gradient statistics ----------------------------------------

namespace {

std::vector<int64_t> to_vector(IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

}  // namespace

TensorMeta meta_of(const Tensor& t) {
  TensorMeta m;
  if (!t.defined()) return m;
  m.sizes = to_vector(t.sizes());
  m.strides = to_vector(t.strides());
  m.dtype = t.dtype();
  m.device = t.device();
  return m;
}

std::string to_string(const TensorMeta& m) {
  if (!m.known()) return "?";
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < m.sizes.size(); ++i) out << (i ? ", " : "") << m.sizes[i];
  out << "]";
  if (m.dtype != ScalarType::Undefined) out << " " << dtype_name(m.dtype);
  if (m.device && !m.device->is_cpu()) out << ", " << m.device->str();
  return out.str();
}

GradStats grad_stats(const Tensor& g) {
  GradStats st;
  if (!g.defined()) return st;
  // The reads below are ops too; under NoGradGuard they record nothing, even inside a
  // backward with create_graph.
  NoGradGuard no_grad;
  Tensor h = g.detach();
  if (!h.is_cpu()) h = h.to(Device(kCPU));
  h = h.to(kFloat64).contiguous();
  const double* p = h.data_ptr<double>();
  st.numel = h.numel();
  double sum_sq = 0, max_abs = 0;
  for (int64_t i = 0; i < st.numel; ++i) {
    double v = p[i];
    if (std::isnan(v)) {
      ++st.nan_count;
      continue;
    }
    if (std::isinf(v)) ++st.inf_count;
    max_abs = std::max(max_abs, std::abs(v));
    sum_sq += v * v;
  }
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  st.norm = st.nan_count > 0 ? kNaN : std::sqrt(sum_sq);
  st.max_abs = st.numel > 0 && st.nan_count == st.numel ? kNaN : max_abs;
  return st;
}

bool GraphNode::version_check_fails() const {
  return std::any_of(saved.begin(), saved.end(),
                     [](const SavedTensor& t) { return t.version_check_fails(); });
}

// [SECTION] GraphReader: one autograd node at a time ----------------------------------------

namespace detail {

std::string forward_op_name(const std::string& grad_fn_name) {
  std::string base = grad_fn_name;
  size_t cut = base.rfind("Backward");
  if (cut != std::string::npos && cut > 0) base = base.substr(0, cut);
  // CamelCase -> snake_case: an underscore before each capital that follows a lowercase
  // letter ("LogSoftmax" -> "log_softmax"; "Log1P" -> "log1p", "T" -> "t").
  std::string out;
  for (size_t i = 0; i < base.size(); ++i) {
    char c = base[i];
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) &&
        std::islower(static_cast<unsigned char>(base[i - 1])))
      out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

int GraphReader::find(uint64_t sequence_nr) const {
  auto it = ids_.find(sequence_nr);
  return it == ids_.end() ? -1 : it->second;
}

int GraphReader::add(const autograd::Node& node) {
  if (int id = find(node.sequence_nr()); id >= 0) return id;
  GraphNode n;
  n.id = static_cast<int>(s_.nodes.size());
  n.name = node.name();
  n.sequence_nr = node.sequence_nr();
  n.num_inputs = static_cast<uint32_t>(node.next_edges().size());
  if (const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&node)) {
    n.kind = NodeKind::Leaf;
    n.output = meta_of(acc->variable());
    leaves_[n.id] = acc->variable().impl_ptr();
  } else if (const auto* custom = dynamic_cast<const autograd::CustomNode*>(&node)) {
    // A custom function is named after its C++ type ("MyReLU"), as PyTorch's
    // MyReLU.apply is; it records its outputs' shapes and dtypes itself.
    n.op = n.name.size() > 8 ? n.name.substr(0, n.name.size() - 8) : n.name;
    // Its next_edges() has a slot for every forward argument; only tensors are inputs.
    n.num_inputs = static_cast<uint32_t>(
        std::count(custom->is_tensor_input.begin(), custom->is_tensor_input.end(), true));
    if (!custom->output_shapes.empty()) {
      n.output.sizes = to_vector(custom->output_shapes[0]);
      n.output.dtype = custom->output_dtypes[0];
    }
  } else {
    n.op = forward_op_name(n.name);
  }
  for (const autograd::SavedTensorInfo& info : node.saved_tensors()) {
    SavedTensor t;
    t.released = info.released;
    t.is_output = info.is_output;
    t.saved_version = info.saved_version;
    t.version = info.version;
    if (info.defined) {
      t.meta.sizes = to_vector(info.sizes);
      t.meta.strides = to_vector(info.strides);
      t.meta.dtype = info.dtype;
      t.meta.device = info.device;
    }
    n.saved.push_back(std::move(t));
  }
  // A saved output is the output itself: the only place an inner node's strides survive.
  if (node.num_inputs() == 1)
    for (const SavedTensor& t : n.saved)
      if (t.is_output && t.meta.known()) n.output = t.meta;
  ids_[n.sequence_nr] = n.id;
  s_.nodes.push_back(std::move(n));
  expanded_.push_back(false);
  return static_cast<int>(s_.nodes.size()) - 1;
}

int GraphReader::add_leaf(const Tensor& leaf) {
  GraphNode n;
  n.id = static_cast<int>(s_.nodes.size());
  n.kind = NodeKind::Leaf;
  n.name = "AccumulateGrad";
  n.output = meta_of(leaf);
  leaves_[n.id] = leaf.impl_ptr();
  s_.nodes.push_back(std::move(n));
  expanded_.push_back(true);
  return static_cast<int>(s_.nodes.size()) - 1;
}

std::vector<const autograd::Node*> GraphReader::expand(const autograd::Node& node) {
  int to = add(node);
  std::vector<const autograd::Node*> fresh;
  if (expanded_[to]) return fresh;
  expanded_[to] = true;
  const auto* formula = dynamic_cast<const autograd::FormulaNode*>(&node);
  const auto* custom = dynamic_cast<const autograd::CustomNode*>(&node);
  const std::vector<autograd::Edge>& edges = node.next_edges();
  for (size_t i = 0; i < edges.size(); ++i) {
    if (!edges[i].is_valid()) continue;
    size_t before = s_.nodes.size();
    int from = add(*edges[i].function);
    if (s_.nodes.size() > before) fresh.push_back(edges[i].function.get());
    GraphEdge e;
    e.from = from;
    e.to = to;
    e.input_nr = static_cast<uint32_t>(i);
    e.output_nr = edges[i].input_nr;
    // What the consumer recorded about this input: its shape and dtype (a FormulaNode
    // reduces the gradient to them), or only its shape (a custom function).
    if (formula != nullptr && i < formula->shapes.size()) {
      e.tensor.sizes = to_vector(formula->shapes[i]);
      e.tensor.dtype = formula->dtypes[i];
    } else if (custom != nullptr && i < custom->input_shapes.size()) {
      e.tensor.sizes = to_vector(custom->input_shapes[i]);
    }
    s_.edges.push_back(std::move(e));
  }
  return fresh;
}

// Note [What a node knows about its output]
// Autograd keeps what backward needs, and backward needs the *inputs'* shapes and dtypes
// (to reduce and cast gradients), not the outputs'. So a leaf and the root are read from
// their tensors (everything is known), a node that saved its own output (tanh, exp,
// sigmoid) from that saved tensor, a custom function from its own record (shape and
// dtype), and every other node through the first op that consumed its output: shape and
// dtype, but no strides or device. A node nothing consumed, other than the root, stays
// unknown ("?").
void GraphReader::finish(const Tensor& root, const SnapshotOptions& options) {
  for (const GraphEdge& e : s_.edges) {
    TensorMeta& out = s_.nodes[e.from].output;
    if (e.output_nr == 0 && !out.known()) out = e.tensor;
  }
  // Names: given names first, then parameter names, which win (a checkpoint uses them).
  std::unordered_map<const TensorImpl*, std::string> leaf_names;
  for (const auto& [name, t] : options.names) {
    if (!t.defined()) continue;
    leaf_names[t.unsafeGetTensorImpl()] = name;
    if (t.grad_fn())
      if (int id = find(t.grad_fn()->sequence_nr()); id >= 0) s_.nodes[id].label = name;
  }
  if (options.module != nullptr) {
    for (const auto& [name, t] : options.module->named_parameters())
      if (t.defined()) leaf_names[t.unsafeGetTensorImpl()] = name;
  }
  for (const auto& [id, weak] : leaves_) {
    std::shared_ptr<TensorImpl> impl = weak.lock();
    auto it = impl ? leaf_names.find(impl.get()) : leaf_names.end();
    if (it != leaf_names.end()) s_.nodes[id].label = it->second;
  }
  if (!root.defined() || !root.grad_fn()) return;
  int r = find(root.grad_fn()->sequence_nr());
  if (r < 0) return;
  s_.nodes[r].is_root = true;
  s_.nodes[r].output = meta_of(root);
  if (s_.kind != GraphKind::Forward) return;
  // Forward graphs also hold what the root does not depend on (a value computed for a
  // test, then dropped): mark what it does, walking the edges backwards from the root.
  for (GraphNode& n : s_.nodes) n.reachable = false;
  std::vector<std::vector<int>> inputs(s_.nodes.size());
  for (const GraphEdge& e : s_.edges) inputs[e.to].push_back(e.from);
  std::vector<int> stack = {r};
  s_.nodes[r].reachable = true;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    for (int in : inputs[id])
      if (!s_.nodes[in].reachable) {
        s_.nodes[in].reachable = true;
        stack.push_back(in);
      }
  }
}

}  // namespace detail

// [SECTION] snapshot(): the backward graph behind a tensor ----------------------------------

Snapshot snapshot(const Tensor& root, const SnapshotOptions& options) {
  GLASS_CHECK(root.defined(), "viz::snapshot(): the root tensor is undefined");
  detail::GraphReader reader(GraphKind::Backward);
  const std::shared_ptr<autograd::Node>& fn = root.grad_fn();
  if (fn) {
    // Depth-first with an explicit stack: a 10,000-step loop makes a graph that deep.
    // Each node is expanded once, when first seen, so shared subgraphs cost nothing extra.
    std::vector<const autograd::Node*> stack = {fn.get()};
    reader.add(*fn);
    while (!stack.empty()) {
      const autograd::Node* node = stack.back();
      stack.pop_back();
      for (const autograd::Node* input : reader.expand(*node)) stack.push_back(input);
    }
  } else if (root.requires_grad()) {
    reader.snapshot().nodes[reader.add_leaf(root)].is_root = true;
  }
  reader.finish(root, options);
  Snapshot s = std::move(reader.snapshot());
  if (options.module != nullptr) assign_modules(s, *options.module);
  return s;
}

// [SECTION] Snapshot's queries ---------------------------------------------------------------

const GraphNode* Snapshot::find(const std::string& name_or_label) const {
  for (const GraphNode& n : nodes)
    if (n.name == name_or_label || n.label == name_or_label) return &n;
  return nullptr;
}

int Snapshot::count(NodeKind kind) const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(),
                                        [&](const GraphNode& n) { return n.kind == kind; }));
}

std::vector<int> Snapshot::inputs_of(int id) const {
  std::vector<std::pair<uint32_t, int>> in;
  for (const GraphEdge& e : edges)
    if (e.to == id) in.emplace_back(e.input_nr, e.from);
  std::sort(in.begin(), in.end());
  std::vector<int> out;
  for (const auto& p : in) out.push_back(p.second);
  return out;
}

const ModuleInfo* Snapshot::module_info(const std::string& path) const {
  for (const ModuleInfo& m : modules)
    if (m.path == path) return &m;
  return nullptr;
}

}  // namespace glass::viz
