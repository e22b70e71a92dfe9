// tests/core/ops/pointwise_test.cpp — elementwise ops: values, promotion, in-place rules.
#include "core/ops/pointwise.h"

#include <cmath>

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Pointwise : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Pointwise);

TEST_P(Pointwise, ArithmeticAndBroadcasting) {
  Tensor a = on(tensor({{1., 2., 3.}, {4., 5., 6.}}));
  Tensor b = on(tensor({10., 20., 30.}));
  EXPECT_TRUE(close(a + b, {11, 22, 33, 14, 25, 36}));
  EXPECT_TRUE(close(a - b, {-9, -18, -27, -6, -15, -24}));
  EXPECT_TRUE(close(a * on(tensor({{2.}, {3.}})), {2, 4, 6, 12, 15, 18}));
  EXPECT_TRUE(close(b / a.select(0, 0), {10, 10, 10}));
  EXPECT_TRUE(close(add(a, b, 2), {21, 42, 63, 24, 45, 66}));  // a + 2*b
  EXPECT_TRUE(close(2 - a.select(0, 0), {1, 0, -1}));
  EXPECT_TRUE(close(1 / on(tensor({2., 4.})), {0.5, 0.25}));
  EXPECT_TRUE(close(pow(on(tensor({2., 3.})), 2), {4, 9}));
  EXPECT_TRUE(close(pow(2, on(tensor({3., 0.5}))), {8, std::sqrt(2.0)}));
  EXPECT_TRUE(close(pow(on(tensor({2, 3})), on(tensor({3, 2}))), {8, 9}));
  EXPECT_TRUE(close(maximum(on(tensor({1., 5.})), on(tensor({3., 2.}))), {3, 5}));
  EXPECT_TRUE(close(minimum(on(tensor({1., 5.})), on(tensor({3., 2.}))), {1, 2}));
}

TEST_P(Pointwise, UnaryMathAgainstTheCLibrary) {
  std::vector<double> xs = {-2.0, -0.5, 0.0, 0.7, 3.0};
  Tensor x = on(tensor(xs, kFloat64));
  auto expect = [&](const Tensor& got, double (*f)(double)) {
    std::vector<double> want;
    for (double v : xs) want.push_back(f(v));
    EXPECT_TRUE(close(got, want));
  };
  expect(x.exp(), [](double v) { return std::exp(v); });
  expect(x.sin(), [](double v) { return std::sin(v); });
  expect(x.cos(), [](double v) { return std::cos(v); });
  expect(x.tanh(), [](double v) { return std::tanh(v); });
  expect(x.sigmoid(), [](double v) { return 1 / (1 + std::exp(-v)); });
  expect(x.relu(), [](double v) { return v > 0 ? v : 0.0; });
  expect(x.abs(), [](double v) { return std::abs(v); });
  expect(-x, [](double v) { return -v; });
  expect(x.sign(), [](double v) { return double((v > 0) - (v < 0)); });
  expect(x.gelu(), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  // PyTorch: gelu(1.0, approximate='tanh') = 0.8411919906082768
  EXPECT_TRUE(close(on(tensor({1.0}, kFloat64)).gelu("tanh"), {0.8411919906082768}));
  Tensor p = on(tensor({0.25, 4.0}, kFloat64));
  EXPECT_TRUE(close(p.sqrt(), {0.5, 2.0}));
  EXPECT_TRUE(close(p.rsqrt(), {2.0, 0.5}));
  // log1p keeps the digits log(1 + x) loses: 1 + 1e-10 rounds in float64 before the log.
  EXPECT_TRUE(
      close(on(tensor({1e-10, 0.0, std::exp(1.0) - 1})).log1p(), {9.9999999995e-11, 0.0, 1.0}));
  EXPECT_TRUE(close(p.log(), {std::log(0.25), std::log(4.0)}));
}

TEST_P(Pointwise, ClampAndNaNPropagation) {
  double nan = std::nan("");
  Tensor x = on(tensor({-2.0, 0.5, 3.0, nan}, kFloat64));
  EXPECT_TRUE(close(x.clamp(-1, 1), {-1, 0.5, 1, nan}));
  EXPECT_TRUE(close(x.clamp_min(0), {0, 0.5, 3, nan}));
  EXPECT_TRUE(close(x.clamp_max(0), {-2, 0, 0, nan}));
  EXPECT_TRUE(close(maximum(x, on(tensor({0.0}, kFloat64))), {0, 0.5, 3, nan}));
  EXPECT_TRUE(close(x.relu(), {0, 0.5, 3, nan}));
  EXPECT_EQ(on(tensor({1, 5})).clamp(0.5).dtype(), kFloat32);  // bounds promote like PyTorch
  EXPECT_GLASS_ERROR(x.clamp(std::nullopt, std::nullopt), "at least one of 'min' or 'max'");
}

TEST_P(Pointwise, ComparisonsAndLogicalOpsGiveBool) {
  Tensor a = on(tensor({1, 2, 3})), b = on(tensor({3, 2, 1}));
  Tensor lt = a < b;
  EXPECT_EQ(lt.dtype(), kBool);
  EXPECT_TRUE(close(lt, {1, 0, 0}));
  EXPECT_TRUE(close(a == b, {0, 1, 0}));
  EXPECT_TRUE(close(a != 2, {1, 0, 1}));
  EXPECT_TRUE(close(a >= 2, {0, 1, 1}));
  EXPECT_TRUE(close(a.le(2.5), {1, 1, 0}));  // Long vs float scalar compares in Float
  EXPECT_TRUE(close((a > 1) & (b > 1), {0, 1, 0}));
  EXPECT_TRUE(close((a > 2) | (b > 2), {1, 0, 1}));
  EXPECT_TRUE(close(~(a > 1), {1, 0, 0}));
  EXPECT_TRUE(close(logical_and(on(tensor({0., 2.})), on(tensor({1, 1}))), {0, 1}));
}

TEST_P(Pointwise, WhereAndMaskedFill) {
  Tensor x = on(tensor({-1., 2., -3.}));
  EXPECT_TRUE(close(where(x > 0, x, on(tensor({0.}))), {0, 2, 0}));
  EXPECT_TRUE(close(where(x > 0, 1.0, x), {-1, 1, -3}));
  EXPECT_EQ(where(x > 0, on(tensor({1})), on(tensor({2.5}, kFloat64))).dtype(), kFloat64);
  EXPECT_TRUE(close(x.masked_fill(x < 0, 0), {0, 2, 0}));
  Tensor y = x.clone();
  y.masked_fill_(y < 0, 9);
  EXPECT_TRUE(close(y, {9, 2, 9}));
  EXPECT_GLASS_ERROR(where(x, x, x), "boolean", "Float");
}

TEST_P(Pointwise, InPlaceOpsWriteCastAndBumpTheVersion) {
  Tensor x = on(tensor({1., 2.}));
  uint32_t v = x._version();
  Tensor& r = x.mul_(3);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(close(x, {3, 6}));
  EXPECT_EQ(x._version(), v + 1);
  x += on(tensor({1., 1.}));
  x -= 1;
  x /= 2;
  EXPECT_TRUE(close(x, {1.5, 3}));
  Tensor d = on(tensor({1., 2.}, kFloat64));
  d.add_(on(tensor({1, 1})));  // Long into Double: allowed
  EXPECT_TRUE(close(d, {2, 3}));
  Tensor i = on(tensor({1, 2}, kInt32));
  i.add_(on(tensor({1, 1})));  // computed in Long, written back as Int
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_TRUE(close(i, {2, 3}));
  Tensor e = on(tensor({0., 1.}));
  e.exp_().relu_().neg_().abs_();
  EXPECT_TRUE(close(e, {1, std::exp(1.0)}));
}

TEST_P(Pointwise, OutVariantsAndCopyWithConversion) {
  Tensor out = empty({2, 2}, opts(kFloat64));
  add_out(out, ones({2, 2}, opts()), on(tensor({1., 2.})));
  EXPECT_TRUE(close(out, {2, 3, 2, 3}));
  Tensor dst = zeros({2, 3}, opts(kInt64));
  dst.copy_(on(tensor({1.7, -2.2, 3.9})));  // broadcast + truncation toward zero
  EXPECT_TRUE(close(dst, {1, -2, 3, 1, -2, 3}));
  Tensor b = zeros({3}, opts(kBool));
  b.copy_(on(tensor({0.0, 0.5, -1.0})));
  EXPECT_TRUE(close(b, {0, 1, 1}));
  Tensor x = arange(4, opts(kFloat)).view({2, 2});
  x.copy_(x.t());  // overlapping source is read before writing
  EXPECT_TRUE(close(x, {0, 2, 1, 3}));
  EXPECT_TRUE(close(on(tensor({1.5, 2.5})).to(kInt64), {1, 2}));
}

TEST_P(Pointwise, IntegerAndBoolSemantics) {
  EXPECT_TRUE(close(on(tensor({7, -7})) / 2, {3.5, -3.5}));
  EXPECT_TRUE(close(on(tensor({true, false})) + on(tensor({true, true})), {1, 1}));
  EXPECT_EQ((on(tensor({true})) + on(tensor({true}))).dtype(), kBool);
  EXPECT_TRUE(close(-on(tensor({3, -4})), {-3, 4}));
  EXPECT_GLASS_ERROR(-on(tensor({true})), "bool", "logical_not");
  EXPECT_GLASS_ERROR(on(tensor({true})) - on(tensor({true})), "two bool tensors");
}

}  // namespace
}  // namespace glass
