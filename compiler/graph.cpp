// compiler/graph.cpp — building and printing the graph IR (see graph.h).
#include "compiler/graph.h"

#include <sstream>

namespace glass::compiler {

TensorMeta TensorMeta::of(const Tensor& t) {
  TensorMeta m;
  m.sizes = t.sizes().vec();
  m.strides = t.strides().vec();
  m.dtype = t.dtype();
  m.device = t.device();
  m.requires_grad = t.requires_grad();
  m.storage_offset = t.storage_offset();
  m.has_forward_grad = t.unsafeGetTensorImpl()->has_forward_grad();
  return m;
}

std::vector<int> alias_pattern(const std::vector<Tensor>& tensors) {
  std::vector<int> first(2 * tensors.size(), -1);
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t j = 0; j < i && tensors[i].defined(); ++j) {
      if (!tensors[j].defined()) continue;
      if (first[2 * i] < 0 && tensors[i].is_alias_of(tensors[j]))
        first[2 * i] = static_cast<int>(j);
      if (first[2 * i + 1] < 0 && tensors[i].is_same(tensors[j]))
        first[2 * i + 1] = static_cast<int>(j);
    }
  return first;
}

int Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

std::vector<int> Graph::values_read(const Node& n) {
  std::vector<int> read;
  for (const Arg& a : n.args) {
    if (a.kind == Arg::Kind::Value) read.push_back(a.value);
    if (a.kind == Arg::Kind::ValueList) read.insert(read.end(), a.values.begin(), a.values.end());
  }
  return read;
}

std::vector<std::vector<int>> Graph::uses() const {
  std::vector<std::vector<int>> u(values.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int v : values_read(nodes[i])) u[v].push_back(static_cast<int>(i));
  return u;
}

std::vector<bool> Graph::read_by_nodes() const {
  std::vector<bool> read(values.size(), false);
  for (const Node& n : nodes)
    for (int v : values_read(n)) read[v] = true;
  return read;
}

int Graph::root(int v) const {
  while (true) {
    const Value& value = values[v];
    if (value.written >= 0) {
      v = value.written;
    } else if (value.kind == Value::Kind::NodeOutput && value.node >= 0 &&
               nodes[value.node].op->has_tag(kViewOp) && !nodes[value.node].args.empty() &&
               nodes[value.node].args[0].kind == Arg::Kind::Value) {
      v = nodes[value.node].args[0].value;
    } else {
      return v;
    }
  }
}

void Graph::remove_nodes(const std::vector<bool>& dead) {
  std::vector<Node> kept;
  std::vector<int> new_index(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (dead[i]) continue;
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
  for (Value& v : values)
    if (v.kind == Value::Kind::NodeOutput && v.node >= 0) v.node = new_index[v.node];
}

void Graph::replace_uses(int from, int to) {
  for (Node& n : nodes)
    for (Arg& a : n.args) {
      if (a.kind == Arg::Kind::Value && a.value == from) a.value = to;
      if (a.kind == Arg::Kind::ValueList)
        for (int& v : a.values)
          if (v == from) v = to;
    }
  for (int& v : outputs)
    if (v == from) v = to;
}

std::string value_name(const Graph& g, int v) {
  if (v < 0) return "?";
  const Value& value = g.values[v];
  if (value.kind == Value::Kind::Constant)
    return value.is_wrapped_number ? IValue(value.constant.item()).to_string()
                                   : "const%" + std::to_string(v);
  return "%" + std::to_string(v);
}

namespace {

// Text inside a DOT "..." label: quotes and backslashes escaped.
std::string dot_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string type_of(const TensorMeta& m) {
  std::ostringstream os;
  os << glass::to_string(m.dtype) << IntArrayRef(m.sizes);
  if (!m.device.is_cpu()) os << "@" << m.device;
  return os.str();
}

std::string arg_text(const Graph& g, const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Value: return value_name(g, a.value);
    case Arg::Kind::ValueList: {
      std::string s = "[";
      for (size_t i = 0; i < a.values.size(); ++i)
        s += (i ? ", " : "") + value_name(g, a.values[i]);
      return s + "]";
    }
    case Arg::Kind::Constant: return a.constant.to_string();
  }
  return "?";
}

}  // namespace

std::string Graph::to_string() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs.size(); ++i)
    os << (i ? ", " : "") << value_name(*this, inputs[i]) << " : "
       << type_of(values[inputs[i]].meta);
  os << ")\n";
  for (const Node& n : nodes) {
    os << "  ";
    std::vector<int> shown = n.outputs.empty() ? n.writes : n.outputs;
    for (size_t i = 0; i < shown.size(); ++i) os << (i ? ", " : "") << value_name(*this, shown[i]);
    if (!shown.empty()) os << " = ";
    os << n.op->name() << "(";
    for (size_t i = 0; i < n.args.size(); ++i) os << (i ? ", " : "") << arg_text(*this, n.args[i]);
    os << ")";
    if (!shown.empty()) os << " : " << type_of(values[shown[0]].meta);
    os << "\n";
  }
  os << "  return (";
  for (size_t i = 0; i < outputs.size(); ++i)
    os << (i ? ", " : "") << value_name(*this, outputs[i]);
  os << ")\n";
  return os.str();
}

std::string Graph::dot_name(int v) const {
  const Value& value = values[v];
  if (value.kind == Value::Kind::NodeOutput && value.node >= 0)
    return "n" + std::to_string(value.node);
  return "v" + std::to_string(v);
}

std::string Graph::to_dot(const std::string& title,
                          const std::vector<std::vector<int>>& clusters) const {
  std::ostringstream os;
  os << "digraph \"" << title << "\" {\n  rankdir=TB;\n  node [fontname=\"DejaVu Sans\"];\n";
  for (size_t v = 0; v < values.size(); ++v) {
    const Value& value = values[v];
    if (value.kind == Value::Kind::Input)
      os << "  v" << v << " [shape=box, label=\"input " << value.input << "\\n"
         << type_of(value.meta) << "\"];\n";
    else if (value.kind == Value::Kind::Constant && !value.is_wrapped_number)
      os << "  v" << v << " [shape=box, style=dashed, label=\""
         << (value.folded ? "folded" : "const") << "\\n"
         << type_of(value.meta) << "\"];\n";
  }
  // A node in several clusters (a value fusion recomputes in each reader's kernel) is drawn
  // once, in the first: its label names them all, and it is dashed.
  std::vector<std::vector<size_t>> member_of(nodes.size());
  for (size_t c = 0; c < clusters.size(); ++c)
    for (int n : clusters[c]) member_of[n].push_back(c);
  // Edges run from the node (or input) that made a value to each node that reads it.
  auto source = [&](int v) { return dot_name(v); };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::vector<int> shown = n.outputs.empty() ? n.writes : n.outputs;
    os << "  n" << i << " [label=\"" << n.op->name();
    for (const Arg& a : n.args)
      if (a.kind == Arg::Kind::Constant && !a.constant.is_none())
        os << " " << dot_escaped(a.constant.to_string());
    if (!shown.empty()) os << "\\n" << type_of(values[shown[0]].meta);
    const bool shared = member_of[i].size() > 1;
    if (shared) {
      os << "\\ncomputed in groups";
      for (size_t c : member_of[i]) os << " " << c;
    }
    os << "\"" << (n.mutates() ? ", style=bold" : shared ? ", style=dashed" : "") << "];\n";
    for (int v : values_read(n)) {
      if (values[v].kind == Value::Kind::Constant && values[v].is_wrapped_number) continue;
      os << "  " << source(v) << " -> n" << i << ";\n";
    }
  }
  for (size_t c = 0; c < clusters.size(); ++c) {
    os << "  subgraph cluster_" << c << " {\n    label=\"fused group " << c
       << "\";\n    style=rounded;\n    color=\"#1f77b4\";\n   ";
    for (int n : clusters[c]) os << " n" << n << ";";
    os << "\n  }\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    os << "  out" << i << " [shape=plaintext, label=\"output " << i << "\"];\n  "
       << source(outputs[i]) << " -> out" << i << ";\n";
  os << "}\n";
  return os.str();
}

}  // namespace glass::compiler
