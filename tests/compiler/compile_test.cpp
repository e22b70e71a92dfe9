// tests/compiler/compile_test.cpp — glass::compile end to end: the trace, the passes, fused
// groups, guards and recompiles, graph breaks, writes and views, modules, autograd, and
// random pointwise programs, each compiled result held to the same function run eagerly.
#include "compiler/compile.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <functional>
#include <latch>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autograd/anomaly_mode.h"
#include "autograd/engine.h"
#include "autograd/forward_ad.h"
#include "autograd/gradcheck.h"
#include "compiler/joint_graph.h"
#include "compiler/kernel_cache.h"
#include "compiler/passes.h"
#include "compiler/tracer.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ops/compare.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/print.h"
#include "core/tensor_options.h"
#include "nn/modules/linear.h"

namespace glass {
namespace {

class Compile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!compiler::host_compiler().available()) GTEST_SKIP() << "no C++ compiler on this machine";
    ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1);
  }
  void TearDown() override { ::unsetenv("GLASS_CACHE_DIR"); }
};

Tensor seed_chain(const Tensor& a, const Tensor& b) {
  return ((a * b + a) * 0.5 - b).relu().sigmoid();
}

void expect_close(const Tensor& got, const Tensor& want, double rtol = 1e-5, double atol = 1e-6) {
  ASSERT_EQ(got.sizes(), want.sizes());
  ASSERT_EQ(got.dtype(), want.dtype());
  EXPECT_TRUE(allclose(got, want, rtol, atol)) << "got\n" << got << "\nwant\n" << want;
}

TEST_F(Compile, TheSeedChainIsOneFusedGroupAndEqualsEager) {
  auto f = compile(seed_chain);
  Tensor a = randn({64, 33}), b = randn({64, 33});
  Tensor first = f(a, b);   // traced: computed eagerly as it ran
  Tensor second = f(a, b);  // the compiled graph
  expect_close(first, seed_chain(a, b));
  expect_close(second, seed_chain(a, b));
  auto variants = f.variants();
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0].fused_groups, 1) << variants[0].optimized;
  EXPECT_EQ(variants[0].groups[0].size(), 6u) << "mul, add, mul, sub, relu, sigmoid";
  EXPECT_NE(variants[0].traced.find("binary(mul, %0, %1)"), std::string::npos)
      << variants[0].traced;
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().calls, 2);
  // The DOT of the optimised graph draws the group as one cluster around its six nodes.
  const std::string& dot = variants[0].optimized_dot;
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0; n1; n2; n3; n4; n5;"), std::string::npos) << dot;
}

TEST_F(Compile, BroadcastAndTransposedInputsAgreeWithEager) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return (a * b + b).tanh() - a; });
  Tensor a = randn({5, 1}), b = randn({7, 5}).t();
  for (int i = 0; i < 2; ++i) expect_close(f(a, b), (a * b + b).tanh() - a);
}

TEST_F(Compile, ARecordedGraphNamesEveryOpItRan) {
  Tensor a = randn({3, 4});
  compiler::TraceResult r = compiler::trace({a}, [&] {
    Tensor z = zeros({4, 3});  // empty_strided, fill_into
    return std::vector<Tensor>{(a.t().exp() + 1).sum({0}) + z.sum({0})};
  });
  std::string text = r.graph.to_string();
  for (const char* op : {"empty_strided", "fill_into", "t(%0)", "unary(exp", "reduce(sum"})
    EXPECT_NE(text.find(op), std::string::npos) << op << " missing from\n" << text;
  EXPECT_FALSE(r.graph_break.has_value());
}

TEST_F(Compile, AShapeChangeRetracesAndBothVariantsStayRight) {
  auto f = compile(seed_chain);
  Tensor a = randn({8}), b = randn({8});
  Tensor c = randn({3, 5}), d = randn({3, 5});
  f(a, b);
  f(c, d);
  expect_close(f(a, b), seed_chain(a, b));
  expect_close(f(c, d), seed_chain(c, d));
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.stats().guard_failures, 1);
  EXPECT_EQ(f.stats().last_guard_failure, "tensor 0 has sizes [3, 5], the trace had [8]");
}

TEST_F(Compile, ADtypeChangeRetracesRatherThanRunTheFloatKernel) {
  auto f = compile([](const Tensor& a) { return (a * 3 + 1).abs(); });
  Tensor x = randn({10});
  f(x);
  Tensor i = arange(-5, 5);  // Long
  Tensor got = f(i);
  EXPECT_EQ(got.dtype(), kLong);
  EXPECT_TRUE(equal(got, (i * 3 + 1).abs()));
  EXPECT_EQ(f.stats().traces, 2);
}

TEST_F(Compile, ANumberArgumentIsGuardedByValue) {
  auto f = compile([](const Tensor& a, double s) { return (a * s).exp() + s; });
  Tensor x = randn({6});
  f(x, 2.0);
  expect_close(f(x, 2.0), (x * 2.0).exp() + 2.0);
  expect_close(f(x, 3.0), (x * 3.0).exp() + 3.0);
  EXPECT_EQ(f.stats().traces, 2);
}

TEST_F(Compile, PastTheRecompileLimitNewShapesRunEagerly) {
  auto f =
      compile([](const Tensor& a) { return a.sin() * 2; }, CompileOptions().set_recompile_limit(2));
  for (int n = 1; n <= 4; ++n) {
    Tensor x = randn({n});
    expect_close(f(x), x.sin() * 2);
  }
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.stats().eager_calls, 2);
}

// Two threads making the first call at once both trace (tracing runs outside the lock); one
// variant is kept, so the duplicate does not count against the recompile limit.
TEST_F(Compile, TwoFirstCallsAtOnceKeepOneVariant) {
  std::latch both_tracing(2);
  auto f = compile(
      [&](const Tensor& a) {
        if (compiler::is_tracing()) both_tracing.arrive_and_wait();
        return a.sin() * 2;
      },
      CompileOptions().set_recompile_limit(1));
  Tensor x = randn({5}), y = randn({5});
  Tensor fx, fy;
  std::thread other([&] { fy = f(y); });
  fx = f(x);
  other.join();
  expect_close(fx, x.sin() * 2);
  expect_close(fy, y.sin() * 2);
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.variants().size(), 1u);
  expect_close(f(x), x.sin() * 2);  // runs the kept variant: no trace, no eager call
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.stats().eager_calls, 0);
}

TEST_F(Compile, ItemIsAGraphBreakThatRunsEagerlyAndFullgraphRefusesIt) {
  auto branchy = [](const Tensor& a) {
    // A branch on data: what a trace cannot record.
    return a.sum().item().toDouble() > 0 ? a * 2 : a * -1;
  };
  auto f = compile(branchy);
  Tensor pos = ones({4}), neg = -ones({4});
  EXPECT_TRUE(equal(f(pos), pos * 2));
  EXPECT_TRUE(equal(f(neg), neg * -1)) << "same guards, other branch: must not replay pos's";
  ASSERT_EQ(f.variants().size(), 1u);
  ASSERT_TRUE(f.variants()[0].graph_break.has_value());
  EXPECT_EQ(f.variants()[0].graph_break->op, "item");

  auto strict = compile(branchy, CompileOptions().set_fullgraph(true));
  try {
    strict(pos);
    FAIL() << "fullgraph must refuse item()";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("item()"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fullgraph"), std::string::npos) << e.what();
  }
}

TEST_F(Compile, PrintingIsAGraphBreakToo) {
  auto f = compile([](const Tensor& a) {
    std::ostringstream sink;
    sink << a;
    return a + 1;
  });
  Tensor x = randn({2});
  expect_close(f(x), x + 1);
  ASSERT_TRUE(f.variants()[0].graph_break.has_value());
  EXPECT_EQ(f.variants()[0].graph_break->op, "print");
}

TEST_F(Compile, TensorsMadeInsideAreFoldedAndAFoldedResultIsFreshEachCall) {
  auto f = compile([](const Tensor& a) {
    Tensor w = full({4}, 2.0) * 3;  // folds to one constant
    return std::make_tuple(a * w, ones({2}) + 1);
  });
  Tensor x = randn({4});
  f(x);
  auto [y, c] = f(x);
  expect_close(y, x * 6);
  EXPECT_TRUE(equal(c, full({2}, 2.0)));
  c.add_(100);  // the caller owns what it got
  auto [y2, c2] = f(x);
  EXPECT_TRUE(equal(c2, full({2}, 2.0))) << "a folded output must be a new tensor per call";
  // full, fill and * 3 fold; ones() + 1 is returned, so it is made at each call.
  EXPECT_EQ(f.variants()[0].folded, 3) << f.variants()[0].optimized;
}

TEST_F(Compile, RandomTensorsMadeInsideAreNeitherFoldedNorMerged) {
  auto f = compile([](const Tensor& a) { return a + rand({1000}) - rand({1000}); });
  Tensor x = zeros({1000});
  f(x);
  Tensor r1 = f(x), r2 = f(x);
  EXPECT_GT(r1.abs().sum().item().toDouble(), 1.0) << "two draws merged into one";
  EXPECT_FALSE(equal(r1, r2)) << "a draw folded into a constant";
  EXPECT_EQ(f.variants()[0].merged, 0);
}

TEST_F(Compile, CommonSubexpressionsAndDeadCodeAreRemoved) {
  auto f = compile([](const Tensor& a) {
    Tensor unused = a.cos();
    return a.exp() + a.exp();
  });
  Tensor x = randn({5});
  f(x);
  expect_close(f(x), x.exp() * 2);
  const compiler::VariantInfo v = f.variants()[0];
  EXPECT_EQ(v.merged, 1) << v.optimized;
  EXPECT_GE(v.dead, 1) << v.optimized;
  EXPECT_EQ(v.optimized.find("cos"), std::string::npos) << v.optimized;
}

TEST_F(Compile, AWriteToAnInputHappensOnEveryCallAsInEager) {
  auto f = compile([](Tensor a) {
    a.add_(1);
    return a * 2;
  });
  Tensor x = zeros({3});
  f(x);
  Tensor y = f(x);
  EXPECT_TRUE(equal(x, full({3}, 2.0)));
  EXPECT_TRUE(equal(y, full({3}, 4.0)));
}

TEST_F(Compile, AWriteThroughAViewIsSeenByLaterReadsOfItsBase) {
  auto f = compile([](Tensor a) {
    Tensor before = a.exp();
    a.select(0, 0).mul_(0);
    return before + a.exp();  // the second exp reads the written row: not a CSE of the first
  });
  Tensor x = randn({2, 3});
  Tensor eager_x = x.clone(), compiled_x = x.clone();
  Tensor before = eager_x.exp();
  eager_x.select(0, 0).mul_(0);
  Tensor want = before + eager_x.exp();
  f(compiled_x.clone());
  expect_close(f(compiled_x), want);
  EXPECT_TRUE(equal(compiled_x, eager_x));
}

TEST_F(Compile, ATensorCapturedFromOutsideIsReadLive) {
  Tensor w = ones({3});
  auto f = compile([&w](const Tensor& a) { return a * w + 1; });
  Tensor x = ones({3});
  f(x);
  {
    NoGradGuard no_grad;
    w.mul_(5);  // as an optimizer step would
  }
  EXPECT_TRUE(equal(f(x), full({3}, 6.0)));
}

TEST_F(Compile, NestedCompiledFunctionsAreInlined) {
  auto inner = compile([](const Tensor& a) { return a.exp(); });
  auto outer = compile([&inner](const Tensor& a) { return inner(a) + 1; });
  Tensor x = randn({4});
  outer(x);
  expect_close(outer(x), x.exp() + 1);
  EXPECT_EQ(inner.stats().traces, 0);
  EXPECT_EQ(outer.variants()[0].fused_groups, 1);
}

TEST_F(Compile, AModulesParametersAreInputsAndTrainingIsAGuard) {
  nn::Linear fc(4, 3);
  auto f = compile(fc);
  Tensor x = randn({2, 4});
  Tensor want = fc->forward(x);
  expect_close(f(x), want);
  {
    NoGradGuard no_grad;
    fc->weight.mul_(2);
    fc->bias.zero_();
  }
  expect_close(f(x), fc->forward(x));
  fc->eval();
  f(x);
  EXPECT_EQ(f.stats().traces, 2) << "eval() must retrace";
}

TEST_F(Compile, ACompiledFunctionIsDifferentiable) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return ((a * b + a) * 0.5 - b).tanh(); });
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0], in[1])}; };
  Tensor a = randn({3, 4}, kFloat64), b = randn({3, 4}, kFloat64);
  autograd::GradcheckResult r = autograd::gradcheck(fn, {a, b});
  EXPECT_TRUE(r.ok) << r.report;
  // And the same gradients as eager.
  Tensor a1 = a.clone().requires_grad_(true), b1 = b.clone().requires_grad_(true);
  Tensor a2 = a.clone().requires_grad_(true), b2 = b.clone().requires_grad_(true);
  f(a1, b1).sum().backward();
  f(a1, b1).sum().backward();  // the second call replays the compiled graph
  (((a2 * b2 + a2) * 0.5 - b2).tanh().sum() * 2).backward();
  expect_close(a1.grad(), a2.grad(), 1e-12, 1e-12);
  expect_close(b1.grad(), b2.grad(), 1e-12, 1e-12);
}

TEST_F(Compile, GradModeIsAGuard) {
  auto f = compile([](const Tensor& a) { return a.exp() * 2; });
  Tensor x = randn({3}).requires_grad_(true);
  f(x);
  {
    NoGradGuard no_grad;
    Tensor y = f(x);
    EXPECT_FALSE(y.requires_grad());
    expect_close(y, x.detach().exp() * 2);
  }
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.variants()[1].fused_groups, 1) << "without grad the chain fuses";
  EXPECT_EQ(f.variants()[0].fused_groups, 1) << "with grad too: its forward runs without";
  EXPECT_TRUE(f.variants()[0].one_node);
  EXPECT_FALSE(f.variants()[1].one_node);
}

// ---- what a replay must not freeze: each traced on one value, then called on another ----------

TEST_F(Compile, DetachIsAnOpSoItsResultFollowsTheInput) {
  auto f = compile([](const Tensor& x) { return x.detach() * 2 + 1; });
  f(ones({3}));
  EXPECT_TRUE(equal(f(full({3}, 3.0)), full({3}, 7.0)));
  auto lse = compile([](const Tensor& x) { return x.logsumexp({0}); });  // detaches inside
  lse(zeros({3}));
  expect_close(lse(full({3}, 1000.0)), full({}, 1000.0 + std::log(3.0)));
}

TEST_F(Compile, ATensorFromAVectorOwnsItsValues) {
  auto f = compile([](const Tensor& x) {
    std::vector<float> v{1, 2, 3};
    return x + tensor(v);
  });
  f(zeros({3}));
  EXPECT_TRUE(equal(f(ones({3})), tensor({2.f, 3.f, 4.f})));
}

TEST_F(Compile, AFoldedWriteIsNotSeenByAReadBeforeIt) {
  auto f = compile([](const Tensor& x) {
    Tensor z = zeros({3});
    Tensor y = x + z;  // reads z before the write
    z.add_(1);
    return y + z;
  });
  f(zeros({3}));
  EXPECT_TRUE(equal(f(ones({3})), full({3}, 2.0)));
}

TEST_F(Compile, UnusedDrawsStillAdvanceTheGenerator) {
  auto fn = [](const Tensor& x) {
    Tensor unused = rand({3});
    return x + rand({3});
  };
  auto f = compile(fn);
  f(zeros({3}));
  manual_seed(5);
  Tensor got = f(zeros({3}));
  Tensor next_got = rand({2});
  manual_seed(5);
  Tensor want = fn(zeros({3}));
  Tensor next_want = rand({2});
  EXPECT_TRUE(equal(got, want));
  EXPECT_TRUE(equal(next_got, next_want));
}

TEST_F(Compile, AFactorysRequiresGradIsAGraphBreak) {
  auto f =
      compile([](const Tensor& x) { return x * ones({3}, TensorOptions().requires_grad(true)); });
  f(ones({3}));
  EXPECT_TRUE(f(ones({3})).requires_grad());
  ASSERT_TRUE(f.variants()[0].graph_break.has_value());
  EXPECT_EQ(f.variants()[0].graph_break->op, "requires_grad_");
}

TEST_F(Compile, TwoEqualResultsAreTwoTensorsAndOneReturnedTwiceIsOne) {
  auto f = compile([](const Tensor& x) { return std::make_tuple(x.exp(), x.exp()); });
  f(zeros({3}));
  auto [a, b] = f(zeros({3}));
  a.add_(1);
  EXPECT_TRUE(equal(b, ones({3})));
  auto g = compile([](const Tensor&) {
    Tensor z = zeros({3});
    return std::make_tuple(z, z);
  });
  g(ones({1}));
  auto [c, d] = g(ones({1}));
  EXPECT_TRUE(c.is_same(d)) << "eager returns one tensor twice";
}

TEST_F(Compile, TheSameTensorTwiceIsNotAViewOfIt) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a - b; });
  Tensor m = randn({3, 3});
  f(m, m);
  expect_close(f(m, m.t()), m - m.t());
  EXPECT_EQ(f.stats().traces, 2);
}

TEST_F(Compile, StridesAreGuardedSoViewOrCopyIsDecidedAgain) {
  auto flat = compile([](const Tensor& x) { return x.reshape({-1}) * 2; });
  Tensor m = randn({3, 3});
  flat(m);
  expect_close(flat(m.t()), m.t().reshape({-1}) * 2);
  auto scale = compile([](Tensor x) {
    Tensor y = x.contiguous();
    y.mul_(2);
    return y.sum();
  });
  scale(randn({3, 3}));
  Tensor b = randn({3, 3}), before = b.clone();
  scale(b.t());
  EXPECT_TRUE(equal(b, before)) << "contiguous() of a transposed input is a copy";
}

TEST_F(Compile, AForwardModeTangentIsAGuardAndIsCarried) {
  auto f = compile([](const Tensor& x) { return (x * 2).exp(); });
  Tensor p = zeros({3}, kFloat64);
  f(p);
  autograd::forward_ad::DualLevel level;
  Tensor dual = autograd::forward_ad::make_dual(p, ones({3}, kFloat64));
  Tensor tangent = autograd::forward_ad::unpack_dual(f(dual)).tangent;
  ASSERT_TRUE(tangent.defined());
  expect_close(tangent, full({3}, 2.0, kFloat64));
}

TEST_F(Compile, TheDefaultDtypeIsAGuard) {
  auto f = compile([](const Tensor& x) { return x + ones({3}); });
  f(arange(3));
  set_default_dtype(kFloat64);
  Tensor got = f(arange(3));
  set_default_dtype(kFloat32);
  EXPECT_EQ(got.dtype(), kFloat64);
}

TEST_F(Compile, ASubmodulesTrainingFlagIsAGuard) {
  struct NetImpl : nn::Module {
    NetImpl() : Module("Net") { fc = register_module("fc", nn::Linear(4, 2)); }
    Tensor forward(const Tensor& x) { return fc(x).relu(); }
    nn::Linear fc{nullptr};
  };
  auto net = std::make_shared<NetImpl>();
  auto f = compile(net);
  Tensor x = randn({2, 4});
  f(x);
  net->fc->eval();
  f(x);
  EXPECT_EQ(f.stats().traces, 2);
}

TEST_F(Compile, ACapturedTensorsRequiresGradIsAGuard) {
  Tensor w = ones({3});
  auto f = compile([&w](const Tensor& x) { return (x * w).exp(); });
  f(ones({3}));
  w.requires_grad_(true);
  EXPECT_TRUE(f(ones({3})).requires_grad());
  EXPECT_EQ(f.stats().traces, 2);
}

TEST_F(Compile, ATensorMadeOverAnInputsMemoryOutsideAnyOpIsAGraphBreak) {
  auto f = compile([](const Tensor& x) {
    return from_blob(const_cast<float*>(x.data_ptr<float>()), x.sizes()) + 1;
  });
  f(ones({3}));
  EXPECT_TRUE(equal(f(full({3}, 5.0)), full({3}, 6.0)));
  ASSERT_TRUE(f.variants()[0].graph_break.has_value());
  auto g = compile([](const Tensor& x) {
    return from_blob(const_cast<float*>(x.data_ptr<float>()), x.sizes());
  });
  g(ones({3}));
  EXPECT_TRUE(equal(g(full({3}, 5.0)), full({3}, 5.0)));
  ASSERT_TRUE(g.variants()[0].graph_break.has_value());
  EXPECT_EQ(g.variants()[0].graph_break->op, "return");
}

TEST_F(Compile, RequiresGradSetOnAnInputIsABreakButAnInPlaceOpIsNot) {
  auto f = compile([](const Tensor& x) {
    Tensor t = x;
    t.requires_grad_();
    return x * 2;
  });
  f(ones({3}));
  Tensor b = ones({3});
  EXPECT_TRUE(f(b).requires_grad());
  EXPECT_TRUE(b.requires_grad());
  auto g = compile(
      [](const Tensor& x) {
        Tensor y = zeros({3});
        y.add_(x);
        return y * 2;
      },
      CompileOptions().set_fullgraph(true));
  Tensor x = randn({3}).requires_grad_(true);
  g(x);
  EXPECT_TRUE(g(x).requires_grad());
  EXPECT_FALSE(g.variants()[0].graph_break.has_value());
}

TEST_F(Compile, ViewsOfTwoEqualResultsAreTwoTensors) {
  auto f = compile([](const Tensor& x) { return std::make_tuple(x.exp().t(), x.exp().t()); });
  f(zeros({2, 3}));
  auto [p, q] = f(zeros({2, 3}));
  EXPECT_FALSE(p.is_alias_of(q));
}

TEST_F(Compile, AShapeTheValuesDecideIsAGraphBreak) {
  auto f = compile([](const Tensor& x) {
    Tensor idx = nonzero(x > 0);
    return ones({idx.size(0)}) + x.sum();
  });
  f(tensor({1.f, -1.f, 1.f}));
  EXPECT_EQ(f(tensor({1.f, 1.f, 1.f})).size(0), 3);
  ASSERT_TRUE(f.variants()[0].graph_break.has_value());
  EXPECT_EQ(f.variants()[0].graph_break->op, "nonzero");
  auto g = compile([](const Tensor& x) { return x.index({x > 0}).sum(); });
  g(tensor({1.f, -1.f}));
  EXPECT_EQ(g(tensor({1.f, 2.f})).item().toDouble(), 3.0);
}

// ---- one autograd node: the forward fused, the backward replayed ---------------------------

TEST_F(Compile, WithGradTheForwardIsFusedUnderOneNode) {
  auto fn = [](const Tensor& a, const Tensor& b) { return ((a * b + a) * 0.5 - b).tanh(); };
  auto f = compile(fn);
  Tensor a = randn({4, 5}, kFloat64).requires_grad_(true), b = randn({4, 5}, kFloat64);
  f(a, b);
  Tensor y = f(a, b);
  ASSERT_TRUE(f.variants()[0].one_node);
  EXPECT_EQ(f.variants()[0].fused_groups, 1);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "CompiledFunctionBackward");
  Tensor g = randn({4, 5}, kFloat64);
  y.backward(g);
  Tensor a2 = a.detach().clone().requires_grad_(true);
  fn(a2, b).backward(g);
  expect_close(a.grad(), a2.grad(), 1e-12, 1e-12);
  EXPECT_FALSE(b.grad().defined());
}

TEST_F(Compile, OneNodeGivesCapturedParametersTheirGradients) {
  Tensor w = randn({3}, kFloat64).requires_grad_(true);
  auto f = compile([&w](const Tensor& x) { return (x * w).sigmoid().sum(); });
  Tensor x = randn({2, 3}, kFloat64);
  f(x);
  w.mutable_grad() = Tensor();
  f(x).backward();
  Tensor got = w.grad().clone();
  w.mutable_grad() = Tensor();
  (x * w).sigmoid().sum().backward();
  expect_close(got, w.grad(), 1e-12, 1e-12);
  EXPECT_TRUE(f.variants()[0].one_node);
}

TEST_F(Compile, OneNodePassesGradcheckAndRefusesSecondDerivatives) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return (a * b).exp() - a; });
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0], in[1])}; };
  Tensor a = randn({3}, kFloat64), b = randn({3}, kFloat64);
  autograd::GradcheckResult r = autograd::gradcheck(fn, {a, b});
  EXPECT_TRUE(r.ok) << r.report;
  Tensor x = a.clone().requires_grad_(true), y = b.clone().requires_grad_(true);
  f(x, y);
  Tensor out = f(x, y).sum();
  try {
    autograd::tensor_list g = autograd::grad({out}, {x}, {}, std::nullopt, /*create_graph=*/true);
    autograd::grad({g[0].sum()}, {x});
    FAIL() << "a second derivative must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("second derivative"), std::string::npos) << e.what();
  }
}

// ---- the joint graph: the backward traced with the forward it recomputes, and fused -------

TEST_F(Compile, TheBackwardIsTracedWithTheForwardItRecomputesAndFused) {
  auto f = compile(seed_chain);
  Tensor a = randn({6, 5}, kFloat64).requires_grad_(true);
  Tensor b = randn({5}, kFloat64).requires_grad_(true);  // broadcast: its gradient is a sum
  auto eager_grads = [&](const Tensor& g) {
    Tensor a2 = a.detach().clone().requires_grad_(true),
           b2 = b.detach().clone().requires_grad_(true);
    seed_chain(a2, b2).backward(g);
    return std::pair{a2.grad(), b2.grad()};
  };
  f(a, b);                                // the trace
  for (int call = 0; call < 2; ++call) {  // the first backward traces, the second runs the graph
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    Tensor g = randn({6, 5}, kFloat64);
    f(a, b).backward(g);
    auto [ga, gb] = eager_grads(g);
    expect_close(a.grad(), ga, 1e-12, 1e-12);
    expect_close(b.grad(), gb, 1e-12, 1e-12);
  }
  std::vector<compiler::BackwardInfo> backwards = f.variants()[0].backwards;
  ASSERT_EQ(backwards.size(), 1u) << "one kind of output gradient: one traced backward";
  const compiler::BackwardInfo& bw = backwards[0];
  EXPECT_EQ(bw.replayed, "");
  // Recorded: the forward again (sigmoid), then the formulas (sigmoid's reads its saved
  // result, handed over detached), then b's broadcast undone by a sum.
  EXPECT_NE(bw.traced.find("sigmoid"), std::string::npos) << bw.traced;
  EXPECT_NE(bw.traced.find("detach"), std::string::npos) << bw.traced;
  EXPECT_NE(bw.traced.find("reduce(sum"), std::string::npos) << bw.traced;
  EXPECT_EQ(bw.optimized.find("detach"), std::string::npos) << bw.optimized;
  EXPECT_GE(bw.fused_groups, 2) << bw.optimized;
  EXPECT_EQ(bw.sources.size(), static_cast<size_t>(bw.fused_groups));

  // An output gradient of another layout (sum()'s is expanded: stride 0) is another backward.
  a.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();
  f(a, b).sum().backward();
  auto [ga, gb] = eager_grads(ones({6, 5}, kFloat64));
  expect_close(a.grad(), ga, 1e-12, 1e-12);
  expect_close(b.grad(), gb, 1e-12, 1e-12);
  EXPECT_EQ(f.variants()[0].backwards.size(), 2u);
}

TEST_F(Compile, WithoutTheJointGraphTheBackwardReplaysAndAgrees) {
  auto replayed = compile(seed_chain, CompileOptions().set_joint_backward(false));
  auto joint = compile(seed_chain);
  Tensor a = randn({3, 4}, kFloat64).requires_grad_(true), b = randn({3, 4}, kFloat64);
  std::vector<Tensor> grads;
  for (auto* f : {&replayed, &joint}) {
    (*f)(a, b);
    a.mutable_grad() = Tensor();
    (*f)(a, b).sum().backward();
    grads.push_back(a.grad());
  }
  EXPECT_TRUE(replayed.variants()[0].backwards.empty());
  EXPECT_EQ(joint.variants()[0].backwards.size(), 1u);
  expect_close(grads[1], grads[0], 1e-12, 1e-12);
}

TEST_F(Compile, TheBackwardReadsACapturedTensorLive) {
  // x * w: x's gradient is g * w, with w read at each backward, as the forward reads it.
  Tensor w = randn({4}, kFloat64);
  auto f = compile([&w](const Tensor& x) { return (x * w).exp(); });
  Tensor x = randn({4}, kFloat64).requires_grad_(true);
  f(x);
  for (int call = 0; call < 3; ++call) {
    x.mutable_grad() = Tensor();
    f(x).sum().backward();
    Tensor x2 = x.detach().clone().requires_grad_(true);
    (x2 * w).exp().sum().backward();
    expect_close(x.grad(), x2.grad(), 1e-12, 1e-12);
    w.mul_(1.5);  // in place: the same tensor, new values
  }
  ASSERT_EQ(f.variants()[0].backwards.size(), 1u);
  EXPECT_EQ(f.variants()[0].backwards[0].replayed, "");
}

TEST_F(Compile, AJointGraphReadingATensorNoOpMadeIsNotRun) {
  // What a formula building a tensor outside the ops would leave in a joint graph: a tensor
  // the trace met as a constant, which the forward does not read. The check names it.
  Tensor w = randn({3}), outside = randn({3});
  compiler::Graph forward =
      compiler::trace({randn({3})}, [&] { return std::vector<Tensor>{randn({3}) * w}; }).graph;
  Tensor a = randn({3});
  compiler::Graph reads_w =
      compiler::trace({a}, [&] { return std::vector<Tensor>{a * w + 2}; }).graph;
  compiler::Graph reads_outside =
      compiler::trace({a}, [&] { return std::vector<Tensor>{a * outside}; }).graph;
  EXPECT_EQ(compiler::unexplained_tensor(reads_w, forward), "");
  const std::string why = compiler::unexplained_tensor(reads_outside, forward);
  EXPECT_NE(why.find("made outside the ops"), std::string::npos) << why;
  EXPECT_NE(why.find("binary()"), std::string::npos) << why;
}

TEST_F(Compile, TwoOutputsGradientsAreOneTensorOrTwo) {
  // The trace makes one value of one tensor passed twice: a later call with two tensors must
  // not reuse that backward.
  auto f = compile([](const Tensor& a) { return std::tuple{(a * 2).exp(), (a - 1).tanh()}; });
  Tensor a = randn({4}, kFloat64).requires_grad_(true);
  f(a);
  auto eager = [&](const Tensor& g1, const Tensor& g2) {
    Tensor a2 = a.detach().clone().requires_grad_(true);
    return autograd::grad({(a2 * 2).exp(), (a2 - 1).tanh()}, {a2}, {g1, g2})[0];
  };
  Tensor g = randn({4}, kFloat64), h = randn({4}, kFloat64);
  auto [y1, y2] = f(a);
  expect_close(autograd::grad({y1, y2}, {a}, {g, g})[0], eager(g, g), 1e-12, 1e-12);
  auto [z1, z2] = f(a);
  expect_close(autograd::grad({z1, z2}, {a}, {g, h})[0], eager(g, h), 1e-12, 1e-12);
  EXPECT_EQ(f.variants()[0].backwards.size(), 2u);
}

// The node hands its backward zeros for an output that got no gradient (as a custom
// Function's backward gets them), so that call and one with both gradients are one kind.
TEST_F(Compile, AnOutputWithoutAGradientGetsZeros) {
  auto fn = [](const Tensor& a) { return std::tuple{(a * 2).exp(), (a - 1).tanh()}; };
  auto f = compile(fn);
  Tensor a = randn({4}, kFloat64).requires_grad_(true);
  f(a);
  Tensor g = randn({4}, kFloat64), h = randn({4}, kFloat64);
  Tensor a2 = a.detach().clone().requires_grad_(true);
  auto [e1, e2] = fn(a2);
  Tensor only_first = autograd::grad({e1}, {a2}, {g})[0];
  auto [y1, y2] = f(a);
  expect_close(autograd::grad({y1}, {a}, {g})[0], only_first, 1e-12, 1e-12);
  auto [z1, z2] = f(a);
  expect_close(autograd::grad({z1, z2}, {a}, {g, h})[0],
               only_first + (1 - (a2 - 1).tanh().pow(2)).detach() * h, 1e-12, 1e-12);
  EXPECT_EQ(f.variants()[0].backwards.size(), 1u);
}

TEST_F(Compile, InAnomalyModeTheBackwardReplaysAndKeepsNoKind) {
  // Anomaly mode's checks read values back, which would break the joint trace.
  auto f = compile(seed_chain);
  Tensor a = randn({5}, kFloat64).requires_grad_(true), b = randn({5}, kFloat64);
  f(a, b);
  {
    autograd::DetectAnomalyGuard anomaly;
    f(a, b).sum().backward();
  }
  EXPECT_TRUE(f.variants()[0].backwards.empty());
  Tensor replayed = a.grad().clone();
  a.mutable_grad() = Tensor();
  f(a, b).sum().backward();
  ASSERT_EQ(f.variants()[0].backwards.size(), 1u);
  EXPECT_EQ(f.variants()[0].backwards[0].replayed, "");
  expect_close(a.grad(), replayed, 1e-12, 1e-12);
}

TEST_F(Compile, ARecomputedValueIsStoredOnlyWhereSomethingLoadsIt) {
  // e = exp(x) feeds two pointwise chains. With recompute, each chain's kernel computes e
  // itself, and e is never stored. A view of e (no kernel) needs it stored: then both
  // kernels load it rather than compute it a third and fourth time.
  for (bool viewed : {false, true}) {
    Tensor x = randn({4, 3}, kFloat64);
    compiler::Graph g = compiler::trace({x}, [&] {
                          Tensor e = x.exp();
                          std::vector<Tensor> out{(e + 1).sin(), (e * 2).cos()};
                          if (viewed) out.push_back(e.t());
                          return out;
                        }).graph;
    const std::vector<compiler::FusionGroup> groups =
        compiler::find_fusion_groups(g, /*forward_without_grad=*/false, /*recompute=*/true);
    ASSERT_EQ(groups.size(), 2u) << g.to_string();
    for (const compiler::FusionGroup& group : groups)
      EXPECT_EQ(group.nodes.size(), viewed ? 2u : 3u);
    const std::vector<bool> alone = compiler::nodes_run_alone(g, groups);
    EXPECT_EQ(alone[0], viewed) << "exp: stored only for the view";
    // Without recompute e is stored once and each chain loads it.
    const std::vector<compiler::FusionGroup> plain = compiler::find_fusion_groups(g);
    EXPECT_EQ(plain.size(), 2u);
    for (const compiler::FusionGroup& group : plain) EXPECT_EQ(group.nodes.size(), 2u);
    EXPECT_TRUE(compiler::nodes_run_alone(g, plain)[0]);
  }
}

TEST_F(Compile, AGraphThatWritesOrDrawsReplaysOpByOpInstead) {
  auto writes = compile([](const Tensor& a) {
    Tensor t = a * 2;
    t.add_(1);
    return t.exp();
  });
  Tensor a = randn({3}, kFloat64).requires_grad_(true);
  writes(a);
  Tensor y = writes(a);
  EXPECT_FALSE(writes.variants()[0].one_node);
  y.sum().backward();
  Tensor a2 = a.detach().clone().requires_grad_(true);
  Tensor t = a2 * 2;
  t.add_(1);
  t.exp().sum().backward();
  expect_close(a.grad(), a2.grad(), 1e-12, 1e-12);
}

TEST_F(Compile, AnInputWrittenAfterTheForwardIsCaughtInBackward) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return (a * b).sin(); });
  Tensor a = randn({3}).requires_grad_(true), b = randn({3});
  f(a, b);
  Tensor y = f(a, b);
  b.add_(1);  // backward would need b as it was
  try {
    y.sum().backward();
    FAIL() << "the saved input was changed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version"), std::string::npos) << e.what();
  }
}

TEST_F(Compile, ACompiledModuleTrainsLikeEager) {
  auto fc = nn::Linear(4, 3);
  auto f = compile(fc);
  Tensor x = randn({5, 4});
  f(x);
  f(x).pow(2).sum().backward();
  Tensor gw = fc->weight.grad().clone(), gb = fc->bias.grad().clone();
  fc->zero_grad();
  fc->forward(x).pow(2).sum().backward();
  expect_close(gw, fc->weight.grad());
  expect_close(gb, fc->bias.grad());
  EXPECT_FALSE(f.variants()[0].one_node) << "its forward has nothing to fuse";
}

// How many times `op` was dispatched while `fn` ran (core/events.h).
int dispatches_of(const std::string& op, const std::function<void()>& fn) {
  std::atomic<int> count{0};
  const int handle = events::subscribe([&](const events::Event& e) {
    if (e.kind == events::Kind::OpDispatched && op == e.name) ++count;
  });
  struct Unsubscribe {
    int handle;
    ~Unsubscribe() { events::unsubscribe(handle); }
  } unsubscribe{handle};
  fn();
  return count.load();
}

// Two layers with a SiLU between them: the forward fuses the SiLU, and the joint graph reads
// the first product from the forward rather than multiplying again.
Tensor two_layers(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  Tensor h = addmm(b1, x, w1.t());
  return mm(h * h.sigmoid(), w2.t());
}

TEST_F(Compile, TheJointGraphReadsAMatrixProductFromTheForward) {
  auto f = compile(two_layers);
  std::vector<Tensor> in = {randn({8, 5}, kFloat64), randn({6, 5}, kFloat64), randn({6}, kFloat64),
                            randn({3, 6}, kFloat64)};
  for (Tensor& t : in) t.requires_grad_(true);
  f(in[0], in[1], in[2], in[3]);
  for (int call = 0; call < 2; ++call) {  // the first backward traces, the second runs the graph
    for (Tensor& t : in) t.mutable_grad() = Tensor();
    Tensor g = randn({8, 3}, kFloat64);
    f(in[0], in[1], in[2], in[3]).backward(g);
    std::vector<Tensor> copies;
    for (const Tensor& t : in) copies.push_back(t.detach().clone().requires_grad_(true));
    two_layers(copies[0], copies[1], copies[2], copies[3]).backward(g);
    for (size_t i = 0; i < in.size(); ++i)
      expect_close(in[i].grad(), copies[i].grad(), 1e-12, 1e-12);
  }
  const compiler::VariantInfo info = f.variants()[0];
  ASSERT_TRUE(info.one_node);
  ASSERT_EQ(info.backwards.size(), 1u);
  const compiler::BackwardInfo& bw = info.backwards[0];
  EXPECT_EQ(bw.replayed, "");
  // Kept: the product the SiLU reads (the last one is only returned, and mm's formulas never
  // read their own result).
  EXPECT_EQ(bw.saved, 1);
  EXPECT_NE(bw.traced.find("addmm("), std::string::npos) << bw.traced;
  EXPECT_EQ(bw.optimized.find("addmm("), std::string::npos) << bw.optimized;
  EXPECT_GE(bw.fused_groups, 1) << bw.optimized;
}

TEST_F(Compile, WithoutTheJointGraphAGraphWithAProductIsNotOneNode) {
  auto f = compile(two_layers, CompileOptions().set_joint_backward(false));
  Tensor x = randn({4, 5}), w1 = randn({6, 5}).requires_grad_(true), b1 = randn({6}),
         w2 = randn({3, 6});
  f(x, w1, b1, w2);
  f(x, w1, b1, w2).sum().backward();
  Tensor got = w1.grad().clone();
  w1.mutable_grad() = Tensor();
  two_layers(x, w1, b1, w2).sum().backward();
  expect_close(got, w1.grad());
  EXPECT_FALSE(f.variants()[0].one_node) << "its backward would multiply again";
}

// A product written in place after the forward (eager would refuse: its mul saved h) is not
// read as it is now: the backward computes it again from the inputs, whose versions autograd
// checks, and the gradient is the one of the function as it ran.
TEST_F(Compile, AKeptProductWrittenAfterTheForwardIsComputedAgain) {
  auto fn = [](const Tensor& x, const Tensor& w) {
    Tensor h = mm(x, w);
    return std::make_tuple(h, h * h.sigmoid());
  };
  auto f = compile(fn);
  Tensor x = randn({3, 4}, kFloat64), w = randn({4, 2}, kFloat64).requires_grad_(true);
  f(x, w);
  // The joint graph's trace and run, then a written product (the replay: mm again); then a
  // new kind first met on a written product (traced all the same), and run on an unwritten
  // one (no mm but the gradient's). Dispatches, not products: the replay's mm with grad is
  // dispatched twice (its autograd kernel, then the CPU kernel below it), the gradient's once.
  const std::vector<int> mms_wanted = {-1, 1, 3, -1, 1};
  for (int call = 0; call < 5; ++call) {
    w.mutable_grad() = Tensor();
    auto [h, y] = f(x, w);
    if (call == 2 || call == 3) h.detach().add_(1);
    const int mms = dispatches_of("mm", [&, &y = y] {
      if (call < 3)
        y.sum().backward();
      else
        y.backward(ones({3, 2}, kFloat64));  // a full gradient: another kind than sum()'s
    });
    if (mms_wanted[call] >= 0) {
      EXPECT_EQ(mms, mms_wanted[call]) << "call " << call;
    }
    Tensor w2 = w.detach().clone().requires_grad_(true);
    std::get<1>(fn(x, w2)).sum().backward();
    expect_close(w.grad(), w2.grad(), 1e-12, 1e-12);
  }
  ASSERT_TRUE(f.variants()[0].one_node);
  const std::vector<compiler::BackwardInfo> bw = f.variants()[0].backwards;
  ASSERT_EQ(bw.size(), 2u);
  EXPECT_EQ(bw[0].saved, 1);
  EXPECT_EQ(bw[1].saved, 1);
  EXPECT_EQ(bw[1].replayed, "");
}

// A product whose readers' formulas never need it (an add, a view): writing it after the
// forward is fine, as in eager mode, and the traced backward still runs.
TEST_F(Compile, AWrittenProductNoBackwardReadsIsNoError) {
  auto fn = [](const Tensor& x, const Tensor& w) {
    Tensor h = matmul(x, w);  // 3-d @ 2-d: one mm, then a view
    return std::make_tuple(h, ((h + 1) * 2).sum());
  };
  auto f = compile(fn);
  Tensor x = randn({2, 3, 4}, kFloat64), w = randn({4, 5}, kFloat64).requires_grad_(true);
  f(x, w);
  for (int call = 0; call < 3; ++call) {  // written before the first backward too
    w.mutable_grad() = Tensor();
    auto [h, y] = f(x, w);
    h.detach().add_(1);
    const int mms = dispatches_of("mm", [&, &h = h, &y = y] { (y + h.sum()).backward(); });
    if (call > 0) {
      EXPECT_EQ(mms, 1) << "the traced backward: only w's gradient multiplies";
    }
    Tensor w2 = w.detach().clone().requires_grad_(true);
    auto [h2, y2] = fn(x, w2);
    (y2 + h2.sum()).backward();
    expect_close(w.grad(), w2.grad(), 1e-12, 1e-12);
  }
  const std::vector<compiler::BackwardInfo> bw = f.variants()[0].backwards;
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].replayed, "");
  EXPECT_EQ(bw[0].saved, 0);
}

// A kept product that is also an output with a gradient of its own, through bmm: the
// gradients are eager's, and the node is freed with its outputs (no cycle through the
// product it keeps).
TEST_F(Compile, AKeptProductThatIsAnOutputGetsItsGradient) {
  auto fn = [](const Tensor& a, const Tensor& b) {
    Tensor h = bmm(a, b);
    return std::make_tuple(h, (h * h.tanh()).sum());
  };
  auto f = compile(fn);
  Tensor a = randn({2, 3, 4}, kFloat64).requires_grad_(true),
         b = randn({2, 4, 5}, kFloat64).requires_grad_(true);
  f(a, b);
  std::weak_ptr<autograd::Node> node;
  for (int call = 0; call < 2; ++call) {
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    auto [h, y] = f(a, b);
    node = h.grad_fn();
    const Tensor gh = randn({2, 3, 5}, kFloat64);
    autograd::backward({h, y}, {gh, ones({}, kFloat64)});
    Tensor a2 = a.detach().clone().requires_grad_(true),
           b2 = b.detach().clone().requires_grad_(true);
    auto [h2, y2] = fn(a2, b2);
    autograd::backward({h2, y2}, {gh, ones({}, kFloat64)});
    expect_close(a.grad(), a2.grad(), 1e-12, 1e-12);
    expect_close(b.grad(), b2.grad(), 1e-12, 1e-12);
  }
  EXPECT_TRUE(node.expired()) << "the compiled node outlived its outputs";
  {
    auto [h, y] = f(a, b);  // no backward: the node still goes with its outputs
    node = h.grad_fn();
  }
  EXPECT_TRUE(node.expired()) << "the kept product holds its own node";
  const std::vector<compiler::BackwardInfo> bw = f.variants()[0].backwards;
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].replayed, "");
  EXPECT_EQ(bw[0].saved, 1);
}

// retain_graph: the products stay for a second backward, which runs the joint graph again
// (a replay would call addmm again).
TEST_F(Compile, ARetainedGraphRunsItsCompiledBackwardTwice) {
  auto f = compile(two_layers);
  std::vector<Tensor> in = {randn({4, 5}, kFloat64), randn({6, 5}, kFloat64), randn({6}, kFloat64),
                            randn({3, 6}, kFloat64)};
  in[1].requires_grad_(true);
  f(in[0], in[1], in[2], in[3]);
  Tensor y = f(in[0], in[1], in[2], in[3]).sum();
  autograd::backward({y}, {}, /*retain_graph=*/true);
  EXPECT_EQ(dispatches_of("addmm", [&] { autograd::backward({y}); }), 0);
  Tensor w1 = in[1].detach().clone().requires_grad_(true);
  two_layers(in[0], w1, in[2], in[3]).sum().backward();
  expect_close(in[1].grad(), w1.grad() * 2, 1e-12, 1e-12);
  const std::vector<compiler::BackwardInfo> bw = f.variants()[0].backwards;
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].saved, 1);
  try {
    autograd::backward({y});
    FAIL() << "a third backward of a released graph";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("second time"), std::string::npos) << e.what();
  }
}

// ---- random programs ----------------------------------------------------------------------

// A random pointwise program over three inputs, as a list of ops on a stack of values; the
// same recipe is run eagerly and inside one compiled function.
struct Recipe {
  struct Op {
    int kind;  // 0 unary, 1 binary, 2 binary with a number, 3 clamp, 4 where, 5 reduce
    int a, b, c;
    UnaryOp u;
    BinaryOp bin;
    double number;
  };
  std::vector<Op> ops;
  bool reduce_last = false;
  int reduce_dim = -1;

  Tensor run(const std::vector<Tensor>& in) const {
    std::vector<Tensor> v = in;
    for (const Op& op : ops) {
      switch (op.kind) {
        case 0: v.push_back(ops::unary(op.u, v[op.a])); break;
        case 1: v.push_back(ops::binary(op.bin, v[op.a], v[op.b])); break;
        case 2: v.push_back(ops::binary(op.bin, v[op.a], wrapped_scalar_tensor(op.number))); break;
        case 3: v.push_back(v[op.a].clamp(-op.number, op.number)); break;
        case 4: v.push_back(where(v[op.a] > v[op.b], v[op.b], v[op.c])); break;
      }
    }
    Tensor out = v.back();
    if (reduce_last)
      out = reduce_dim < 0 || reduce_dim >= out.dim() ? out.sum() : out.sum({reduce_dim});
    return out;
  }
};

Recipe random_recipe(std::mt19937& rng) {
  const UnaryOp unaries[] = {UnaryOp::Neg,  UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sigmoid,
                             UnaryOp::Relu, UnaryOp::Abs, UnaryOp::Sin,  UnaryOp::Cos};
  const BinaryOp binaries[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Maximum,
                               BinaryOp::Minimum};
  Recipe r;
  int n = 3 + static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    int have = 3 + i;
    Recipe::Op op{};
    op.kind = static_cast<int>(rng() % 5);
    // Mostly the latest value, so chains form; sometimes an input or an older one.
    auto pick = [&] { return rng() % 3 ? have - 1 : static_cast<int>(rng() % have); };
    op.a = pick();
    op.b = static_cast<int>(rng() % have);
    op.c = static_cast<int>(rng() % have);
    op.u = unaries[rng() % std::size(unaries)];
    op.bin = binaries[rng() % std::size(binaries)];
    op.number = 0.25 + 0.25 * static_cast<double>(rng() % 8);
    r.ops.push_back(op);
  }
  r.reduce_last = rng() % 4 == 0;
  r.reduce_dim = static_cast<int>(rng() % 3) - 1;
  return r;
}

// Inputs of one broadcast shape family: [6, 5], [5] and a transposed [6, 5].
std::vector<Tensor> random_inputs(ScalarType dtype) {
  return {randn({6, 5}, dtype), randn({5}, dtype), randn({5, 6}, dtype).t()};
}

TEST_F(Compile, RandomPointwiseProgramsCompiledInOneObjectEqualEager) {
  std::mt19937 rng(1234);
  std::vector<Recipe> recipes;
  for (int i = 0; i < 120; ++i) recipes.push_back(random_recipe(rng));
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    auto all = [&](const Tensor& x, const Tensor& y, const Tensor& z) {
      std::vector<Tensor> out;
      for (const Recipe& r : recipes) out.push_back(r.run({x, y, z}));
      return out;
    };
    auto f = compile(all);
    std::vector<Tensor> in = random_inputs(dtype);
    f(in[0], in[1], in[2]);
    std::vector<Tensor> in2 = random_inputs(dtype);  // same guards, new values
    std::vector<Tensor> got = f(in2[0], in2[1], in2[2]);
    std::vector<Tensor> want = all(in2[0], in2[1], in2[2]);
    ASSERT_EQ(got.size(), want.size());
    double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("program " + std::to_string(i));
      expect_close(got[i], want[i], tol, tol);
    }
    EXPECT_GE(f.variants()[0].fused_groups, 60) << "most programs should fuse";
  }
}

// Through the joint graph (the backward traced and fused, values recomputed across kernels),
// with a reduction at the end or a random gradient for the whole output.
TEST_F(Compile, RandomProgramsHaveEagersGradients) {
  std::mt19937 rng(99);
  for (int i = 0; i < 12; ++i) {
    Recipe r = random_recipe(rng);
    r.reduce_last = i % 2 == 0;
    auto f = compile([&r](const Tensor& x, const Tensor& y, const Tensor& z) {
      return r.run({x, y, z});
    });
    std::vector<Tensor> in = random_inputs(kFloat64);
    Tensor seed;  // the output's gradient, drawn once for both runs
    auto grads = [&](bool compiled) {
      std::vector<Tensor> leaves;
      for (const Tensor& t : in) leaves.push_back(t.detach().clone().requires_grad_(true));
      Tensor out = compiled ? f(leaves[0], leaves[1], leaves[2]) : r.run(leaves);
      if (!seed.defined()) seed = randn(out.sizes(), kFloat64);
      out.backward(seed);
      std::vector<Tensor> g;
      for (const Tensor& l : leaves) g.push_back(l.grad().defined() ? l.grad() : zeros_like(l));
      return g;
    };
    grads(true);  // the forward's trace
    grads(true);  // the backward's
    std::vector<Tensor> got = grads(true), want = grads(false);
    for (size_t k = 0; k < got.size(); ++k) expect_close(got[k], want[k], 1e-12, 1e-12);
    const compiler::VariantInfo info = f.variants().at(0);
    if (!info.one_node) continue;
    ASSERT_EQ(info.backwards.size(), 1u) << "program " << i;
    EXPECT_EQ(info.backwards[0].replayed, "") << "program " << i;
  }
}

TEST_F(Compile, BadInputIsAClearError) {
  auto f = compile([](const Tensor& a) { return a + 1; });
  try {
    f(Tensor());
    FAIL() << "an undefined tensor must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undefined"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile([](const Tensor& a) { return a; }, CompileOptions().set_recompile_limit(0)),
               Error);
}

}  // namespace
}  // namespace glass
