// tests/nn/data/sampler_test.cpp — DistributedSampler against hand-worked slices, and in a
// DataLoader.
#include "nn/data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "core/test_util.h"
#include "nn/data/dataloader.h"
#include "nn/data/tensor_dataset.h"

namespace glass::data {
namespace {

using V = std::vector<size_t>;

TEST(DistributedSampler, PadsByRepeatingTheStartAndDealsPositionsRoundRobin) {
  // 10 examples, 3 ranks: padded to 12 with 0 and 1, rank r takes positions r, r+3, ...
  // (what torch.utils.data.DistributedSampler(shuffle=False) gives).
  EXPECT_EQ(DistributedSampler(3, 0, false).indices(10, 0), (V{0, 3, 6, 9}));
  EXPECT_EQ(DistributedSampler(3, 1, false).indices(10, 0), (V{1, 4, 7, 0}));
  EXPECT_EQ(DistributedSampler(3, 2, false).indices(10, 0), (V{2, 5, 8, 1}));
  EXPECT_EQ(DistributedSampler(3, 2, false).size(10), 4u);
}

TEST(DistributedSampler, DropLastCutsTheTail) {
  EXPECT_EQ(DistributedSampler(3, 0, false, 0, true).indices(10, 0), (V{0, 3, 6}));
  EXPECT_EQ(DistributedSampler(3, 2, false, 0, true).indices(10, 0), (V{2, 5, 8}));
  EXPECT_EQ(DistributedSampler(3, 1, false, 0, true).size(10), 3u);
}

TEST(DistributedSampler, TinyDatasetsArePaddedMoreThanOnce) {
  EXPECT_EQ(DistributedSampler(4, 3, false).indices(2, 0), (V{1}));
  EXPECT_EQ(DistributedSampler(5, 4, false).indices(2, 0), (V{0}));
}

TEST(DistributedSampler, ShuffledRanksPartitionOnePermutationPerEpoch) {
  const size_t n = 12, world = 4;
  std::vector<DistributedSampler> ranks;
  for (size_t r = 0; r < world; ++r) ranks.emplace_back(world, r, true, 7);
  auto epoch_union = [&](size_t epoch) {
    std::vector<size_t> all;
    for (auto& s : ranks) {
      s.set_epoch(epoch);
      V mine = s.indices(n, 0);
      EXPECT_EQ(mine.size(), 3u);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    return all;
  };
  V e0 = epoch_union(0), e1 = epoch_union(1);
  V sorted0 = e0;
  std::sort(sorted0.begin(), sorted0.end());
  V expected(n);
  std::iota(expected.begin(), expected.end(), size_t{0});
  EXPECT_EQ(sorted0, expected);  // disjoint and complete: no padding needed for 12 / 4
  EXPECT_NE(e0, e1);             // set_epoch reshuffles
  // The interleaving of rank slices is the shared permutation: rank r's k-th is perm[k*R + r].
  const V perm = shuffled_order(n, 7 + 1);
  for (size_t r = 0; r < world; ++r)
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(ranks[r].indices(n, 0)[k], perm[k * world + r]);
}

TEST(DistributedSampler, TheLoaderEpochDoesNotReshuffleWithoutSetEpoch) {
  DistributedSampler s(2, 0, true, 3);
  EXPECT_EQ(s.indices(9, 0), s.indices(9, 5));
}

TEST(DistributedSampler, BadArgumentsAreNamed) {
  EXPECT_THROW(
      {
        try {
          DistributedSampler(2, 2);
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("rank 2 is out of range for num_replicas 2"),
                    std::string::npos);
          throw;
        }
      },
      std::exception);
  EXPECT_THROW(DistributedSampler(0, 0), std::exception);
}

TEST(DistributedSampler, DrivesADataLoaderWithThisRanksShare) {
  Tensor i = glass::arange(10, TensorOptions(kInt64));
  auto sampler = std::make_shared<DistributedSampler>(3, 1, false);
  DataLoader loader(TensorDataset(i.to(kFloat32), i), DataLoaderOptions(3).sampler(sampler));
  EXPECT_EQ(loader.size(), 2u);  // 4 samples in batches of 3
  std::vector<double> seen;
  for (Example& batch : loader)
    for (double v : glass::testing::values(batch.target)) seen.push_back(v);
  EXPECT_EQ(seen, (std::vector<double>{1, 4, 7, 0}));
  EXPECT_THROW(DataLoader(TensorDataset(i.to(kFloat32), i),
                          DataLoaderOptions(3).sampler(sampler).shuffle(true)),
               std::exception);
}

}  // namespace
}  // namespace glass::data
