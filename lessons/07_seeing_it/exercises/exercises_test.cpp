// lessons/07_seeing_it/exercises/exercises_test.cpp — grades lesson 07's exercises on the
// viewer's own demos (viewer/demos.h: the earlier lessons' models, built from a fixed
// seed) and on small snapshots made by hand, whose answers can be read off. Built against
// solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "viewer/demos.h"
#include "viewer/modules.h"
#include "wrong_answers.h"

namespace glass::lesson07 {
namespace {

// A snapshot of n op nodes, with nothing else set.
viz::Snapshot nodes(int n) {
  viz::Snapshot s;
  for (int i = 0; i < n; ++i) {
    viz::GraphNode node;
    node.id = i;
    node.name = "Op" + std::to_string(i);
    s.nodes.push_back(node);
  }
  return s;
}

viz::GradStats norm(double v) { return {.numel = 1, .norm = v, .max_abs = std::abs(v)}; }

// ---- exercise 1 ------------------------------------------------------------------------------

TEST(NodesPerModule, CountsByHand) {
  viz::Snapshot s = nodes(4);
  s.nodes[0].module = "fc1";
  s.nodes[1].module = "fc1";
  s.nodes[2].module = "fc2";
  std::map<std::string, int> want = {{"", 1}, {"fc1", 2}, {"fc2", 1}};
  EXPECT_EQ(nodes_per_module(s), want);
}

TEST(NodesPerModule, EmptySnapshotHasNoEntries) {
  EXPECT_TRUE(nodes_per_module(viz::Snapshot{}).empty());
}

TEST(NodesPerModule, MatchesWhatCollapseModulesFolds) {
  // Lesson 06's MLP: each folded box stands for exactly the nodes of its module.
  viz::Snapshot s = viz::capture(viz::find_demo("mlp"), {.gradients = false});
  std::map<std::string, int> counts = nodes_per_module(s);
  int total = 0;
  for (const auto& [path, count] : counts) total += count;
  EXPECT_EQ(total, static_cast<int>(s.nodes.size()));
  viz::Snapshot folded = viz::collapse_modules(s);
  int boxes = 0;
  for (const viz::GraphNode& n : folded.nodes) {
    if (n.kind != viz::NodeKind::Module) continue;
    ++boxes;
    ASSERT_TRUE(counts.contains(n.label)) << n.label;
    EXPECT_EQ(counts[n.label], static_cast<int>(n.members.size())) << n.label;
  }
  EXPECT_EQ(boxes, 3);  // fc1, fc2, fc3
}

// ---- exercise 2 ------------------------------------------------------------------------------

TEST(LargestGradientNode, NoGradientsGiveMinusOne) {
  EXPECT_EQ(largest_gradient_node(nodes(3)), -1);
  EXPECT_EQ(largest_gradient_node(viz::Snapshot{}), -1);
}

TEST(LargestGradientNode, PicksTheLargestNorm) {
  viz::Snapshot s = nodes(4);
  s.nodes[0].grad = norm(0.5);
  s.nodes[2].grad = norm(3.0);
  s.nodes[3].grad = norm(2.0);
  EXPECT_EQ(largest_gradient_node(s), 2);
}

TEST(LargestGradientNode, TiesGoToTheSmallestId) {
  viz::Snapshot s = nodes(3);
  s.nodes[0].grad = norm(1.0);
  s.nodes[1].grad = norm(4.0);
  s.nodes[2].grad = norm(4.0);
  EXPECT_EQ(largest_gradient_node(s), 1);
}

TEST(LargestGradientNode, NanNeverWinsInfDoes) {
  viz::Snapshot s = nodes(3);
  s.nodes[0].grad = norm(std::numeric_limits<double>::quiet_NaN());
  s.nodes[1].grad = norm(1.0);
  EXPECT_EQ(largest_gradient_node(s), 1);
  s.nodes[2].grad = norm(std::numeric_limits<double>::infinity());
  EXPECT_EQ(largest_gradient_node(s), 2);
  viz::Snapshot only_nan = nodes(1);
  only_nan.nodes[0].grad = norm(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(largest_gradient_node(only_nan), -1);
}

TEST(LargestGradientNode, TanhMlpIsTheBias) {
  // Lesson 04: b's gradient is sum(1 - y^2) = 2.2064, just above |w.grad()| = 2.19; every
  // op node receives less (|dL/dz| = 1.34, |dL/dy| = sqrt(3)).
  viz::Snapshot s = viz::capture(viz::find_demo("tanh_mlp"));
  int id = largest_gradient_node(s);
  ASSERT_GE(id, 0);
  EXPECT_EQ(s.nodes[id].label, "b");
  EXPECT_NEAR(s.nodes[id].grad->norm, 2.2064, 1e-4);
}

// ---- exercise 3 ------------------------------------------------------------------------------

// Calls f on every index of a tensor of these sizes, in row-major order.
void each_index(const std::vector<int64_t>& sizes,
                const std::function<void(std::vector<int64_t>&)>& f) {
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t s : sizes)
    if (s == 0) return;
  while (true) {
    f(idx);
    size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (sizes.empty()) return;
  }
}

void expect_every_cell_matches(const viz::app::StrideLab& lab) {
  std::vector<int64_t> sizes(lab.view().sizes().begin(), lab.view().sizes().end());
  int cells = 0;
  each_index(sizes, [&](std::vector<int64_t>& idx) {
    ++cells;
    EXPECT_EQ(storage_address(lab, idx), lab.storage_index(idx))
        << lab.expression() << " at cell " << ::testing::PrintToString(idx);
  });
  EXPECT_EQ(cells, lab.view().numel());
}

TEST(StorageAddress, TheLessonsWalk) {
  viz::app::StrideLab lab;
  lab.reset(arange(12).view({3, 4}), "a");
  EXPECT_EQ(storage_address(lab, {1, 2}), 6);
  expect_every_cell_matches(lab);
  lab.transpose(0, 1);
  EXPECT_EQ(storage_address(lab, {1, 2}), 9);
  expect_every_cell_matches(lab);
  lab.slice(0, 1, 4, 2);
  EXPECT_EQ(storage_address(lab, {1, 2}), 11);
  expect_every_cell_matches(lab);
}

TEST(StorageAddress, OffsetsExpandAndThreeDims) {
  viz::app::StrideLab lab;
  lab.reset(arange(24).view({2, 3, 4}), "t");
  expect_every_cell_matches(lab);
  lab.permute({2, 0, 1});
  expect_every_cell_matches(lab);
  lab.select(1, 1);  // a storage offset of 12
  EXPECT_EQ(lab.view().storage_offset(), 12);
  expect_every_cell_matches(lab);
  viz::app::StrideLab row;
  row.reset(arange(4).view({1, 4}), "r");
  row.expand({3, 4});  // stride 0: every row reads the same cells
  EXPECT_EQ(storage_address(row, {2, 3}), 3);
  expect_every_cell_matches(row);
}

TEST(StorageAddress, RejectsBadIndices) {
  viz::app::StrideLab lab;
  lab.reset(arange(12).view({3, 4}), "a");
  ASSERT_EQ(storage_address(lab, {2, 3}), 11);  // a valid index first: a stub throws for all
  EXPECT_THROW(storage_address(lab, {1}), glass::Error);
  EXPECT_THROW(storage_address(lab, {1, 2, 0}), glass::Error);
  EXPECT_THROW(storage_address(lab, {3, 0}), glass::Error);
  EXPECT_THROW(storage_address(lab, {0, -1}), glass::Error);
  EXPECT_THROW(storage_address(lab, {-1, 0}), glass::Error);
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// Exercise 3 is lesson 02's exercise 1 on the stride lab's view: it bans what that one
// bans, the library's address formula, and the lab's own.
const std::vector<std::string> kBans3 = {"glass::storage_index(",
                                         "glass::viz::app::StrideLab::storage_index("};

TEST(Lesson07Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(lessons::exercise_calls_banned(GLASS_LESSON07_ANSWERS_OBJECT, 3,
                                           "glass::lesson07::storage_address(", kBans3),
            "")
      << GLASS_LESSON07_ANSWERS_OBJECT;
}

TEST(Lesson07Bans, TheSymbolCheckCatchesEachBannedCall) {
  const std::string object = GLASS_LESSON07_WRONG_OBJECT;
  const std::string lab = lessons::exercise_calls_banned(
      object, 3, "glass::lesson07::wrong::storage_address_by_lab(", kBans3);
  EXPECT_TRUE(
      lab.starts_with("exercise 3 must not call glass::viz::app::StrideLab::storage_index("))
      << lab;
  const std::string library = lessons::exercise_calls_banned(
      object, 3, "glass::lesson07::wrong::storage_address_by_library(", kBans3);
  EXPECT_TRUE(library.starts_with("exercise 3 must not call glass::storage_index(")) << library;
}

}  // namespace
}  // namespace glass::lesson07
