// lessons/07_seeing_it/exercises/exercises_test.cpp — grades lesson 07's exercises on the
// viewer's own demos (viewer/demos.h: the earlier lessons' models, built from a fixed
// seed), on small snapshots made by hand, whose answers can be read off, and (exercise 3)
// on sigmoid MLPs whose answer autograd::grad computes without the viewer. Built against
// solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
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

// A stack of Linear layers, each but the last followed by a Sigmoid, with widths[k] ->
// widths[k + 1]; layer k's weight scaled by scales[k] (a large weight saturates the sigmoid
// after it), and the MSE loss on a batch of 8 random inputs and targets.
struct VanishCase {
  std::string name;
  std::vector<int64_t> widths;
  std::vector<double> scales;
};

struct Built {
  nn::Sequential model;
  Tensor loss;
};

Built build(const VanishCase& c, uint64_t seed) {
  manual_seed(seed);
  nn::Sequential model;
  for (size_t k = 0; k + 1 < c.widths.size(); ++k) {
    nn::Linear layer(c.widths[k], c.widths[k + 1]);
    {
      NoGradGuard no_grad;
      layer->weight.mul_(c.scales[k]);
    }
    model->push_back(layer);
    if (k + 2 < c.widths.size()) model->push_back(nn::Sigmoid());
  }
  Tensor x = randn({8, c.widths.front()});
  Tensor target = rand({8, c.widths.back()});
  Tensor loss = nn::functional::mse_loss(model->forward(x), target);
  return {model, loss};
}

// The norm of t, in double, with plain tensor ops.
double norm_of(const Tensor& t) { return t.to(kDouble).pow(2).sum().sqrt().item<double>(); }

// The answer, computed without the viewer: autograd::grad of the loss with respect to
// every weight (keeping the graph for the answer under test), each norm divided by its
// weight's.
std::string reference_layer(nn::Module& model, const Tensor& loss) {
  std::vector<std::string> paths;
  std::vector<Tensor> weights;
  for (const auto& [name, w] : model.named_parameters()) {
    if (!name.ends_with(".weight")) continue;
    paths.push_back(name.substr(0, name.size() - 7));
    weights.push_back(w);
  }
  const std::vector<Tensor> grads = autograd::grad({loss}, weights, {}, /*retain_graph=*/true);
  size_t best = 0;
  std::vector<double> ratios;
  for (size_t k = 0; k < weights.size(); ++k) {
    ratios.push_back(norm_of(grads[k]) / norm_of(weights[k]));
    if (ratios[k] < ratios[best]) best = k;
  }
  return paths[best];
}

const std::vector<VanishCase>& vanish_cases() {
  static const std::vector<VanishCase> cases = {
      {"deep sigmoid stack", {16, 16, 16, 16, 16, 16, 16}, {1, 1, 1, 1, 1, 1}},
      {"wide first layer", {256, 8, 8, 8}, {1, 1, 1}},
      {"a saturated middle layer", {8, 8, 8, 8, 8, 8}, {1, 1, 12, 1, 1}},
      {"a saturated last hidden layer", {8, 8, 8, 8, 8}, {1, 1, 1, 12}},
      {"large weights everywhere", {8, 8, 8, 8}, {6, 6, 6}},
  };
  return cases;
}

using VanishingLayerFn = std::string (*)(nn::Module&, const Tensor&);

// "" or the first case (and seed) where `fn` names another layer than the reference.
std::string grade_vanishing_layer(VanishingLayerFn fn) {
  for (const VanishCase& c : vanish_cases()) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      Built b = build(c, seed);
      const std::string want = reference_layer(*b.model, b.loss);
      const std::string got = fn(*b.model, b.loss);
      if (got != want)
        return c.name + " (seed " + std::to_string(seed) + "): you say \"" + got +
               "\", the gradients say \"" + want + "\"";
    }
  }
  return "";
}

TEST(Exercise3VanishingLayer, ADeepSigmoidStackVanishesAtTheBottom) {
  // Each sigmoid multiplies the gradient by at most 1/4 on its way down: the first layer
  // gets the least.
  Built b = build(vanish_cases()[0], 0);
  EXPECT_EQ(vanishing_layer(*b.model, b.loss), "0");
}

TEST(Exercise3VanishingLayer, MatchesTheGradientsOnEveryModel) {
  EXPECT_EQ(grade_vanishing_layer(vanishing_layer), "");
}

TEST(Exercise3VanishingLayer, TheModelsDoNotAllVanishInOnePlace) {
  std::set<std::string> answers;
  for (const VanishCase& c : vanish_cases()) {
    Built b = build(c, 0);
    answers.insert(reference_layer(*b.model, b.loss));
  }
  EXPECT_GE(answers.size(), 2u) << "a grader whose answer is always the same layer proves little";
}

TEST(Exercise3VanishingLayer, TheGraderRejectsEachWrongRule) {
  EXPECT_NE(grade_vanishing_layer(wrong::vanishing_layer_absolute), "");
  EXPECT_NE(grade_vanishing_layer(wrong::vanishing_layer_largest), "");
  EXPECT_NE(grade_vanishing_layer(wrong::vanishing_layer_first), "");
  // The gradients from backward(): the right layer, caught by the symbol check.
  EXPECT_EQ(grade_vanishing_layer(wrong::vanishing_layer_by_backward), "");
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// Exercise 3 reads the gradients from the snapshot, not from a backward of its own. (Its
// function returns a std::string, so its demangled name reads vanishing_layer[abi:cxx11](
// under libstdc++: the prefix stops before the bracket.)
const std::vector<std::string> kBans3 = {"glass::Tensor::backward(", "glass::Tensor::grad(",
                                         "glass::autograd::backward(", "glass::autograd::grad("};

TEST(Lesson07Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(lessons::exercise_calls_banned(GLASS_LESSON07_ANSWERS_OBJECT, 3,
                                           "glass::lesson07::vanishing_layer", kBans3),
            "")
      << GLASS_LESSON07_ANSWERS_OBJECT;
}

TEST(Lesson07Bans, TheSymbolCheckCatchesEachBannedCall) {
  const std::string found =
      lessons::exercise_calls_banned(GLASS_LESSON07_WRONG_OBJECT, 3,
                                     "glass::lesson07::wrong::vanishing_layer_by_backward", kBans3);
  EXPECT_NE(found.find("exercise 3 must not call glass::Tensor::backward("), std::string::npos)
      << found;
  EXPECT_NE(found.find("exercise 3 must not call glass::Tensor::grad("), std::string::npos)
      << found;
}

}  // namespace
}  // namespace glass::lesson07
