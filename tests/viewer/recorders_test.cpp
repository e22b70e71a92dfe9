// tests/viewer/recorders_test.cpp — GradientRecorder and ForwardRecorder.
//
// Gradient statistics are checked against the chain rule worked by hand in doubles (the
// closed-form derivatives of lesson 04's example) and against the .grad() autograd
// accumulated; the forward graph against the backward graph of the same result (what the
// result depends on) plus the one node it does not.
#include "viewer/recorders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "autograd/node.h"
#include "core/ops/factories.h"
#include "core/ops/linalg.h"
#include "viewer/snapshot.h"
#include "viewer/viewer_test_util.h"

namespace glass::viz {
namespace {

using testing::only;
using testing::Sizes;
using testing::TanhExample;

TEST(GradientRecorder, PerNodeStatisticsEqualTheChainRuleByHand) {
  TanhExample ex;
  Snapshot s = snapshot_with_gradients(ex.L, ex.names());
  // By hand: t_i = tanh(x_i w_i + b); dL/dt = 1; dL/dz = 1 - t^2 (for add and mul's
  // outputs alike); dL/dx = (1 - t^2) w; dL/dw = (1 - t^2) x; dL/db = sum(1 - t^2).
  double dz_sq = 0, dx_sq = 0, dw_sq = 0, db = 0, dz_max = 0;
  for (size_t i = 0; i < 3; ++i) {
    double t = std::tanh(ex.xv[i] * ex.wv[i] + ex.bv), dz = 1 - t * t;
    dz_sq += dz * dz;
    dz_max = std::max(dz_max, dz);
    dx_sq += dz * ex.wv[i] * dz * ex.wv[i];
    dw_sq += dz * ex.xv[i] * dz * ex.xv[i];
    db += dz;
  }
  auto grad = [&](const std::string& name) {
    const GraphNode& n = only(s, name);
    EXPECT_TRUE(n.grad.has_value()) << name;
    return n.grad.value_or(GradStats{});
  };
  EXPECT_NEAR(grad("SumBackward0").norm, 1., 1e-6);
  EXPECT_EQ(grad("SumBackward0").numel, 1);
  EXPECT_NEAR(grad("TanhBackward0").norm, std::sqrt(3.), 1e-6);
  EXPECT_NEAR(grad("AddBackward0").norm, std::sqrt(dz_sq), 1e-6);
  EXPECT_NEAR(grad("AddBackward0").max_abs, dz_max, 1e-6);
  EXPECT_NEAR(grad("MulBackward0").norm, std::sqrt(dz_sq), 1e-6);
  EXPECT_NEAR(grad("x").norm, std::sqrt(dx_sq), 1e-6);
  EXPECT_NEAR(grad("w").norm, std::sqrt(dw_sq), 1e-6);
  EXPECT_NEAR(grad("b").norm, std::abs(db), 1e-6);
  EXPECT_EQ(grad("b").numel, 1);  // summed back to b's own shape
  // The leaves' statistics are those of the .grad() autograd accumulated.
  EXPECT_NEAR(grad("x").norm, grad_stats(ex.x.grad()).norm, 1e-12);
  for (const GraphNode& n : s.nodes) {
    EXPECT_EQ(n.grad->nan_count, 0);
    EXPECT_EQ(n.grad->inf_count, 0);
  }
}

TEST(GradientRecorder, CountsNanAndInfWithoutChangingTheGradient) {
  // d sqrt(x)/dx = 1 / (2 sqrt(x)) is inf at 0; times a zero upstream gradient it is nan.
  Tensor x = tensor({0., 4.}, kFloat64).requires_grad_();
  Tensor y = x.sqrt().sum();
  Snapshot s = snapshot_with_gradients(y, {.names = {{"x", x}}});
  const GraphNode& leaf = only(s, "x");
  ASSERT_TRUE(leaf.grad.has_value());
  EXPECT_EQ(leaf.grad->inf_count, 1);
  EXPECT_EQ(leaf.grad->nan_count, 0);
  EXPECT_TRUE(std::isinf(leaf.grad->max_abs));
  EXPECT_TRUE(std::isinf(leaf.grad->norm));
  EXPECT_DOUBLE_EQ(x.grad().data_ptr<double>()[1], 0.25);  // the hook changed nothing

  Tensor x2 = tensor({0., 4.}, kFloat64).requires_grad_();
  Tensor y2 = (x2.sqrt() * 0).sum();
  Snapshot s2 = snapshot_with_gradients(y2, {.names = {{"x", x2}}});
  ASSERT_TRUE(only(s2, "x").grad.has_value());
  EXPECT_EQ(only(s2, "x").grad->nan_count, 1);
  EXPECT_TRUE(std::isnan(only(s2, "x").grad->norm));
  EXPECT_EQ(only(s2, "SqrtBackward0").grad->nan_count, 0);
  EXPECT_DOUBLE_EQ(only(s2, "SqrtBackward0").grad->norm, 0.);
}

TEST(GradientRecorder, HooksGoQuietWhenTheRecorderIsGone) {
  TanhExample ex;
  {
    GradientRecorder recorder(ex.L);
    ex.L.backward(Tensor(), true);
    EXPECT_TRUE(recorder.find(ex.L.grad_fn()->sequence_nr()).has_value());
  }
  ex.L.backward(Tensor(), true);  // the hooks still exist on the nodes but do nothing
  EXPECT_EQ(ex.x.grad().numel(), 3);
}

// [SECTION] forward recording ---------------------------------------------------------------------

TEST(ForwardRecorder, SeesTheNodesTheResultDoesNotDependOn) {
  // lesson 01's if: x.sum() decides the branch; its node is recorded, then dropped.
  Tensor x = tensor({1., 2.}).requires_grad_();
  ForwardRecorder recorder;
  Tensor y = x.sum().item<double>() > 0 ? (x * x).sum() : x.exp().sum();
  recorder.stop();
  Snapshot fwd = recorder.snapshot(y, {.names = {{"x", x}, {"y", y}}});
  Snapshot bwd = snapshot(y, {.names = {{"x", x}}});
  EXPECT_EQ(fwd.kind, GraphKind::Forward);
  ASSERT_EQ(fwd.nodes.size(), bwd.nodes.size() + 1);
  int unreachable = 0;
  std::set<uint64_t> reachable, backward;
  for (const GraphNode& n : fwd.nodes) {
    if (!n.reachable) {
      ++unreachable;
      EXPECT_EQ(n.name, "SumBackward0");  // the condition's x.sum()
    } else {
      reachable.insert(n.sequence_nr);
    }
  }
  for (const GraphNode& n : bwd.nodes) backward.insert(n.sequence_nr);
  EXPECT_EQ(unreachable, 1);
  EXPECT_EQ(reachable, backward);  // what the result depends on is its backward graph
  EXPECT_TRUE(only(fwd, "y").is_root);
  // Nodes in creation order: the condition's sum first, the root last.
  EXPECT_LT(fwd.nodes.front().sequence_nr, fwd.nodes.back().sequence_nr);
  EXPECT_TRUE(fwd.nodes.back().is_root || fwd.nodes.back().kind == NodeKind::Leaf);
}

TEST(ForwardRecorder, PairsEachAutogradDispatchWithItsNode) {
  Tensor x = tensor({1., 2., -1.}).requires_grad_();
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor c = tensor({1., 1., 1.});
  ForwardRecorder recorder;
  Tensor L = ((x * w).tanh() + c * c).sum();  // c * c needs no grad: no node
  recorder.stop();
  Tensor after = x * 2;  // not recorded: the recorder has stopped
  Snapshot s = recorder.snapshot(L);
  int autograd_ops = 0, with_node = 0, without = 0;
  std::set<int> paired;
  for (const OpRecord& op : s.ops) {
    if (op.key == "Autograd") {
      ++autograd_ops;
      ASSERT_GE(op.node, 0) << op.op;
      paired.insert(op.node);
      EXPECT_EQ(s.nodes[op.node].kind, NodeKind::Op);
    }
    (op.node >= 0 ? with_node : without) += 1;
  }
  EXPECT_EQ(autograd_ops, s.count(NodeKind::Op));  // mul, tanh, add, sum
  EXPECT_EQ(s.count(NodeKind::Op), 4);
  EXPECT_EQ(static_cast<int>(paired.size()), 4);
  EXPECT_EQ(with_node, 4);
  EXPECT_GT(without, 0);  // c * c and the backend runs below the Autograd key
  EXPECT_EQ(s.count(NodeKind::Leaf), 2);
  for (const GraphNode& n : s.nodes) EXPECT_TRUE(n.reachable);
}

// Each record names the op as the user wrote it and the dispatcher entry that served it
// (Note [Op names in events], core/dispatcher.h).
TEST(ForwardRecorder, OpRecordsNameTheOpAndItsEntry) {
  Tensor x = tensor({1., 2., -1.}).requires_grad_();
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor m = tensor({1., 2., 3., 4., 5., 6.}).view({3, 2}).requires_grad_();
  Tensor c = tensor({1., 1., 1.});
  ForwardRecorder recorder;
  Tensor a = ((x * w).tanh() + c * c).sum();
  Tensor b = addmm(c.slice(0, 0, 2), x.view({1, 3}), m).sum();  // c's slice needs no grad
  Tensor L = a + b;
  c.mul_(2);
  recorder.stop();
  Snapshot s = recorder.snapshot(L);
  std::vector<std::string> autograd, backend;
  for (const OpRecord& op : s.ops) {
    std::string text = op.op + "/" + op.entry;
    if (op.key == "Autograd") {
      autograd.push_back(text);
      ASSERT_GE(op.node, 0);
      EXPECT_EQ(s.nodes[op.node].op, op.op);  // the grad_fn's name says the same op
    } else {
      backend.push_back(text);
    }
  }
  EXPECT_EQ(autograd,
            (std::vector<std::string>{"mul/binary", "tanh/unary", "add/binary", "sum/reduce",
                                      "view/view", "addmm/addmm", "sum/reduce", "add/binary"}));
  auto has = [&](const std::string& t) {
    return std::find(backend.begin(), backend.end(), t) != backend.end();
  };
  EXPECT_TRUE(has("mul/binary"));  // c * c: no grad, Backend only
  EXPECT_TRUE(has("mul_/binary_"));
  EXPECT_TRUE(has("addmm/addmm"));
}

TEST(ForwardRecorder, SnapshotWithoutOutputKeepsEverythingReachable) {
  Tensor x = tensor({1., 2.}).requires_grad_();
  ForwardRecorder recorder;
  Tensor a = x * 2, b = x.exp();
  Snapshot s = recorder.snapshot();
  EXPECT_EQ(s.count(NodeKind::Op), 2);
  for (const GraphNode& n : s.nodes) {
    EXPECT_TRUE(n.reachable);
    EXPECT_FALSE(n.is_root);
  }
  // a's output is consumed by nothing, so only what a saved tells its shape: nothing.
  EXPECT_FALSE(only(s, "MulBackward0").output.known());
  EXPECT_EQ(only(s, "ExpBackward0").output.sizes, Sizes{2});  // exp saved its output
}

TEST(ForwardRecorder, RecordsOnlyItsOwnThread) {
  Tensor x = tensor({1., 2.}).requires_grad_();
  ForwardRecorder recorder;
  std::thread other([&] { Tensor y = x * 3; });
  other.join();
  Snapshot s = recorder.snapshot();
  EXPECT_EQ(s.count(NodeKind::Op), 0);
  EXPECT_TRUE(s.ops.empty());
}

}  // namespace
}  // namespace glass::viz
