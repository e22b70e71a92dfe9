// compiler/passes.cpp — dead code, CSE, constant folding and fusion (see passes.h).
#include "compiler/passes.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "compiler/cuda_pointwise.h"
#include "compiler/replay.h"
#include "core/error.h"
#include "core/ops/views.h"

namespace glass::compiler {
namespace {

bool is_input_or_outside(const Graph& g, int v) {
  const Value& value = g.values[v];
  return value.kind == Value::Kind::Input ||
         (value.kind == Value::Kind::Constant && !value.folded && !value.is_wrapped_number);
}

}  // namespace

int eliminate_dead_code(Graph& g) {
  // Backwards: a node lives when a later live node or the outputs read one of its results,
  // or when it writes into storage that something later reads or that outlives the call.
  std::set<int> live_values(g.outputs.begin(), g.outputs.end());
  std::set<int> live_roots;
  for (int v : g.outputs) live_roots.insert(g.root(v));
  std::vector<bool> dead(g.nodes.size(), false);
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    // A draw advances its generator: removing one would change every later draw.
    bool live = n.op->has_tag(kRandomOp);
    for (int v : n.outputs) live |= live_values.count(v) > 0;
    for (int w : n.writes) {
      int r = g.root(w);
      live |= live_values.count(w) > 0 || live_roots.count(r) > 0 || is_input_or_outside(g, r);
    }
    if (!live) {
      dead[i] = true;
      continue;
    }
    for (int v : Graph::values_read(n)) {
      live_values.insert(v);
      live_roots.insert(g.root(v));
    }
  }
  int removed = static_cast<int>(std::count(dead.begin(), dead.end(), true));
  if (removed > 0) g.remove_nodes(dead);
  return removed;
}

namespace {

// A key that is equal exactly when two arguments are: numbers in hex, so 0.1 and
// 0.1000001 differ.
std::string constant_key(const IValue& v) {
  std::ostringstream os;
  os << v.type_name() << ":";
  if (v.holds<Scalar>()) {
    const Scalar& s = v.get<Scalar>();
    if (s.is_floating_point())
      os << std::hexfloat << s.toDouble();
    else
      os << s;
  } else if (v.holds<double>()) {
    os << std::hexfloat << v.get<double>();
  } else if (v.holds<Generator>()) {
    os << "gen@" << &v;  // never equal: a generator's draws differ
  } else {
    os << v.to_string();
  }
  return os.str();
}

std::string node_key(const Graph& g, const Node& n) {
  std::ostringstream os;
  os << n.op->name() << "@" << static_cast<const void*>(n.op) << (n.grad_enabled ? "+" : "-");
  for (const Arg& a : n.args) {
    os << "|";
    if (a.kind == Arg::Kind::Value) {
      const Value& v = g.values[a.value];
      // Two wrapped numbers of one value are one argument.
      if (v.kind == Value::Kind::Constant && v.is_wrapped_number)
        os << "n" << constant_key(IValue(v.constant.item())) << to_string(v.meta.dtype);
      else
        os << "v" << a.value;
    } else if (a.kind == Arg::Kind::ValueList) {
      os << "[";
      for (int v : a.values) os << v << ",";
      os << "]";
    } else {
      os << constant_key(a.constant);
    }
  }
  return os.str();
}

}  // namespace

int eliminate_common_subexpressions(Graph& g) {
  std::set<int> written_roots, returned_roots;
  for (const Node& n : g.nodes)
    for (int w : n.writes) written_roots.insert(g.root(w));
  for (int v : g.outputs) returned_roots.insert(g.root(v));
  std::map<std::string, int> seen;  // key -> the first node
  int merged = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.mutates()) {
      seen.clear();  // a write may change what any earlier value's storage holds
      continue;
    }
    if (n.op->has_tag(kRandomOp) || n.op->has_tag(kFactoryOp) || n.outputs.empty()) continue;
    bool result_written = false, returned = false;
    for (int v : n.outputs) {
      result_written |= written_roots.count(g.root(v)) > 0;
      // Two results the function returns (or views of them) are two tensors, even when equal.
      returned |= returned_roots.count(g.root(v)) > 0;
    }
    if (result_written || returned) continue;
    auto [it, inserted] = seen.emplace(node_key(g, n), static_cast<int>(i));
    if (inserted) continue;
    const Node& first = g.nodes[it->second];
    for (size_t k = 0; k < n.outputs.size(); ++k) g.replace_uses(n.outputs[k], first.outputs[k]);
    ++merged;
  }
  if (merged > 0) eliminate_dead_code(g);
  return merged;
}

int bypass_detaches(Graph& g) {
  for (const Node& n : g.nodes)
    if (n.mutates()) return 0;
  const std::set<int> returned(g.outputs.begin(), g.outputs.end());
  int bypassed = 0;
  for (const Node& n : g.nodes) {
    if (n.op != &ops::detach || n.outputs.size() != 1 || returned.count(n.outputs[0])) continue;
    g.replace_uses(n.outputs[0], n.args[0].value);
    ++bypassed;
  }
  if (bypassed > 0) eliminate_dead_code(g);
  return bypassed;
}

int fold_constants(Graph& g) {
  const size_t n_nodes = g.nodes.size();
  std::vector<bool> blocked(n_nodes, false), foldable(n_nodes, false);
  auto folded_value = [&](int v) {
    const Value& value = g.values[v];
    if (value.kind == Value::Kind::Constant) return value.is_wrapped_number || value.folded;
    return value.kind == Value::Kind::NodeOutput && value.node >= 0 && foldable[value.node];
  };
  // Unfolds the node that made v and, through views and writes, the tensor v's storage is.
  // Returns whether it blocked anything (so the loop below ends once nothing changes).
  auto unfold = [&](int v, auto&& self) -> bool {
    const Value& value = g.values[v];
    if (value.kind != Value::Kind::NodeOutput || value.node < 0 || blocked[value.node])
      return false;
    blocked[value.node] = true;
    foldable[value.node] = false;
    const Node& n = g.nodes[value.node];
    if (value.written >= 0) self(value.written, self);
    if (n.op->has_tag(kViewOp) && n.args[0].kind == Arg::Kind::Value) self(n.args[0].value, self);
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n_nodes; ++i) {
      const Node& n = g.nodes[i];
      bool ok = !blocked[i] && !n.op->has_tag(kRandomOp) && !n.op->has_tag(kReadsValueOp);
      for (int v : Graph::values_read(n)) ok = ok && folded_value(v);
      for (int v : n.outputs) ok = ok && !g.values[v].meta.requires_grad;
      foldable[i] = ok;
    }
    // A write that stays (not folded) into folded storage would change the constant.
    for (size_t i = 0; i < n_nodes; ++i) {
      if (foldable[i]) continue;
      for (int w : g.nodes[i].writes) {
        int before = g.values[w].written;
        if (folded_value(before)) changed = unfold(before, unfold) || changed;
      }
    }
    // A folded write changes its storage once, at compile time: a node that stays and reads
    // that storage (before or after the write) would see only the final contents.
    std::set<int> read_roots;
    for (size_t i = 0; i < n_nodes; ++i)
      if (!foldable[i])
        for (int v : Graph::values_read(g.nodes[i])) read_roots.insert(g.root(v));
    for (size_t i = 0; i < n_nodes; ++i) {
      if (!foldable[i] || blocked[i]) continue;
      for (int w : g.nodes[i].writes)
        if (read_roots.count(g.root(w))) changed = unfold(w, unfold) || changed;
    }
    // What the function returns is made at each call: the caller owns it (and two results
    // that alias each other still do).
    for (int v : g.outputs)
      if (g.values[v].kind == Value::Kind::NodeOutput && folded_value(v))
        changed = unfold(v, unfold) || changed;
  }
  // Evaluate the folded nodes in order, then turn what the rest reads into constants.
  std::vector<Tensor> env(g.values.size());
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < n_nodes; ++i)
      if (foldable[i]) run_node(g, g.nodes[i], env);
  }
  std::set<int> needed(g.outputs.begin(), g.outputs.end());
  for (size_t i = 0; i < n_nodes; ++i)
    if (!foldable[i])
      for (int v : Graph::values_read(g.nodes[i])) needed.insert(v);
  int removed = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    if (!foldable[i]) continue;
    ++removed;
    std::vector<int> made = g.nodes[i].outputs;
    made.insert(made.end(), g.nodes[i].writes.begin(), g.nodes[i].writes.end());
    for (int v : made) {
      if (!needed.count(v)) continue;
      Value& value = g.values[v];
      value.kind = Value::Kind::Constant;
      value.constant = env[v];
      value.folded = true;
      value.node = -1;
    }
  }
  if (removed > 0) {
    std::vector<bool> dead(foldable.begin(), foldable.end());
    // Values keep `written` for root(); folded ones no longer have a node to look at.
    for (Value& v : g.values)
      if (v.folded) v.written = -1;
    g.remove_nodes(dead);
  }
  return removed;
}

// ---- fusion -----------------------------------------------------------------------------

namespace {

enum class PointwiseKind { None, Unary, Binary, Clamp, Where, Reduce };

// find_fusion_groups(recompute): a value read by more nodes than this is loaded, not
// recomputed in each reader's kernel.
constexpr size_t kMaxRecomputedReaders = 4;

PointwiseKind kind_of(const Node& n) {
  if (n.mutates()) return PointwiseKind::None;
  const char* name = n.op->name();
  if (!std::strcmp(name, "unary")) return PointwiseKind::Unary;
  if (!std::strcmp(name, "binary")) return PointwiseKind::Binary;
  if (!std::strcmp(name, "clamp")) return PointwiseKind::Clamp;
  if (!std::strcmp(name, "where")) return PointwiseKind::Where;
  if (!std::strcmp(name, "reduce")) return PointwiseKind::Reduce;
  return PointwiseKind::None;
}

// Whether node n may join a group whose kernel runs on `device` (the root's): every tensor it
// reads and writes is on that device (a number in the op, x * 0.5, is a literal of the
// kernel), and it needs no gradient or tangent, since a fused kernel computes values only.
// A CPU kernel or a CUDA one; a reduction ends only a CPU group (on CUDA, eager's reduce
// kernel runs it).
bool fusable_on(const Graph& g, const Node& n, Device device, bool forward_without_grad) {
  if (!device.is_cpu() && !device.is_cuda()) return false;
  if (device.is_cuda() && kind_of(n) == PointwiseKind::Reduce) return false;
  for (int v : Graph::values_read(n)) {
    const Value& value = g.values[v];
    if (value.kind == Value::Kind::Constant && value.is_wrapped_number) continue;
    const TensorMeta& m = value.meta;
    if (m.device != device || m.has_forward_grad) return false;
    // Under one autograd node (autograd_node.h) the forward runs with grad mode off.
    if (m.requires_grad && n.grad_enabled && !forward_without_grad) return false;
  }
  for (int v : n.outputs)
    if (g.values[v].meta.device != device) return false;
  return true;
}

// The group's program, or nothing when a member is outside what PointwiseProgram writes.
std::optional<FusionGroup> build_group(const Graph& g, std::vector<int> members, Device device) {
  std::sort(members.begin(), members.end());
  FusionGroup group;
  group.device = device;
  group.nodes = members;
  PointwiseProgram& p = group.program;
  std::map<int, int> step_of;  // value -> program step
  auto operand = [&](int v) {
    if (auto it = step_of.find(v); it != step_of.end()) return it->second;
    const Value& value = g.values[v];
    if (value.kind == Value::Kind::Constant && value.is_wrapped_number)
      return step_of[v] = p.scalar(value.constant.item());
    int index = static_cast<int>(group.inputs.size());
    group.inputs.push_back(v);
    return step_of[v] = p.input(index, value.meta.dtype, value.meta.sizes.empty());
  };
  try {
    for (int m : members) {
      const Node& n = g.nodes[m];
      const auto& a = n.args;
      int step = -1;
      switch (kind_of(n)) {
        case PointwiseKind::Unary:
          step = p.unary(a[0].constant.get<UnaryOp>(), operand(a[1].value));
          break;
        case PointwiseKind::Binary: {
          // Operands in argument order (a function call's arguments have none), so the
          // program's inputs are numbered as the op reads them.
          int x = operand(a[1].value);
          int y = operand(a[2].value);
          step = p.binary(a[0].constant.get<BinaryOp>(), x, y);
          break;
        }
        case PointwiseKind::Clamp: {
          auto bound = [](const Arg& b) -> std::optional<Scalar> {
            if (b.constant.is_none()) return std::nullopt;
            return b.constant.get<Scalar>();
          };
          step = p.clamp(operand(a[0].value), bound(a[1]), bound(a[2]));
          break;
        }
        case PointwiseKind::Where: {
          int c = operand(a[0].value);
          int x = operand(a[1].value);
          int y = operand(a[2].value);
          step = p.where(c, x, y);
          break;
        }
        case PointwiseKind::Reduce: {
          if (m != members.back() || !a[4].constant.is_none()) return std::nullopt;
          p.set_output(operand(a[1].value));
          p.reduce(a[0].constant.get<ReduceOp>(), a[2].constant.get<std::vector<int64_t>>(),
                   a[3].constant.get<bool>());
          break;
        }
        case PointwiseKind::None: return std::nullopt;
      }
      if (step >= 0) step_of[n.outputs[0]] = step;
    }
    group.output = g.nodes[members.back()].outputs[0];
    if (kind_of(g.nodes[members.back()]) != PointwiseKind::Reduce)
      p.set_output(step_of.at(group.output));
    // The program must give the value the trace saw: the same dtype.
    if (p.output_dtype() != g.values[group.output].meta.dtype) return std::nullopt;
    if (device.is_cuda()) emit_cuda({p});  // an op with no device functor throws here
  } catch (const Error&) {
    return std::nullopt;  // e.g. a dtype the generated code does not handle
  }
  return group;
}

}  // namespace

namespace {

// Whether node n's result must be in memory: the caller gets it, a group's kernel loads it,
// or a node that runs on its own reads it (`alone`, decided for every later node). Otherwise
// it lives only inside the kernels of the groups that compute it.
bool materialized(const Graph& g, int n, const std::vector<std::vector<int>>& uses,
                  const std::set<int>& loaded, const std::vector<bool>& alone) {
  for (int v : g.nodes[n].outputs) {
    if (loaded.count(v)) return true;
    if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) return true;
    for (int u : uses[v])
      if (alone[u]) return true;
  }
  return false;
}

}  // namespace

std::vector<bool> nodes_run_alone(const Graph& g, const std::vector<FusionGroup>& groups) {
  const int n_nodes = static_cast<int>(g.nodes.size());
  std::vector<bool> member(n_nodes, false), root(n_nodes, false), alone(n_nodes, false);
  std::set<int> loaded;
  for (const FusionGroup& group : groups) {
    for (int n : group.nodes) member[n] = true;
    root[group.nodes.back()] = true;
    loaded.insert(group.inputs.begin(), group.inputs.end());
  }
  const std::vector<std::vector<int>> uses = g.uses();
  for (int n = n_nodes - 1; n >= 0; --n)  // readers come after what they read
    alone[n] = !root[n] && (!member[n] || materialized(g, n, uses, loaded, alone));
  return alone;
}

std::vector<FusionGroup> find_fusion_groups(const Graph& g, bool forward_without_grad,
                                            bool recompute) {
  const int n_nodes = static_cast<int>(g.nodes.size());
  std::vector<int> segment(n_nodes);  // how many writes come before each node
  for (int i = 0, writes = 0; i < n_nodes; ++i) {
    segment[i] = writes;
    writes += g.nodes[i].mutates() ? 1 : 0;
  }
  std::vector<std::vector<int>> uses = g.uses();
  std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  // Decided from the last node back, as nodes_run_alone decides them: every reader of a node
  // is settled before the node is.
  std::vector<bool> member(n_nodes, false), alone(n_nodes, false);
  std::set<int> loaded;  // the values some group's kernel reads from memory
  std::vector<FusionGroup> groups;
  for (int r = n_nodes - 1; r >= 0; --r) {
    const Node& rn = g.nodes[r];
    // A member already computed inside the kernels of all its readers needs nothing more.
    if (member[r] && !materialized(g, r, uses, loaded, alone)) continue;
    alone[r] = true;  // unless it becomes a group's root below
    if (kind_of(rn) == PointwiseKind::None || rn.outputs.empty()) continue;
    const Device device = g.values[rn.outputs[0]].meta.device;
    if (!fusable_on(g, rn, device, forward_without_grad)) continue;
    std::set<int> members{r};
    // Pull in producers whose every reader is already in the group (or, with `recompute`, a
    // value a few nodes read, computed again here), until none is left.
    for (bool grew = true; grew;) {
      grew = false;
      for (int m : std::vector<int>(members.begin(), members.end())) {
        for (int v : Graph::values_read(g.nodes[m])) {
          const Value& value = g.values[v];
          if (value.kind != Value::Kind::NodeOutput || value.node < 0 || value.written >= 0)
            continue;
          int p = value.node;
          // (No root can be pulled: every root so far comes after r. Without `recompute`,
          // groups stay disjoint by the every-reader-inside rule below.)
          if (members.count(p) || outputs.count(v) || segment[p] != segment[r]) continue;
          const Node& producer = g.nodes[p];
          PointwiseKind k = kind_of(producer);
          if (k == PointwiseKind::None || k == PointwiseKind::Reduce ||
              !fusable_on(g, producer, device, forward_without_grad))
            continue;
          bool all_inside = true, loaded_anyway = false;
          for (int u : uses[v]) {
            all_inside &= members.count(u) > 0;
            // A reader no kernel can hold (a view, a matmul, a reduction on CUDA) loads the
            // value from memory: then every kernel may as well load it.
            const Node& reader = g.nodes[u];
            loaded_anyway |= kind_of(reader) == PointwiseKind::None ||
                             !fusable_on(g, reader, device, forward_without_grad);
          }
          if (!all_inside &&
              (!recompute || loaded_anyway || uses[v].size() > kMaxRecomputedReaders))
            continue;
          members.insert(p);
          grew = true;
        }
      }
    }
    if (members.size() < 2) continue;
    std::optional<FusionGroup> group = build_group(g, {members.begin(), members.end()}, device);
    if (!group) continue;
    for (int m : members) member[m] = true;
    alone[r] = false;
    loaded.insert(group->inputs.begin(), group->inputs.end());
    groups.push_back(std::move(*group));
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

}  // namespace glass::compiler
