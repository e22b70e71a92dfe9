// lessons/05_custom_functions/exercises/exercises_test.cpp — grades lesson 05's custom
// functions: their values against the library (or against the formula), their gradients
// against hand-derived ones, and every backward with glass::autograd::gradcheck in float64.
// Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson05 {
namespace {

using autograd::gradcheck;
using autograd::GradcheckResult;

std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size()) << t;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i])))
        << "element " << i << " of " << t;
}

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-12) {
  ASSERT_EQ(got.sizes(), want.sizes()) << got << "\nexpected\n" << want;
  expect_near(got, values(want), tol);
}

// gradcheck's verdict, with its report (both Jacobians) shown when it fails. The outputs
// must be finite first: a Jacobian full of nan compares as "not too far" from anything.
void expect_gradcheck(const autograd::DifferentiableFn& f, const tensor_list& inputs) {
  for (const Tensor& out : f(inputs)) {
    for (double v : values(out))
      ASSERT_TRUE(std::isfinite(v)) << "an output is not finite: " << out;
  }
  GradcheckResult r = gradcheck(f, inputs);
  EXPECT_TRUE(r.ok) << r.report;
}

// The names of the ops dispatched while `work` runs (core's OpDispatched events; an op the
// Autograd key passes on to the backend is named twice). With `node`, only those dispatched
// while that backward node runs: from its BackwardNodeRun event to the next node's.
std::vector<std::string> ops_dispatched(const std::function<void()>& work,
                                        const void* node = nullptr) {
  std::mutex mutex;
  std::vector<std::string> ops;
  const void* running = nullptr;
  events::Subscription watch([&](const events::Event& e) {
    std::lock_guard lock(mutex);
    if (e.kind == events::Kind::BackwardNodeRun)
      running = e.ptr;
    else if (e.kind == events::Kind::OpDispatched && (node == nullptr || running == node))
      ops.push_back(e.name);
  });
  work();
  return ops;
}

tensor_list lse_fn(const tensor_list& in) { return {LogSumExp::apply(in[0])}; }
tensor_list exp_fn(const tensor_list& in) { return {MyExp::apply(in[0])}; }

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1LogSumExp, ValuesMatchTheLibraryForEveryShape) {
  manual_seed(5);
  for (const Shape& shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{4, 1}}) {
    Tensor x = randn(shape, kDouble) * 3;
    Tensor y = LogSumExp::apply(x);
    expect_close(y, x.logsumexp({-1}));
  }
  // A worked example: log(1 + 3) = log 4.
  expect_near(LogSumExp::apply(tensor({0.0, std::log(3.0)}, kDouble)), {std::log(4.0)});
}

TEST(Exercise1LogSumExp, HugeInputsStayFinite) {
  Tensor x = tensor({{1000., 1000.}, {-1000., -1000.}, {1000., -1000.}}, kDouble).requires_grad_();
  Tensor y = LogSumExp::apply(x);
  // log(e^1000 + e^1000) = 1000 + log 2; the -1000 row likewise; e^-1000 is nothing next
  // to e^1000, so the last row is 1000. A forward that calls exp(x) directly gives inf
  // and -inf (then nan).
  expect_near(y, {1000 + std::log(2.0), -1000 + std::log(2.0), 1000.});
  y.sum().backward();
  ASSERT_TRUE(x.grad().defined());
  expect_near(x.grad(), {0.5, 0.5, 0.5, 0.5, 1., 0.});  // the softmax of each row
}

TEST(Exercise1LogSumExp, GradientIsSoftmaxTimesTheIncomingGradient) {
  Tensor x = tensor({{0.0, std::log(3.0)}, {1.0, 1.0}}, kDouble).requires_grad_();
  Tensor y = LogSumExp::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "LogSumExpBackward");
  (y * tensor({2., 10.}, kDouble)).sum().backward();
  // softmax rows: [1/4, 3/4] and [1/2, 1/2]; each row scaled by its own incoming gradient.
  expect_near(x.grad(), {0.5, 1.5, 5., 5.});
  expect_close(x.grad(), x.detach().softmax(-1) * tensor({{2.}, {10.}}, kDouble));
}

TEST(Exercise1LogSumExp, PassesGradcheck) {
  manual_seed(6);
  expect_gradcheck(lse_fn, {randn({3, 4}, kDouble)});
  expect_gradcheck(lse_fn, {randn({5}, kDouble)});
  expect_gradcheck(lse_fn, {tensor({{1000., 999.5, -1000.}, {-1000., -1001., -999.}}, kDouble)});
}

// ---- exercise 2 ------------------------------------------------------------------------

TEST(Exercise2MyExp, ValuesAndGradient) {
  Tensor x = tensor({-1., 0., 0.5, 2.}, kDouble).requires_grad_();
  Tensor y = MyExp::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "MyExpBackward");
  expect_near(y, {std::exp(-1.), 1., std::exp(0.5), std::exp(2.)});
  (y * tensor({1., 2., 3., 4.}, kDouble)).sum().backward();
  expect_near(x.grad(), {std::exp(-1.), 2., 3 * std::exp(0.5), 4 * std::exp(2.)});
}

TEST(Exercise2MyExp, PassesGradcheck) {
  manual_seed(7);
  expect_gradcheck(exp_fn, {randn({2, 3}, kDouble)});
}

// "" or why the exp Function F does not save its output and reuse it in backward.
template <class F>
std::string grade_saves_output() {
  Tensor x = tensor({0., 1., 2.}, kDouble).requires_grad_();
  Tensor y = F::apply(x);
  // Overwrite x's storage after forward (x.detach() shares it, and its version counter).
  // A backward that saved x would now refuse: "modified by an inplace operation".
  x.detach().fill_(-5.);
  std::vector<std::string> ops;
  try {
    ops = ops_dispatched([&] { y.sum().backward(); });
  } catch (const Error& e) {
    return std::string(
               "backward failed once x was overwritten: save the output y, not the "
               "input x (") +
           e.what() + ")";
  }
  // A saved copy of x survives the overwrite, but then backward must run exp again.
  for (const std::string& op : ops)
    if (op == "exp" || op == "exp_" || op == "pow" || op == "pow_")
      return "backward dispatched " + op +
             ": save the output y = exp(x) and multiply by it, so backward costs no exp";
  const std::vector<double> want = {1., std::exp(1.), std::exp(2.)}, got = values(x.grad());
  for (size_t i = 0; i < want.size(); ++i)
    if (got.size() != want.size() || std::abs(got[i] - want[i]) > 1e-12 * want[i])
      return "x.grad() is wrong after x was overwritten";
  return "";
}

TEST(Exercise2MyExp, SavesItsOutputSoTheInputMayBeOverwritten) {
  EXPECT_EQ(grade_saves_output<MyExp>(), "");
}

TEST(Exercise2MyExp, TheGraderRejectsACopyOfTheInputAndASecondExp) {
  const std::string why = grade_saves_output<wrong::ExpSavingInput>();
  EXPECT_NE(why.find("backward dispatched exp"), std::string::npos) << why;
}

// ---- exercise 3 ------------------------------------------------------------------------

TEST(Exercise3Huber, ValuesInsideAndOutsideTheBand) {
  Tensor x = tensor({-3., -0.5, 0., 0.5, 3.}, kDouble);
  Tensor t = zeros({5}, kDouble);
  // |d| <= 1: 0.5 d^2; beyond: 1 * (|d| - 0.5).
  expect_near(Huber::apply(x, t, 1.0), {2.5, 0.125, 0., 0.125, 2.5});
  // delta 4 puts every d inside the band: 0.5 d^2 throughout.
  expect_near(Huber::apply(x, t, 4.0), {4.5, 0.125, 0., 0.125, 4.5});
}

TEST(Exercise3Huber, GradientsForBothTensorInputs) {
  Tensor x = tensor({-3., -0.5, 0., 0.5, 3.}, kDouble).requires_grad_();
  Tensor t = tensor({0., 0., 0., 0., 1.}, kDouble).requires_grad_();
  Tensor y = Huber::apply(x, t, 1.0);
  EXPECT_EQ(y.grad_fn()->name(), "HuberBackward");
  y.sum().backward();
  // d = [-3, -0.5, 0, 0.5, 2]: clamp(d, -1, 1) for x, its negative for the target.
  expect_near(x.grad(), {-1., -0.5, 0., 0.5, 1.});
  expect_near(t.grad(), {1., 0.5, 0., -0.5, -1.});
}

TEST(Exercise3Huber, TargetWithoutGradient) {
  Tensor x = tensor({-3., 0.25}, kDouble).requires_grad_();
  Huber::apply(x, tensor({0., 0.}, kDouble), 1.0).sum().backward();
  expect_near(x.grad(), {-1., 0.25});
}

TEST(Exercise3Huber, EachCallKeepsItsOwnDelta) {
  // Two calls in one graph with different deltas: each backward must read its own.
  Tensor x = tensor({-3., 1.5, 0.5}, kDouble).requires_grad_();
  Tensor t = zeros({3}, kDouble);
  (Huber::apply(x, t, 1.0) + Huber::apply(x, t, 2.0)).sum().backward();
  // clamp(d, -1, 1) + clamp(d, -2, 2) with d = x.
  expect_near(x.grad(), {-3., 2.5, 1.});
}

// "" or why the Huber Function F computes a gradient nobody needs: with only x requiring
// a gradient, its backward must dispatch fewer ops than with both x and the target.
template <class F>
std::string grade_needs_input_grad() {
  auto ops_in_backward = [](bool x_needs, bool target_needs) {
    Tensor x = tensor({-3., 0.25, 2.}, kDouble).requires_grad_(x_needs);
    Tensor t = tensor({0., 0., 1.}, kDouble).requires_grad_(target_needs);
    Tensor y = F::apply(x, t, 1.0);
    return ops_dispatched([&] { y.sum().backward(); }, y.grad_fn().get()).size();
  };
  const size_t both = ops_in_backward(true, true), x_only = ops_in_backward(true, false);
  if (x_only >= both)
    return "backward dispatched " + std::to_string(x_only) +
           " ops when the target needs no gradient and " + std::to_string(both) +
           " when it does: compute grad_target only when ctx->needs_input_grad(1)";
  return "";
}

TEST(Exercise3Huber, ComputesOnlyTheGradientsTheInputsNeed) {
  EXPECT_EQ(grade_needs_input_grad<Huber>(), "");
}

TEST(Exercise3Huber, TheGraderRejectsAnUnneededGradient) {
  const std::string why = grade_needs_input_grad<wrong::HuberIgnoringNeedsInputGrad>();
  EXPECT_NE(why.find("needs_input_grad(1)"), std::string::npos) << why;
}

TEST(Exercise3Huber, PassesGradcheck) {
  // d = [-3, -0.4, 0.6, 0.5, 2.1, 1.2]: no |d| within eps of the kinks at delta = 1 and 2.
  Tensor x = tensor({-2.5, -0.3, 0.2, 0.7, 3.1, 1.6}, kDouble);
  Tensor t = tensor({0.5, 0.1, -0.4, 0.2, 1.0, 0.4}, kDouble);
  for (double delta : {1.0, 2.0}) {
    expect_gradcheck(
        [delta](const tensor_list& in) -> tensor_list {
          return {Huber::apply(in[0], in[1], delta)};
        },
        {x, t});
  }
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// No exercise may call the library's logsumexp, softmax or log_softmax.
const std::vector<std::string> kBans = {"glass::Tensor::logsumexp(",
                                        "glass::Tensor::softmax(",
                                        "glass::Tensor::log_softmax(",
                                        "glass::logsumexp(",
                                        "glass::softmax(",
                                        "glass::log_softmax(",
                                        "glass::nn::functional::softmax(",
                                        "glass::nn::functional::log_softmax(",
                                        "glass::nn::functional::logsumexp(",
                                        "glass::ops::softmax"};

// "" or "exercise N must not call X. " for each banned call that a forward or backward of the
// three Functions named (lse, exp, huber) makes in `object`, with its helpers and lambdas.
std::string banned_calls(const std::string& object, const std::string& lse, const std::string& exp,
                         const std::string& huber) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, lse + "::", kBans) +
         exercise_calls_banned(object, 2, exp + "::", kBans) +
         exercise_calls_banned(object, 3, huber + "::", kBans);
}

TEST(Lesson05Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON05_ANSWERS_OBJECT, "glass::lesson05::LogSumExp",
                         "glass::lesson05::MyExp", "glass::lesson05::Huber"),
            "")
      << GLASS_LESSON05_ANSWERS_OBJECT;
}

TEST(Lesson05Bans, TheSymbolCheckCatchesTheLibrarysLogSumExp) {
  const std::string found = lessons::exercise_calls_banned(
      GLASS_LESSON05_WRONG_OBJECT, 1, "glass::lesson05::wrong::LogSumExpByLibrary::", kBans);
  EXPECT_NE(found.find("exercise 1 must not call glass::Tensor::logsumexp("), std::string::npos)
      << found;
  EXPECT_NE(found.find("exercise 1 must not call glass::Tensor::softmax("), std::string::npos)
      << found;
  // Its values and gradients are right: only the symbol check tells it apart.
  manual_seed(8);
  expect_gradcheck(
      [](const tensor_list& in) -> tensor_list {
        return {wrong::LogSumExpByLibrary::apply(in[0])};
      },
      {randn({3, 4}, kDouble)});
}

}  // namespace
}  // namespace glass::lesson05
