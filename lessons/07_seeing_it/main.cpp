// lessons/07_seeing_it/main.cpp — lesson 07 as a program: the viewer, headless, on the
// earlier lessons' examples. It takes a snapshot of lesson 04's tanh_mlp (nodes, edges,
// saved tensors, the gradient each node received), records lesson 01's if_else forward
// (what ran against what the result depends on), folds lesson 06's MLP into one box per
// module, walks a 3x4 tensor through a transpose and a slice in the stride lab, and ends
// with the DOT text the renderers start from. Everything the app draws comes from these
// calls; the app only adds pixels.
//
// The lesson_07_output test runs this program and compares its stdout with the blocks
// quoted in README.md. Gradient norms are printed to 3 significant digits, so the text is
// the same on every CPU.
#include <glass/glass.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "viewer/app/stride.h"
#include "viewer/demos.h"
#include "viewer/dot.h"
#include "viewer/modules.h"
#include "viewer/snapshot.h"

namespace {

namespace viz = glass::viz;

const char* kind_name(viz::NodeKind k) {
  switch (k) {
    case viz::NodeKind::Op: return "op";
    case viz::NodeKind::Leaf: return "leaf";
    case viz::NodeKind::Module: return "module";
  }
  return "?";
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string list(const std::vector<int64_t>& v) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
  o << "]";
  return o.str();
}

std::string list(glass::IntArrayRef v) { return list(std::vector<int64_t>(v.begin(), v.end())); }

std::string node_text(const viz::GraphNode& n) {
  return n.label.empty() ? n.name : n.name + "(" + n.label + ")";
}

// [SECTION] 1. a snapshot -------------------------------------------------------------------

void section_snapshot() {
  std::cout << "== 1. a snapshot of lesson 04's tanh_mlp ==\n";
  viz::Snapshot s = viz::capture(viz::find_demo("tanh_mlp"));
  std::cout << "L = sum(tanh(x * w + b)): " << s.nodes.size() << " nodes ("
            << s.count(viz::NodeKind::Op) << " ops, " << s.count(viz::NodeKind::Leaf)
            << " leaves), " << s.edges.size() << " edges\n";
  std::cout << "id  kind  node                output          saved  |g| received\n";
  for (const viz::GraphNode& n : s.nodes) {
    std::cout << pad(std::to_string(n.id), 4) << pad(kind_name(n.kind), 6)
              << pad(node_text(n) + (n.is_root ? " *" : ""), 20) << pad(to_string(n.output), 16)
              << pad(std::to_string(n.saved.size()), 7)
              << (n.grad ? g3(n.grad->norm) : std::string("-")) << "\n";
  }
  std::cout << "edges, in data-flow order (from is an input of to):\n";
  for (const viz::GraphEdge& e : s.edges)
    std::cout << "  " << pad(node_text(s.nodes[e.from]), 18) << " -> "
              << pad(node_text(s.nodes[e.to]), 14) << " input " << e.input_nr << "  "
              << to_string(e.tensor) << "\n";
  std::cout << "saved tensors:\n";
  for (const viz::GraphNode& n : s.nodes)
    for (const viz::SavedTensor& t : n.saved)
      std::cout << "  " << pad(n.name, 14) << " " << pad(to_string(t.meta), 14)
                << (t.is_output ? " its own output" : " an input") << ", version "
                << t.saved_version << (t.version_check_fails() ? " (stale)" : "") << "\n";
}

// [SECTION] 2. what ran against what the result depends on ----------------------------------

void section_forward() {
  std::cout << "== 2. the forward record of lesson 01's if_else ==\n";
  viz::Snapshot f = viz::capture(viz::find_demo("if_else"), {.forward = true, .gradients = false});
  std::cout << "x = [1, 2]: x.sum() > 0, so y = (x * x).sum()\n";
  std::cout << "ops dispatched, in order:\n";
  for (const viz::OpRecord& r : f.ops)
    std::cout << "  " << pad(r.op, 13) << " entry " << pad(r.entry, 13) << " key " << pad(r.key, 9)
              << " node " << (r.node >= 0 ? node_text(f.nodes[r.node]) : std::string("none"))
              << "\n";
  std::cout << "nodes, and whether y depends on them:\n";
  int dead = 0;
  for (const viz::GraphNode& n : f.nodes) {
    std::cout << "  " << pad(node_text(n) + (n.is_root ? " *" : ""), 18)
              << (n.reachable ? "yes" : "no: ran, but y does not read it") << "\n";
    dead += n.reachable ? 0 : 1;
  }
  viz::Snapshot b = viz::capture(viz::find_demo("if_else"), {.gradients = false});
  std::cout << "forward record: " << f.nodes.size() << " nodes, " << dead
            << " unreachable; backward graph from y: " << b.nodes.size() << " nodes\n";
}

// [SECTION] 3. folding modules --------------------------------------------------------------

void section_modules() {
  std::cout << "== 3. lesson 06's MLP, one box per module ==\n";
  viz::Snapshot s = viz::capture(viz::find_demo("mlp"), {.gradients = false});
  std::cout << "modules:";
  for (const viz::ModuleInfo& m : s.modules)
    std::cout << " " << (m.path.empty() ? "(root)" : m.path) << ":" << m.type;
  std::cout << "\n";
  std::cout << "full graph: " << s.nodes.size() << " nodes, " << s.edges.size() << " edges\n";
  viz::Snapshot c = viz::collapse_modules(s);
  std::cout << "collapse_modules(s): " << c.nodes.size() << " nodes, " << c.edges.size()
            << " edges\n";
  for (const viz::GraphNode& n : c.nodes) {
    std::cout << "  " << pad(kind_name(n.kind), 7) << pad(node_text(n), 26);
    if (n.kind != viz::NodeKind::Module) {
      std::cout << to_string(n.output);
    } else {
      std::cout << pad(to_string(n.output), 20) << "stands for";
      for (int m : n.members) std::cout << " " << node_text(s.nodes[m]);
    }
    std::cout << "\n";
  }
  viz::Snapshot e = viz::collapse_modules(s, {"fc1"});
  std::cout << "collapse_modules(s, {\"fc1\"}): " << e.nodes.size() << " nodes (fc1 open)\n";
}

// [SECTION] 4. the stride lab ---------------------------------------------------------------

void print_cells(const viz::app::StrideLab& lab, const std::vector<std::vector<int64_t>>& cells) {
  for (const auto& idx : cells)
    std::cout << "  " << pad(list(idx), 8) << " -> storage " << pad(lab.formula(idx), 22)
              << " value " << lab.view().select(0, idx[0]).select(0, idx[1]).item<int64_t>()
              << "\n";
}

void print_view(const viz::app::StrideLab& lab) {
  const glass::Tensor& v = lab.view();
  std::string note = lab.contiguous_note();
  std::cout << lab.expression() << ": sizes " << list(v.sizes()) << ", strides "
            << list(v.strides()) << ", offset " << v.storage_offset() << ", contiguous() "
            << (note.empty() ? "returns the view" : "copies") << "\n";
}

void section_strides() {
  std::cout << "== 4. the stride lab: a 3x4 tensor, transposed and sliced ==\n";
  viz::app::StrideLab lab;
  lab.reset(glass::arange(12).view({3, 4}), "a");
  print_view(lab);
  print_cells(lab, {{1, 2}, {2, 3}});
  lab.transpose(0, 1);
  print_view(lab);
  print_cells(lab, {{1, 2}, {3, 0}});
  lab.slice(0, 1, 4, 2);
  print_view(lab);
  print_cells(lab, {{0, 0}, {1, 2}});
  std::cout << "storage cells the view reads (of " << lab.storage_size() << "):";
  std::vector<int64_t> reads = lab.reads_per_cell();
  for (size_t i = 0; i < reads.size(); ++i)
    if (reads[i] > 0) std::cout << " " << i;
  std::cout << "\n";
  lab.undo();
  std::cout << "undo: " << lab.expression() << "\n";

  // Two views side by side: row 1 and column 2 of a fresh x meet in one storage cell.
  lab.reset(glass::arange(12).view({3, 4}), "x");
  lab.select(0, 1);
  lab.compare(true);
  lab.set_active(1);
  lab.apply("select(1, 2)");
  std::cout << "A = " << lab.expression(0) << ", B = " << lab.expression(1)
            << ", storage cells both read:";
  for (int64_t c : lab.shared_cells()) std::cout << " " << c;
  lab.write_through(0);
  std::cout << "\nafter A.mul_(-1), B reads " << lab.view(1) << "\n";
}

// [SECTION] 5. DOT --------------------------------------------------------------------------

void section_dot() {
  std::cout << "== 5. the DOT text of lesson 01's loop ==\n";
  viz::Snapshot s = viz::capture(viz::find_demo("loop"), {.gradients = false});
  std::cout << viz::to_dot(s);
}

}  // namespace

int main() {
  section_snapshot();
  section_forward();
  section_modules();
  section_strides();
  section_dot();
  return 0;
}
