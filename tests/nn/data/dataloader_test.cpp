// tests/nn/data/dataloader_test.cpp — DataLoader's epoch and batching invariants.
//
// The probe dataset's target for example i is i itself, so every batch says which indices
// it holds; the data row (i, -i) checks that data and target travel together.
#include "nn/data/dataloader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "core/test_util.h"
#include "nn/data/tensor_dataset.h"

namespace glass::data {
namespace {

using glass::testing::values;

TensorDataset indexed(int64_t n) {
  Tensor i = glass::arange(n, TensorOptions(kInt64));
  Tensor data = glass::stack({i.to(kFloat32), i.neg().to(kFloat32)}, 1);  // (n, 2): [i, -i]
  return TensorDataset(data, i);
}

// One epoch: the indices of each batch, in order; checks data/target agreement on the way.
std::vector<std::vector<int64_t>> run_epoch(DataLoader& loader) {
  std::vector<std::vector<int64_t>> batches;
  for (Example& batch : loader) {
    std::vector<int64_t> ids;
    for (double v : values(batch.target)) ids.push_back(static_cast<int64_t>(v));
    std::vector<double> data = values(batch.data);
    EXPECT_EQ(batch.data.sizes(), IntArrayRef({static_cast<int64_t>(ids.size()), 2}));
    for (size_t k = 0; k < ids.size(); ++k) {
      EXPECT_EQ(data[2 * k], static_cast<double>(ids[k]));
      EXPECT_EQ(data[2 * k + 1], -static_cast<double>(ids[k]));
    }
    batches.push_back(ids);
  }
  return batches;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(DataLoader, WithoutShuffleVisitsIndicesInOrderWithAShortLastBatch) {
  DataLoader loader(indexed(10), DataLoaderOptions(4));
  EXPECT_EQ(loader.size(), 3u);
  auto batches = run_epoch(loader);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batches[2], (std::vector<int64_t>{8, 9}));
  // A second epoch without shuffle is the same.
  EXPECT_EQ(run_epoch(loader), batches);
  EXPECT_EQ(loader.epoch(), 2u);
}

TEST(DataLoader, DropLastDropsOnlyAShortFinalBatch) {
  DataLoader short_last(indexed(10), DataLoaderOptions(4).drop_last(true));
  EXPECT_EQ(short_last.size(), 2u);
  auto batches = run_epoch(short_last);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(flatten(batches), iota(8));

  DataLoader exact(indexed(12), DataLoaderOptions(4).drop_last(true));
  EXPECT_EQ(exact.size(), 3u);
  EXPECT_EQ(flatten(run_epoch(exact)), iota(12));

  DataLoader shuffled(indexed(10), DataLoaderOptions(3).drop_last(true).shuffle(true).seed(1));
  auto kept = flatten(run_epoch(shuffled));
  EXPECT_EQ(kept.size(), 9u);  // every batch full
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());  // no repeats
}

TEST(DataLoader, ShuffledEpochVisitsEveryIndexExactlyOnce) {
  DataLoader loader(indexed(103), DataLoaderOptions(10).shuffle(true).seed(42));
  EXPECT_EQ(loader.size(), 11u);
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto batches = run_epoch(loader);
    ASSERT_EQ(batches.size(), 11u);
    EXPECT_EQ(batches.back().size(), 3u);  // 103 = 10 * 10 + 3
    auto all = flatten(batches);
    EXPECT_NE(all, iota(103));  // shuffled (one order in 103! is the identity)
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, iota(103));
  }
}

TEST(DataLoader, ShuffleIsReproducibleFromTheSeedAndDiffersBetweenEpochs) {
  DataLoader a(indexed(50), DataLoaderOptions(8).shuffle(true).seed(7));
  DataLoader b(indexed(50), DataLoaderOptions(8).shuffle(true).seed(7));
  DataLoader c(indexed(50), DataLoaderOptions(8).shuffle(true).seed(8));
  auto a0 = flatten(run_epoch(a)), a1 = flatten(run_epoch(a));
  auto b0 = flatten(run_epoch(b)), b1 = flatten(run_epoch(b));
  auto c0 = flatten(run_epoch(c));
  EXPECT_EQ(a0, b0);
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a0, a1);  // a new order each epoch
  EXPECT_NE(a0, c0);  // and per seed
  // Epoch e is drawn from seed + e: seed 7's second epoch is seed 8's first.
  EXPECT_EQ(a1, c0);
}

TEST(DataLoader, WithoutASeedManualSeedMakesShufflingReproducible) {
  glass::manual_seed(123);
  DataLoader a(indexed(40), DataLoaderOptions(5).shuffle(true));
  glass::manual_seed(123);
  DataLoader b(indexed(40), DataLoaderOptions(5).shuffle(true));
  EXPECT_EQ(flatten(run_epoch(a)), flatten(run_epoch(b)));
}

TEST(DataLoader, AnIteratorKeepsItsEpochWhileANewOneStarts) {
  DataLoader loader(indexed(20), DataLoaderOptions(5).shuffle(true).seed(3));
  auto first = loader.begin();
  std::vector<int64_t> seen;
  for (double v : values(first->target)) seen.push_back(static_cast<int64_t>(v));
  auto other = flatten(run_epoch(loader));  // epoch 1 runs to completion meanwhile
  for (++first; first != loader.end(); ++first)
    for (double v : values(first->target)) seen.push_back(static_cast<int64_t>(v));
  EXPECT_NE(seen, other);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota(20));  // epoch 0 still complete and unrepeated
}

TEST(DataLoader, BatchLargerThanTheDatasetGivesOneBatch) {
  DataLoader loader(indexed(3), DataLoaderOptions(64));
  EXPECT_EQ(loader.size(), 1u);
  EXPECT_EQ(run_epoch(loader), (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
  DataLoader dropped(indexed(3), DataLoaderOptions(64).drop_last(true));
  EXPECT_EQ(dropped.size(), 0u);
  EXPECT_TRUE(run_epoch(dropped).empty());
}

TEST(DataLoader, EmptyDatasetHasNoBatches) {
  DataLoader loader(TensorDataset(glass::zeros({0, 2}), glass::zeros({0})),
                    DataLoaderOptions(4).shuffle(true));
  EXPECT_EQ(loader.size(), 0u);
  EXPECT_TRUE(loader.begin() == loader.end());
}

// A generic dataset (no get_batch of its own) is batched by stacking its examples.
struct Affine : Dataset {
  Example get(size_t i) override {
    double x = static_cast<double>(i);
    return {glass::tensor({x, 1.0}, TensorOptions(kFloat64)),
            glass::tensor({3 * x + 1}, TensorOptions(kFloat64))};
  }
  size_t size() const override { return 5; }
};

TEST(DataLoader, StacksExamplesOfAGenericDataset) {
  DataLoader loader(Affine(), DataLoaderOptions(2));
  std::vector<std::vector<double>> data, targets;
  for (Example& batch : loader) {
    data.push_back(values(batch.data));
    targets.push_back(values(batch.target));
  }
  ASSERT_EQ(data.size(), 3u);
  EXPECT_EQ(data[0], (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(data[2], (std::vector<double>{4, 1}));
  EXPECT_EQ(targets[1], (std::vector<double>{7, 10}));
}

TEST(DataLoader, SharesADatasetPassedByPointer) {
  auto ds = std::make_shared<TensorDataset>(indexed(6));
  DataLoader loader(ds, DataLoaderOptions(6));
  EXPECT_EQ(&loader.dataset(), ds.get());
  EXPECT_EQ(flatten(run_epoch(loader)), iota(6));
}

TEST(DataLoader, Errors) {
  EXPECT_GLASS_ERROR(DataLoader(indexed(4), DataLoaderOptions(0)),
                     "batch_size must be at least 1, got 0");
  EXPECT_GLASS_ERROR(DataLoader(std::shared_ptr<Dataset>(), DataLoaderOptions(1)),
                     "the dataset is null");
}

}  // namespace
}  // namespace glass::data
