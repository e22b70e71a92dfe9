// lessons/01_imperative_model/exercises/exercises_test.cpp — grades lesson 01's exercises:
// node counts of graphs whose size is known by hand, a data-dependent loop whose graph
// depth and gradient are checked against the formula, and a straight-through sign whose
// gradient must pass unchanged. Built against solution.cpp or student.cpp
// (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson01 {
namespace {

std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size()) << t;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i])))
        << "element " << i << " of " << t;
}

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1CountNodes, TensorsWithoutAGraphHaveNone) {
  Tensor x = tensor({1., 2.}).requires_grad_();
  Tensor c = tensor({3., 4.});
  EXPECT_EQ(count_nodes(x), 0) << "a leaf has no grad_fn";
  EXPECT_EQ(count_nodes(c), 0);
  EXPECT_EQ(count_nodes(c * c), 0) << "no input requires grad: nothing is recorded";
  EXPECT_EQ(count_nodes(x.detach() * 2), 0);
}

TEST(Exercise1CountNodes, SmallGraphsCountedByHand) {
  Tensor x = tensor({1., 2., 3.}).requires_grad_();
  Tensor w = tensor({4., 5., 6.}).requires_grad_();
  EXPECT_EQ(count_nodes(x * 2), 2) << "MulBackward0, AccumulateGrad(x); the 2 has no node";
  EXPECT_EQ(count_nodes((x * w).sum()), 4) << "Sum, Mul, AccumulateGrad(x), AccumulateGrad(w)";
  EXPECT_EQ(count_nodes(x * x), 2) << "a leaf used twice has one AccumulateGrad";
  EXPECT_EQ(count_nodes((x * x.detach()).sum()), 3) << "the detached input adds nothing";
}

TEST(Exercise1CountNodes, SharedSubexpressionsCountOnce) {
  Tensor x = tensor({1., 2., 3.}).requires_grad_();
  Tensor w = tensor({4., 5., 6.}).requires_grad_();
  Tensor h = x * w;
  // The README's section 3: Sum, Mul, h's Mul (reached twice), two AccumulateGrads.
  EXPECT_EQ(count_nodes((h * h).sum()), 5);
  // The README's section 7: Sum, Mul, r's Sub (reached twice), Mul, AccumulateGrad(w).
  Tensor r = w * tensor({1., 2., 3.}) - tensor({2., 4., 6.});
  EXPECT_EQ(count_nodes((r * r).sum()), 5);
}

TEST(Exercise1CountNodes, LongChainsAndManyPaths) {
  Tensor x = tensor({1.}).requires_grad_();
  Tensor chain = x;
  for (int i = 0; i < 1000; ++i) chain = chain * 2;
  EXPECT_EQ(count_nodes(chain), 1001) << "1000 MulBackward0 and one AccumulateGrad";
  // Each y + y has two edges to the previous node: 21 nodes, but 2^21 - 1 paths from the
  // top. Counting paths instead of nodes gives 2097151.
  Tensor y = x;
  for (int i = 0; i < 20; ++i) y = y + y;
  EXPECT_EQ(count_nodes(y), 21);
}

// ---- exercise 2 ------------------------------------------------------------------------

// Follows y's graph down the chain of squarings and returns how many MulBackward0 nodes,
// each with both edges to the same node, lead to x's AccumulateGrad.
int64_t squaring_depth(const Tensor& y) {
  const autograd::Node* node = y.grad_fn().get();
  int64_t depth = 0;
  while (node != nullptr && node->name() == "MulBackward0") {
    const auto& edges = node->next_edges();
    EXPECT_EQ(edges.size(), 2u);
    EXPECT_TRUE(edges[0].is_valid() && edges[0].function == edges[1].function)
        << "each step must be y * y: both edges of its MulBackward0 lead to the previous y";
    node = edges[0].function.get();
    ++depth;
  }
  EXPECT_TRUE(node == nullptr || node->name() == "AccumulateGrad")
      << "the chain should end at x's AccumulateGrad, not at " << node->name();
  return depth;
}

TEST(Exercise2SquareUntil, StepsValueAndGradientForOneInput) {
  // Norms: 1.92 -> 2.67 -> 5.47 -> 26.0, so three squarings pass 10 and y = x^8.
  Tensor x = tensor({1.5, -1.2}, kDouble).requires_grad_();
  SquaringResult r = square_until(x, 10);
  EXPECT_EQ(r.steps, 3);
  expect_near(r.y, {std::pow(1.5, 8), std::pow(-1.2, 8)});
  EXPECT_EQ(squaring_depth(r.y), 3);
  r.y.sum().backward();
  // d/dx x^8 = 8 x^7: 8 * 1.5^7 = 136.6875 and 8 * (-1.2)^7 = -28.6654464.
  expect_near(x.grad(), {136.6875, -28.6654464});
}

TEST(Exercise2SquareUntil, DifferentDataGivesADifferentGraph) {
  struct Case {
    std::vector<double> x;
    int64_t steps;
  };
  // [3, 4] has norm 5: one squaring ([9, 16], norm 18.4). [6, 8] has norm exactly 10, and
  // the loop runs while the norm is <= the threshold: one squaring too. [30, 40] is past
  // it already: no squaring at all.
  for (const Case& c :
       {Case{{3., 4.}, 1}, Case{{6., 8.}, 1}, Case{{30., 40.}, 0}, Case{{1.1, 0.5}, 5}}) {
    Tensor x = tensor(c.x, kDouble).requires_grad_();
    SquaringResult r = square_until(x, 10);
    EXPECT_EQ(r.steps, c.steps) << x.detach();
    EXPECT_EQ(squaring_depth(r.y), c.steps) << x.detach();
    r.y.sum().backward();
    double n = std::pow(2.0, static_cast<double>(c.steps));  // y = x^n, dy/dx = n x^(n-1)
    expect_near(x.grad(), {n * std::pow(c.x[0], n - 1), n * std::pow(c.x[1], n - 1)});
  }
}

TEST(Exercise2SquareUntil, ZeroStepsReturnsXItself) {
  Tensor x = tensor({30., 40.}).requires_grad_();
  SquaringResult r = square_until(x, 10);
  EXPECT_EQ(r.steps, 0);
  EXPECT_TRUE(r.y.is_same(x)) << "with no squaring, y is x: a leaf with no grad_fn";
}

TEST(Exercise2SquareUntil, WorksWithoutAutogradToo) {
  SquaringResult r = square_until(tensor({3., 4.}), 10);
  EXPECT_EQ(r.steps, 1);
  EXPECT_FALSE(r.y.requires_grad());
  expect_near(r.y, {9., 16.});
}

TEST(Exercise2SquareUntil, GivesUpAfterMaxSteps) {
  ASSERT_NO_THROW(square_until(tensor({3., 4.}), 10));  // so that always throwing does not pass
  EXPECT_THROW(square_until(tensor({0.5, 0.5}), 10), Error);
  EXPECT_THROW(square_until(tensor({1.1, 0.5}, kDouble), 10, 4), Error) << "needs 5 squarings";
  EXPECT_EQ(square_until(tensor({1.1, 0.5}, kDouble), 10, 5).steps, 5);
}

// ---- exercise 3 ------------------------------------------------------------------------

TEST(Exercise3StraightThroughSign, ValuesAreTheSign) {
  Tensor x = tensor({-2., -0.5, 0., 0.25, 3.}).requires_grad_();
  Tensor y = straight_through_sign(x);
  EXPECT_EQ(y.sizes(), x.sizes());
  EXPECT_EQ(y.dtype(), kFloat);
  expect_near(y, {-1., -1., 0., 1., 1.}, 1e-6);
  EXPECT_EQ(straight_through_sign(x.to(kDouble)).dtype(), kDouble);
}

TEST(Exercise3StraightThroughSign, TheGradientPassesUnchanged) {
  Tensor x = tensor({-2., -0.5, 0., 0.25, 3.}).requires_grad_();
  Tensor y = straight_through_sign(x);
  ASSERT_TRUE(y.requires_grad()) << "the result must be part of x's graph";
  (y * tensor({1., 2., 3., 4., 5.})).sum().backward();
  ASSERT_TRUE(x.grad().defined()) << "no gradient reached x";
  expect_near(x.grad(), {1., 2., 3., 4., 5.}, 1e-6);
}

TEST(Exercise3StraightThroughSign, InsideALargerGraph) {
  // z = sum(sts(x) * w): dz/dw is the forward value, sign(x); dz/dx is w, as if sts were x.
  Tensor x = tensor({-1.5, 2.5}, kDouble).requires_grad_();
  Tensor w = tensor({3., -4.}, kDouble).requires_grad_();
  (straight_through_sign(x) * w).sum().backward();
  expect_near(w.grad(), {-1., 1.});
  expect_near(x.grad(), {3., -4.});
}

TEST(Exercise3StraightThroughSign, NoGraphWhenXNeedsNoGradient) {
  Tensor y = straight_through_sign(tensor({-3., 4.}));
  EXPECT_FALSE(y.requires_grad());
  expect_near(y, {-1., 1.});
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// Exercise 3 is lesson 01's detach trick: a custom autograd::Function (lesson 05) is banned.
// Function<T>::apply is a template compiled into the answer; it names its node through
// custom_node_name (demangled with an [abi:cxx11] tag before its parameters) and makes a
// CustomNode, whose vtable the library defines.
const std::vector<std::string> kBans3 = {"glass::autograd::custom_node_name",
                                         "vtable for glass::autograd::CustomNode"};

TEST(Lesson01Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(lessons::exercise_calls_banned(GLASS_LESSON01_ANSWERS_OBJECT, 3,
                                           "glass::lesson01::straight_through_sign(", kBans3),
            "")
      << GLASS_LESSON01_ANSWERS_OBJECT;
}

TEST(Lesson01Bans, TheSymbolCheckCatchesACustomFunction) {
  const std::string found = lessons::exercise_calls_banned(
      GLASS_LESSON01_WRONG_OBJECT, 3, "glass::lesson01::wrong::straight_through_sign_by_function(",
      kBans3);
  EXPECT_TRUE(found.starts_with("exercise 3 must not call glass::autograd::")) << found;
  // Its values and gradient are right: only the symbol check tells it apart.
  Tensor x = tensor({-1.5, 2.5}, kDouble).requires_grad_();
  Tensor y = wrong::straight_through_sign_by_function(x);
  expect_near(y, {-1., 1.});
  (y * tensor({3., -4.}, kDouble)).sum().backward();
  expect_near(x.grad(), {3., -4.});
}

}  // namespace
}  // namespace glass::lesson01
