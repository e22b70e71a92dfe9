// lessons/04_autograd/exercises/exercises_test.cpp — grades lesson 04's exercises against
// Jacobians and Hessians derived by hand (each test names its formula), in float64 so that
// agreement can be demanded to 1e-10. The tests also count how often your code evaluates
// f, because the point of each exercise is its cost: one forward pass for all rows of a
// Jacobian, one pass per direction in forward mode, one forward and two backward passes
// for H v. Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson04 {
namespace {

Tensor doubles(const std::vector<double>& values) { return tensor(values, kDouble); }

// n values drawn uniformly from [lo, hi] with a fixed seed: the same inputs on every run.
Tensor random_vector(int64_t n, unsigned seed, double lo = -1.5, double hi = 1.5) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(u(rng));
  return doubles(v);
}

::testing::AssertionResult near(const Tensor& got, const Tensor& want, double tol = 1e-10) {
  if (!got.defined()) return ::testing::AssertionFailure() << "the result is undefined";
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure()
           << "shape " << got.sizes() << ", expected " << want.sizes();
  double diff = (got.detach().to(kDouble) - want.to(kDouble)).abs().max().item<double>();
  if (diff <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "off by " << diff << "\ngot\n"
                                       << got << "\nexpected\n"
                                       << want;
}

// f, counting its calls in `calls`.
TensorFn counted(TensorFn f, int& calls) {
  return [f = std::move(f), &calls](const Tensor& x) {
    ++calls;
    return f(x);
  };
}

// ---- functions with Jacobians derived by hand ------------------------------------------------

// The README's f: R^3 -> R^2, J = [[x1, x0, 0], [2 x0, x2, x1]].
Tensor readme_f(const Tensor& x) {
  Tensor x0 = x.select(0, 0), x1 = x.select(0, 1), x2 = x.select(0, 2);
  return stack({x0 * x1, x0 * x0 + x1 * x2});
}
Tensor readme_J(const Tensor& x) {
  double x0 = x.select(0, 0).item<double>(), x1 = x.select(0, 1).item<double>(),
         x2 = x.select(0, 2).item<double>();
  return tensor({{x1, x0, 0.}, {2 * x0, x2, x1}}, kDouble);
}

// A case: a function, the point, and its Jacobian there by hand.
struct Case {
  std::string name;
  TensorFn f;
  Tensor x;
  Tensor J;
};

std::vector<Case> hand_cases() {
  Tensor A = doubles({1, -2, 0.5, 3, 0, -1, 2, 2, -0.25, 1, 1, 4}).view({4, 3});
  Tensor x3 = random_vector(3, 1), x4 = random_vector(4, 2), x5 = random_vector(5, 3);
  Tensor I4 = eye(4, kDouble), I5 = eye(5, kDouble);
  Tensor t = x4.tanh();
  Tensor p = x5.softmax(0);
  double s = x4.sum().item<double>();
  return {
      {"readme f at [1, 2, 3]", readme_f, doubles({1, 2, 3}), readme_J(doubles({1, 2, 3}))},
      {"readme f at random x", readme_f, x3, readme_J(x3)},
      // A x: J = A, with more outputs (4) than inputs (3).
      {"A.matmul(x)", [A](const Tensor& x) { return A.matmul(x); }, x3, A},
      // elementwise: J = diag(1 - tanh(x)^2).
      {"x.tanh()", [](const Tensor& x) { return x.tanh(); }, x4, I4 * (1 - t * t)},
      // softmax: J = diag(p) - p p^T.
      {"x.softmax(0)", [](const Tensor& x) { return x.softmax(0); }, x5,
       I5 * p - p.view({5, 1}) * p.view({1, 5})},
      // x * sum(x): J[i][j] = sum(x) [i == j] + x_i, a dense Jacobian.
      {"x * x.sum()", [](const Tensor& x) { return x * x.sum(); }, x4,
       I4 * s + x4.view({4, 1}).expand({4, 4})},
      // a scalar loss as a 1-element vector: J is one row, the gradient 2 x.
      {"(x * x).sum().view({1})", [](const Tensor& x) { return (x * x).sum().view({1}); }, x4,
       (x4 * 2).view({1, 4})},
      // the second output does not depend on x: its row is zero.
      {"stack({x0 * 2, 5})",
       [](const Tensor& x) {
         return stack({x.select(0, 0) * 2, scalar_tensor(5.0, kDouble)});
       },
       x3, doubles({2, 0, 0, 0, 0, 0}).view({2, 3})},
  };
}

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1JacobianByVjp, TheReadmeExample) {
  EXPECT_TRUE(near(jacobian_by_vjp(readme_f, doubles({1, 2, 3})),
                   tensor({{2., 1., 0.}, {2., 3., 2.}}, kDouble)));
}

TEST(Exercise1JacobianByVjp, EqualsTheHandDerivedJacobians) {
  for (const Case& c : hand_cases()) EXPECT_TRUE(near(jacobian_by_vjp(c.f, c.x), c.J)) << c.name;
}

TEST(Exercise1JacobianByVjp, EvaluatesFOnceForAllRows) {
  for (const Case& c : hand_cases()) {
    int calls = 0;
    Tensor J = jacobian_by_vjp(counted(c.f, calls), c.x);
    EXPECT_EQ(calls, 1) << c.name
                        << ": build the graph once and run one backward pass per row on it "
                           "(retain_graph=true keeps it alive between passes)";
    EXPECT_TRUE(near(J, c.J)) << c.name;
  }
}

TEST(Exercise1JacobianByVjp, LeavesXAlone) {
  Tensor x = doubles({1, 2, 3});
  ASSERT_TRUE(near(jacobian_by_vjp(readme_f, x), readme_J(x)));
  EXPECT_FALSE(x.requires_grad()) << "make a leaf of your own: x.detach().requires_grad_()";
  Tensor param = doubles({1, 2, 3}).requires_grad_();  // a caller's parameter
  ASSERT_TRUE(near(jacobian_by_vjp(readme_f, param), readme_J(param)));
  EXPECT_FALSE(param.grad().defined())
      << "autograd::grad returns gradients; backward() would have written param.grad()";
}

TEST(Exercise1JacobianByVjp, KeepsTheDtype) {
  Tensor J = jacobian_by_vjp(readme_f, tensor({1., 2., 3.}, kFloat));
  EXPECT_EQ(J.dtype(), kFloat);
  EXPECT_TRUE(near(J, tensor({{2., 1., 0.}, {2., 3., 2.}}, kDouble), 1e-6));
}

// ---- exercise 2 ------------------------------------------------------------------------

TEST(Exercise2Jvp, TheReadmeColumnsAndACombination) {
  Tensor x = doubles({1, 2, 3});
  EXPECT_TRUE(near(jvp(readme_f, x, doubles({1, 0, 0})), doubles({2, 2})));  // column 0
  EXPECT_TRUE(near(jvp(readme_f, x, doubles({0, 1, 0})), doubles({1, 3})));  // column 1
  EXPECT_TRUE(near(jvp(readme_f, x, doubles({0, 0, 1})), doubles({0, 2})));  // column 2
  // J v for v = [1, -1, 2]: column 0 - column 1 + 2 column 2.
  EXPECT_TRUE(near(jvp(readme_f, x, doubles({1, -1, 2})), doubles({1, 3})));
}

TEST(Exercise2Jvp, EqualsJTimesVForTheHandDerivedJacobians) {
  unsigned seed = 10;
  for (const Case& c : hand_cases()) {
    Tensor v = random_vector(c.x.size(0), seed++);
    Tensor want = c.J.matmul(v);
    EXPECT_TRUE(near(jvp(c.f, c.x, v), want)) << c.name << " with v = " << v;
  }
}

TEST(Exercise2Jvp, AResultThatIgnoresXHasDerivativeZero) {
  // f reads x only for its shape: the result carries no tangent, and J v is zero.
  TensorFn constant = [](const Tensor& x) { return full({2}, static_cast<double>(x.size(0))); };
  Tensor jv = jvp(constant, doubles({1, 2, 3}), doubles({1, 1, 1}));
  ASSERT_TRUE(jv.defined()) << "return zeros_like(y), not the undefined tangent";
  EXPECT_TRUE(near(jv, zeros({2}, kFloat)));
  EXPECT_EQ(jv.dtype(), kFloat) << "the result's dtype, as zeros_like(y) gives";
}

TEST(Exercise2Jvp, OnePassNoGraphNoLevelLeftOpen) {
  for (const Case& c : hand_cases()) {
    int calls = 0;
    Tensor v = random_vector(c.x.size(0), 99);
    Tensor jv = jvp(counted(c.f, calls), c.x, v);
    EXPECT_EQ(calls, 1) << c.name << ": one forward pass carries the tangent along";
    EXPECT_FALSE(jv.requires_grad()) << c.name << ": forward mode records no graph";
    EXPECT_FALSE(autograd::forward_ad::DualLevel::active())
        << c.name << ": enter the level with a DualLevel object, so that it ends with the scope";
    EXPECT_FALSE(c.x.requires_grad()) << c.name;
  }
  // A level left open would make this throw ("a dual level is already active").
  EXPECT_NO_THROW(autograd::forward_ad::DualLevel());
}

TEST(Exercise2Jvp, LeavesNoLevelOpenWhenItFails) {
  Tensor x = doubles({1, 2, 3});
  ASSERT_NO_THROW(jvp(readme_f, x, doubles({1, 0, 0})));   // so that always throwing does not pass
  EXPECT_THROW(jvp(readme_f, x, doubles({1, 0})), Error);  // v has the wrong shape
  EXPECT_FALSE(autograd::forward_ad::DualLevel::active());
}

// ---- exercise 3 ------------------------------------------------------------------------

// f(x) = sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, i < n - 1 (Rosenbrock's function).
Tensor rosenbrock(const Tensor& x) {
  int64_t n = x.size(0);
  Tensor head = x.slice(0, 0, n - 1), tail = x.slice(0, 1, n);
  Tensor a = tail - head * head, b = 1 - head;
  return (a * a * 100 + b * b).sum();
}
// Its Hessian is tridiagonal: H[i][i] = 1200 x_i^2 - 400 x_{i+1} + 2 (i < n - 1), plus 200
// (i > 0); H[i][i+1] = H[i+1][i] = -400 x_i.
Tensor rosenbrock_H(const Tensor& x) {
  int64_t n = x.size(0);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = x.select(0, i).item<double>();
  Tensor H = zeros({n, n}, kDouble);
  auto at = [&](int64_t i, int64_t j, double value) { H.select(0, i).select(0, j).fill_(value); };
  for (int64_t i = 0; i < n; ++i) {
    size_t k = static_cast<size_t>(i);
    double d = 0;
    if (i < n - 1) d += 1200 * v[k] * v[k] - 400 * v[k + 1] + 2;
    if (i > 0) d += 200;
    at(i, i, d);
    if (i < n - 1) {
      at(i, i + 1, -400 * v[k]);
      at(i + 1, i, -400 * v[k]);
    }
  }
  return H;
}

struct HessianCase {
  std::string name;
  TensorFn f;
  Tensor x;
  Tensor H;
};

std::vector<HessianCase> hessian_cases() {
  Tensor x4 = random_vector(4, 21), x5 = random_vector(5, 22);
  Tensor I4 = eye(4, kDouble), I5 = eye(5, kDouble);
  Tensor A = doubles({2, -1, 0, 0.5, -1, 3, 1, 0, 0, 1, 1, -2, 0.5, 0, -2, 4}).view({4, 4});
  double xx = (x4 * x4).sum().item<double>();
  Tensor p = x5.softmax(0);
  return {
      // sum(x^3): H = diag(6 x).
      {"sum(x^3)", [](const Tensor& x) { return (x * x * x).sum(); }, x4, I4 * (x4 * 6)},
      // (x . x)^2: H = 4 (x . x) I + 8 x x^T.
      {"(x . x)^2",
       [](const Tensor& x) {
         Tensor s = (x * x).sum();
         return s * s;
       },
       x4, I4 * (4 * xx) + x4.view({4, 1}) * x4.view({1, 4}) * 8},
      // 1/2 x^T A x with A symmetric: H = A.
      {"x^T A x / 2", [A](const Tensor& x) { return (x * A.matmul(x)).sum() * 0.5; }, x4, A},
      // log(sum(exp(x))): H = diag(p) - p p^T, p = softmax(x).
      {"log-sum-exp", [](const Tensor& x) { return x.exp().sum().log(); }, x5,
       I5 * p - p.view({5, 1}) * p.view({1, 5})},
      {"Rosenbrock, n = 4", rosenbrock, x4, rosenbrock_H(x4)},
      {"Rosenbrock at its minimum [1, 1, 1]", rosenbrock, doubles({1, 1, 1}),
       rosenbrock_H(doubles({1, 1, 1}))},
      // x0 x1 + x2: gradient [x1, x0, 1]; H = [[0, 1, 0], [1, 0, 0], [0, 0, 0]].
      {"x0 * x1 + x2",
       [](const Tensor& x) { return x.select(0, 0) * x.select(0, 1) + x.select(0, 2); },
       doubles({0.5, -2, 3}), doubles({0, 1, 0, 1, 0, 0, 0, 0, 0}).view({3, 3})},
  };
}

TEST(Exercise3HessianVectorProduct, EqualsHTimesVForHandDerivedHessians) {
  unsigned seed = 30;
  for (const HessianCase& c : hessian_cases()) {
    Tensor v = random_vector(c.x.size(0), seed++);
    EXPECT_TRUE(near(hessian_vector_product(c.f, c.x, v), c.H.matmul(v), 1e-9))
        << c.name << " with v = " << v;
  }
}

TEST(Exercise3HessianVectorProduct, UnitVectorsGiveTheHessiansColumns) {
  Tensor x = random_vector(4, 40);
  Tensor H = rosenbrock_H(x);
  for (int64_t j = 0; j < 4; ++j) {
    Tensor e = zeros({4}, kDouble);
    e.select(0, j).fill_(1.0);
    EXPECT_TRUE(near(hessian_vector_product(rosenbrock, x, e), H.select(1, j), 1e-9))
        << "column " << j;
  }
}

TEST(Exercise3HessianVectorProduct, ALinearFunctionHasAZeroHessian) {
  Tensor c = doubles({3, -1, 2});
  Tensor hv = hessian_vector_product([c](const Tensor& x) { return (c * x).sum(); },
                                     doubles({1, 2, 3}), doubles({1, 1, 1}));
  EXPECT_TRUE(near(hv, doubles({0, 0, 0})))
      << "the gradient of a linear f is the constant c, with no graph: its derivative is 0";
}

TEST(Exercise3HessianVectorProduct, OneForwardPassAPlainResultAndXLeftAlone) {
  for (const HessianCase& c : hessian_cases()) {
    int calls = 0;
    Tensor v = random_vector(c.x.size(0), 50);
    Tensor hv = hessian_vector_product(counted(c.f, calls), c.x, v);
    EXPECT_EQ(calls, 1) << c.name << ": one forward pass, then two backward passes";
    EXPECT_FALSE(hv.requires_grad())
        << c.name << ": only the first pass needs create_graph; the result is a plain tensor";
    EXPECT_FALSE(c.x.requires_grad()) << c.name;
  }
  Tensor param = doubles({0.5, -1, 2}).requires_grad_();
  ASSERT_TRUE(near(hessian_vector_product(rosenbrock, param, doubles({1, 0, 0})),
                   rosenbrock_H(param.detach()).select(1, 0), 1e-9));
  EXPECT_FALSE(param.grad().defined()) << "use autograd::grad: backward() writes param.grad()";
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// No exercise may call gradcheck (finite differences); exercise 2, forward mode, no backward.
const std::vector<std::string> kBans = {"glass::autograd::gradcheck(",
                                        "glass::autograd::gradgradcheck("};
std::vector<std::string> bans2() {
  std::vector<std::string> bans = kBans;
  for (const char* fn :
       {"glass::autograd::grad(", "glass::autograd::backward(", "glass::Tensor::backward("})
    bans.push_back(fn);
  return bans;
}

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` makes, itself or through its helpers and lambdas.
std::string banned_calls(const std::string& object, const std::string& ns) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, ns + "jacobian_by_vjp(", kBans) +
         exercise_calls_banned(object, 2, ns + "jvp(", bans2()) +
         exercise_calls_banned(object, 3, ns + "hessian_vector_product(", kBans);
}

TEST(Lesson04Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON04_ANSWERS_OBJECT, "glass::lesson04::"), "")
      << GLASS_LESSON04_ANSWERS_OBJECT;
}

TEST(Lesson04Bans, TheSymbolCheckCatchesEachBannedCall) {
  using lessons::exercise_calls_banned;
  const std::string object = GLASS_LESSON04_WRONG_OBJECT;
  const std::string wrong = "glass::lesson04::wrong::";
  const std::string jacobian =
      exercise_calls_banned(object, 1, wrong + "jacobian_checked_by_gradcheck(", kBans);
  EXPECT_TRUE(jacobian.starts_with("exercise 1 must not call glass::autograd::gradcheck("))
      << jacobian;
  const std::string jvp = exercise_calls_banned(object, 2, wrong + "jvp_by_double_vjp(", bans2());
  EXPECT_TRUE(jvp.starts_with("exercise 2 must not call glass::autograd::grad(")) << jvp;
  const std::string hvp =
      exercise_calls_banned(object, 3, wrong + "hessian_vector_product_checked(", kBans);
  EXPECT_TRUE(hvp.starts_with("exercise 3 must not call glass::autograd::gradgradcheck(")) << hvp;
  // The double-VJP answer is right (the README's J v, as in TheReadmeColumnsAndACombination):
  // only the symbol check tells it from forward mode.
  EXPECT_TRUE(near(wrong::jvp_by_double_vjp(readme_f, doubles({1, 2, 3}), doubles({1, -1, 2})),
                   doubles({1, 3})));
}

}  // namespace
}  // namespace glass::lesson04
