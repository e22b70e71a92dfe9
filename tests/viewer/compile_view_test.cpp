// tests/viewer/compile_view_test.cpp — the compiler panel's recordings (viewer/compile_view.h):
// each demo compiled equals eager, the passes did what the demo is there to show, and the
// before/after DOT lays out with Graphviz (the traced graph, the optimised one with its fused
// groups boxed, a graph break as one red node fed by the value it read).
#include "viewer/compile_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "compiler/cuda_pointwise.h"
#include "viewer/graphviz.h"
#include "viewer/layout.h"

namespace glass::viz {
namespace {

class CompileView : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1); }
  void TearDown() override { ::unsetenv("GLASS_CACHE_DIR"); }
};

TEST_F(CompileView, EveryDemoCompiledEqualsEagerAndLaysOut) {
  for (const std::string& name : compile_demos()) {
    SCOPED_TRACE(name);
    viz::CompileView v = record_compile(name);
    EXPECT_TRUE(v.matches_eager);
    Layout l = layout(compile_dot(v));
    EXPECT_GT(l.nodes.size(), 2u);
    EXPECT_NE(render(compile_dot(v), Format::Svg).find("<svg"), std::string::npos);
  }
}

TEST_F(CompileView, TheSeedChainIsOneClusterOfSixOps) {
  viz::CompileView v = record_compile("seed");
  EXPECT_EQ(v.info.fused_groups, 1);
  Layout l = layout(compile_dot(v));
  int fused = 0;
  for (const ClusterBox& c : l.clusters) fused += c.label == "fused group 0";
  EXPECT_EQ(fused, 1);
  EXPECT_NE(kernel_body(v, 0).find("f::sigmoid<float>"), std::string::npos);
  EXPECT_THROW(kernel_body(v, 1), Error);
}

// A CUDA group's source shows from its IR comment on, without the includes and helpers.
TEST_F(CompileView, ACudaGroupsBodyStartsAtItsIr) {
  viz::CompileView v = record_compile("seed");
  compiler::PointwiseProgram p;
  const int a = p.input(0, kFloat);
  p.set_output(p.unary(UnaryOp::Sigmoid, a));
  v.info.sources = {compiler::emit_cuda({p})};
  const std::string body = kernel_body(v, 0);
  EXPECT_EQ(body.rfind("// glass_cuda_kernel_0:", 0), 0u) << body;
  EXPECT_NE(body.find("SigmoidOp<float>{}("), std::string::npos) << body;
  EXPECT_EQ(body.find("#include"), std::string::npos) << body;
}

TEST_F(CompileView, ThePassesDemoRemovesDeadCodeMergesAndFolds) {
  viz::CompileView v = record_compile("passes");
  EXPECT_EQ(v.info.dead, 1);
  EXPECT_EQ(v.info.merged, 1);
  EXPECT_EQ(v.info.folded, 3);
  EXPECT_EQ(v.info.fused_groups, 1);
  EXPECT_NE(compile_summary(v).find("passes: 1 dead, 1 merged, 3 folded; fused groups: 1"),
            std::string::npos);
}

TEST_F(CompileView, AGraphBreakIsARedNodeFedByTheValueItRead) {
  viz::CompileView v = record_compile("branch");
  ASSERT_TRUE(v.info.graph_break.has_value());
  EXPECT_EQ(v.info.graph_break->op, "item");
  const std::string dot = compile_dot(v);
  EXPECT_NE(dot.find("t_break [shape=octagon"), std::string::npos) << dot;
  EXPECT_NE(dot.find("t_" + v.info.break_source + " -> t_break"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("cluster_optimized"), std::string::npos) << "a broken variant runs eagerly";
}

// The backward demo shows the joint graph: the product kept by the forward stands in for the
// one its trace replayed (an input, no addmm/mm of x and w1 after the passes), fused.
TEST_F(CompileView, TheBackwardDemoShowsTheJointGraphReadingAKeptProduct) {
  viz::CompileView v = record_compile("backward");
  EXPECT_TRUE(v.matches_eager);
  EXPECT_NE(v.info.traced.find("mm(%0, %1)"), std::string::npos) << v.info.traced;
  EXPECT_EQ(v.info.optimized.find("mm(%0, %1)"), std::string::npos) << v.info.optimized;
  EXPECT_GE(v.info.fused_groups, 1);
  EXPECT_EQ(v.info.sources.size(), static_cast<size_t>(v.info.fused_groups));
  const std::string summary = compile_summary(v);
  EXPECT_NE(summary.find("matrix products read from the forward: 1"), std::string::npos) << summary;
  Layout l = layout(compile_dot(v));
  int fused = 0;
  for (const ClusterBox& c : l.clusters) fused += c.label.rfind("fused group", 0) == 0;
  EXPECT_EQ(fused, v.info.fused_groups);
  // The sigmoid both kernels compute is drawn once, saying so.
  EXPECT_NE(compile_dot(v).find("unary sigmoid\\nFloat[4, 8]\\ncomputed in groups 0 1"),
            std::string::npos)
      << compile_dot(v);
}

TEST_F(CompileView, AnUnknownDemoNamesTheDemos) {
  try {
    record_compile("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed, passes, branch, mlp, backward"), std::string::npos);
  }
}

}  // namespace
}  // namespace glass::viz
