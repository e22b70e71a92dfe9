// tests/core/cpu/vec_math_test.cpp — vec_math.h against the C library, measured in ulps.
//
// The oracle for float is <cmath> in double precision, rounded to float: correctly
// rounded except in the rare case where the double lands within 2^-29 ulp of a tie. The
// oracle for double is <cmath> in long double (64-bit mantissa on x86, 113 on AArch64).
// Errors are ulp distances: how many representable values lie between the result and
// the rounded oracle (0 = correctly rounded). Bounds: 2 for float, 4 for double.
//
// Inputs: float sweeps every 997th bit pattern (4.3M values: all binades, both signs,
// subnormals, NaNs, infinities) plus every float in the windows where a function changes
// regime (exp's overflow, subnormal and underflow thresholds; tanh's switch at 0.625);
// double draws random values with a fixed seed. Each function runs in a plain loop over
// a buffer, the shape of cpu_loop.h's contiguous loop, so the vectorized code is what is
// tested. The last tests go through glass::exp & co. on tensors of every layout.
#include "core/cpu/vec_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.h"

namespace glass::cpu {
namespace {

namespace vm = vec_math;

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();
template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();

// A monotone map from T to integers: consecutive values map to consecutive integers and
// +0 and -0 both map to 0.
template <class T>
int64_t ordered(T x) {
  if constexpr (std::is_same_v<T, float>) {
    const int32_t b = std::bit_cast<int32_t>(x);
    return b < 0 ? -int64_t(b & 0x7fffffff) : int64_t(b);
  } else {
    const int64_t b = std::bit_cast<int64_t>(x);
    return b < 0 ? -(b & 0x7fffffffffffffff) : b;
  }
}

// Representable values between got and want; NaN matches only NaN, inf only itself.
template <class T>
uint64_t ulp_distance(T got, T want) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want) ? 0 : UINT64_MAX;
  if (std::isinf(got) || std::isinf(want)) return got == want ? 0 : UINT64_MAX;
  const int64_t a = ordered(got), b = ordered(want);
  return a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a);
}

template <class T>
struct Worst {
  uint64_t ulps = 0;
  T x = 0, got = 0, want = 0;
};

template <class T>
std::ostream& operator<<(std::ostream& os, const Worst<T>& w) {
  return os << "worst: " << w.ulps << " ulp at x = " << std::hexfloat << w.x << " (got " << w.got
            << ", want " << w.want << ")" << std::defaultfloat;
}

// Runs f over xs in one contiguous loop, then compares each result with ref(x) rounded to T.
template <class T, class F, class Ref>
Worst<T> measure(const std::vector<T>& xs, F f, Ref ref) {
  std::vector<T> ys(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) ys[i] = f(xs[i]);
  Worst<T> worst;
  for (size_t i = 0; i < xs.size(); ++i) {
    const T want = static_cast<T>(ref(xs[i]));
    const uint64_t d = ulp_distance(ys[i], want);
    if (d > worst.ulps) worst = {d, xs[i], ys[i], want};
  }
  return worst;
}

// Every 997th float bit pattern, plus every float in [lo, hi] for each window.
std::vector<float> float_sweep(std::initializer_list<std::pair<float, float>> windows) {
  std::vector<float> xs;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 997)
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (auto [lo, hi] : windows)
    for (float x = lo; x <= hi; x = std::nextafter(x, kInf<float>)) xs.push_back(x);
  return xs;
}

// n values uniform in [lo, hi] plus n uniformly random bit patterns, fixed seed.
std::vector<double> double_sample(double lo, double hi, int n = 100000) {
  std::mt19937_64 gen(20261129);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(uniform(gen));
  for (int i = 0; i < n; ++i) xs.push_back(std::bit_cast<double>(gen()));
  return xs;
}

// The double-precision oracles (long double: more bits than the result).
long double sigmoid_ref(long double x) { return 1 / (1 + std::exp(-x)); }

// ---- float sweeps ------------------------------------------------------------------------

TEST(VecMath, FloatExpWithin2Ulp) {
  // Windows: overflow at 88.72, results turning subnormal at -87.34, underflow at -103.97.
  const auto xs = float_sweep({{88.6f, 88.8f}, {-87.4f, -87.3f}, {-104.1f, -103.8f}});
  auto w = measure(
      xs, [](float x) { return vm::exp(x); }, [](float x) { return std::exp(double(x)); });
  EXPECT_LE(w.ulps, 2u) << w;
}

TEST(VecMath, FloatLogWithin2Ulp) {
  const auto xs = float_sweep({{0.7f, 0.72f}, {0.999f, 1.001f}, {1.4f, 1.42f}});
  auto w = measure(
      xs, [](float x) { return vm::log(x); }, [](float x) { return std::log(double(x)); });
  EXPECT_LE(w.ulps, 2u) << w;
}

TEST(VecMath, FloatTanhWithin2Ulp) {
  const auto xs = float_sweep({{0.6f, 0.65f}, {-0.65f, -0.6f}});  // the switch at |x| = 0.625
  auto w = measure(
      xs, [](float x) { return vm::tanh(x); }, [](float x) { return std::tanh(double(x)); });
  EXPECT_LE(w.ulps, 2u) << w;
}

TEST(VecMath, FloatSigmoidWithin2Ulp) {
  const auto xs = float_sweep({{-4.0f, -3.0f}, {-104.0f, -87.0f}});
  auto w = measure(
      xs, [](float x) { return vm::sigmoid(x); },
      [](float x) { return 1 / (1 + std::exp(-double(x))); });
  EXPECT_LE(w.ulps, 2u) << w;
}

// ---- double samples ----------------------------------------------------------------------

TEST(VecMath, DoubleExpWithin4Ulp) {
  auto w = measure(
      double_sample(-750, 750), [](double x) { return vm::exp(x); },
      [](double x) { return std::exp(static_cast<long double>(x)); });
  EXPECT_LE(w.ulps, 4u) << w;
}

TEST(VecMath, DoubleLogWithin4Ulp) {
  std::vector<double> xs = double_sample(0, 4);
  for (double x : double_sample(0.999, 1.001, 20000)) xs.push_back(x);
  auto w = measure(
      xs, [](double x) { return vm::log(x); },
      [](double x) { return std::log(static_cast<long double>(x)); });
  EXPECT_LE(w.ulps, 4u) << w;
}

TEST(VecMath, DoubleTanhWithin4Ulp) {
  std::vector<double> xs = double_sample(-20, 20);
  for (double x : double_sample(-1, 1)) xs.push_back(x);
  auto w = measure(
      xs, [](double x) { return vm::tanh(x); },
      [](double x) { return std::tanh(static_cast<long double>(x)); });
  EXPECT_LE(w.ulps, 4u) << w;
}

TEST(VecMath, DoubleSigmoidWithin4Ulp) {
  std::vector<double> xs = double_sample(-750, 40);
  for (double x : double_sample(-5, 5)) xs.push_back(x);
  auto w = measure(
      xs, [](double x) { return vm::sigmoid(x); },
      [](double x) { return sigmoid_ref(static_cast<long double>(x)); });
  EXPECT_LE(w.ulps, 4u) << w;
}

// ---- special values, exactly -------------------------------------------------------------

// Same value, same sign of zero, NaN for NaN.
template <class T>
::testing::AssertionResult same(T got, T want) {
  const bool ok =
      std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << std::hexfloat << got << ", want " << want;
}

template <class T>
void check_specials() {
  using L = std::numeric_limits<T>;
  const T inf = kInf<T>, nan = kNaN<T>, tiny = L::denorm_min();
  EXPECT_TRUE(same(vm::exp(T(0)), T(1)));
  EXPECT_TRUE(same(vm::exp(T(-0.0)), T(1)));
  EXPECT_TRUE(same(vm::exp(inf), inf));
  EXPECT_TRUE(same(vm::exp(-inf), T(0)));
  EXPECT_TRUE(same(vm::exp(nan), nan));
  EXPECT_TRUE(same(vm::exp(T(1000)), inf));    // overflow
  EXPECT_TRUE(same(vm::exp(T(-1000)), T(0)));  // underflow
  EXPECT_TRUE(same(vm::exp(tiny), T(1)));
  // Subnormal results are computed, not flushed: e^-100 is subnormal in float.
  const T subnormal_result = vm::exp(std::is_same_v<T, float> ? T(-100) : T(-740));
  EXPECT_GT(subnormal_result, T(0));
  EXPECT_LT(subnormal_result, L::min());

  EXPECT_TRUE(same(vm::log(T(1)), T(0)));
  EXPECT_TRUE(same(vm::log(T(0)), -inf));
  EXPECT_TRUE(same(vm::log(T(-0.0)), -inf));
  EXPECT_TRUE(same(vm::log(T(-1)), nan));
  EXPECT_TRUE(same(vm::log(-tiny), nan));
  EXPECT_TRUE(same(vm::log(-inf), nan));
  EXPECT_TRUE(same(vm::log(inf), inf));
  EXPECT_TRUE(same(vm::log(nan), nan));
  EXPECT_LE(ulp_distance(vm::log(tiny), T(std::log(static_cast<long double>(tiny)))), 1u);
  EXPECT_LE(ulp_distance(vm::log(L::max()), T(std::log(static_cast<long double>(L::max())))), 1u);

  EXPECT_TRUE(same(vm::tanh(T(0)), T(0)));
  EXPECT_TRUE(same(vm::tanh(T(-0.0)), T(-0.0)));
  EXPECT_TRUE(same(vm::tanh(inf), T(1)));
  EXPECT_TRUE(same(vm::tanh(-inf), T(-1)));
  EXPECT_TRUE(same(vm::tanh(T(30)), T(1)));  // saturates, never 1 + something
  EXPECT_TRUE(same(vm::tanh(T(-400)), T(-1)));
  EXPECT_TRUE(same(vm::tanh(nan), nan));
  EXPECT_TRUE(same(vm::tanh(tiny), tiny));  // tanh x = x near 0, down to subnormals
  EXPECT_TRUE(same(vm::tanh(-tiny), -tiny));

  EXPECT_TRUE(same(vm::sigmoid(T(0)), T(0.5)));
  EXPECT_TRUE(same(vm::sigmoid(T(-0.0)), T(0.5)));
  EXPECT_TRUE(same(vm::sigmoid(inf), T(1)));
  EXPECT_TRUE(same(vm::sigmoid(-inf), T(0)));
  EXPECT_TRUE(same(vm::sigmoid(nan), nan));
  EXPECT_TRUE(same(vm::sigmoid(T(800)), T(1)));   // e^-800: no inf/inf
  EXPECT_TRUE(same(vm::sigmoid(T(-800)), T(0)));  // e^800 would overflow
  EXPECT_TRUE(same(vm::sigmoid(L::max()), T(1)));
  EXPECT_TRUE(same(vm::sigmoid(L::lowest()), T(0)));
}

TEST(VecMath, FloatSpecialValues) { check_specials<float>(); }
TEST(VecMath, DoubleSpecialValues) { check_specials<double>(); }

// ---- through the ops ---------------------------------------------------------------------

// glass::exp & co. on every layout and both dtypes, against <cmath> in double.
TEST(VecMath, OpsUseItOnEveryLayout) {
  using testing::close;
  struct Case {
    Tensor (*op)(const Tensor&);
    double (*ref)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {glass::exp, [](double x) { return std::exp(x); }, -87, 88},  // float stays finite
      {glass::log, [](double x) { return std::log(x); }, 1e-3, 1e3},
      {glass::tanh, [](double x) { return std::tanh(x); }, -3, 3},
      {glass::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30},
  };
  uint64_t seed = 1;
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      // 67 x 33: longer than any vector, with a remainder after the vector loop.
      Tensor x = testing::random_tensor({67, 33}, dtype, seed++, c.lo, c.hi);
      for (testing::Layout layout : testing::kAllLayouts) {
        Tensor xv = testing::strided_variant(x, layout);  // Expanded: row 0, repeated
        std::vector<double> want;
        for (double v : testing::values(xv)) want.push_back(c.ref(v));
        EXPECT_TRUE(close(c.op(xv), want))
            << to_string(dtype) << ", " << testing::to_string(layout);
      }
    }
  }
}

TEST(VecMath, OpsSpecialValues) {
  using testing::close;
  const double inf = kInf<double>, nan = kNaN<double>;
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    Tensor x = tensor({0.0, -0.0, 1.0, -1.0, 200.0, -200.0, inf, -inf, nan}, dtype);
    const double exp200 = dtype == kFloat32 ? inf : std::exp(200.0);  // float overflows
    EXPECT_TRUE(close(
        x.exp(), {1, 1, std::exp(1.0), std::exp(-1.0), exp200, std::exp(-200.0), inf, 0, nan}));
    EXPECT_TRUE(close(x.log(), {-inf, -inf, 0, nan, std::log(200.0), nan, inf, nan, nan}));
    EXPECT_TRUE(close(x.tanh(), {0, 0, std::tanh(1.0), -std::tanh(1.0), 1, -1, 1, -1, nan}));
    EXPECT_TRUE(close(x.sigmoid(), {0.5, 0.5, 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0)), 1,
                                    0, 1, 0, nan}));
  }
}

}  // namespace
}  // namespace glass::cpu
