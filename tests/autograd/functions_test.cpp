// tests/autograd/functions_test.cpp — every formula against float64 finite differences.
#include "autograd/functions.h"

#include "core/device_test.h"
#include "core/test_util.h"
#include "gradcheck_util.h"

namespace glass {
namespace {

using testing::gradcheck;
using testing::r;
using V = std::vector<Tensor>;

class Formulas : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Formulas);

TEST_P(Formulas, Elementwise) {
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0] + x[1]; }, {on(r({2, 3}, 1)), on(r({3}, 2))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return x[0] - x[1] * 2; }, {on(r({2, 3}, 1)), on(r({2, 1}, 2))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return x[0] * x[1]; }, {on(r({2, 3}, 3)), on(r({1, 3}, 4))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return x[0] / x[1]; }, {on(r({4}, 5)), on(r({4}, 6, 0.5, 2))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return x[0].pow(x[1]); }, {on(r({4}, 7, 0.5, 2)), on(r({4}, 8))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].pow(3); }, {on(r({4}, 9))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return maximum(x[0], x[1]); }, {on(r({5}, 10)), on(r({5}, 11))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return minimum(x[0], x[1]); }, {on(r({5}, 12)), on(r({5}, 13))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].clamp(-0.5, 0.7); }, {on(r({6}, 14))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return where(x[0] > 0, x[0], x[1]); },
                        {on(r({6}, 15)), on(r({6}, 16))}));
}

TEST_P(Formulas, Unary) {
  std::vector<std::function<Tensor(const Tensor&)>> fs = {
      [](const Tensor& t) { return -t; },          [](const Tensor& t) { return t.abs(); },
      [](const Tensor& t) { return t.exp(); },     [](const Tensor& t) { return t.tanh(); },
      [](const Tensor& t) { return t.sigmoid(); }, [](const Tensor& t) { return t.relu(); },
      [](const Tensor& t) { return t.sin(); },     [](const Tensor& t) { return t.cos(); },
      [](const Tensor& t) { return t.gelu(); },    [](const Tensor& t) { return t.gelu("tanh"); },
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(gradcheck([&](const V& x) { return fs[i](x[0]); }, {on(r({2, 3}, 20 + i))}));
  }
  Tensor pos = on(r({5}, 40, 0.3, 3));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].log(); }, {pos}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].log1p(); }, {pos}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].sqrt(); }, {pos}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].rsqrt(); }, {pos}));
}

TEST_P(Formulas, ReductionsSoftmaxAndMatmul) {
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].sum(); }, {on(r({2, 3}, 50))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].sum(1); }, {on(r({2, 3, 2}, 51))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].sum({0, 2}, true); }, {on(r({2, 3, 2}, 52))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].mean(0); }, {on(r({3, 4}, 53))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].var(1); }, {on(r({3, 4}, 54))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].amax(1); }, {on(r({3, 4}, 55))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].logsumexp(1); }, {on(r({3, 4}, 56))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].softmax(1); }, {on(r({3, 4}, 57))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].log_softmax(0); }, {on(r({3, 4}, 58))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].matmul(x[1]); },
                        {on(r({3, 4}, 59)), on(r({4, 2}, 60))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].matmul(x[1]); },
                        {on(r({2, 3, 4}, 61)), on(r({4}, 62))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].matmul(x[1]); },
                        {on(r({2, 3, 4}, 63)), on(r({2, 4, 2}, 64))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return addmm(x[0], x[1], x[2], 0.5, 2); },
                        {on(r({3}, 65)), on(r({2, 4}, 66)), on(r({4, 3}, 67))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].norm(); }, {on(r({5}, 68))}));
}

TEST_P(Formulas, ViewsAndJoins) {
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].t() * x[1]; },
                        {on(r({3, 2}, 70)), on(r({2, 3}, 71))}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return x[0].permute({2, 0, 1}).reshape({4, 3});
      },
      {on(r({2, 3, 2}, 72))}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return x[0].expand({3, 4}) * x[1];
      },
      {on(r({4}, 73)), on(r({3, 4}, 74))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].unsqueeze(1).squeeze(); }, {on(r({3}, 75))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].select(1, -1); }, {on(r({3, 4}, 76))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].slice(1, 1, 4, 2); }, {on(r({2, 5}, 77))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].narrow(0, 1, 2); }, {on(r({4, 2}, 78))}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return cat({x[0], x[1]}, 1);
      },
      {on(r({2, 2}, 79)), on(r({2, 3}, 80))}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return stack({x[0], x[1]});
      },
      {on(r({3}, 81)), on(r({3}, 82))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].split(2)[1] * 3; }, {on(r({5}, 83))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].to(kFloat64).clone(); }, {on(r({3}, 84))}));
}

TEST_P(Formulas, NonContiguousInputs) {
  Tensor t = on(r({4, 3}, 90)).t();                           // transposed
  Tensor s = on(r({3, 8}, 91)).slice(1, 0, std::nullopt, 2);  // step 2
  EXPECT_TRUE(gradcheck([](const V& x) { return (x[0] * x[1]).tanh().sum(1); }, {t, s}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].matmul(x[1].t()); }, {t, s}));
}

// Every formula family on transposed, step-2 and offset inputs (gradcheck keeps the
// layout it is given): formulas must not assume contiguous inputs.
TEST_P(Formulas, EveryLayout) {
  using testing::gradgradcheck;
  using testing::Layout;
  using testing::strided_variant;
  const std::vector<std::pair<const char*, std::function<Tensor(const V&)>>> fs = {
      {"unary chain", [](const V& x) { return x[0].exp().tanh().sigmoid() + x[0].abs().sin(); }},
      {"gelu relu", [](const V& x) { return x[0].gelu() * x[0].relu().cos(); }},
      {"binary", [](const V& x) { return x[0] * x[1] / (x[1] * x[1] + 1) - x[0].pow(2); }},
      {"max min where",
       [](const V& x) { return where(x[0] > 0, maximum(x[0], x[1]), minimum(x[0], x[1])); }},
      {"reductions",
       [](const V& x) { return x[0].sum(0) + x[1].amax(1).sum() + x[0].var(1).mean(); }},
      {"softmax", [](const V& x) { return x[0].log_softmax(1) * x[1].softmax(0); }},
      {"matmul", [](const V& x) { return x[0].matmul(x[1].t()); }},
      {"views",
       [](const V& x) { return x[0].t().reshape({-1}).slice(0, 1, 7, 2) * x[1].select(1, 2); }},
      {"indexing",
       [this](const V& x) {
         return x[0].gather(1, on(tensor({{0, 3}, {2, 2}, {1, 0}}))) +
                x[1].index_select(1, on(tensor({3, 0})));
       }},
  };
  for (Layout layout : {Layout::Transposed, Layout::Strided, Layout::Offset}) {
    for (const auto& [name, f] : fs) {
      SCOPED_TRACE(std::string(name) + " on " + testing::to_string(layout) + " inputs");
      V in = {strided_variant(on(r({3, 4}, 200)), layout),
              strided_variant(on(r({3, 4}, 201)), layout)};
      ASSERT_TRUE(!in[0].is_contiguous() || in[0].storage_offset() > 0);
      EXPECT_TRUE(gradcheck(f, in));
      EXPECT_TRUE(gradgradcheck(f, in));
    }
  }
}

TEST_P(Formulas, SecondDerivatives) {
  using testing::gradgradcheck;
  EXPECT_TRUE(
      gradgradcheck([](const V& x) { return x[0] * x[1]; }, {on(r({3}, 100)), on(r({3}, 101))}));
  EXPECT_TRUE(gradgradcheck([](const V& x) { return x[0].tanh() / (x[1] * x[1] + 1); },
                            {on(r({2, 2}, 102)), on(r({2, 2}, 103))}));
  EXPECT_TRUE(
      gradgradcheck([](const V& x) { return x[0].exp().sigmoid().sin(); }, {on(r({4}, 104))}));
  EXPECT_TRUE(gradgradcheck([](const V& x) { return x[0].matmul(x[1]); },
                            {on(r({2, 3}, 105)), on(r({3, 2}, 106))}));
  EXPECT_TRUE(
      gradgradcheck([](const V& x) { return x[0].softmax(1).sum(0); }, {on(r({2, 3}, 107))}));
  EXPECT_TRUE(gradgradcheck([](const V& x) { return x[0].pow(3).mean(); }, {on(r({3}, 108))}));
  EXPECT_TRUE(gradgradcheck([](const V& x) { return x[0].logsumexp(0); }, {on(r({4}, 109))}));
}

TEST_P(Formulas, ACanaryFormulaFailsGradcheck) {
  // gradcheck must catch a wrong derivative: d/dx (x * x) is not x.
  auto wrong = [](const V& x) {
    Tensor y = x[0] * x[0].detach();  // the gradient now misses the second factor's term
    return y;
  };
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0] * x[0]; }, {on(r({3}, 95))}));
  ::testing::AssertionResult bad = gradcheck(wrong, {on(r({3}, 96))});
  EXPECT_FALSE(bad);
  std::string report = bad.message();
  EXPECT_NE(report.find("Jacobian mismatch for output 0 with respect to input 0"),
            std::string::npos);
  EXPECT_NE(report.find("numerical:"), std::string::npos);
  EXPECT_NE(report.find("analytical:"), std::string::npos);
}

}  // namespace
}  // namespace glass
