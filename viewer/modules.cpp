// viewer/modules.cpp — module membership (Note [Which module a node belongs to]) and folding.
//
// Index:
//   [SECTION] modules: which module a node belongs to
//   [SECTION] collapse_modules
#include "viewer/modules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "nn/module.h"

namespace glass::viz {

// [SECTION] modules: which module a node belongs to ------------------------------------------

// Note [Which module a node belongs to]
// nn announces each module forward it runs — ModuleHolder::operator() and every Sequential
// step publish ModuleEnter/ModuleExit on core's events (nn::ModuleScope) — so a
// ForwardRecorder knows, for every node whose creation it saw, the module scopes open at
// that moment; the innermost one in the snapshot's module tree is the node's module,
// exactly (LayerNorm's mean and variance too, which touch no parameter). Those nodes are
// passed in `scoped` and kept as they are. A node whose innermost scope is the model
// itself is not: it may have run in the model's own code or in a child the model called
// as impl->forward(), which announces no scope. It, and everything else, is inferred from
// what the graph does record — which leaves are which module's parameters: also a
// backward snapshot (no events were heard) and custom functions' nodes (they publish no
// GraphNodeCreated). With P(M) the parameters
// registered directly in module M ("fc1.weight" is fc1's):
//   1. a parameter leaf belongs to its module;
//   2. a node whose inputs are all M's — every input has an edge, and each comes from a
//      P(M) leaf or a rule-2 node of M — prepares M's parameters and belongs to M
//      (TBackward0 for weight.t());
//   3. a node that reads at least one of M's parameters or rule-2 nodes is where M's
//      parameters meet the data, and belongs to M (a Linear's AddmmBackward0). Its
//      consumers are not M's: they read data, not parameters;
//   4. a node still outside every module that lies on a path from one node of M (or of
//      a module inside M) to another is M's own computation between its parts, and
//      belongs to M (the ReLU inside a Sequential, between its Linears). Modules are
//      taken deepest first, so the node joins the innermost module it lies within.
// A node that reads two modules' parameters (a shared weight, a sum of two modules'
// weights) belongs to their nearest common ancestor ("" = none). Rule 2 demands an edge
// for every input because an input that needs no gradient (the batch, in the first layer)
// has none: a first Linear's addmm would otherwise look parameters-only and claim the
// ReLU after it. Rule 4 is also what keeps a folded module from drawing a cycle (its
// output leaving the box and coming back in) unless another module runs in between.
// What inference cannot see is a module's ops that touch no parameter and do not lie
// between its parameterised parts: a parameter-free module at the top level (the MLP's
// ReLUs, which its own forward calls, stay outside just as its code says) or the ops
// before the parameters are used (LayerNorm's mean and variance; F::linear's reshape of a
// 3-D input). They stay outside, so every membership drawn is true; a forward recording
// places them exactly.
namespace {

std::string parent_path(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

// The nearest module containing both (dotted paths; "" is the model itself).
std::string common_ancestor(const std::string& a, const std::string& b) {
  std::string x = a;
  while (!x.empty() && !(b == x || b.rfind(x + ".", 0) == 0)) x = parent_path(x);
  return x;
}

}  // namespace

void assign_modules(Snapshot& s, nn::Module& module,
                    const std::vector<std::optional<std::string>>& scoped) {
  s.modules.clear();
  for (const auto& [path, m] : module.named_modules())
    if (!path.empty()) s.modules.push_back({path, m->name()});
  std::unordered_map<std::string, std::string> owner;  // parameter name -> module path
  for (const auto& [name, t] : module.named_parameters()) owner[name] = parent_path(name);
  auto exact = [&](int id) {
    return id < static_cast<int>(scoped.size()) && scoped[id].has_value();
  };
  // Scopes, then rule 1. The model's own parameters ("" path) mark nothing: "" means no
  // module.
  for (GraphNode& n : s.nodes) {
    n.module.clear();
    if (exact(n.id))
      n.module = *scoped[n.id];
    else if (n.kind == NodeKind::Leaf && owner.count(n.label))
      n.module = owner[n.label];
  }
  std::vector<std::vector<const GraphEdge*>> in(s.nodes.size());
  for (const GraphEdge& e : s.edges) in[e.to].push_back(&e);
  // Inputs are created before the ops that read them, so sequence order is topological.
  std::vector<int> order;
  for (const GraphNode& n : s.nodes)
    if (n.kind == NodeKind::Op) order.push_back(n.id);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return s.nodes[a].sequence_nr < s.nodes[b].sequence_nr; });
  std::vector<bool> param_side(s.nodes.size(), false);  // a leaf of P(M) or a rule-2 node
  for (const GraphNode& n : s.nodes)
    param_side[n.id] = n.kind == NodeKind::Leaf && !n.module.empty();
  for (int id : order) {
    GraphNode& n = s.nodes[id];
    std::set<std::string> claims;
    bool all_param_side = !in[id].empty() && in[id].size() == n.num_inputs;
    for (const GraphEdge* e : in[id]) {
      const GraphNode& from = s.nodes[e->from];
      if (param_side[from.id])
        claims.insert(from.module);
      else
        all_param_side = false;
    }
    if (claims.empty()) continue;
    std::string m = *claims.begin();
    for (const std::string& c : claims) m = common_ancestor(m, c);
    // A scoped node keeps its module; it still prepares M's parameters (rule 2) for the
    // inferred nodes downstream when its scope agrees.
    if (exact(id) && n.module != m) continue;
    n.module = m;
    param_side[id] = all_param_side && claims.size() == 1 && !m.empty();  // rule 2
  }
  // Rule 4, deepest module first: what lies downstream of M's nodes and upstream of them.
  std::vector<std::vector<int>> out(s.nodes.size());
  for (const GraphEdge& e : s.edges) out[e.from].push_back(e.to);
  std::set<std::string> paths;
  for (const GraphNode& n : s.nodes)
    for (std::string p = n.module; !p.empty(); p = parent_path(p)) paths.insert(p);
  std::vector<std::string> deepest_first(paths.begin(), paths.end());
  auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '.'); };
  std::stable_sort(deepest_first.begin(), deepest_first.end(),
                   [&](const std::string& a, const std::string& b) { return depth(a) > depth(b); });
  for (const std::string& m : deepest_first) {
    auto inside = [&](const std::string& p) { return p == m || p.rfind(m + ".", 0) == 0; };
    auto reach = [&](bool downstream) {
      std::vector<bool> seen(s.nodes.size(), false);
      std::vector<int> stack;
      for (const GraphNode& n : s.nodes)
        if (inside(n.module)) stack.push_back(n.id);
      while (!stack.empty()) {
        int id = stack.back();
        stack.pop_back();
        if (downstream) {
          for (int next : out[id])
            if (!seen[next]) seen[next] = true, stack.push_back(next);
        } else {
          for (const GraphEdge* e : in[id])
            if (!seen[e->from]) seen[e->from] = true, stack.push_back(e->from);
        }
      }
      return seen;
    };
    std::vector<bool> down = reach(true), up = reach(false);
    for (GraphNode& n : s.nodes) {
      bool outer = n.module.empty() || m.rfind(n.module + ".", 0) == 0;  // none, or an ancestor
      if (n.kind == NodeKind::Op && !exact(n.id) && down[n.id] && up[n.id] && outer &&
          !inside(n.module))
        n.module = m;
    }
  }
}

// [SECTION] collapse_modules ---------------------------------------------------------------

Snapshot collapse_modules(const Snapshot& s, const std::set<std::string>& expanded) {
  // Where a node goes: the outermost module on its path that is not expanded, or itself.
  auto target = [&](const GraphNode& n) -> std::string {
    if (n.module.empty()) return {};
    size_t start = 0;
    while (true) {
      size_t dot = n.module.find('.', start);
      std::string prefix = n.module.substr(0, dot);
      if (!expanded.count(prefix)) return prefix;
      if (dot == std::string::npos) return {};
      start = dot + 1;
    }
  };
  Snapshot out;
  out.kind = s.kind;
  out.modules = s.modules;
  std::vector<int> new_id(s.nodes.size(), -1);
  std::map<std::string, int> group;  // module path -> folded node's id
  for (const GraphNode& n : s.nodes) {
    std::string t = target(n);
    if (t.empty()) {
      GraphNode copy = n;
      copy.id = static_cast<int>(out.nodes.size());
      new_id[n.id] = copy.id;
      out.nodes.push_back(std::move(copy));
      continue;
    }
    auto [it, is_new] = group.try_emplace(t, static_cast<int>(out.nodes.size()));
    if (is_new) {
      GraphNode m;
      m.id = it->second;
      m.kind = NodeKind::Module;
      m.label = t;
      const ModuleInfo* info = s.module_info(t);
      m.name = info ? info->type : std::string("Module");
      m.module = parent_path(t);
      m.sequence_nr = n.sequence_nr;
      m.reachable = false;
      out.nodes.push_back(std::move(m));
    }
    GraphNode& m = out.nodes[it->second];
    m.members.push_back(n.id);
    m.sequence_nr = std::max(m.sequence_nr, n.sequence_nr);
    m.is_root = m.is_root || n.is_root;
    m.reachable = m.reachable || n.reachable;
    new_id[n.id] = it->second;
  }
  // A folded module's output is its member whose output leaves it (the latest, if several),
  // or its root member.
  std::vector<int> exit(out.nodes.size(), -1);
  auto consider = [&](int folded, int member) {
    if (exit[folded] < 0 || s.nodes[member].sequence_nr > s.nodes[exit[folded]].sequence_nr)
      exit[folded] = member;
  };
  for (const GraphEdge& e : s.edges)
    if (out.nodes[new_id[e.from]].kind == NodeKind::Module && new_id[e.from] != new_id[e.to])
      consider(new_id[e.from], e.from);
  for (const GraphNode& n : s.nodes)
    if (n.is_root && out.nodes[new_id[n.id]].kind == NodeKind::Module) consider(new_id[n.id], n.id);
  for (GraphNode& m : out.nodes) {
    if (m.kind != NodeKind::Module || m.members.empty()) continue;
    int e = exit[m.id] >= 0 ? exit[m.id] : m.members.back();
    m.output = s.nodes[e].output;
    m.grad = s.nodes[e].grad;
  }
  // Edges: those inside one folded module vanish; one tensor entering a folded module at
  // several of its ops is drawn once.
  std::set<std::tuple<int, uint32_t, int>> into_module;
  for (const GraphEdge& e : s.edges) {
    GraphEdge f = e;
    f.from = new_id[e.from];
    f.to = new_id[e.to];
    if (f.from == f.to) continue;
    if (out.nodes[f.to].kind == NodeKind::Module &&
        !into_module.insert({f.from, f.output_nr, f.to}).second)
      continue;
    out.edges.push_back(std::move(f));
  }
  out.ops = s.ops;
  for (OpRecord& op : out.ops)
    if (op.node >= 0) op.node = new_id[op.node];
  return out;
}

}  // namespace glass::viz
