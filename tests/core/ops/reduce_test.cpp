// tests/core/ops/reduce_test.cpp — reductions against hand-worked and NumPy values, on
// every device (device_test.h). The CPU kernel's threading and accumulation over millions
// of elements are tested in reduce_cpu_test.cpp (too large for the simulated GPU).
#include "core/ops/reduce.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Reduce : public testing::DeviceTest {
 protected:
  // x = [[1, 2, 3], [4, 5, 6]]
  Tensor x23() const { return on(tensor({{1., 2., 3.}, {4., 5., 6.}}, kFloat64)); }
};
GLASS_INSTANTIATE_DEVICE_TESTS(Reduce);

TEST_P(Reduce, SumMeanProdOverDims) {
  Tensor x = x23();
  EXPECT_TRUE(close(x.sum(), {21}));
  EXPECT_TRUE(close(x.sum(0), {5, 7, 9}));
  EXPECT_TRUE(close(x.sum(-1), {6, 15}));
  EXPECT_EQ(x.sum(1, true).sizes(), (Shape{2, 1}));
  EXPECT_TRUE(close(x.sum({0, 1}), {21}));
  EXPECT_TRUE(close(x.mean(0), {2.5, 3.5, 4.5}));
  EXPECT_TRUE(close(x.mean(), {3.5}));
  EXPECT_TRUE(close(x.prod(), {720}));
  EXPECT_TRUE(close(x.prod(1), {6, 120}));
  EXPECT_EQ(on(tensor({1, 2})).sum().dtype(), kInt64);
  EXPECT_EQ(on(tensor({true, true})).sum().item<int64_t>(), 2);  // bools sum as Long
  EXPECT_EQ(on(tensor({1, 2}, kInt32)).sum().dtype(), kInt64);
  EXPECT_EQ(x.sum(kFloat32).dtype(), kFloat32);
}

TEST_P(Reduce, MaxMinArgAndNaN) {
  Tensor x = on(tensor({{1., 7., 3.}, {9., 5., 9.}}));
  auto [v, i] = x.max(1);
  EXPECT_TRUE(close(v, {7, 9}));
  EXPECT_TRUE(close(i, {1, 0}));  // the first of equal maxima, as PyTorch
  auto [mv, mi] = x.min(0, true);
  EXPECT_EQ(mv.sizes(), (Shape{1, 3}));
  EXPECT_TRUE(close(mi, {0, 1, 0}));
  EXPECT_EQ(x.max().item<float>(), 9.0f);
  EXPECT_EQ(x.argmax().item<int64_t>(), 3);
  EXPECT_EQ(x.argmin().item<int64_t>(), 0);
  EXPECT_TRUE(close(x.amax(0), {9, 7, 9}));
  EXPECT_TRUE(close(x.amin({0, 1}), {1}));
  Tensor n = on(tensor({1.0, std::nan(""), 3.0}));
  EXPECT_TRUE(std::isnan(n.max().item<float>()));
  EXPECT_EQ(n.argmax().item<int64_t>(), 1);
}

TEST_P(Reduce, VarStdAgainstNumPy) {
  Tensor x = x23();
  // numpy.var(x, ddof=1) = 3.5; numpy.var(x, axis=0, ddof=1) = [4.5, 4.5, 4.5]
  EXPECT_TRUE(close(x.var(), {3.5}));
  EXPECT_TRUE(close(x.var(0), {4.5, 4.5, 4.5}));
  EXPECT_TRUE(close(x.var(1, false), {2.0 / 3, 2.0 / 3}));
  EXPECT_TRUE(close(x.std(), {std::sqrt(3.5)}));
  EXPECT_TRUE(close(x.std({1}, true, true), {1, 1}));
  EXPECT_GLASS_ERROR(on(tensor({1, 2})).mean(), "mean()", "Long");
}

TEST_P(Reduce, LogSumExpAndNormAreStable) {
  Tensor x = on(tensor({1000., 1000.}, kFloat64));
  EXPECT_TRUE(close(x.logsumexp(0), {1000 + std::log(2.0)}));  // no overflow
  Tensor neg_inf = on(tensor({-INFINITY, -INFINITY}, kFloat64));
  EXPECT_EQ(neg_inf.logsumexp(0).item<double>(), -INFINITY);
  Tensor v = on(tensor({3., -4.}, kFloat64));
  EXPECT_TRUE(close(v.norm(), {5}));
  EXPECT_TRUE(close(v.norm(1), {7}));
  EXPECT_TRUE(close(v.norm(INFINITY), {4}));
  EXPECT_TRUE(close(v.norm(3), {std::cbrt(27.0 + 64.0)}));
  EXPECT_TRUE(close(x23().norm(2, {1}), {std::sqrt(14.0), std::sqrt(77.0)}));
}

TEST_P(Reduce, SoftmaxIsStableAndSumsToOne) {
  Tensor x = on(tensor({{1., 2., 3.}, {1000., 1000., 1000.}}, kFloat64));
  Tensor s = x.softmax(1);
  double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), z = e1 + e2 + e3;
  EXPECT_TRUE(close(s, {e1 / z, e2 / z, e3 / z, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
  EXPECT_TRUE(close(x.log_softmax(1), {1 - std::log(z), 2 - std::log(z), 3 - std::log(z),
                                       -std::log(3.0), -std::log(3.0), -std::log(3.0)}));
  Tensor col = x.softmax(0);  // along dim 0: inner stride 3
  EXPECT_TRUE(close(col.sum(0), {1, 1, 1}));
  EXPECT_GLASS_ERROR(on(tensor({1, 2})).softmax(0), "softmax()", "floating-point");
}

TEST_P(Reduce, EmptyTensorsFollowPyTorch) {
  Tensor e = zeros({0, 3}, opts());
  EXPECT_EQ(e.sum().item<float>(), 0.0f);
  EXPECT_TRUE(std::isnan(e.mean().item<float>()));
  EXPECT_EQ(e.prod().item<float>(), 1.0f);
  EXPECT_TRUE(close(e.sum(0), {0, 0, 0}));
  EXPECT_EQ(e.sum(1).sizes(), (Shape{0}));
  EXPECT_GLASS_ERROR(e.max(), "max()", "numel() == 0", "'dim' argument");
  EXPECT_GLASS_ERROR(e.amax(0), "amax()", "reduction dim 0", "non-zero size");
  EXPECT_EQ(e.amax(1).sizes(), (Shape{0}));
  EXPECT_GLASS_ERROR(x23().sum({0, 0}), "appears multiple times");
  EXPECT_GLASS_ERROR(x23().sum(2), "dimension out of range", "[-2, 1]");
}

// Integer sums and products wrap modulo 2^64, as PyTorch's do, with no signed overflow
// (the kernel accumulates in uint64_t; UBSan would report a signed one).
TEST_P(Reduce, IntegerSumsAndProductsWrapModulo2To64) {
  auto longs = [&](std::vector<int64_t> v) { return on(tensor(v)); };
  EXPECT_EQ(longs({INT64_MAX, 1}).sum().item<int64_t>(), INT64_MIN);
  EXPECT_EQ(longs({INT64_MIN, -1}).sum().item<int64_t>(), INT64_MAX);
  // 2^32 * 2^32 = 2^64 = 0 (mod 2^64); 2^62 * 3 = 2^63 + 2^62 = INT64_MIN + 2^62.
  const int64_t p32 = int64_t{1} << 32, p62 = int64_t{1} << 62;
  EXPECT_EQ(longs({p32, p32}).prod().item<int64_t>(), 0);
  EXPECT_EQ(longs({p62, 3}).prod().item<int64_t>(), INT64_MIN + p62);
  // A long inner run (the CPU kernel's 16-lane path): 40 copies of INT64_MAX sum to -40 (mod 2^64).
  EXPECT_EQ(full({40}, INT64_MAX, opts(kInt64)).sum().item<int64_t>(), -40);
  // Int32 inputs sum as Long, so they do not wrap at 2^31.
  EXPECT_EQ(on(tensor({INT32_MAX, 1}, kInt32)).sum().item<int64_t>(), int64_t{INT32_MAX} + 1);
}

}  // namespace
}  // namespace glass
