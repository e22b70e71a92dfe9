// tests/autograd/inplace_test.cpp — in-place ops inside graphs: rebasing, the version
// check, and the writes that are refused (Note [In-place ops in a graph]).
#include <cstring>

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

class InPlace : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(InPlace);

TEST_P(InPlace, RebasesHistoryAndGradchecks) {
  // y = x * 2; y.mul_(w); y.exp_(): y = exp(2xw), dy/dx = 2w y, dy/dw = 2x y.
  Tensor x = on(tensor({0.5, -1.})).requires_grad_(), w = on(tensor({3., 4.})).requires_grad_();
  Tensor y = x * 2;
  y.mul_(w);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  y.exp_();
  EXPECT_EQ(y.grad_fn()->name(), "ExpBackward0");
  y.sum().backward();
  const double y0 = std::exp(3.), y1 = std::exp(-8.);
  EXPECT_TRUE(close(x.grad(), {2 * 3 * y0, 2 * 4 * y1}));
  EXPECT_TRUE(close(w.grad(), {2 * 0.5 * y0, 2 * -1 * y1}));

  auto chain = [](const V& in) {
    Tensor y = in[0] * 1;
    y.sin_();  // reads its input: the old value is kept
    y.add_(in[1], 0.5);
    y.clamp_(-0.8, 0.9);
    y.div_(in[1] * in[1] + 1);
    y.relu_();
    return y;
  };
  EXPECT_TRUE(gradcheck(chain, {on(r({5}, 1)), on(r({5}, 2))}));
  EXPECT_TRUE(gradgradcheck(chain, {on(r({5}, 3)), on(r({5}, 4))}));
}

TEST_P(InPlace, CopyFillMaskedIndexPutScatter) {
  Tensor mask = on(tensor({true, false, true}));
  EXPECT_TRUE(gradcheck(
      [&](const V& x) {
        Tensor y = x[0] * x[0];
        y.masked_fill_(mask, 0.25);
        return y;
      },
      {on(r({3}, 10))}));
  EXPECT_TRUE(gradcheck(
      [&](const V& x) {
        Tensor y = zeros({2, 3}, opts(kFloat64));
        y.copy_(x[0]);  // broadcast source: gradient summed back to [3]
        return y * x[1];
      },
      {on(r({3}, 11)), on(r({2, 3}, 12))}));
  EXPECT_TRUE(gradcheck(
      [&](const V& x) {
        Tensor y = x[0] * 1;
        y.index_put_({on(tensor({0, 2}))}, x[1]);
        return y;
      },
      {on(r({4}, 13)), on(r({2}, 14))}));
  EXPECT_TRUE(gradcheck(
      [&](const V& x) {
        Tensor y = x[0] * 1;
        y.index_put_({on(tensor({1, 1}))}, x[1], /*accumulate=*/true);
        return y;
      },
      {on(r({3}, 15)), on(r({2}, 16))}));
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  Tensor y = x * 3;
  y.fill_(7);
  (y * x).sum().backward();  // y no longer depends on x: only the direct use counts
  EXPECT_TRUE(close(x.grad(), {7, 7}));
}

TEST_P(InPlace, SavedValueOverwrittenIsCaught) {
  Tensor x = on(tensor({1., 2.})).requires_grad_();
  Tensor h = x * 2;
  Tensor y = h * h;  // saves h
  h.add_(1);         // h changes after being saved
  EXPECT_GLASS_ERROR(y.sum().backward(), "modified by an inplace operation", "MulBackward0",
                     "expected version 0");
  Tensor e = x.exp();  // exp saves its output
  e.mul_(2);
  EXPECT_GLASS_ERROR(e.sum().backward(), "modified by an inplace operation", "ExpBackward0");
}

// A saved tensor re-pointed at other bytes (set_data) is caught like one written in place:
// its new storage's version says nothing about the values that were saved.
TEST_P(InPlace, SavedTensorRepointedBySetDataIsCaught) {
  Tensor w = on(tensor({1., 2.})).requires_grad_();
  Tensor x = on(tensor({3., 4.})).requires_grad_();
  Tensor y = w * x;  // saves w and x
  w.set_data(on(tensor({5., 6.})));
  EXPECT_GLASS_ERROR(y.sum().backward(), "had its data replaced since it was saved",
                     "MulBackward0");
}

// FSDP's free-after-use: the saved tensor's storage drops its bytes after forward and gets
// them back, refilled with the same values by a write that is not a tensor op (an all-gather
// writes raw bytes), before backward: the same storage at the same version, so backward may
// use it. A refill through a tensor op (copy_) bumps the version, and is caught.
TEST(InPlaceCpu, SavedTensorWhoseBytesWereDroppedAndRefilledIsUsable) {
  for (bool refill_with_an_op : {false, true}) {
    Tensor w = tensor({1., 2.}).requires_grad_();
    Tensor x = tensor({3., 4.}).requires_grad_();
    Tensor y = w * x;  // saves w for x's gradient
    const Tensor kept = w.detach().clone();
    w.storage().drop_bytes();
    EXPECT_GLASS_ERROR(y.sum().backward(), "has no bytes");
    w.storage().restore_bytes();
    if (refill_with_an_op) {
      {
        NoGradGuard no_grad;
        w.copy_(kept);
      }
      EXPECT_GLASS_ERROR(y.sum().backward(), "modified by an inplace operation");
    } else {
      std::memcpy(w.data_ptr(), kept.data_ptr(), static_cast<size_t>(kept.nbytes()));
      y.sum().backward();
      EXPECT_TRUE(close(x.grad(), {1., 2.}));
      EXPECT_TRUE(close(w.grad(), {3., 4.}));
    }
  }
}

TEST_P(InPlace, RefusedWritesAreClearAndChangeNothing) {
  Tensor leaf = on(tensor({1., 2., 3.})).requires_grad_();
  EXPECT_GLASS_ERROR(leaf.mul_(2), "leaf tensor that requires grad", "NoGradGuard");
  EXPECT_GLASS_ERROR(leaf.narrow(0, 0, 2).zero_(), "view of a leaf", "[2]", "[3]");
  EXPECT_TRUE(close(leaf, {1, 2, 3}));
  {
    NoGradGuard no_grad;  // optimizers update parameters this way
    leaf.mul_(2);
  }
  EXPECT_TRUE(close(leaf, {2, 4, 6}));

  Tensor h = leaf * 1;
  EXPECT_GLASS_ERROR(h.select(0, 0).add_(1), "view", "CopySlices", "clone()");
  Tensor v = h.view({3, 1});
  EXPECT_GLASS_ERROR(h.relu_(), "live views");
  EXPECT_EQ(h._version(), 0u);

  Tensor buf = zeros({2, 3}, opts(kFloat64));
  EXPECT_GLASS_ERROR(buf.select(0, 0).copy_(leaf), "shares its storage", "silently miss");
  EXPECT_TRUE(close(buf, {0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace glass
