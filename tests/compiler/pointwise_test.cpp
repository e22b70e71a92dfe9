// tests/compiler/pointwise_test.cpp — fused pointwise groups: the generated kernel against
// the same ops run eagerly (interpret_pointwise, and the plain Tensor expression), on
// contiguous, broadcast and transposed inputs, float32 and float64, with promotion; a few
// hundred random groups compiled in one batch; the IR's text; and the errors.
#include "compiler/pointwise.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/kernel_cache.h"
#include "compiler/pointwise_testing.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/tensor_options.h"

namespace glass::compiler {
namespace {

// The kernels go to a cache under the build folder, reused by later runs.
class Pointwise : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!host_compiler().available()) GTEST_SKIP() << "no C++ compiler on this machine";
    ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1);
  }
  void TearDown() override { ::unsetenv("GLASS_CACHE_DIR"); }
};

// The seed's chain: ((a*b + a) * 0.5 - b).relu().sigmoid().
PointwiseProgram chain(ScalarType dtype, bool zero_dim_a = false) {
  PointwiseProgram p;
  const int a = p.input(0, dtype, zero_dim_a), b = p.input(1, dtype);
  const int ab_a = p.binary(BinaryOp::Add, p.binary(BinaryOp::Mul, a, b), a);
  const int t = p.binary(BinaryOp::Sub, p.binary(BinaryOp::Mul, ab_a, p.scalar(0.5)), b);
  p.set_output(p.unary(UnaryOp::Sigmoid, p.unary(UnaryOp::Relu, t)));
  return p;
}

Tensor eager_chain(const Tensor& a, const Tensor& b) {
  return ((a * b + a) * 0.5 - b).relu().sigmoid();
}

TEST_F(Pointwise, TheSeedsChainEqualsEagerMode) {
  for (ScalarType dtype : {kFloat, kDouble}) {
    Generator gen = make_generator(Device(kCPU), 3);
    Tensor a = randn({1000}, gen).to(dtype), b = randn({1000}, gen).to(dtype);
    CompiledPointwise fused = compile_pointwise(chain(dtype));
    const Tensor got = fused({a, b});
    EXPECT_EQ(close(got, eager_chain(a, b), 1e-6, 0), "") << to_string(dtype);
    EXPECT_EQ(close(interpret_pointwise(chain(dtype), {a, b}), eager_chain(a, b), 0, 0), "");
  }
}

// 4 MiB and more of output take the streaming-store path, in blocks with a ragged tail.
TEST_F(Pointwise, ALongResultIsStreamedOutAndStillEqualsEagerMode) {
  Generator gen = make_generator(Device(kCPU), 7);
  const int64_t n = (int64_t{1} << 21) + 37;  // 8 MiB of floats and a tail
  Tensor a = randn({n}, gen), b = randn({n}, gen);
  const Tensor got = compile_pointwise(chain(kFloat))({a, b});
  EXPECT_EQ(close(got, eager_chain(a, b), 1e-6, 0), "");
  // An output that starts off a 64-byte boundary: the plain stores before the first block.
  Tensor a1 = a.slice(0, 3, n), b1 = b.slice(0, 3, n);
  EXPECT_EQ(close(compile_pointwise(chain(kFloat))({a1, b1}), eager_chain(a1, b1), 1e-6, 0), "");
}

TEST_F(Pointwise, BroadcastAndTransposedInputsGoThroughTheStridedLoop) {
  Generator gen = make_generator(Device(kCPU), 4);
  Tensor a = randn({4, 1, 5}, gen);   // broadcast along dim 1
  Tensor b = randn({5, 3}, gen).t();  // [3, 5], transposed
  CompiledPointwise fused = compile_pointwise(chain(kFloat));
  const Tensor got = fused({a, b});
  EXPECT_EQ(got.sizes(), (std::vector<int64_t>{4, 3, 5}));
  EXPECT_EQ(close(got, eager_chain(a, b), 1e-6, 0), "");
  // A 0-dim tensor and a slice with a step.
  Tensor s = full({}, 0.25f);
  Tensor sliced = randn({40}, gen).slice(0, 0, 40, 4);  // stride 4
  EXPECT_EQ(close(compile_pointwise(chain(kFloat, /*zero_dim_a=*/true))({s, sliced}),
                  eager_chain(s, sliced), 1e-6, 0),
            "");
}

// Promotion as eager's: a 0-dim tensor ranks below one with dims, integers meet the
// default float dtype, an integer clamp stays integer.
TEST_F(Pointwise, DtypesFollowEagerRulesForZeroDimInputsDefaultDtypeAndIntegerClamp) {
  PointwiseProgram p;  // x[5] f32 + y[] f64 is f32, as in eager mode
  p.set_output(p.binary(BinaryOp::Add, p.input(0, kFloat), p.input(1, kDouble, /*zero_dim=*/true)));
  EXPECT_EQ(p.output_dtype(), kFloat);
  Tensor x = randn({5}), y = full({}, 0.5, TensorOptions(kDouble));
  const Tensor got = compile_pointwise(p)({x, y});
  EXPECT_EQ(got.dtype(), (x + y).dtype());
  EXPECT_EQ(close(got, x + y, 0, 0), "");
  // Built for a 0-dim input, called with dims (or the reverse): named, not miscomputed.
  try {
    compile_pointwise(p)({x, full({1}, 0.5, TensorOptions(kDouble))});
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("input 1 was declared 0-dim, got a tensor of shape [1]"),
              std::string::npos)
        << e.what();
  }

  const ScalarType before = get_default_dtype();
  set_default_dtype(kDouble);
  PointwiseProgram q;  // sigmoid(i) / 3 of an int64 i: the default float, now float64
  const int i = q.input(0, kLong);
  q.set_output(q.binary(BinaryOp::Div, q.unary(UnaryOp::Sigmoid, i), q.scalar(3)));
  const ScalarType q_dtype = q.output_dtype();
  Tensor ints = arange(-4, 5, TensorOptions(kLong));
  const Tensor q_got = compile_pointwise(q)({ints});
  const Tensor q_want = ints.sigmoid() / 3;
  set_default_dtype(before);
  EXPECT_EQ(q_dtype, kDouble);
  EXPECT_EQ(close(q_got, q_want, 1e-15, 0), "");

  PointwiseProgram lowest;  // maximum(i, INT64_MIN): the one integer C++ cannot spell as -N
  const int li = lowest.input(0, kLong);
  lowest.set_output(
      lowest.binary(BinaryOp::Maximum, li, lowest.scalar(std::numeric_limits<int64_t>::min())));
  EXPECT_TRUE(compile_pointwise(lowest)({ints}).equal(ints));

  PointwiseProgram r;  // clamp(i, 0, 3) of int64 stays int64
  r.set_output(r.clamp(r.input(0, kLong), Scalar(int64_t{0}), Scalar(int64_t{3})));
  EXPECT_EQ(r.output_dtype(), kLong);
  EXPECT_TRUE(compile_pointwise(r)({ints}).equal(clamp(ints, 0, 3)));
}

// Numbers C++ cannot spell with %a: infinities and NaN (where(a > 0, a, -inf), the
// attention-mask pattern).
TEST_F(Pointwise, InfiniteAndNanNumbersCompile) {
  PointwiseProgram p;
  const int a = p.input(0, kFloat);
  const double inf = std::numeric_limits<double>::infinity();
  const int masked = p.where(p.binary(BinaryOp::Gt, a, p.scalar(0.0)), a, p.scalar(-inf));
  p.set_output(p.clamp(p.binary(BinaryOp::Add, masked, p.scalar(std::nan(""))), -inf, inf));
  Tensor x = randn({16});
  const Tensor want = interpret_pointwise(p, {x});
  EXPECT_EQ(close(compile_pointwise(p)({x}), want, 0, 0), "");
  PointwiseProgram q;
  const int b = q.input(0, kFloat);
  q.set_output(q.where(q.binary(BinaryOp::Gt, b, q.scalar(0.0)), b, q.scalar(-inf)));
  const Tensor got = compile_pointwise(q)({x});
  EXPECT_EQ(close(got, where(x > 0, x, -inf), 0, 0), "");
}

TEST_F(Pointwise, AnInputThatRequiresGradIsAnErrorUnderGradMode) {
  Tensor a = randn({4}).requires_grad_(), b = randn({4});
  CompiledPointwise fused = compile_pointwise(chain(kFloat));
  try {
    fused({a, b});
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("input 0 requires grad, and compiled groups are not "
                                         "differentiable yet"),
              std::string::npos)
        << e.what();
  }
  NoGradGuard no_grad;
  EXPECT_EQ(close(fused({a, b}), eager_chain(a, b), 1e-6, 0), "");
}

TEST_F(Pointwise, PromotionComparisonsWhereAndClampFollowEagerMode) {
  // where(a > b, clamp(a * 2, -1, 1), b / 3) with a float32 and b int64 (promotes to float).
  PointwiseProgram p;
  const int a = p.input(0, kFloat), b = p.input(1, kLong);
  const int picked = p.where(p.binary(BinaryOp::Gt, a, b),
                             p.clamp(p.binary(BinaryOp::Mul, a, p.scalar(2)), -1.0, 1.0),
                             p.binary(BinaryOp::Div, b, p.scalar(3)));
  p.set_output(picked);
  EXPECT_EQ(p.output_dtype(), kFloat);
  Generator gen = make_generator(Device(kCPU), 5);
  Tensor x = randn({6, 7}, gen);
  Tensor y = arange(-3, 4, TensorOptions(kLong));  // [7], broadcast over rows
  const Tensor want = where(x > y, clamp(x * 2, -1.0, 1.0), y / 3);
  EXPECT_EQ(close(compile_pointwise(p)({x, y}), want, 1e-6, 0), "");
  EXPECT_EQ(close(interpret_pointwise(p, {x, y}), want, 0, 0), "");

  // Integers stay integers, and are exact: (i * i - 3).abs().
  PointwiseProgram q;
  const int i = q.input(0, kLong);
  q.set_output(
      q.unary(UnaryOp::Abs, q.binary(BinaryOp::Sub, q.binary(BinaryOp::Mul, i, i), q.scalar(3))));
  EXPECT_EQ(q.output_dtype(), kLong);
  Tensor ints = arange(-50, 50, TensorOptions(kLong));
  EXPECT_TRUE(compile_pointwise(q)({ints}).equal((ints * ints - 3).abs()));
}

// A random group over 1 to 3 inputs of random broadcastable shapes; its ops keep values in
// a tame range (no overflow), and where a domain is violated both sides make the same NaN.
TEST_F(Pointwise, HundredsOfRandomGroupsCompiledInOneBatchEqualEagerMode) {
  std::mt19937 rng(2026);
  std::vector<PointwiseProgram> programs;
  std::vector<std::vector<Tensor>> inputs;
  Generator gen = make_generator(Device(kCPU), 6);
  for (int i = 0; i < 240; ++i) {
    const ScalarType dtype = i % 2 ? kDouble : kFloat;
    const int n_inputs = 1 + static_cast<int>(rng() % 3);
    programs.push_back(random_program(rng, dtype, n_inputs));
    inputs.push_back(random_inputs(rng, gen, n_inputs, dtype, Device(kCPU)));
  }
  const std::vector<CompiledPointwise> compiled = compile_pointwise(programs);
  int bitwise = 0;
  for (size_t i = 0; i < programs.size(); ++i) {
    const Tensor want = interpret_pointwise(programs[i], inputs[i]);
    const Tensor got = compiled[i](inputs[i]);
    const bool f32 = programs[i].inputs[0] == kFloat;
    EXPECT_EQ(close(got, want, f32 ? 1e-5 : 1e-12, f32 ? 1e-6 : 1e-14), "")
        << "group " << i << ":\n"
        << programs[i].to_string();
    bitwise += close(got, want, 0, 0).empty();
  }
  // Most groups agree bit for bit; the rest differ by a contracted multiply-add.
  EXPECT_GT(bitwise, static_cast<int>(programs.size()) / 2);
  std::printf("[value] %d of %zu random groups bit for bit equal to eager mode\n", bitwise,
              programs.size());
}

// A reduction as the group's last op: the values are folded as they are computed.
TEST_F(Pointwise, AReductionEndsAGroupLikeEagerModesReduction) {
  struct Case {
    ReduceOp op;
    bool mean;
    std::vector<int64_t> dims;
    bool keepdim;
  };
  const std::vector<Case> cases = {
      {ReduceOp::Sum, false, {}, false},     {ReduceOp::Sum, false, {1}, false},
      {ReduceOp::Sum, false, {0}, true},     {ReduceOp::Sum, true, {-1}, true},
      {ReduceOp::Max, false, {0, 1}, false}, {ReduceOp::Min, false, {1}, false},
      {ReduceOp::Prod, false, {1}, false},   {ReduceOp::Sum, true, {}, false},
  };
  Generator gen = make_generator(Device(kCPU), 8);
  for (ScalarType dtype : {kFloat, kDouble}) {
    std::vector<PointwiseProgram> programs;
    for (const Case& c : cases) {
      // sum(relu(a * b - 0.1) ...) over a [33, 70] a and a [70] b (broadcast).
      PointwiseProgram p;
      const int a = p.input(0, dtype), b = p.input(1, dtype);
      p.set_output(p.unary(UnaryOp::Relu,
                           p.binary(BinaryOp::Sub, p.binary(BinaryOp::Mul, a, b), p.scalar(0.1))));
      if (c.op == ReduceOp::Prod) p.set_output(p.binary(BinaryOp::Add, p.output, p.scalar(1)));
      if (c.mean)
        p.mean(c.dims, c.keepdim);
      else
        p.reduce(c.op, c.dims, c.keepdim);
      programs.push_back(p);
    }
    const std::vector<CompiledPointwise> compiled = compile_pointwise(programs);
    Tensor a = randn({33, 70}, gen).to(dtype), b = randn({70}, gen).to(dtype);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Tensor want = interpret_pointwise(programs[i], {a, b});
      EXPECT_EQ(close(compiled[i]({a, b}), want, dtype == kFloat ? 1e-5 : 1e-12, 0), "")
          << programs[i].to_string();
    }
  }
}

TEST_F(Pointwise, ALargeFullReductionCombinesPerThreadPartialsInOrder) {
  // 2^20 + 5 elements, over the 65536-element threshold for partial sums.
  Generator gen = make_generator(Device(kCPU), 9);
  Tensor x = randn({(1 << 20) + 5}, gen);
  PointwiseProgram sum_of_squares, largest;
  for (PointwiseProgram* p : {&sum_of_squares, &largest}) {
    const int v = p->input(0, kFloat);
    p->set_output(p->binary(BinaryOp::Mul, v, v));
  }
  sum_of_squares.reduce(ReduceOp::Sum);
  largest.reduce(ReduceOp::Max);
  const std::vector<CompiledPointwise> compiled = compile_pointwise({sum_of_squares, largest});
  EXPECT_EQ(close(compiled[0]({x}), (x * x).sum(), 1e-6, 0), "");
  EXPECT_TRUE(compiled[1]({x}).equal((x * x).amax()));
  // NaN wins a max, as in eager mode.
  Tensor with_nan = x.clone();
  with_nan.data_ptr<float>()[12345] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(compiled[1]({with_nan}).item<float>()));
}

TEST_F(Pointwise, TheIrPrintsOneStepPerLine) {
  EXPECT_EQ(chain(kFloat).to_string(),
            "%0 = input(0) : float32\n"
            "%1 = input(1) : float32\n"
            "%2 = mul(%0, %1) : float32\n"
            "%3 = add(%2, %0) : float32\n"
            "%4 = scalar(0.5) : float64\n"
            "%5 = mul(%3, %4) : float32\n"
            "%6 = sub(%5, %1) : float32\n"
            "%7 = relu(%6) : float32\n"
            "%8 = sigmoid(%7) : float32  <- output\n");
  const std::string src = emit_cpp(chain(kFloat));
  EXPECT_NE(
      src.find("extern \"C\" void glass_kernel(char** data, const int64_t* strides, int64_t n)"),
      std::string::npos);
  EXPECT_NE(src.find("const float v8 = f::sigmoid<float>(v7);"), std::string::npos) << src;
  EXPECT_NE(src.find("static_cast<float>(0x1p-1)"), std::string::npos) << src;  // 0.5, exact
}

TEST_F(Pointwise, CompileDebugPrintsTheIrAndTheKernelWithoutThePrelude) {
  ::setenv("GLASS_COMPILE_DEBUG", "1", 1);
  ::testing::internal::CaptureStderr();
  compile_pointwise(chain(kFloat));
  const std::string printed = ::testing::internal::GetCapturedStderr();
  ::unsetenv("GLASS_COMPILE_DEBUG");
  EXPECT_NE(printed.find("[glass compile] generated C++"), std::string::npos) << printed;
  EXPECT_NE(printed.find("//   %8 = sigmoid(%7) : float32  <- output"), std::string::npos);
  EXPECT_NE(printed.find("const float v8 = f::sigmoid<float>(v7);"), std::string::npos);
  EXPECT_EQ(printed.find("namespace glass::cpu::vec_math"), std::string::npos) << "the prelude";
}

TEST_F(Pointwise, BadProgramsAndCallsAreNamed) {
  const auto expect_error = [](const auto& f, const std::string& message) {
    try {
      f();
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  PointwiseProgram p = chain(kFloat);
  CompiledPointwise fused = compile_pointwise(p);
  Tensor x = randn({4});
  expect_error([&] { fused({x}); }, "the group takes 2 inputs, got 1");
  expect_error([&] { fused({x, x.to(kDouble)}); }, "input 1 must be float32, got float64");
  expect_error([&] { fused({x, randn({3})}); }, "[4]");  // broadcasting's own error names
  expect_error([&] { fused({x, randn({3})}); }, "[3]");  // both shapes
  PointwiseProgram q;
  q.input(0, kFloat);
  expect_error([&] { q.binary(BinaryOp::Add, 0, 5); }, "operand %5 is not an earlier step");
  expect_error([&] { emit_cpp(q); }, "the program has no output");
  expect_error([&] { q.set_output(q.scalar(1)); }, "the output must be a tensor step");
  expect_error([&] { q.where(0, 0, 0); }, "the condition must be a bool step, got float32");
  expect_error([&] { q.unary(UnaryOp::LogicalNot, 0); }, "logical_not cannot be fused yet");
  PointwiseProgram ints;
  ints.set_output(ints.input(0, kLong));
  expect_error([&] { ints.reduce(ReduceOp::Sum); },
               "a fused sum of int64 values cannot be fused yet");
  PointwiseProgram twice = chain(kFloat);
  twice.reduce(ReduceOp::Sum);
  expect_error([&] { twice.mean(); }, "the group already ends with a reduction");
  PointwiseProgram bad_dim = chain(kFloat);
  bad_dim.reduce(ReduceOp::Sum, {2});
  expect_error([&] { compile_pointwise(bad_dim)({x, x}); }, "out of range");
}

}  // namespace
}  // namespace glass::compiler
