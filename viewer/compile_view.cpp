// viewer/compile_view.cpp — the compiler panel's recordings (see compile_view.h).
#include "viewer/compile_view.h"

#include <sstream>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/compare.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "nn/modules/linear.h"

namespace glass::viz {
namespace {

Tensor seed_chain(const Tensor& a, const Tensor& b) {
  return ((a * b + a) * 0.5 - b).relu().sigmoid();
}

Tensor wasteful(const Tensor& x, const Tensor& y) {
  Tensor unused = x.cos();                    // dead
  Tensor k = full({8}, 2.0) * 3;              // folded
  return (x.exp() * k + x.exp()).tanh() * y;  // x.exp() twice: merged; the rest fuses
}

Tensor branchy(const Tensor& x, const Tensor& y) {
  Tensor s = (x * y).sum();
  if (s.item<double>() > 0) return (x - y).relu();  // item(): the graph breaks here
  return (y - x).relu();
}

// Two layers with a SiLU between: with grad, the backward is traced into a joint graph, which
// reads the first product from the forward.
Tensor two_layers(const Tensor& x, const Tensor& w1, const Tensor& w2) {
  Tensor h = x.mm(w1);
  return (h * h.sigmoid()).mm(w2);
}

struct MLPImpl : nn::Module {
  MLPImpl() : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(64, 32));
    fc2 = register_module("fc2", nn::Linear(32, 10));
  }
  Tensor forward(const Tensor& x) { return fc2(fc1(x).relu()).relu(); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

bool same(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes() && allclose(a, b); }

// Puts every node and edge statement of `dot` (one graph from Graph::to_dot) inside a cluster
// named `name`, its node names prefixed so two graphs can share one drawing.
std::string as_cluster(const std::string& dot, const std::string& name, const std::string& label,
                       const std::string& prefix) {
  std::istringstream in(dot);
  std::ostringstream out;
  out << "  subgraph cluster_" << name << " {\n    label=\"" << label
      << "\";\n    fontsize=18;\n    style=dashed;\n";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("digraph", 0) == 0 || line == "}" || line.find("rankdir") != std::string::npos ||
        line.find("node [") != std::string::npos)
      continue;
    // Node names are n<i>, v<i> and out<i>: prefix each where it starts a name.
    std::string renamed;
    for (size_t i = 0; i < line.size(); ++i) {
      const bool starts = (i == 0 || line[i - 1] == ' ' || line[i - 1] == ';') &&
                          (line.compare(i, 3, "out") == 0 ||
                           ((line[i] == 'n' || line[i] == 'v') && i + 1 < line.size() &&
                            std::isdigit(static_cast<unsigned char>(line[i + 1]))));
      if (starts) renamed += prefix;
      renamed += line[i];
    }
    // A cluster inside keeps a unique name too.
    size_t c = renamed.find("subgraph cluster_");
    if (c != std::string::npos) renamed.insert(c + 17, prefix);
    out << "  " << renamed << "\n";
  }
  out << "  }\n";
  return out.str();
}

}  // namespace

std::vector<std::string> compile_demos() { return {"seed", "passes", "branch", "mlp", "backward"}; }

CompileView record_compile(const std::string& name) {
  CompileView v;
  v.demo = name;
  Generator gen = make_generator(Device(kCPU), 7);
  if (name == "seed") {
    v.description = "the seed's chain: six elementwise ops, one fused loop";
    v.source = "((a * b + a) * 0.5 - b).relu().sigmoid()";
    Tensor a = randn({8}, gen), b = randn({8}, gen);
    auto f = compile(seed_chain);
    f(a, b);
    v.matches_eager = same(f(a, b), seed_chain(a, b));
    v.info = f.variants().at(0);
  } else if (name == "passes") {
    v.description = "dead code, a repeated exp and a constant, around a fusable chain";
    v.source =
        "Tensor unused = x.cos();\nTensor k = full({8}, 2.0) * 3;\n"
        "return (x.exp() * k + x.exp()).tanh() * y;";
    Tensor x = randn({8}, gen), y = randn({8}, gen);
    auto f = compile(wasteful);
    f(x, y);
    v.matches_eager = same(f(x, y), wasteful(x, y));
    v.info = f.variants().at(0);
  } else if (name == "branch") {
    v.description = "a branch on a value: item() breaks the graph, the variant runs eagerly";
    v.source =
        "Tensor s = (x * y).sum();\nif (s.item<double>() > 0) return (x - y).relu();\n"
        "return (y - x).relu();";
    Tensor x = randn({8}, gen), y = randn({8}, gen);
    auto f = compile(branchy);
    f(x, y);
    v.matches_eager = same(f(x, y), branchy(x, y)) && same(f(y, -x), branchy(y, -x));
    v.info = f.variants().at(0);
  } else if (name == "mlp") {
    v.description = "lesson 06's MLP forward (no_grad): matmuls stay ops, ReLUs alone";
    v.source = "fc2(fc1(x).relu()).relu()   // Linear(64, 32), Linear(32, 10)";
    manual_seed(0);
    auto model = std::make_shared<MLPImpl>();
    Tensor x = randn({4, 64}, gen);
    NoGradGuard no_grad;
    auto f = compile(model);
    f(x);
    v.matches_eager = same(f(x), model->forward(x));
    v.info = f.variants().at(0);
  } else if (name == "backward") {
    v.description = "two layers with a SiLU, with grad: the backward's joint graph, fused";
    v.source = "Tensor h = x.mm(w1);\nreturn (h * h.sigmoid()).mm(w2);   // then .sum().backward()";
    std::vector<Tensor> in = {randn({4, 6}, gen), randn({6, 8}, gen), randn({8, 3}, gen)};
    for (Tensor& t : in) t.requires_grad_(true);
    auto f = compile(two_layers);
    f(in[0], in[1], in[2]);                   // traces the forward
    f(in[0], in[1], in[2]).sum().backward();  // traces the backward
    std::vector<Tensor> compiled;
    for (Tensor& t : in) {
      t.mutable_grad() = Tensor();
    }
    f(in[0], in[1], in[2]).sum().backward();  // runs it
    for (const Tensor& t : in) compiled.push_back(t.grad());
    std::vector<Tensor> copies;
    for (const Tensor& t : in) copies.push_back(t.detach().clone().requires_grad_(true));
    two_layers(copies[0], copies[1], copies[2]).sum().backward();
    v.matches_eager = true;
    for (size_t i = 0; i < in.size(); ++i)
      v.matches_eager = v.matches_eager && same(compiled[i], copies[i].grad());
    // The panel draws graphs and groups: the backward's, in a variant's shape.
    const std::vector<compiler::BackwardInfo> backwards = f.variants().at(0).backwards;
    GLASS_CHECK(backwards.size() == 1 && backwards[0].replayed.empty(),
                "compile demo 'backward': its backward was not traced into a graph",
                backwards.empty() ? std::string() : ": " + backwards[0].replayed);
    const compiler::BackwardInfo& bw = backwards[0];
    v.info.traced = bw.traced;
    v.info.traced_dot = bw.traced_dot;
    v.info.optimized = bw.optimized;
    v.info.optimized_dot = bw.optimized_dot;
    v.info.dead = bw.dead;
    v.info.merged = bw.merged;
    v.info.folded = bw.folded;
    v.info.fused_groups = bw.fused_groups;
    v.info.groups = bw.groups;
    v.info.sources = bw.sources;
    v.notes =
        "inputs: x, w1, w2, then h kept by the forward, then the output's gradient\n"
        "detaches bypassed: " +
        std::to_string(bw.bypassed) +
        "; matrix products read from the forward: " + std::to_string(bw.saved) + "\n";
  } else {
    std::string names;
    for (const std::string& d : compile_demos()) names += (names.empty() ? "" : ", ") + d;
    GLASS_CHECK(false, "compile demo '", name, "' does not exist; the demos are ", names);
  }
  return v;
}

std::string compile_dot(const CompileView& view) {
  std::ostringstream dot;
  dot << "digraph \"compile " << view.demo << "\" {\n  rankdir=TB;\n"
      << "  node [fontname=\"DejaVu Sans\"];\n  edge [fontname=\"DejaVu Sans\"];\n";
  std::string traced = as_cluster(view.info.traced_dot, "traced", "traced", "t_");
  if (view.info.graph_break) {
    // The trace stopped at the break: a red node after everything it recorded.
    std::string mark =
        "    t_break [shape=octagon, style=filled, fillcolor=\"#d62728\", "
        "fontcolor=white, label=\"graph break\\n" +
        view.info.graph_break->op + "()\"];\n";
    if (!view.info.break_source.empty())  // an edge from what made the value it read
      mark += "    t_" + view.info.break_source + " -> t_break [color=\"#d62728\"];\n";
    traced.insert(traced.rfind("  }\n"), mark);
  }
  dot << traced;
  if (!view.info.graph_break)
    dot << as_cluster(view.info.optimized_dot, "optimized", "after the passes", "o_");
  dot << "}\n";
  return dot.str();
}

std::vector<std::pair<std::string, std::string>> compile_dot_labels(const std::string& dot) {
  std::vector<std::pair<std::string, std::string>> labels;
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(' ');
    size_t bracket = line.find(" [");
    size_t label = line.find("label=\"");
    if (start == std::string::npos || bracket == std::string::npos || label == std::string::npos ||
        line.find("->") != std::string::npos || line.compare(start, 8, "subgraph") == 0)
      continue;
    std::string text;  // up to the closing quote, `\"` and `\\` unescaped
    for (size_t i = label + 7; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\'))
        ++i;
      text += line[i];
    }
    // DOT's "\n" is a line break.
    for (size_t at; (at = text.find("\\n")) != std::string::npos;) text.replace(at, 2, "\n");
    labels.emplace_back(line.substr(start, bracket - start), text);
  }
  return labels;
}

std::string kernel_body(const CompileView& view, int group) {
  GLASS_CHECK(group >= 0 && group < static_cast<int>(view.info.sources.size()),
              "kernel_body: demo '", view.demo, "' has ", view.info.sources.size(),
              " fused groups, no group ", group);
  const std::string& s = view.info.sources[group];
  // From the group's IR comment on: C++ starts it "// glass_kernel", CUDA "// glass_cuda_kernel".
  for (const char* marker : {"// glass_kernel", "// glass_cuda_kernel"})
    if (size_t at = s.find(marker); at != std::string::npos) return s.substr(at);
  return s;
}

std::string compile_summary(const CompileView& view) {
  std::ostringstream os;
  const compiler::VariantInfo& i = view.info;
  os << "demo " << view.demo << ": " << view.description << "\n";
  if (i.graph_break) {
    os << "graph break at " << i.graph_break->op << "(): this variant runs eagerly\n"
       << "traced before the break:\n"
       << i.traced;
  } else {
    os << "passes: " << i.dead << " dead, " << i.merged << " merged, " << i.folded
       << " folded; fused groups: " << i.fused_groups << "\n"
       << "traced:\n"
       << i.traced << "after the passes:\n"
       << i.optimized;
  }
  os << view.notes << "compiled equals eager: " << (view.matches_eager ? "yes" : "no") << "\n";
  return os.str();
}

}  // namespace glass::viz
