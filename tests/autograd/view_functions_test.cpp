// tests/autograd/view_functions_test.cpp — formulas of views through positions, indexing,
// max(dim) and prod, against float64 finite differences (and hand-worked gradients), on
// every device (core/device_test.h).
#include "core/device_test.h"
#include "core/test_util.h"
#include "gradcheck_util.h"

namespace glass {
namespace {

using testing::close;
using testing::gradcheck;
using testing::gradgradcheck;
using testing::r;
using V = std::vector<Tensor>;

class ViewFormulas : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(ViewFormulas);

TEST_P(ViewFormulas, DiagonalUnfoldAsStrided) {
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].diagonal(); }, {on(r({3, 4}, 1))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].diagonal(1, 1, 2); }, {on(r({2, 3, 4}, 2))}));
  // Overlapping windows: element 2 of x appears in two windows, so it gets both gradients.
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].unfold(0, 3, 2); }, {on(r({7}, 3))}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return x[0].as_strided({2, 2}, {1, 2}, 1);
      },
      {on(r({6}, 4))}));
  EXPECT_TRUE(  // overlapping output: slot 1 is read twice
      gradcheck(
          [](const V& x) {
            return x[0].as_strided({3, 2}, {1, 1}, 0);
          },
          {on(r({5}, 5))}));

  Tensor x = zeros({5}, opts(kFloat64)).requires_grad_();
  x.unfold(0, 3, 1).sum().backward();  // windows [0..2] [1..3] [2..4]: counts 1 2 3 2 1
  EXPECT_TRUE(close(x.grad(), {1, 2, 3, 2, 1}));
}

// t() is its own op, as in PyTorch: it records TBackward0, transpose(0, 1) records
// TransposeBackward0, and below 2 dims t() is an alias that still records TBackward0.
TEST_P(ViewFormulas, TRecordsTBackward) {
  Tensor w = on(r({2, 3}, 6)).requires_grad_();
  EXPECT_EQ(w.t().grad_fn()->name(), "TBackward0");
  EXPECT_EQ(w.transpose(0, 1).grad_fn()->name(), "TransposeBackward0");
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].t(); }, {on(r({2, 3}, 7))}));
  EXPECT_TRUE(gradgradcheck([](const V& x) { return x[0].t() * x[0].t(); }, {on(r({2, 3}, 8))}));
  Tensor v = on(r({3}, 9)).requires_grad_();
  Tensor vt = v.t();
  EXPECT_EQ(vt.grad_fn()->name(), "TBackward0");
  EXPECT_TRUE(vt.is_alias_of(v));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].t(); }, {on(r({3}, 10))}));
}

TEST_P(ViewFormulas, Indexing) {
  Tensor idx = on(tensor({2, 0, 2}));
  EXPECT_TRUE(
      gradcheck([&](const V& x) { return x[0].index_select(0, idx); }, {on(r({3, 2}, 10))}));
  EXPECT_TRUE(
      gradcheck([&](const V& x) { return x[0].index_select(1, idx); }, {on(r({2, 3}, 11))}));
  Tensor gidx = on(tensor({{0, 0}, {1, 0}}));
  EXPECT_TRUE(gradcheck([&](const V& x) { return x[0].gather(1, gidx); }, {on(r({2, 3}, 12))}));
  Tensor mask = on(tensor({{true, false, true}, {false, false, true}}));
  EXPECT_TRUE(gradcheck([&](const V& x) { return x[0].masked_select(mask); }, {on(r({2, 3}, 13))}));
  EXPECT_TRUE(gradcheck(
      [&](const V& x) {
        return x[0].index({idx, on(tensor({1, 0, 1}))});
      },
      {on(r({3, 2}, 14))}));
  EXPECT_TRUE(
      gradcheck([&](const V& x) { return x[0].masked_fill(mask, 3.0); }, {on(r({2, 3}, 15))}));
  EXPECT_TRUE(gradcheck([&](const V& x) { return x[0].scatter_add(1, gidx, x[1]); },
                        {on(r({2, 3}, 16)), on(r({2, 2}, 17))}));

  // Hand-worked: index_select picks row 2 twice, so row 2 gets a gradient of 2.
  Tensor w = ones({3, 2}, opts(kFloat64)).requires_grad_();
  w.index_select(0, idx).sum().backward();
  EXPECT_TRUE(close(w.grad(), {1, 1, 0, 0, 2, 2}));
  EXPECT_TRUE(gradgradcheck([&](const V& x) { return (x[0].gather(1, gidx) * x[0].sum()); },
                            {on(r({2, 3}, 18))}));
}

TEST_P(ViewFormulas, MaxDimAndProd) {
  EXPECT_TRUE(gradcheck([](const V& x) { return std::get<0>(x[0].max(1)); }, {on(r({3, 4}, 20))}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return std::get<0>(x[0].min(0, true)); }, {on(r({3, 4}, 21))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].prod(); }, {on(r({4}, 22))}));
  EXPECT_TRUE(gradcheck([](const V& x) { return x[0].prod(1); }, {on(r({3, 4}, 23))}));
  // Zeros: d/dx_i prod = product of the others, worked by hand.
  Tensor x = on(tensor({2., 0., 3.})).requires_grad_();
  x.prod().backward();
  EXPECT_TRUE(close(x.grad(), {0, 6, 0}));
  Tensor y = on(tensor({0., 0., 3.})).requires_grad_();
  y.prod().backward();
  EXPECT_TRUE(close(y.grad(), {0, 0, 0}));
  Tensor z = on(tensor({{2., 0.}, {4., 5.}})).requires_grad_();
  z.prod(1).sum().backward();
  EXPECT_TRUE(close(z.grad(), {0, 2, 5, 4}));
}

}  // namespace
}  // namespace glass
