// lessons/04_autograd/exercises/exercises_test.cpp — grades lesson 04's exercises against
// Jacobians and Hessians derived by hand (each test names its formula), in float64 so that
// agreement can be demanded to 1e-10. The tests also count how often your code evaluates
// f, because the point of each exercise is its cost: one forward pass for all rows of a
// Jacobian, one pass per direction in forward mode, one forward and two backward passes
// for H v. Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <functional>
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

// ---- exercise 4 ------------------------------------------------------------------------

using Engine = std::function<tensor_list(const Tensor&, const tensor_list&)>;

// A graph to differentiate: a scalar root and the inputs wanted.
struct Graph {
  std::string name;
  Tensor root;
  tensor_list inputs;
};

// The reference: autograd::grad, with zeros for the inputs the root does not reach.
tensor_list reference_grads(const Graph& g) {
  tensor_list want = autograd::grad({g.root}, g.inputs, {}, /*retain_graph=*/true,
                                    /*create_graph=*/false, /*allow_unused=*/true);
  for (size_t k = 0; k < want.size(); ++k)
    if (!want[k].defined()) want[k] = zeros_like(g.inputs[k]);
  return want;
}

// "" or what is wrong with `engine`'s gradients on g. (An exception is not caught: a stub's
// "not implemented yet" reaches the test's output as it is.)
std::string check_engine(const Engine& engine, const Graph& g) {
  const tensor_list want = reference_grads(g);
  const tensor_list got = engine(g.root, g.inputs);
  if (got.size() != want.size())
    return g.name + ": " + std::to_string(got.size()) + " gradients for " +
           std::to_string(want.size()) + " inputs";
  for (size_t k = 0; k < got.size(); ++k) {
    const std::string which = g.name + ", input " + std::to_string(k) + ": ";
    if (!got[k].defined())
      return which + "undefined; an input the root does not reach gets zeros_like(input)";
    if (got[k].requires_grad())
      return which + "the gradient requires grad; apply the nodes under a NoGradGuard";
    if (got[k].dtype() != want[k].dtype())
      return which + "dtype " + std::string(glass::to_string(got[k].dtype())) + ", expected " +
             glass::to_string(want[k].dtype());
    ::testing::AssertionResult close = near(got[k], want[k]);
    if (!close) return which + close.message();
  }
  return "";
}

// "" or the first graph on which `engine` disagrees with autograd::grad.
std::string grade_engine(const Engine& engine, const std::vector<Graph>& graphs) {
  for (const Graph& g : graphs)
    if (std::string why = check_engine(engine, g); !why.empty()) return why;
  return "";
}

// A function with two outputs, so that its node has two input slots (num_inputs() == 2):
// (2 x, x^2), and backward 2 g0 + 2 x g1.
struct TwiceAndSquare : autograd::Function<TwiceAndSquare> {
  static tensor_list forward(autograd::AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return {x * 2, x * x};
  }
  static tensor_list backward(autograd::AutogradContext* ctx, tensor_list grad) {
    Tensor x = ctx->get_saved_variables()[0];
    return {grad[0] * 2 + grad[1] * x * 2};
  }
};

// Graphs built to break one rule each (named), every one in float64.
std::vector<Graph> hand_graphs() {
  Tensor x = doubles({1, 2, -1}).requires_grad_(), w = doubles({0.5, -0.25, 1}).requires_grad_(),
         b = doubles({0.5}).requires_grad_();
  Tensor v = random_vector(4, 60).requires_grad_(), z = random_vector(4, 61).requires_grad_();
  Tensor vy = v.tanh(), ve = v.exp();
  Tensor h = v * z, unused = (v * 2).sin();
  Tensor L = h.sum();
  tensor_list two = TwiceAndSquare::apply(v);
  return {
      // Section 1's function: a chain, then a fork into x, w and b.
      {"sum(tanh(x * w + b))", (x * w + b).tanh().sum(), {x, w, b}},
      // One op reads v twice: two edges into one AccumulateGrad, 2 v in all.
      {"sum(v * v)", (v * v).sum(), {v}},
      // A diamond of equal arms: both reach exp(v)'s node.
      {"sum(sin(e) + cos(e)), e = exp(v)", (ve.sin() + ve.cos()).sum(), {v, ve}},
      // Arms of length 1 and 3 meet at tanh(v): its node must wait for the long one.
      {"sum(t + exp(sin(t))), t = tanh(v)", (vy + vy.sin().exp()).sum(), {v, vy}},
      // Three arms of different lengths meet at v itself, one through a broadcast sum.
      {"sum(v * sum(v) + tanh(tanh(v)))", (v * v.sum() + v.tanh().tanh()).sum(), {v}},
      // Inputs the root does not reach: an unused branch (a non-leaf) and an unread leaf.
      {"sum(v * z), with sin(2 v) unused", L, {v, z, unused, b}},
      // The root itself (d L / d L = 1) and an intermediate (d L / d h = ones).
      {"the root and an intermediate as inputs", L, {L, h, z}},
      // A node with two outputs: the root reads only output 1, so slot 0 stays undefined.
      {"sum(square(v)) through a two-output node", two[1].sum(), {v, two[1]}},
      // Both outputs; input two[1] is output 1 of its node (gradient_edge's input_nr).
      {"sum(twice(v) * square(v))", (two[0] * two[1]).sum(), {v, two[0], two[1]}},
  };
}

// A random graph: a few leaves of 4 elements and one constant, then ops on random earlier
// tensors (a tensor may be read twice, or by one op as both operands: diamonds and shared
// inputs), a root summing some of them (the rest are unused branches), and as inputs every
// leaf and a few intermediates.
Graph random_graph(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::vector<Tensor> pool;
  const size_t leaves = 2 + pick(3);
  tensor_list inputs;
  for (size_t i = 0; i < leaves; ++i) {
    pool.push_back(random_vector(4, seed * 100 + static_cast<unsigned>(i)).requires_grad_());
    inputs.push_back(pool.back());
  }
  pool.push_back(random_vector(4, seed * 100 + 99));  // a constant: needs no gradient
  const size_t ops = 4 + pick(9);
  for (size_t j = 0; j < ops; ++j) {
    const Tensor &a = pool[pick(pool.size())], &c = pool[pick(pool.size())];
    switch (pick(7)) {
      case 0: pool.push_back(a + c); break;
      case 1: pool.push_back(a * c); break;
      case 2: pool.push_back(a - c * 0.5); break;
      case 3: pool.push_back(a.tanh()); break;
      case 4: pool.push_back(a.sin()); break;
      case 5: pool.push_back((a * 0.5).exp()); break;
      default: pool.push_back(a * c.sum().tanh()); break;  // a broadcast scalar
    }
  }
  Tensor root;
  for (size_t j = leaves + 1; j < pool.size(); ++j) {
    if (!pool[j].requires_grad() || (j + 1 < pool.size() && pick(3) == 0)) continue;
    Tensor term = pool[j].sum() * (1.0 + static_cast<double>(pick(3)));
    root = root.defined() ? root + term : term;
    if (inputs.size() < leaves + 3 && pick(2) == 0) inputs.push_back(pool[j]);
  }
  if (!root.defined()) root = (pool[0] * pool[0]).sum();
  for (size_t j = leaves + 1; j < pool.size(); ++j)  // some may not reach the root
    if (pool[j].requires_grad() && pick(4) == 0) inputs.push_back(pool[j]);
  return {"random graph " + std::to_string(seed), root, inputs};
}

std::vector<Graph> random_graphs() {
  std::vector<Graph> graphs;
  for (unsigned seed = 1; seed <= 60; ++seed) graphs.push_back(random_graph(seed));
  return graphs;
}

TEST(Exercise4EngineGrad, TheReadmeGraphByHand) {
  Tensor x = doubles({1, 2, -1}).requires_grad_(), w = doubles({0.5, -0.25, 1}).requires_grad_(),
         b = doubles({0.5}).requires_grad_();
  Tensor L = (x * w + b).tanh().sum();
  tensor_list g = engine_grad(L, {x, w, b});
  ASSERT_EQ(g.size(), 3u);
  Tensor y = (x * w + b).tanh().detach(), dz = 1 - y * y;  // section 1's hand formulas
  EXPECT_TRUE(near(g[0], dz * w.detach())) << "dL/dx = (1 - y^2) * w";
  EXPECT_TRUE(near(g[1], dz * x.detach())) << "dL/dw = (1 - y^2) * x";
  EXPECT_TRUE(near(g[2], dz.sum().view({1}))) << "dL/db = sum(1 - y^2), b's shape [1]";
}

TEST(Exercise4EngineGrad, SumsAndWaitsWherePathsMeet) {
  for (const Graph& g : hand_graphs()) EXPECT_EQ(check_engine(engine_grad, g), "") << g.name;
}

TEST(Exercise4EngineGrad, MatchesAutogradGradOnRandomGraphs) {
  for (const Graph& g : random_graphs()) EXPECT_EQ(check_engine(engine_grad, g), "") << g.name;
}

TEST(Exercise4EngineGrad, LeavesTheLeavesGradsAndTheGraphAlone) {
  Tensor x = random_vector(3, 70).requires_grad_(), w = random_vector(3, 71).requires_grad_();
  Tensor L = ((x * w).tanh() * x).sum();
  tensor_list g = engine_grad(L, {x, w});
  EXPECT_FALSE(x.grad().defined() || w.grad().defined())
      << "an AccumulateGrad was applied: take the gradient arriving at the leaf's edge instead";
  // The graph is intact: a backward pass that needs every saved tensor still runs on it.
  tensor_list want;
  ASSERT_NO_THROW(want = autograd::grad({L}, {x, w}))
      << "the graph's saved tensors were released: do not call release_variables()";
  EXPECT_TRUE(near(g[0], want[0]));
  EXPECT_TRUE(near(g[1], want[1]));
}

TEST(Exercise4EngineGrad, TheGraderRejectsAnEngineWithoutDependencyCounts) {
  std::string why = grade_engine(wrong::engine_grad_without_dependency_counts, hand_graphs());
  EXPECT_TRUE(why.starts_with("sum(t + exp(sin(t))), t = tanh(v), input 0: off by")) << why;
  // It is right on a chain, where every node has one incoming edge.
  EXPECT_EQ(grade_engine(wrong::engine_grad_without_dependency_counts, {hand_graphs()[0]}), "");
  EXPECT_NE(grade_engine(wrong::engine_grad_without_dependency_counts, random_graphs()), "");
}

TEST(Exercise4EngineGrad, TheGraderRejectsAnEngineThatOverwrites) {
  std::string why = grade_engine(wrong::engine_grad_overwriting, hand_graphs());
  EXPECT_TRUE(why.starts_with("sum(v * v), input 0: off by")) << why;
  EXPECT_EQ(grade_engine(wrong::engine_grad_overwriting, {hand_graphs()[0]}), "");
  EXPECT_NE(grade_engine(wrong::engine_grad_overwriting, random_graphs()), "");
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// No exercise may call gradcheck (finite differences); exercise 2 (forward mode) and exercise
// 4 (the engine itself) no backward pass either.
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
         exercise_calls_banned(object, 3, ns + "hessian_vector_product(", kBans) +
         exercise_calls_banned(object, 4, ns + "engine_grad(", bans2());
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
  const std::string engine =
      exercise_calls_banned(object, 4, wrong + "engine_grad_by_library(", bans2());
  EXPECT_TRUE(engine.starts_with("exercise 4 must not call glass::autograd::grad(")) << engine;
  // The buggy engines ask the library nothing: only their numbers give them away.
  for (const char* engine_fn :
       {"engine_grad_without_dependency_counts(", "engine_grad_overwriting("})
    EXPECT_EQ(exercise_calls_banned(object, 4, wrong + engine_fn, bans2()), "") << engine_fn;
  // The double-VJP answer is right (the README's J v, as in TheReadmeColumnsAndACombination):
  // only the symbol check tells it from forward mode.
  EXPECT_TRUE(near(wrong::jvp_by_double_vjp(readme_f, doubles({1, 2, 3}), doubles({1, -1, 2})),
                   doubles({1, 3})));
}

}  // namespace
}  // namespace glass::lesson04
