// tests/core/bad_input_test.cpp — every user mistake: a clear glass::Error, nothing changed.
//
// Each test makes the mistake, checks that the message names the op and the offending
// shapes / dims / dtypes (and the fix where there is one), and that the inputs' data,
// metadata and version counters are exactly as before.
#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

// Everything observable about a tensor, to compare before and after a failed call.
struct Snapshot {
  explicit Snapshot(const Tensor& t)
      : t_(t),
        sizes(t.sizes().vec()),
        strides(t.strides().vec()),
        offset(t.storage_offset()),
        version(t._version()),
        data(testing::values(t)) {}
  void expect_unchanged() const {
    EXPECT_EQ(t_.sizes(), IntArrayRef(sizes));
    EXPECT_EQ(t_.strides(), IntArrayRef(strides));
    EXPECT_EQ(t_.storage_offset(), offset);
    EXPECT_EQ(t_._version(), version);
    EXPECT_TRUE(testing::close(t_, data, 0, 0));
  }
  Tensor t_;
  Shape sizes, strides;
  int64_t offset;
  uint32_t version;
  std::vector<double> data;
};

Tensor x23() { return arange(6, kFloat).view({2, 3}); }

TEST(BadInput, BroadcastMismatchNamesTheShapesAndTheDim) {
  Tensor a = x23(), b = ones({4});
  Snapshot sa(a), sb(b);
  EXPECT_GLASS_ERROR(a + b, "add()", "[2, 3]", "[4]", "dim 1", "cannot be broadcast");
  sa.expect_unchanged();
  sb.expect_unchanged();
}

TEST(BadInput, InPlaceResultMustKeepTheShape) {
  Tensor a = ones({3}), b = ones({2, 3});
  Snapshot sa(a);
  EXPECT_GLASS_ERROR(a.add_(b), "output with shape [3]", "broadcast shape [2, 3]", "out-of-place");
  sa.expect_unchanged();
  Tensor out = zeros({5});
  Snapshot so(out);
  EXPECT_GLASS_ERROR(add_out(out, ones({2}), ones({2})), "output with shape [5]", "[2]");
  so.expect_unchanged();
}

TEST(BadInput, ViewOfNonContiguousSuggestsReshape) {
  Tensor t = x23().t();
  Snapshot s(t);
  EXPECT_GLASS_ERROR(t.view({6}), "view()", "[6]", "sizes [3, 2]", "strides [1, 3]", ".reshape(");
  s.expect_unchanged();
}

TEST(BadInput, WrongElementCountInViewAndReshape) {
  Tensor t = x23();
  Snapshot s(t);
  EXPECT_GLASS_ERROR(t.view({4, 2}), "view()", "[4, 2]", "size 6");
  EXPECT_GLASS_ERROR(t.reshape({5, -1}), "reshape()", "[5, -1]", "size 6");
  s.expect_unchanged();
}

TEST(BadInput, MatmulInnerDimensionAndZeroDim) {
  Tensor a = x23(), b = ones({2, 3});
  Snapshot sa(a);
  EXPECT_GLASS_ERROR(a.matmul(b), "matmul()", "2x3 and 2x3", "(3)", "(2)");
  EXPECT_GLASS_ERROR(matmul(scalar_tensor(2.0), a), "at least 1D", "0D and 2D");
  EXPECT_GLASS_ERROR(a.mm(b), "mm()", "2x3 and 2x3");
  sa.expect_unchanged();
}

TEST(BadInput, DimOutOfRangeGivesTheValidRange) {
  Tensor t = x23();
  EXPECT_GLASS_ERROR(t.sum(2), "sum()", "[-2, 1]", "got 2");
  EXPECT_GLASS_ERROR(t.transpose(0, -3), "transpose()", "[-2, 1]", "got -3");
  EXPECT_GLASS_ERROR(t.softmax(5), "softmax()", "[-2, 1]");
  EXPECT_GLASS_ERROR(t.unsqueeze(4), "unsqueeze()", "[-3, 2]");
}

TEST(BadInput, IndexOutOfBoundsGivesDimAndSize) {
  Tensor t = x23();
  Snapshot s(t);
  EXPECT_GLASS_ERROR(t.select(1, 3), "select()", "index 3", "dimension 1", "size");
  EXPECT_GLASS_ERROR(t.index_select(0, tensor({0, 2})),
                     "index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_GLASS_ERROR(t.index({tensor({5})}), "index 5", "dimension 0", "size 2");
  EXPECT_GLASS_ERROR(t.index_put_({tensor({-3})}, 1.0), "index -3", "size 2");
  s.expect_unchanged();
}

TEST(BadInput, NarrowAndSliceOutOfRangeAndBadStep) {
  Tensor t = x23();
  EXPECT_GLASS_ERROR(t.narrow(1, 2, 2), "narrow()",
                     "start (2) + length (2) exceeds dimension size (3)");
  EXPECT_GLASS_ERROR(t.narrow(1, 4, 0), "narrow()", "start (4) is out of range");
  EXPECT_GLASS_ERROR(t.slice(1, 0, 3, 0), "slice()", "step must be positive, got 0");
  EXPECT_GLASS_ERROR(t.slice(1, 0, 3, -1), "step must be positive, got -1");
}

TEST(BadInput, DuplicateDimsInPermute) {
  EXPECT_GLASS_ERROR(x23().permute({1, 1}), "permute()", "duplicate", "dim 1");
  EXPECT_GLASS_ERROR(x23().permute({0}), "permute()", "2 dims");
}

TEST(BadInput, ExpandOfANonSingletonDim) {
  EXPECT_GLASS_ERROR(x23().expand({4, 3}), "expand()", "(4)", "existing size (2)",
                     "non-singleton dimension 0");
  EXPECT_GLASS_ERROR(x23().expand({3}), "expand()", "number of sizes");
}

TEST(BadInput, AsStridedPastTheStorage) {
  Tensor t = x23();
  EXPECT_GLASS_ERROR(t.as_strided({2, 3}, {3, 1}, 1), "as_strided()", "storage element 6",
                     "only 6 elements");
  EXPECT_GLASS_ERROR(t.as_strided({2}, {1, 1}), "one stride per dim");
  // Reaches that do not fit int64 must not wrap into "in bounds" (a negative extent).
  const int64_t big = (1LL << 62) + (1LL << 40);
  EXPECT_GLASS_ERROR(t.as_strided({3}, {big}), "stride overflow");
  EXPECT_GLASS_ERROR(t.as_strided({2}, {1}, INT64_MAX), "as_strided()", "overflows int64");
  Snapshot(t).expect_unchanged();
}

TEST(BadInput, HugeSliceBoundsAndExpandSizesDoNotOverflow) {
  Tensor t = x23();
  // end and step near INT64_MAX: one element (the first), not a wrapped negative size.
  Tensor s = t.slice(1, 0, INT64_MAX, INT64_MAX);
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(s.strides(), IntArrayRef({3, INT64_MAX}));  // stride 1 * step, as PyTorch
  // stride 3 * step would overflow: the one element left never uses its stride.
  EXPECT_EQ(t.t().slice(1, 0, INT64_MAX, INT64_MAX).strides(), IntArrayRef({1, 3}));
  EXPECT_EQ(t.slice(1, 0, 3, 5).strides(), IntArrayRef({3, 5}));  // PyTorch's stride * step
  EXPECT_EQ(t.slice(1, 1, INT64_MAX, 2).sizes(), IntArrayRef({2, 1}));
  EXPECT_GLASS_ERROR(t.unsqueeze(0).expand({INT64_MAX, 2, 3}), "expand()", "overflow");
}

TEST(BadInput, NegativeSizesAndOverflow) {
  EXPECT_GLASS_ERROR(empty({2, -1}), "empty()", "negative size -1", "dim 1");
  EXPECT_GLASS_ERROR(zeros({-5}), "negative size -5");
  EXPECT_GLASS_ERROR(ones({1LL << 40, 1LL << 40}), "overflow");
  EXPECT_GLASS_ERROR(x23().view({-2, 3}), "invalid shape dimension -2");
}

TEST(BadInput, CatWithMismatchedSizes) {
  Tensor a = x23(), b = ones({2, 2});
  EXPECT_GLASS_ERROR(cat({a, b}, 0), "cat()", "dimension 0", "Expected size 3 but got size 2",
                     "tensor number 1");
  EXPECT_GLASS_ERROR(cat({a, ones({3})}, 0), "same number of dimensions");
}

TEST(BadInput, ItemOnMoreThanOneElement) {
  EXPECT_GLASS_ERROR(x23().item<float>(), "item()", "6 elements", "[2, 3]");
}

TEST(BadInput, RaggedNestedLists) {
  EXPECT_GLASS_ERROR(tensor({{1, 2, 3}, {4, 5}}), "tensor()", "ragged", "data[1]", "3 elements");
  EXPECT_GLASS_ERROR(tensor({{{1}, {2}}, {3, 4}}), "ragged", "data[1][0]");
}

TEST(BadInput, FloatResultCannotGoIntoALongTensorInPlace) {
  Tensor i = tensor({1, 2, 3});
  Snapshot s(i);
  EXPECT_GLASS_ERROR(i.mul_(1.5), "mul()",
                     "result type Float can't be cast to the desired output type Long");
  EXPECT_GLASS_ERROR(i.div_(2), "result type Float", "Long");
  EXPECT_GLASS_ERROR(i.exp_(), "result type Float", "Long");
  EXPECT_GLASS_ERROR(i.add_(tensor({0.5})), "result type Float", "Long");
  s.expect_unchanged();
}

TEST(BadInput, InPlaceWriteIntoAnExpandedTensor) {
  Tensor base = ones({1, 3});
  Tensor e = base.expand({4, 3});
  Snapshot s(base);
  EXPECT_GLASS_ERROR(e.add_(1), "more than one element of the written-to tensor",
                     "refers to a single memory location", "clone()");
  EXPECT_GLASS_ERROR(e.zero_(), "single memory location");
  s.expect_unchanged();
}

TEST(BadInput, PartiallyOverlappingInputAndOutput) {
  Tensor a = arange(6, kFloat).view({2, 3});
  Snapshot s(a);
  EXPECT_GLASS_ERROR(a.add_(a.select(0, 0)), "some elements of the input tensor", "clone()");
  s.expect_unchanged();
}

TEST(BadInput, DeviceAndDtypeMismatchesAreNamed) {
  {
    testing::WithoutCuda none;
    EXPECT_GLASS_ERROR(x23().to(Device(kCUDA, 0)), "cuda");
  }
  EXPECT_GLASS_ERROR(x23().softmax(0, kInt64), "softmax()", "Long");
  EXPECT_GLASS_ERROR(where(x23(), x23(), x23()), "where()", "boolean");
}

// Ops mixing devices name both devices, and change nothing. The "device" tensors live on
// the fake CUDA backend (fake_cuda.h).
TEST(BadInput, MixedDevicesNameBothDevices) {
  testing::FakeCuda cuda;
  Tensor c = x23().to(kCUDA);  // cuda:0
  Tensor h = x23();            // cpu
  Snapshot sc(c), sh(h);
  EXPECT_GLASS_ERROR(c + h, "add()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(c + h.to(Device(kCUDA, 1)), "add()", "cuda:0 and cuda:1");
  EXPECT_GLASS_ERROR(c.add_(h), "add()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(h.add_(c), "add()", "cpu and cuda:0");
  EXPECT_GLASS_ERROR(c.matmul(h.t()), "mm()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(c.unsqueeze(0).bmm(h.t().unsqueeze(0)), "bmm()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(h.mm(c.t()), "mm()", "cpu and cuda:0");
  EXPECT_GLASS_ERROR(addmm(h, c, c.t()), "addmm()", "cuda:0", "cpu");
  EXPECT_GLASS_ERROR(cat({c, h}), "cat()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(where(c > 0, c, h), "where()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(where(h > 0, c, c), "where()", "cpu and cuda:0");
  EXPECT_GLASS_ERROR(c.masked_fill(h > 0, 0), "masked_fill_()", "cuda:0 and cpu");
  Tensor idx = tensor({{0, 1, 0}}, kInt64);
  EXPECT_GLASS_ERROR(c.gather(0, idx), "gather()", "cuda:0", "cpu");
  EXPECT_GLASS_ERROR(c.scatter_add(0, idx.to(kCUDA), h.narrow(0, 0, 1)), "scatter_add_()", "cuda:0",
                     "cpu");
  EXPECT_GLASS_ERROR(c.index({tensor({0}).to(Device(kCUDA, 1))}), "index()",
                     "the indices are on cuda:1", "on cuda:0");
  Tensor target = c.clone();
  Snapshot st(target);
  EXPECT_GLASS_ERROR(target.index_put_({tensor({0}).to(kCUDA)}, h.narrow(0, 0, 1)), "index_put_()",
                     "cpu and cuda:0");
  st.expect_unchanged();
  sc.expect_unchanged();
  sh.expect_unchanged();
}

// As in PyTorch, CPU indices of a device tensor are copied over rather than refused.
TEST(BadInput, CpuIndicesOfADeviceTensorAreAccepted) {
  testing::FakeCuda cuda;
  Tensor c = x23().to(kCUDA);
  Tensor picked = c.index({tensor({1, 0})});
  EXPECT_EQ(picked.device(), Device(kCUDA, 0));
  EXPECT_TRUE(testing::close(picked.cpu(), {3, 4, 5, 0, 1, 2}));
  EXPECT_TRUE(testing::close(c.index_select(1, tensor({2})).cpu(), {2, 5}));
  EXPECT_TRUE(testing::close(c.index({c.cpu() > 3}).cpu(), {4, 5}));  // a CPU mask too
}

}  // namespace
}  // namespace glass
