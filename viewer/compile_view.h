// viewer/compile_view.h — a compiled function before and after the compiler's passes: the
// viewer's compiler panel (app/compile_panel.cpp) and `glass-dot --compile` (lesson 12).
//
// record_compile(demo) compiles one of a few small functions with glass::compile, calls it
// twice (the trace, then the compiled graph) and keeps what the compiler made of it:
//
//   viz::CompileView v = viz::record_compile("seed");
//   v.info.traced_dot;     // the graph as traced
//   v.info.optimized_dot;  // after dead code, CSE and folding, fused groups as clusters
//   v.info.sources[0];     // the C++ of fused group 0
//   viz::write_text_file("compile.svg", viz::render(viz::compile_dot(v), viz::Format::Svg));
//
// Demos: "seed" (the seed's chain: one fused group of six ops), "passes" (dead code, a
// common subexpression and a folded constant around a fusable chain), "branch" (an item()
// in the middle: the graph breaks there, and the trace stops at the break), "mlp" (lesson
// 06's MLP forward under no_grad: nothing for pointwise fusion to take but the ReLUs),
// "backward" (two layers with a SiLU, with grad: not the forward's graphs but the backward's
// joint graph as traced and optimised, which reads the first product from the forward;
// matches_eager compares the gradients).
// Invariant: compile_dot's two halves are the variant's own traced and optimised graphs (the
// backward demo's: its joint graph's); a graph break is drawn as one red node after the last
// op the trace recorded.
#pragma once

#include <string>
#include <vector>

#include "compiler/compile.h"

namespace glass::viz {

struct CompileView {
  std::string demo;         // its name, as record_compile takes it
  std::string description;  // one line: what the function computes
  std::string source;       // the function's C++ as the demo writes it
  compiler::VariantInfo info;
  bool matches_eager = false;  // the compiled call's results equal the eager run's
  std::string notes;           // more lines for compile_summary (the backward demo's)
};

// Each node of compile_dot's drawing, by its DOT name ("t_n3", "o_v0", "t_break"), with the
// label Graphviz writes in it ("binary mul\nFloat[8]"), for a renderer that draws the layout
// itself (the app's compiler panel).
std::vector<std::pair<std::string, std::string>> compile_dot_labels(const std::string& dot);

std::vector<std::string> compile_demos();  // "seed", "passes", "branch", "mlp", "backward"
// Compiles and runs demo `name`; an unknown name is a glass::Error listing the demos.
CompileView record_compile(const std::string& name);

// One DOT drawing: the traced graph on the left, the optimised one on the right.
std::string compile_dot(const CompileView& view);
// The text glass-dot prints: the passes' counts, each graph, each group's generated loop.
std::string compile_summary(const CompileView& view);
// The generated source of group `g` (C++, or CUDA for a group on CUDA tensors) from its IR
// comment ("// glass_kernel:", "// glass_cuda_kernel_0:") on: the embedded formulas, or the
// includes and the offsets helper, left out.
std::string kernel_body(const CompileView& view, int group);

}  // namespace glass::viz
