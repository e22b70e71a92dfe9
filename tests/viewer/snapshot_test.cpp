// tests/viewer/snapshot_test.cpp — what a snapshot holds, checked on graphs built by hand.
//
// The references are independent of the code under test: node names and edges are read
// off the ops each test runs (PyTorch's grad_fn names), shapes off the tensors, and
// gradient statistics are recomputed in plain doubles.
#include "viewer/snapshot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/custom_function.h"
#include "autograd/variable.h"
#include "core/ops/factories.h"
#include "viewer/graph_reader.h"
#include "viewer/recorders.h"
#include "viewer/viewer_test_util.h"

namespace glass::viz {
namespace {

using testing::has_edge;
using testing::only;
using testing::Sizes;
using testing::TanhExample;

TEST(Snapshot, NodesEdgesAndNamesOfABackwardGraph) {
  TanhExample ex;
  Snapshot s = snapshot(ex.L, ex.names());
  EXPECT_EQ(s.kind, GraphKind::Backward);
  ASSERT_EQ(s.nodes.size(), 7u);  // Sum, Tanh, Add, Mul, and the three leaves
  for (size_t i = 0; i < s.nodes.size(); ++i) EXPECT_EQ(s.nodes[i].id, static_cast<int>(i));
  EXPECT_EQ(s.count(NodeKind::Op), 4);
  EXPECT_EQ(s.count(NodeKind::Leaf), 3);
  EXPECT_EQ(s.nodes[0].name, "SumBackward0");
  EXPECT_TRUE(s.nodes[0].is_root);
  EXPECT_EQ(s.nodes[0].label, "L");
  EXPECT_EQ(only(s, "TanhBackward0").op, "tanh");
  EXPECT_EQ(only(s, "AddBackward0").op, "add");
  EXPECT_EQ(only(s, "MulBackward0").op, "mul");
  EXPECT_EQ(only(s, "x").kind, NodeKind::Leaf);
  EXPECT_EQ(only(s, "x").name, "AccumulateGrad");

  // Edges run input -> op (Note [Edge direction]), one per tensor passed.
  ASSERT_EQ(s.edges.size(), 6u);
  EXPECT_TRUE(has_edge(s, "TanhBackward0", "SumBackward0"));
  EXPECT_TRUE(has_edge(s, "AddBackward0", "TanhBackward0"));
  EXPECT_TRUE(has_edge(s, "MulBackward0", "AddBackward0"));
  EXPECT_TRUE(has_edge(s, "b", "AddBackward0"));
  EXPECT_TRUE(has_edge(s, "x", "MulBackward0"));
  EXPECT_TRUE(has_edge(s, "w", "MulBackward0"));
  EXPECT_FALSE(has_edge(s, "SumBackward0", "TanhBackward0"));
  // Inputs in argument order: mul(x, w), add(x * w, b).
  std::vector<int> mul_inputs = s.inputs_of(only(s, "MulBackward0").id);
  ASSERT_EQ(mul_inputs.size(), 2u);
  EXPECT_EQ(s.nodes[mul_inputs[0]].label, "x");
  EXPECT_EQ(s.nodes[mul_inputs[1]].label, "w");
  std::vector<int> add_inputs = s.inputs_of(only(s, "AddBackward0").id);
  ASSERT_EQ(add_inputs.size(), 2u);
  EXPECT_EQ(s.nodes[add_inputs[0]].name, "MulBackward0");
  EXPECT_EQ(s.nodes[add_inputs[1]].label, "b");
}

TEST(Snapshot, OutputShapesStridesAndDtypes) {
  TanhExample ex;
  Snapshot s = snapshot(ex.L, ex.names());
  const GraphNode& root = only(s, "SumBackward0");
  EXPECT_EQ(root.output.sizes, Sizes{});  // a 0-dim loss, read from the tensor itself
  EXPECT_EQ(root.output.dtype, kFloat32);
  ASSERT_TRUE(root.output.device.has_value());
  EXPECT_TRUE(root.output.device->is_cpu());
  // tanh saved its output: the full metadata survives in the saved tensor.
  const GraphNode& tanh = only(s, "TanhBackward0");
  EXPECT_EQ(tanh.output.sizes, Sizes{3});
  EXPECT_EQ(tanh.output.strides, Sizes{1});
  // add's output is known only through tanh, which recorded its shape and dtype.
  const GraphNode& add = only(s, "AddBackward0");
  EXPECT_EQ(add.output.sizes, Sizes{3});
  EXPECT_EQ(add.output.dtype, kFloat32);
  EXPECT_TRUE(add.output.strides.empty());
  EXPECT_FALSE(add.output.device.has_value());
  // Leaves carry everything; b is [1], broadcast into add.
  EXPECT_EQ(only(s, "b").output.sizes, Sizes{1});
  EXPECT_EQ(only(s, "b").output.strides, Sizes{1});
  for (const GraphEdge& e : s.edges) {
    if (s.nodes[e.from].label == "b") {
      EXPECT_EQ(e.tensor.sizes, Sizes{1});
    }
  }
  EXPECT_EQ(to_string(only(s, "b").output), "[1] float32");
  EXPECT_EQ(to_string(root.output), "[] float32");
  EXPECT_EQ(to_string(TensorMeta{}), "?");
}

TEST(Snapshot, SavedTensorsAndTheVersionCheck) {
  TanhExample ex;
  Snapshot before = snapshot(ex.L, ex.names());
  const GraphNode& mul = only(before, "MulBackward0");
  ASSERT_EQ(mul.saved.size(), 2u);  // mul saves both factors
  for (const SavedTensor& t : mul.saved) {
    EXPECT_EQ(t.meta.sizes, Sizes{3});
    EXPECT_EQ(t.meta.dtype, kFloat32);
    EXPECT_FALSE(t.is_output);
    EXPECT_FALSE(t.version_check_fails());
  }
  const GraphNode& tanh = only(before, "TanhBackward0");
  ASSERT_EQ(tanh.saved.size(), 1u);
  EXPECT_TRUE(tanh.saved[0].is_output);
  EXPECT_TRUE(only(before, "AddBackward0").saved.empty());
  EXPECT_FALSE(mul.version_check_fails());

  // An in-place write to x (through a detached alias: same storage, same version counter)
  // after mul saved it: backward would refuse, and the snapshot says so beforehand.
  ex.x.detach().mul_(2);
  Snapshot after = snapshot(ex.L, ex.names());
  const GraphNode& stale = only(after, "MulBackward0");
  EXPECT_TRUE(stale.version_check_fails());
  int failing = 0;
  for (const SavedTensor& t : stale.saved) {
    if (!t.version_check_fails()) continue;
    ++failing;
    EXPECT_EQ(t.version, t.saved_version + 1);
  }
  EXPECT_EQ(failing, 1);  // x, not w
  EXPECT_FALSE(only(after, "TanhBackward0").version_check_fails());
  EXPECT_THROW(ex.L.backward(), Error);  // the check the snapshot predicted
}

TEST(Snapshot, SavedTensorsAreReleasedAfterBackward) {
  TanhExample ex;
  ex.L.backward();
  Snapshot s = snapshot(ex.L);
  const GraphNode& mul = only(s, "MulBackward0");
  ASSERT_EQ(mul.saved.size(), 2u);
  for (const SavedTensor& t : mul.saved) {
    EXPECT_TRUE(t.released);
    EXPECT_FALSE(t.meta.known());
    EXPECT_FALSE(t.version_check_fails());
  }
}

// The autograd accessor the snapshot reads: Node::saved_tensors() (autograd/node.h).
TEST(SavedTensorInfo, DescribesWhatANodeSaved) {
  Tensor a = arange(6, kFloat64).view({2, 3}).requires_grad_();
  Tensor at = a.t();  // a view: strides [1, 3]
  Tensor y = at * at;
  std::vector<autograd::SavedTensorInfo> info = y.grad_fn()->saved_tensors();
  ASSERT_EQ(info.size(), 2u);
  for (const auto& i : info) {
    EXPECT_TRUE(i.defined);
    EXPECT_FALSE(i.released);
    EXPECT_FALSE(i.is_output);
    EXPECT_EQ(Sizes(i.sizes.begin(), i.sizes.end()), (Sizes{3, 2}));
    EXPECT_EQ(Sizes(i.strides.begin(), i.strides.end()), (Sizes{1, 3}));
    EXPECT_EQ(i.dtype, kFloat64);
    EXPECT_EQ(i.version, i.saved_version);
    EXPECT_FALSE(i.version_check_fails());
  }
  a.detach().add_(1);  // the shared version counter moves for every view
  for (const auto& i : y.grad_fn()->saved_tensors()) EXPECT_TRUE(i.version_check_fails());
  // Nodes that save nothing, and accumulators, describe nothing.
  Tensor z = a + a;
  EXPECT_TRUE(z.grad_fn()->saved_tensors().empty());
  EXPECT_TRUE(autograd::gradient_edge(a).function->saved_tensors().empty());
}

// [SECTION] gradient statistics -----------------------------------------------------------------

TEST(GradStats, MatchesNormsComputedByHand) {
  Tensor g = tensor({3., -4., 0., 12.}, kFloat64);
  GradStats st = grad_stats(g);
  EXPECT_EQ(st.numel, 4);
  EXPECT_DOUBLE_EQ(st.norm, 13.);
  EXPECT_DOUBLE_EQ(st.max_abs, 12.);
  EXPECT_EQ(st.nan_count, 0);
  EXPECT_EQ(st.inf_count, 0);
  // A non-contiguous float32 view reads the same values as its layout says.
  Tensor m = tensor({1., 2., 3., 4., 5., 6.}).view({2, 3}).t();
  EXPECT_NEAR(grad_stats(m).norm, std::sqrt(91.), 1e-6);
  GradStats odd = grad_stats(tensor({NAN, INFINITY, -1.}, kFloat64));
  EXPECT_EQ(odd.nan_count, 1);
  EXPECT_EQ(odd.inf_count, 1);
  EXPECT_TRUE(std::isnan(odd.norm));
  EXPECT_TRUE(std::isinf(odd.max_abs));
  EXPECT_EQ(grad_stats(Tensor()).numel, 0);
}

// [SECTION] custom functions ---------------------------------------------------------------------

struct Square : autograd::Function<Square> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static autograd::tensor_list backward(autograd::AutogradContext* ctx, autograd::tensor_list g) {
    return {g[0] * 2 * ctx->get_saved_variables()[0]};
  }
};

TEST(Snapshot, CustomFunctionNodes) {
  Tensor x = tensor({1., 2., 3., 4.}).view({2, 2}).requires_grad_();
  Tensor y = Square::apply(x).sum();
  Snapshot s = snapshot_with_gradients(y, {.names = {{"x", x}}});
  const GraphNode& sq = only(s, "SquareBackward");
  EXPECT_EQ(sq.op, "Square");
  EXPECT_EQ(sq.output.sizes, (Sizes{2, 2}));
  EXPECT_EQ(sq.output.dtype, kFloat32);
  ASSERT_EQ(sq.saved.size(), 1u);
  EXPECT_EQ(sq.saved[0].meta.sizes, (Sizes{2, 2}));
  EXPECT_TRUE(has_edge(s, "x", "SquareBackward"));
  EXPECT_NEAR(only(s, "x").grad->norm, 2 * std::sqrt(1. + 4 + 9 + 16), 1e-5);
}

TEST(Snapshot, LeavesAndUndefinedRoots) {
  Tensor leaf = tensor({1., 2.}).requires_grad_();
  Snapshot s = snapshot(leaf, {.names = {{"w", leaf}}});
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].kind, NodeKind::Leaf);
  EXPECT_EQ(s.nodes[0].label, "w");
  EXPECT_TRUE(s.nodes[0].is_root);
  EXPECT_TRUE(snapshot(tensor({1.})).nodes.empty());
  EXPECT_THROW(snapshot(Tensor()), Error);
  EXPECT_THROW(snapshot_with_gradients(tensor({1.})), Error);
}

TEST(Snapshot, SharedSubexpressionsAppearOnce) {
  Tensor x = tensor({1., 2.}).requires_grad_();
  Tensor h = x * 3;
  Tensor y = (h * h + h).sum();  // h read three times
  Snapshot s = snapshot(y);
  std::map<std::string, int> count;
  for (const GraphNode& n : s.nodes) ++count[n.name];
  EXPECT_EQ(count["MulBackward0"], 2);  // x * 3 and h * h
  EXPECT_EQ(count["AccumulateGrad"], 1);
  // h * h reads h twice: two edges, input 0 and input 1.
  int parallel = 0;
  for (const GraphEdge& e : s.edges)
    if (s.nodes[e.to].name == "MulBackward0" && s.nodes[e.from].name == "MulBackward0") ++parallel;
  EXPECT_EQ(parallel, 2);
}

TEST(OpNames, FromGradFnNames) {
  EXPECT_EQ(detail::forward_op_name("MulBackward0"), "mul");
  EXPECT_EQ(detail::forward_op_name("AddmmBackward0"), "addmm");
  EXPECT_EQ(detail::forward_op_name("LogSoftmaxBackward0"), "log_softmax");
  EXPECT_EQ(detail::forward_op_name("TBackward0"), "t");
  EXPECT_EQ(detail::forward_op_name("Log1PBackward0"), "log1p");
  EXPECT_EQ(detail::forward_op_name("ClampBackward1"), "clamp");
  EXPECT_EQ(detail::forward_op_name("ToCopyBackward0"), "to_copy");
}

}  // namespace
}  // namespace glass::viz
