// tests/nn/data/dataset_test.cpp — Dataset's generic batching and TensorDataset.
//
// References are the values the tests put in: example i of every dataset here holds
// numbers computed from i, so a batch can be checked element by element.
#include "nn/data/dataset.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/test_util.h"
#include "nn/data/tensor_dataset.h"

namespace glass::data {
namespace {

using glass::testing::close;
using glass::testing::values;

// Example i: data [i, 10 i] (2), target [i * i] (1).
struct Squares : Dataset {
  size_t n = 7;
  Example get(size_t i) override {
    double x = static_cast<double>(i);
    return {glass::tensor({x, 10 * x}, TensorOptions(kFloat64)),
            glass::tensor({x * x}, TensorOptions(kFloat64))};
  }
  size_t size() const override { return n; }
};

TEST(Dataset, GenericGetBatchStacksExamplesInIndexOrder) {
  Squares ds;
  std::vector<size_t> indices = {4, 0, 6};
  Example batch = ds.get_batch(indices);
  ASSERT_EQ(batch.data.sizes(), IntArrayRef({3, 2}));
  ASSERT_EQ(batch.target.sizes(), IntArrayRef({3, 1}));
  EXPECT_TRUE(close(batch.data, {4, 40, 0, 0, 6, 60}, 0, 0));
  EXPECT_TRUE(close(batch.target, {16, 0, 36}, 0, 0));
}

// Example i: data of sizes [i % 2 + 1] — two shapes.
struct Ragged : Dataset {
  Example get(size_t i) override {
    return {glass::zeros({static_cast<int64_t>(i % 2 + 1)}), glass::zeros({1})};
  }
  size_t size() const override { return 4; }
};

// Example i: a target only for even i.
struct HalfLabelled : Dataset {
  Example get(size_t i) override {
    return {glass::zeros({1}), i % 2 == 0 ? glass::zeros({1}) : Tensor()};
  }
  size_t size() const override { return 4; }
};

// No targets at all: unlabelled data batches with an undefined target.
struct Unlabelled : Dataset {
  Example get(size_t i) override { return {glass::full({2}, static_cast<double>(i)), Tensor()}; }
  size_t size() const override { return 3; }
};

TEST(Dataset, GenericGetBatchErrors) {
  std::vector<size_t> mixed = {0, 1};
  Ragged ragged;
  EXPECT_GLASS_ERROR(ragged.get_batch(mixed), "example 1 has data of sizes [2]",
                     "example 0 has [1]", "must have one shape");
  HalfLabelled half;
  EXPECT_GLASS_ERROR(half.get_batch(mixed), "1 of the 2 examples have a target",
                     "give every example a target, or none");
  Squares squares;
  std::vector<size_t> outside = {1, 7};
  EXPECT_GLASS_ERROR(squares.get_batch(outside), "index 7 is out of range",
                     "dataset of 7 examples");
  EXPECT_GLASS_ERROR(squares.get_batch({}), "got no indices");
}

TEST(Dataset, UnlabelledBatchHasUndefinedTarget) {
  Unlabelled ds;
  std::vector<size_t> indices = {2, 1};
  Example batch = ds.get_batch(indices);
  EXPECT_TRUE(close(batch.data, {2, 2, 1, 1}, 0, 0));
  EXPECT_FALSE(batch.target.defined());
}

TEST(TensorDataset, GetReturnsViewsOfRowI) {
  Tensor x = glass::arange(12, TensorOptions(kFloat32)).view({4, 3});
  Tensor y = glass::tensor({7, 8, 9, 10});
  TensorDataset ds(x, y);
  EXPECT_EQ(ds.size(), 4u);
  Example e = ds.get(2);
  EXPECT_TRUE(close(e.data, {6, 7, 8}, 0, 0));
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
  EXPECT_TRUE(e.data.is_alias_of(x));  // no copy per example
  EXPECT_TRUE(ds.data().is_same(x));
  EXPECT_TRUE(ds.targets().is_same(y));
}

TEST(TensorDataset, GetBatchGathersRowsInIndexOrder) {
  Tensor x = glass::arange(15, TensorOptions(kFloat64)).view({5, 3});
  Tensor y = glass::arange(50, TensorOptions(kInt64)).view({5, 2, 5});  // targets of any rank
  TensorDataset ds(x, y);
  std::vector<size_t> indices = {3, 3, 0, 4};
  Example batch = ds.get_batch(indices);
  ASSERT_EQ(batch.data.sizes(), IntArrayRef({4, 3}));
  ASSERT_EQ(batch.target.sizes(), IntArrayRef({4, 2, 5}));
  EXPECT_TRUE(close(batch.data, {9, 10, 11, 9, 10, 11, 0, 1, 2, 12, 13, 14}, 0, 0));
  std::vector<double> expected;
  for (size_t i : indices)
    for (int k = 0; k < 10; ++k) expected.push_back(static_cast<double>(10 * i + k));
  EXPECT_TRUE(close(batch.target, expected, 0, 0));
  EXPECT_EQ(batch.target.dtype(), kInt64);
  // The same batch through the generic path (per-example views, then stack).
  Example stacked = ds.Dataset::get_batch(indices);
  EXPECT_TRUE(close(stacked.data, batch.data, 0, 0));
  EXPECT_TRUE(close(stacked.target, batch.target, 0, 0));
}

TEST(TensorDataset, AcceptsNonContiguousTensors) {
  Tensor x = glass::arange(6, TensorOptions(kFloat32)).view({2, 3}).t();  // (3, 2), strided
  TensorDataset ds(x, glass::tensor({0, 1, 2}));
  std::vector<size_t> indices = {2, 0};
  EXPECT_TRUE(close(ds.get_batch(indices).data, {2, 5, 0, 3}, 0, 0));
}

TEST(TensorDataset, Errors) {
  Tensor x = glass::zeros({5, 3});
  EXPECT_GLASS_ERROR(TensorDataset(x, glass::zeros({4})), "data has 5 examples (sizes [5, 3])",
                     "targets has 4 (sizes [4])", "must match");
  EXPECT_GLASS_ERROR(TensorDataset(x, Tensor()), "the targets tensor is undefined");
  EXPECT_GLASS_ERROR(TensorDataset(Tensor(), x), "the data tensor is undefined");
  EXPECT_GLASS_ERROR(TensorDataset(glass::scalar_tensor(1.0), x), "need at least one dimension",
                     ".unsqueeze(0)");
  TensorDataset ds(x, glass::zeros({5}));
  EXPECT_GLASS_ERROR(ds.get(5), "index 5 is out of range for a dataset of 5 examples");
  std::vector<size_t> outside = {0, 9};
  EXPECT_GLASS_ERROR(ds.get_batch(outside), "index 9 is out of range");
  EXPECT_GLASS_ERROR(ds.get_batch({}), "got no indices");
}

}  // namespace
}  // namespace glass::data
