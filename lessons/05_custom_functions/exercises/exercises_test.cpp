// lessons/05_custom_functions/exercises/exercises_test.cpp — grades lesson 05's custom
// functions: their values against the library (or against the formula), their gradients
// against hand-derived ones, and every backward with glass::autograd::gradcheck in float64.
// Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <sstream>
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

// ---- exercise 4 ------------------------------------------------------------------------

// The shape pairs (a, b) exercise 4 is graded on, each with what it tries.
struct ShapePair {
  Shape a, b;
  const char* what;
};
const std::vector<ShapePair> kShapePairs = {
    {{3, 1}, {4}, "a column and a row: a stretched along dim 1, b given a leading dim"},
    {{4}, {3, 1}, "the same, swapped"},
    {{2, 3}, {2, 3}, "equal shapes: nothing to reduce"},
    {{}, {2, 3}, "a 0-dim a: its gradient sums everything"},
    {{2, 3}, {}, "a 0-dim b"},
    {{}, {}, "both 0-dim"},
    {{1}, {2, 3}, "a [1] against a matrix: a leading dim and a stretched one"},
    {{2, 1, 4}, {3, 1}, "size-1 dims on both sides, three dims"},
    {{1, 3, 1}, {2, 1, 4}, "every dim of the result stretched from one side or the other"},
    {{5}, {1}, "b: [1], the broadcast lesson 04 shows"},
};

template <class F>
tensor_list mul_add_fn(const tensor_list& in) {
  return {F::apply(in[0], in[1])};
}

std::string shapes_of(const ShapePair& p) {
  std::ostringstream out;
  out << "a: " << IntArrayRef(p.a) << ", b: " << IntArrayRef(p.b);
  return out.str();
}

// "" or what is wrong with the MulAdd Function F on the shapes p: its value against
// a * b + a, then its gradients for an incoming gradient g against the same expression's
// through autograd (which must have the inputs' shapes), then gradcheck. A forward that
// throws is not caught, so a stub's "not implemented yet" reaches the test's output as is.
template <class F>
std::string check_mul_add(const ShapePair& p, unsigned seed) {
  manual_seed(seed);
  Tensor a = randn(p.a, kDouble).requires_grad_(), b = randn(p.b, kDouble).requires_grad_();
  const std::string where = shapes_of(p) + " (" + p.what + "): ";
  Tensor y = F::apply(a, b), want = a * b + a;
  if (y.sizes() != want.sizes()) {
    std::ostringstream out;
    out << where << "the result has shape " << y.sizes() << ", expected the broadcast shape "
        << want.sizes();
    return out.str();
  }
  if ((y.detach() - want.detach()).abs().max().item<double>() > 1e-12)
    return where + "the values are not a * b + a";
  Tensor g = randn(want.sizes(), kDouble);
  const tensor_list want_grads = autograd::grad({want}, {a, b}, {g});
  tensor_list grads;
  try {
    grads = autograd::grad({y}, {a, b}, {g});
  } catch (const Error& e) {
    return where + "backward failed: " + e.what();
  }
  const char* names[] = {"a", "b"};
  for (size_t i = 0; i < 2; ++i) {
    if (!grads[i].defined())
      return where + "no gradient for " + names[i] + ", which needs one (needs_input_grad)";
    const double diff = (grads[i] - want_grads[i]).abs().max().item<double>();
    if (diff > 1e-12) {
      std::ostringstream out;
      out << where << "the gradient of " << names[i] << " is off by " << diff << ": got "
          << grads[i] << ", expected " << want_grads[i];
      return out.str();
    }
  }
  GradcheckResult r;
  try {
    r = gradcheck(mul_add_fn<F>, {a.detach(), b.detach()});
  } catch (const Error& e) {
    return where + "gradcheck failed: " + e.what();
  }
  return r.ok ? "" : where + "gradcheck: " + r.report;
}

TEST(Exercise4MulAdd, AWorkedExample) {
  // a: (3, 1) = [[1], [2], [3]], b: (4,) = [1, 2, 3, 4]; y = a * b + a is (3, 4).
  Tensor a = tensor({{1.}, {2.}, {3.}}, kDouble).requires_grad_();
  Tensor b = tensor({1., 2., 3., 4.}, kDouble).requires_grad_();
  Tensor y = MulAdd::apply(a, b);
  EXPECT_EQ(y.grad_fn()->name(), "MulAddBackward");
  expect_near(y, {2., 3., 4., 5., 4., 6., 8., 10., 6., 9., 12., 15.});
  y.sum().backward();
  // Each a_i met every b_j: d/da_i = sum_j (b_j + 1) = 14. Each b_j met every a_i:
  // d/db_j = sum_i a_i = 6.
  ASSERT_EQ(a.grad().sizes(), a.sizes());
  ASSERT_EQ(b.grad().sizes(), b.sizes());
  expect_near(a.grad(), {14., 14., 14.});
  expect_near(b.grad(), {6., 6., 6., 6.});
}

TEST(Exercise4MulAdd, MatchesAutogradAndGradcheckOnEveryShapePair) {
  unsigned seed = 40;
  for (const ShapePair& p : kShapePairs) EXPECT_EQ(check_mul_add<MulAdd>(p, seed++), "");
}

TEST(Exercise4MulAdd, OneInputWithoutGradient) {
  // Only a needs a gradient, then only b: the other entry may be undefined, and the one
  // asked for must still be right.
  for (bool a_needs : {true, false}) {
    Tensor a = tensor({{1.}, {-2.}}, kDouble).requires_grad_(a_needs);
    Tensor b = tensor({0.5, 1., 2.}, kDouble).requires_grad_(!a_needs);
    MulAdd::apply(a, b).sum().backward();
    if (a_needs)
      expect_near(a.grad(), {6.5, 6.5});  // sum_j (b_j + 1)
    else
      expect_near(b.grad(), {-1., -1., -1.});  // sum_i a_i
  }
}

TEST(Exercise4MulAdd, TheGraderRejectsAnUnreducedGradient) {
  const std::string why = check_mul_add<wrong::MulAddUnreduced>(kShapePairs[0], 1);
  EXPECT_NE(why.find("returned a gradient of shape [3, 4] for input 0 of shape [3, 1]"),
            std::string::npos)
      << why;
  // With equal shapes there is nothing to reduce, and it is right.
  EXPECT_EQ(check_mul_add<wrong::MulAddUnreduced>(kShapePairs[2], 2), "");
}

TEST(Exercise4MulAdd, TheGraderRejectsSummingOverEveryDim) {
  const std::string why = check_mul_add<wrong::MulAddSummingEveryDim>(kShapePairs[0], 3);
  EXPECT_NE(why.find("the gradient of a is off by"), std::string::npos) << why;
  // Right shapes, and right values where both inputs are 0-dim: only the values elsewhere
  // give it away.
  EXPECT_EQ(check_mul_add<wrong::MulAddSummingEveryDim>(kShapePairs[5], 4), "");
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// No exercise may call the library's logsumexp, softmax or log_softmax.
const std::vector<std::string> kBans = {
    "glass::Tensor::logsumexp(", "glass::Tensor::softmax(", "glass::Tensor::log_softmax(",
    "glass::logsumexp(", "glass::softmax(", "glass::log_softmax(",
    "glass::nn::functional::softmax(", "glass::nn::functional::log_softmax(",
    "glass::nn::functional::logsumexp(", "glass::ops::softmax",
    // the device's softmax kernel, reached directly
    "glass::kernels_for("};

// Exercise 4 also may not have the library reduce its gradients: not autograd's sum_to, and
// no autograd::grad or backward of the same expression inside its backward.
std::vector<std::string> bans4() {
  std::vector<std::string> bans = kBans;
  for (const char* fn : {"glass::autograd::sum_to(", "glass::autograd::grad(",
                         "glass::autograd::backward(", "glass::Tensor::backward("})
    bans.push_back(fn);
  return bans;
}

// "" or "exercise N must not call X. " for each banned call that a forward or backward of the
// four Functions named (lse, exp, huber, mul_add) makes in `object`, with its helpers and
// lambdas.
std::string banned_calls(const std::string& object, const std::string& lse, const std::string& exp,
                         const std::string& huber, const std::string& mul_add) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, lse + "::", kBans) +
         exercise_calls_banned(object, 2, exp + "::", kBans) +
         exercise_calls_banned(object, 3, huber + "::", kBans) +
         exercise_calls_banned(object, 4, mul_add + "::", bans4());
}

TEST(Lesson05Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(
      banned_calls(GLASS_LESSON05_ANSWERS_OBJECT, "glass::lesson05::LogSumExp",
                   "glass::lesson05::MyExp", "glass::lesson05::Huber", "glass::lesson05::MulAdd"),
      "")
      << GLASS_LESSON05_ANSWERS_OBJECT;
}

TEST(Lesson05Bans, TheSymbolCheckCatchesTheLibrarysSumTo) {
  const std::string found = lessons::exercise_calls_banned(
      GLASS_LESSON05_WRONG_OBJECT, 4, "glass::lesson05::wrong::MulAddByLibrarySumTo::", bans4());
  EXPECT_TRUE(found.starts_with("exercise 4 must not call glass::autograd::sum_to(")) << found;
  // Its gradients are right: only the symbol check tells it apart.
  EXPECT_EQ(check_mul_add<wrong::MulAddByLibrarySumTo>(kShapePairs[0], 5), "");
  // The two that get the reduction wrong call nothing banned: their numbers give them away.
  for (const char* f : {"MulAddUnreduced::", "MulAddSummingEveryDim::"})
    EXPECT_EQ(lessons::exercise_calls_banned(GLASS_LESSON05_WRONG_OBJECT, 4,
                                             std::string("glass::lesson05::wrong::") + f, bans4()),
              "")
        << f;
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
