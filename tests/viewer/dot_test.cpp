// tests/viewer/dot_test.cpp — the DOT text: one statement per node and per edge, labels,
// options, clusters, colours. Checked without a DOT parser: to_dot writes one statement
// per line, so counting lines that look like `  n3 [` or `  n1 -> n0` counts them.
#include "viewer/dot.h"

#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "viewer/demos.h"
#include "viewer/modules.h"
#include "viewer/recorders.h"
#include "viewer/snapshot.h"

namespace glass::viz {
namespace {

// Glob-style match of a whole line: '*' is any text, '%' one or more digits. (No
// std::regex: GCC 12's <regex> trips -Wmaybe-uninitialized under the sanitizers.)
bool matches(const char* line, const char* pattern) {
  if (*pattern == '\0') return *line == '\0';
  if (*pattern == '*')
    for (const char* p = line;; ++p) {
      if (matches(p, pattern + 1)) return true;
      if (*p == '\0') return false;
    }
  if (*pattern == '%') {
    if (!std::isdigit(static_cast<unsigned char>(*line))) return false;
    while (std::isdigit(static_cast<unsigned char>(*line))) {
      ++line;
      if (matches(line, pattern + 1)) return true;
    }
    return false;
  }
  return *line == *pattern && matches(line + 1, pattern + 1);
}

std::vector<std::string> lines_matching(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (matches(line.c_str(), pattern.c_str())) out.push_back(line);
  return out;
}

size_t node_statements(const std::string& dot) { return lines_matching(dot, "  n% [*").size(); }
size_t edge_statements(const std::string& dot) { return lines_matching(dot, "  n% -> n%*").size(); }

// The statements of the edges from -> to (two for x * x: one per input).
std::vector<std::string> edge_lines(const std::string& dot, int from, int to) {
  std::string prefix = "  n" + std::to_string(from) + " -> n" + std::to_string(to);
  std::vector<std::string> lines = lines_matching(dot, prefix + ";");
  for (std::string& styled : lines_matching(dot, prefix + " *")) lines.push_back(styled);
  return lines;
}

std::string edge_line(const std::string& dot, int from, int to) {
  std::vector<std::string> lines = edge_lines(dot, from, to);
  EXPECT_FALSE(lines.empty()) << from << " -> " << to;
  return lines.empty() ? std::string() : lines[0];
}

// The label of node `id`, unescaped ("\n" back to newlines).
std::string label(const std::string& dot, int id) {
  std::string line = lines_matching(dot, "  n" + std::to_string(id) + " [*").at(0);
  size_t at = line.find("label=\"");
  EXPECT_NE(at, std::string::npos) << line;
  std::string out;
  for (size_t i = at + 7; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      out += line[i] == 'n' ? '\n' : line[i];
    } else {
      out += line[i];
    }
  }
  return out;
}

struct Example {
  Tensor x = tensor({1., 2., -1.}).requires_grad_();
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor b = tensor({0.5}).requires_grad_();
  Tensor L = (x * w + b).tanh().sum();
  SnapshotOptions names() const { return {.names = {{"x", x}, {"w", w}, {"b", b}, {"L", L}}}; }
};

TEST(Dot, OneStatementPerNodeAndEdge) {
  Example ex;
  Snapshot s = snapshot(ex.L, ex.names());
  std::string dot = to_dot(s);
  EXPECT_EQ(dot.rfind("digraph backward {\n", 0), 0u);
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_EQ(node_statements(dot), s.nodes.size());
  EXPECT_EQ(edge_statements(dot), s.edges.size());
  // Each edge statement is written input -> op.
  for (const GraphEdge& e : s.edges) EXPECT_EQ(edge_lines(dot, e.from, e.to).size(), 1u);
  EXPECT_EQ(to_dot(s), dot);  // deterministic
  // Ranks run top-down unless asked; left-right changes that one attribute only.
  EXPECT_EQ(lines_matching(dot, "  graph [rankdir=TB, *").size(), 1u);
  std::string lr = to_dot(s, {.rankdir = RankDir::LeftRight});
  EXPECT_EQ(lines_matching(lr, "  graph [rankdir=LR, *").size(), 1u);
  EXPECT_EQ(lr.size(), dot.size());
}

TEST(Dot, LabelsNamesShapesAndSavedTensors) {
  Example ex;
  Snapshot s = snapshot(ex.L, ex.names());
  std::string dot = to_dot(s);
  const GraphNode& tanh = *s.find("TanhBackward0");
  EXPECT_EQ(label(dot, tanh.id), "TanhBackward0\n[3] float32");
  EXPECT_EQ(label(dot, s.find("b")->id), "b\n[1] float32");
  EXPECT_EQ(label(dot, 0), "SumBackward0\nL\n[] float32");
  std::string bare = to_dot(s, {.show_shapes = false});
  EXPECT_EQ(label(bare, tanh.id), "TanhBackward0");
  std::string saved = to_dot(s, {.show_saved = true});
  EXPECT_EQ(label(saved, tanh.id), "TanhBackward0\n[3] float32\nsaved 0: [3] float32 (output)");
  EXPECT_EQ(label(saved, s.find("MulBackward0")->id),
            "MulBackward0\n[3] float32\nsaved 0: [3] float32\nsaved 1: [3] float32");
  // Colours: root green, leaves blue, ops grey.
  EXPECT_NE(lines_matching(dot, "  n0 *fillcolor=\"#b8e186\"*").size(), 0u);
  EXPECT_EQ(lines_matching(dot, "*fillcolor=\"#a6cee3\"*").size(), 3u);
}

TEST(Dot, AStaleSavedTensorIsRed) {
  Example ex;
  ex.w.detach().add_(1);
  Snapshot s = snapshot(ex.L, ex.names());
  std::string dot = to_dot(s, {.show_saved = true});
  int mul = s.find("MulBackward0")->id;
  EXPECT_EQ(lines_matching(dot, "*fillcolor=\"#fb6a4a\"*").size(), 1u);
  EXPECT_EQ(lines_matching(dot, "  n" + std::to_string(mul) + " *#fb6a4a*").size(), 1u);
  EXPECT_NE(label(dot, mul).find("saved 1: [3] float32 MODIFIED: v1, saved at v0"),
            std::string::npos);
}

TEST(Dot, ForwardNamesOpsAndBackwardFlipsArrowheads) {
  Example ex;
  ForwardRecorder recorder;
  Tensor y = (ex.x * ex.w).sum();
  recorder.stop();
  Snapshot fwd = recorder.snapshot(y, {.names = {{"x", ex.x}, {"w", ex.w}}});
  std::string dot = to_dot(fwd);
  EXPECT_EQ(dot.rfind("digraph forward {\n", 0), 0u);
  EXPECT_EQ(label(dot, fwd.find("MulBackward0")->id), "mul\n[3] float32");
  EXPECT_EQ(lines_matching(dot, "*dir=back*").size(), 0u);
  EXPECT_EQ(lines_matching(to_dot(fwd, {.direction = GraphKind::Backward}), "*dir=back*").size(),
            1u);
  Snapshot bwd = snapshot(y);
  EXPECT_EQ(lines_matching(to_dot(bwd), "  edge *dir=back*").size(), 1u);
}

TEST(Dot, EdgesColouredByGradientNorm) {
  Example ex;
  Snapshot s = snapshot_with_gradients(ex.L, ex.names());
  std::string dot = to_dot(s);
  std::vector<std::string> edges = lines_matching(dot, R"(  n% -> n% [color="#*)");
  EXPECT_EQ(edges.size(), s.edges.size());
  // The smallest norm is drawn at the blue end, the largest at the red end.
  double lo = 1e300, hi = 0;
  for (const GraphEdge& e : s.edges) {
    lo = std::min(lo, s.nodes[e.from].grad->norm);
    hi = std::max(hi, s.nodes[e.from].grad->norm);
  }
  int blue = 0, red = 0;
  for (const GraphEdge& e : s.edges) {
    std::string line = edge_line(dot, e.from, e.to);
    if (s.nodes[e.from].grad->norm == lo) blue += line.find("#3b4dbf") != std::string::npos;
    if (s.nodes[e.from].grad->norm == hi) red += line.find("#b50526") != std::string::npos;
  }
  EXPECT_GE(blue, 1);
  EXPECT_GE(red, 1);
  EXPECT_EQ(to_dot(s, {.color_by_gradient = false}).find("penwidth"), std::string::npos);
  std::string stats = to_dot(s, {.show_gradients = true});
  EXPECT_NE(label(stats, 0).find("|g| 1.00e+00"), std::string::npos);
}

TEST(Dot, NoColourWhereNoGradientFlows) {
  // lesson 01's if, recorded forward: x feeds the dropped x.sum() and the kept x * x.
  Snapshot s = capture(find_demo("if_else"), {.forward = true});
  std::string dot = to_dot(s);
  int dropped = 0;
  for (const GraphEdge& e : s.edges) {
    std::string line = edge_line(dot, e.from, e.to);
    bool coloured = line.find("color=") != std::string::npos;
    EXPECT_EQ(coloured, s.nodes[e.to].reachable) << line;
    dropped += !s.nodes[e.to].reachable;
  }
  EXPECT_EQ(dropped, 1);
}

TEST(Dot, NanGradientsAreBoldRed) {
  Tensor x = tensor({0., 4.}, kFloat64).requires_grad_();
  Tensor y = (x.sqrt() * 0).sum();
  Snapshot s = snapshot_with_gradients(y, {.names = {{"x", x}}});
  std::string dot = to_dot(s);
  int leaf = s.find("x")->id;
  EXPECT_EQ(
      lines_matching(dot, "  n" + std::to_string(leaf) + R"( -> *#ff0000*label="nan"*)").size(),
      1u);
  EXPECT_EQ(lines_matching(dot, "  n" + std::to_string(leaf) + R"( [*color="#d7191c"*)").size(),
            1u);
}

TEST(Dot, ModulesAsClustersOrFolded) {
  manual_seed(0);
  nn::Sequential seq(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  Tensor loss = seq->forward(randn({5, 4})).sum();
  Snapshot s = snapshot(loss, {.module = seq.ptr().get()});
  std::string dot = to_dot(s);
  EXPECT_EQ(lines_matching(dot, R"(  subgraph "cluster_%" {)").size(), 2u);
  EXPECT_EQ(lines_matching(dot, R"(*label="0: Linear"*)").size(), 1u);
  EXPECT_EQ(lines_matching(dot, R"(*label="2: Linear"*)").size(), 1u);
  EXPECT_EQ(lines_matching(dot, R"(    n%;)").size(), 8u);  // 4 members each
  EXPECT_EQ(to_dot(s, {.clusters = false}).find("subgraph"), std::string::npos);
  Snapshot folded = collapse_modules(s);
  std::string small = to_dot(folded);
  EXPECT_EQ(node_statements(small), 4u);
  EXPECT_EQ(edge_statements(small), 3u);
  EXPECT_EQ(label(small, folded.find("0")->id), "0: Linear\n(4 nodes)\n[5, 3] float32");
  EXPECT_EQ(lines_matching(small, "*fillcolor=\"#fdd49e\"*").size(), 2u);
}

TEST(Dot, QuotesAndBackslashesAreEscaped) {
  Tensor x = tensor({1.}).requires_grad_();
  Tensor y = x * 2;
  Snapshot s = snapshot(y, {.names = {{"say \"hi\" \\o/", x}}});
  std::string dot = to_dot(s, {.show_shapes = false});
  EXPECT_NE(dot.find(R"(label="say \"hi\" \\o/")"), std::string::npos);
  EXPECT_EQ(label(dot, s.find("AccumulateGrad")->id), "say \"hi\" \\o/");
}

}  // namespace
}  // namespace glass::viz
