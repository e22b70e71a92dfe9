// tests/distributed/zero_test.cpp — ZeRO stages 1 and 2 on the threads backend, checked
// against one process trained with Adam on the global batch (issue 12's reference): lesson
// 06's MLP and a deeper model, 2 and 4 ranks, one bucket and many; plus the layout (what each
// rank owns), what each stage keeps, and the errors.
#include "distributed/zero.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "core/test_util.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/sharding_reference.h"
#include "distributed/worker/mlp_training.h"
#include "nn/functional/loss.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"

namespace glass::distributed {
namespace {

using testing::adam_over;
using testing::copy_params;
using testing::Deep;
using testing::expect_close;
using worker::MLP;

// ZeRO on `world` ranks for the worker's 5 steps equals one process (train_reference), and
// every rank holds the same parameters after every step.
template <class Model>
void train_like_one_process(int world, const ZeroOptions& options, bool adam = true,
                            double clip = 0) {
  const auto batches = worker::global_batches();
  auto [initial, reference] = testing::make_reference<Model>(batches, world, adam, clip);
  const ShardOptimizerFactory make = [adam](std::vector<Tensor> owned) {
    return testing::make_optimizer(adam, std::move(owned));
  };

  std::mutex mutex;
  std::vector<std::vector<Tensor>> after_step(batches.size() * world);  // [step * world + rank]
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Model model;
    if (rank == 0) copy_params(*model, *initial);  // the others start elsewhere: ZeRO copies
    ZeroRedundancyOptimizer zero(model->parameters(), make, options);
    const int64_t local = worker::kGlobalBatch / world;
    for (size_t s = 0; s < batches.size(); ++s) {
      zero.zero_grad();
      Tensor x = batches[s].x.narrow(0, rank * local, local);
      Tensor y = batches[s].y.narrow(0, rank * local, local);
      nn::functional::cross_entropy(model(x), y).backward();
      if (clip > 0) {
        EXPECT_GT(zero.clip_grad_norm_(clip), clip);  // it did clip
      }
      zero.step();
      std::vector<Tensor> snapshot;
      for (const Tensor& p : model->parameters()) snapshot.push_back(p.detach().clone());
      std::lock_guard<std::mutex> lock(mutex);
      after_step[s * world + rank] = std::move(snapshot);
    }
    destroy_process_group();
  });

  for (size_t s = 0; s < batches.size(); ++s)
    for (int r = 1; r < world; ++r)
      for (size_t i = 0; i < after_step[s * world].size(); ++i)
        EXPECT_TRUE(after_step[s * world + r][i].equal(after_step[s * world][i]))
            << "step " << s << ": rank " << r << "'s parameter " << i << " differs from rank 0's";
  auto expected = reference->named_parameters();
  for (size_t i = 0; i < expected.size(); ++i)
    expect_close(after_step[(batches.size() - 1) * world][i], expected[i].second,
                 expected[i].first);
}

// 0.25 MiB buckets: the MLP's 670k parameters make 11 of them, most parameters straddle two.
const ZeroOptions kStage1 = ZeroOptions().stage(1).bucket_cap_mb(0.25);
const ZeroOptions kStage2 = ZeroOptions().stage(2).bucket_cap_mb(0.25);

TEST(Zero, Stage1TrainsTheMlpLikeOneProcessOnTwoAndFourRanks) {
  train_like_one_process<MLP>(2, kStage1);
  train_like_one_process<MLP>(4, kStage1);
}

// SGD with momentum (its state, the momentum buffer, sharded) against the plain global batch.
TEST(Zero, WithSgdBothStagesMatchOneProcessOnThePlainGlobalBatch) {
  for (const ZeroOptions& o : {kStage1, kStage2}) {
    train_like_one_process<MLP>(2, o, /*adam=*/false);
    train_like_one_process<MLP>(4, o, /*adam=*/false);
  }
}

TEST(Zero, Stage2TrainsTheMlpLikeOneProcessOnTwoAndFourRanks) {
  train_like_one_process<MLP>(2, kStage2);
  train_like_one_process<MLP>(4, kStage2);
}

TEST(Zero, BothStagesTrainATenLayerModelLikeOneProcess) {
  for (const ZeroOptions& o : {kStage1, kStage2}) {
    train_like_one_process<Deep>(2, o);
    train_like_one_process<Deep>(4, o);
  }
}

// The norm of the whole gradient from the owned chunks, all-reduced; each rank scales its own.
TEST(Zero, ClippingTheShardedGradientMatchesOneProcess) {
  for (const ZeroOptions& o : {kStage1, kStage2})
    train_like_one_process<MLP>(4, o, /*adam=*/false, /*clip=*/0.5);
}

TEST(Zero, OneBucketIsTheSpecsContiguousSlices) {
  train_like_one_process<Deep>(4, ZeroOptions().stage(2).bucket_cap_mb(100));
}

// Three parameters of 5, 2 and 4 elements (11), on 4 ranks: padded to 12; buckets of 8 and 4
// (a cap of 8 elements); rank r owns elements [2r, 2r + 2) and [8 + r, 9 + r).
TEST(Zero, EachRankOwnsChunkRankOfEveryBucket) {
  run_threads(4, [](int rank) {
    init_process_group("threads");
    std::vector<Tensor> params = {arange(0, 5, 1, kFloat32).requires_grad_(),
                                  arange(5, 7, 1, kFloat32).requires_grad_(),
                                  arange(7, 11, 1, kFloat32).reshape({2, 2}).requires_grad_()};
    std::vector<Tensor> owned_seen;
    ZeroRedundancyOptimizer zero(
        params,
        [&](std::vector<Tensor> owned) {
          owned_seen = owned;
          return adam_over(std::move(owned));
        },
        ZeroOptions().stage(2).bucket_cap_mb(8.0 * 4 / (1024 * 1024)));
    EXPECT_EQ(zero.numel(), 11);
    EXPECT_EQ(zero.padded_numel(), 12);
    EXPECT_EQ(zero.shard_numel(), 3);
    EXPECT_EQ(zero.num_buckets(), 2);
    ASSERT_EQ(owned_seen.size(), 2u);
    const float r = static_cast<float>(rank);
    EXPECT_TRUE(glass::testing::close(owned_seen[0], {2 * r, 2 * r + 1}));
    EXPECT_TRUE(glass::testing::close(owned_seen[1], {rank < 3 ? 8 + r : 0.f}));  // rank 3: padding
    // The parameters are views of one buffer now; the same tensors, the same values.
    EXPECT_TRUE(params[0].is_alias_of(params[2]));
    EXPECT_TRUE(glass::testing::close(params[2].reshape({4}), {7., 8., 9., 10.}));
    EXPECT_EQ(params[2].sizes(), (std::vector<int64_t>{2, 2}));
    // Stage 2: backward leaves no whole gradient; the shard holds the average of what
    // every rank produced (here the same everywhere: 1 for each element).
    (params[0].sum() + params[1].sum() + params[2].sum()).backward();
    for (const Tensor& p : params) EXPECT_FALSE(p.grad().defined());
    zero.step();
    EXPECT_TRUE(glass::testing::close(zero.gradient_shard(), {1., 1., rank < 3 ? 1.f : 0.f}));
    destroy_process_group();
  });
}

TEST(Zero, Stage1GradientsAreViewsAndAccumulateAcrossBackwards) {
  run_threads(2, [](int rank) {
    init_process_group("threads");
    Tensor w = zeros({3}).requires_grad_();
    ZeroRedundancyOptimizer zero({w}, adam_over, ZeroOptions().stage(1));
    const Tensor x = full({3}, static_cast<double>(rank + 1));  // rank 0: 1s, rank 1: 2s
    (w * x).sum().backward();
    (w * x).sum().backward();  // accumulates: the average of 2x over ranks is 3
    zero.step();
    EXPECT_TRUE(glass::testing::close(w.grad(), {3., 3., 3.}));
    zero.zero_grad();
    EXPECT_TRUE(glass::testing::close(w.grad(), {0., 0., 0.}));
    destroy_process_group();
  });
}

TEST(Zero, BadArgumentsAreClearErrors) {
  run_threads(1, [](int) {
    init_process_group("threads");
    Tensor a = zeros({2}).requires_grad_();
    Tensor b = zeros({2}, kFloat64).requires_grad_();
    EXPECT_GLASS_ERROR(ZeroRedundancyOptimizer({a}, adam_over, ZeroOptions().stage(3)),
                       "stage must be 1", "got 3", "fully_shard");
    EXPECT_GLASS_ERROR(ZeroRedundancyOptimizer({a, b}, adam_over),
                       "parameter 1 is float64 on cpu but parameter 0 is float32 on cpu");
    EXPECT_GLASS_ERROR(ZeroRedundancyOptimizer({a, a}, adam_over), "parameter 1 appears twice");
    EXPECT_GLASS_ERROR(ZeroRedundancyOptimizer({zeros({2})}, adam_over),
                       "parameter 0 is not a leaf that requires grad");
    destroy_process_group();
  });
}

}  // namespace
}  // namespace glass::distributed
