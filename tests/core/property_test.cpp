// tests/core/property_test.cpp — every op on every layout against the address-formula oracle.
//
// For random shapes (fixed seeds) and each non-contiguous layout of testing::Layout —
// transposed, sliced with step 2, expanded with stride 0, offset — every elementwise op,
// reduction and matmul must give the same values as a naive loop that reads elements
// one by one through storage_index(). The oracle never calls the op under test.
#include <cmath>
#include <functional>
#include <random>

#include "test_util.h"

namespace glass {
namespace {

using testing::close;
using testing::for_each_index;
using testing::kAllLayouts;
using testing::Layout;
using testing::random_tensor;
using testing::ref_at;
using testing::strided_variant;

Shape random_shape(std::mt19937_64& gen, int min_dim = 1) {
  std::uniform_int_distribution<int> nd(min_dim, 4), sz(1, 6);
  Shape s(nd(gen));
  for (auto& d : s) d = sz(gen);
  return s;
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  double (*ref)(double);
};

TEST(Property, UnaryOpsOnEveryLayout) {
  std::vector<UnaryCase> cases = {
      {"neg", [](const Tensor& t) { return -t; }, [](double v) { return -v; }},
      {"abs", [](const Tensor& t) { return t.abs(); }, [](double v) { return std::abs(v); }},
      {"exp", [](const Tensor& t) { return t.exp(); }, [](double v) { return std::exp(v); }},
      {"tanh", [](const Tensor& t) { return t.tanh(); }, [](double v) { return std::tanh(v); }},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); },
       [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"relu", [](const Tensor& t) { return t.relu(); }, [](double v) { return v > 0 ? v : 0; }},
      {"sqrt(abs)", [](const Tensor& t) { return t.abs().sqrt(); },
       [](double v) { return std::sqrt(std::abs(v)); }},
      {"clamp", [](const Tensor& t) { return t.clamp(-0.5, 0.5); },
       [](double v) { return std::clamp(v, -0.5, 0.5); }},
      {"sin", [](const Tensor& t) { return t.sin(); }, [](double v) { return std::sin(v); }},
  };
  std::mt19937_64 gen(1);
  for (int trial = 0; trial < 8; ++trial) {
    Shape shape = random_shape(gen);
    for (ScalarType dt : {kFloat32, kFloat64}) {
      Tensor base = random_tensor(shape, dt, 100 + trial);
      for (Layout layout : kAllLayouts) {
        Tensor x = strided_variant(base, layout);
        for (const auto& c : cases) {
          SCOPED_TRACE(std::string(c.name) + " on " + testing::to_string(layout) + " " +
                       to_string(dt));
          std::vector<double> want;
          for_each_index(x.sizes(), [&](const std::vector<int64_t>& i) {
            want.push_back(c.ref(ref_at(x, i)));
          });
          EXPECT_TRUE(close(c.op(x), want));
        }
      }
    }
  }
}

TEST(Property, BinaryOpsWithBroadcastingOnEveryLayout) {
  std::mt19937_64 gen(2);
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return (a < b).to(a.dtype()); }},
  };
  std::vector<double (*)(double, double)> refs = {
      [](double a, double b) { return a + b; }, [](double a, double b) { return a - b; },
      [](double a, double b) { return a * b; }, [](double a, double b) { return std::max(a, b); },
      [](double a, double b) { return double(a < b); }};
  for (int trial = 0; trial < 10; ++trial) {
    Shape sa = random_shape(gen);
    // b: a random suffix of a's shape with some dims set to 1 (so it broadcasts).
    std::uniform_int_distribution<size_t> keep(1, sa.size());
    Shape sb(sa.end() - static_cast<int64_t>(keep(gen)), sa.end());
    for (auto& d : sb)
      if (gen() % 3 == 0) d = 1;
    for (ScalarType dt : {kFloat32, kFloat64, kInt64}) {
      Tensor a0 = random_tensor(sa, dt, 200 + trial), b0 = random_tensor(sb, dt, 300 + trial);
      for (Layout la : kAllLayouts) {
        Tensor a = strided_variant(a0, la), b = strided_variant(b0, kAllLayouts[trial % 5]);
        for (size_t k = 0; k < ops.size(); ++k) {
          SCOPED_TRACE(std::string(ops[k].first) + " a " + testing::to_string(la) + " " +
                       to_string(dt));
          Tensor out = ops[k].second(a, b);
          ASSERT_EQ(out.sizes(), IntArrayRef(sa));
          std::vector<double> want;
          for_each_index(sa, [&](const std::vector<int64_t>& i) {
            std::vector<int64_t> j(i.end() - static_cast<int64_t>(sb.size()), i.end());
            for (size_t d = 0; d < j.size(); ++d)
              if (sb[d] == 1) j[d] = 0;
            want.push_back(refs[k](ref_at(a, i), ref_at(b, j)));
          });
          EXPECT_TRUE(close(out, want));
        }
      }
    }
  }
}

TEST(Property, ReductionsOnEveryLayout) {
  std::mt19937_64 gen(3);
  for (int trial = 0; trial < 10; ++trial) {
    Shape shape = random_shape(gen, 2);
    int64_t dim = static_cast<int64_t>(gen() % shape.size());
    for (Layout layout : kAllLayouts) {
      Tensor x = strided_variant(random_tensor(shape, kFloat64, 400 + trial), layout);
      SCOPED_TRACE(std::string(testing::to_string(layout)) + " dim " + std::to_string(dim));
      // Oracle: fold along `dim` through the address formula.
      Shape out_shape = shape;
      out_shape.erase(out_shape.begin() + dim);
      std::vector<double> sum, mx, am;
      for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> i(o);
        i.insert(i.begin() + dim, 0);
        double s = 0, m = -INFINITY;
        int64_t arg = 0;
        for (int64_t k = 0; k < shape[dim]; ++k) {
          i[dim] = k;
          double v = ref_at(x, i);
          s += v;
          if (v > m) {
            m = v;
            arg = k;
          }
        }
        sum.push_back(s);
        mx.push_back(m);
        am.push_back(static_cast<double>(arg));
      });
      EXPECT_TRUE(close(x.sum(dim), sum));
      EXPECT_TRUE(close(x.amax(dim), mx));
      if (layout != Layout::Expanded) {  // an expanded tensor has ties; the first wins in both
        EXPECT_TRUE(close(x.argmax(dim), am));
      }
      double total = 0;
      for (double v : sum) total += v;
      EXPECT_NEAR(x.sum().item<double>(), total, 1e-9);
      Tensor sm = x.softmax(dim);
      EXPECT_TRUE(close(sm.sum(dim), std::vector<double>(sum.size(), 1.0)));
    }
  }
}

TEST(Property, MatmulOnEveryLayout) {
  std::mt19937_64 gen(4);
  for (int trial = 0; trial < 6; ++trial) {
    int64_t m = 1 + gen() % 20, k = 1 + gen() % 20, n = 1 + gen() % 20;
    for (Layout la : kAllLayouts) {
      Tensor a = strided_variant(random_tensor({m, k}, kFloat64, 500 + trial), la);
      Tensor b = strided_variant(random_tensor({k, n}, kFloat64, 600 + trial),
                                 kAllLayouts[(trial + 2) % 5]);
      std::vector<double> want;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p) s += ref_at(a, {i, p}) * ref_at(b, {p, j});
          want.push_back(s);
        }
      SCOPED_TRACE(testing::to_string(la));
      EXPECT_TRUE(close(a.matmul(b), want, 1e-10, 1e-10));
    }
  }
}

}  // namespace
}  // namespace glass
