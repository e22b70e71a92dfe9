// tests/distributed/fsdp_test.cpp — fully_shard on the threads backend, checked against one
// process trained on the global batch (sharding_reference.h): lesson 06's MLP and a ten-layer
// model on 2 and 4 ranks, each rank's rows against the reference's rows; plus what a unit
// holds between uses, uneven and empty shards, and the errors.
#include "distributed/fsdp.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/test_util.h"
#include "cuda/cuda.h"
#include "distributed/backends/threads.h"
#include "distributed/clip_grad.h"
#include "distributed/distributed.h"
#include "distributed/sharding_reference.h"
#include "distributed/test_util.h"
#include "nn/functional/loss.h"
#include "nn/modules/linear.h"

namespace glass::distributed {
namespace {

using testing::copy_params;
using testing::Deep;
using testing::expect_close;
using worker::MLP;

// Every Linear a unit, then the root (which then owns nothing).
void shard_mlp(MLP& model, FullyShardOptions o = {}) {
  fully_shard(model->fc1, o);
  fully_shard(model->fc2, o);
  fully_shard(model->fc3, o);
  fully_shard(model, o);
}
void shard_mlp(Deep& model, FullyShardOptions o = {}) {
  for (auto& layer : model->layers) fully_shard(layer, o);
  fully_shard(model, o);
}

// FSDP on `world` ranks for the worker's 5 steps equals one process: every rank's rows of
// every parameter equal the reference's same rows.
template <class Model>
void train_like_one_process(int world, bool adam = true, double clip = 0,
                            FullyShardOptions options = {}, Device device = Device(kCPU)) {
  const auto batches = worker::global_batches();
  auto [initial, reference] = testing::make_reference<Model>(batches, world, adam, clip);
  // Detached copies: the rank threads read them at once, and an op on a tensor that requires
  // grad would record into its (shared, not thread-safe) autograd state.
  nn::NamedTensors expected;
  for (const auto& [name, p] : reference->named_parameters())
    expected.emplace_back(name, p.detach().clone());

  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Model model;
    if (rank == 0) copy_params(*model, *initial);  // the others start elsewhere: rank 0's win
    model->to(device);
    shard_mlp(model, options);
    auto opt = testing::make_optimizer(adam, model->parameters());
    const int64_t local = worker::kGlobalBatch / world;
    for (const worker::Batch& b : batches) {
      opt->zero_grad();
      Tensor x = b.x.narrow(0, rank * local, local).to(device);
      Tensor y = b.y.narrow(0, rank * local, local).to(device);
      nn::functional::cross_entropy(model(x), y).backward();
      if (clip > 0) {
        EXPECT_GT(clip_grad_norm_(model->parameters(), clip), clip);  // it clipped
      }
      opt->step();
    }
    const auto mine = model->named_parameters();
    ASSERT_EQ(mine.size(), expected.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      const Tensor& whole = expected[i].second;
      const int64_t rows = (whole.size(0) + world - 1) / world;
      const Tensor& rows_here = mine[i].second;
      ASSERT_EQ(rows_here.size(0), std::clamp<int64_t>(whole.size(0) - rank * rows, 0, rows))
          << mine[i].first;
      if (rows_here.size(0) == 0) continue;
      ASSERT_EQ(rows_here.device().type(), device.type()) << mine[i].first;
      expect_close(rows_here.cpu(), whole.narrow(0, rank * rows, rows_here.size(0)),
                   "rank " + std::to_string(rank) + " " + mine[i].first);
    }
    destroy_process_group();
  });
}

TEST(Fsdp, TrainsTheMlpLikeOneProcessOnTwoAndFourRanks) {
  train_like_one_process<MLP>(2);
  train_like_one_process<MLP>(4);  // fc3's 10 rows: 3, 3, 3 and 1 (two of padding)
}

TEST(Fsdp, WithSgdMatchesOneProcessOnThePlainGlobalBatch) {
  train_like_one_process<MLP>(2, /*adam=*/false);
  train_like_one_process<MLP>(4, /*adam=*/false);
}

// Each rank holds the gradient of its rows: the norm is their shares, all-reduced.
TEST(Fsdp, ClippingTheShardedGradientsMatchesOneProcess) {
  train_like_one_process<MLP>(4, /*adam=*/false, /*clip=*/0.5);
}

TEST(Fsdp, TrainsATenLayerModelLikeOneProcess) {
  train_like_one_process<Deep>(2);
  train_like_one_process<Deep>(4);
}

// Prefetch moves gathers earlier, never changes a value.
TEST(Fsdp, EveryPrefetchSettingTrainsLikeOneProcess) {
  for (bool forward : {false, true}) {
    for (bool backward : {false, true}) {
      FullyShardOptions o;
      o.forward_prefetch = forward;
      o.backward_prefetch = backward;
      train_like_one_process<Deep>(2, /*adam=*/true, /*clip=*/0, o);
    }
  }
}

// On a GPU the threads backend, like gloo, moves the bytes through host copies. The copy
// back into a gathered parameter must not bump its storage's version, as a transport's own
// write does not: autograd saved that parameter in forward and checks it in backward.
// SGD, not Adam: the GPU's matmul adds in another order than the CPU reference's, and Adam's
// division by √v turns that rounding into 1e-4 where a gradient is near zero.
TEST(Fsdp, TrainsOnTheSimulatedGpuLikeOneProcess) {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") cuda::use_simulator();
  train_like_one_process<MLP>(2, /*adam=*/false, /*clip=*/0, {}, Device(kCUDA));
  FullyShardOptions prefetch_both;
  prefetch_both.forward_prefetch = true;
  train_like_one_process<Deep>(2, /*adam=*/false, /*clip=*/0.1, prefetch_both, Device(kCUDA));
}

// The root owns fc3 (no unit below it does), and its outputs' gradients come first in
// backward: fc1's backward must not prefetch the root again — that gather would be stale by
// the next forward, after the step.
TEST(Fsdp, ARootWithParametersOfItsOwnIsNotPrefetchedStale) {
  const auto batches = worker::global_batches();
  auto [initial, reference] = testing::make_reference<MLP>(batches, 2, /*adam=*/false);
  nn::NamedTensors expected;
  for (const auto& [name, p] : reference->named_parameters())
    expected.emplace_back(name, p.detach().clone());
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    MLP model;
    if (rank == 0) copy_params(*model, *initial);
    FullyShardOptions o;
    o.forward_prefetch = o.backward_prefetch = true;
    fully_shard(model->fc1, o);
    fully_shard(model->fc2, o);
    auto root = fully_shard(model, o);
    EXPECT_EQ(root->params().size(), 2u);  // fc3.weight, fc3.bias
    auto opt = testing::make_optimizer(false, model->parameters());
    for (const worker::Batch& b : batches) {
      opt->zero_grad();
      Tensor x = b.x.narrow(0, rank * 16, 16), y = b.y.narrow(0, rank * 16, 16);
      nn::functional::cross_entropy(model(x), y).backward();
      EXPECT_FALSE(root->is_prefetched() || root->is_gathered());
      opt->step();
    }
    const auto mine = model->named_parameters();
    for (size_t i = 0; i < mine.size(); ++i) {
      const int64_t rows = (expected[i].second.size(0) + 1) / 2;
      if (mine[i].second.size(0) == 0) continue;
      expect_close(mine[i].second,
                   expected[i].second.narrow(0, rank * rows, mine[i].second.size(0)),
                   mine[i].first);
    }
    destroy_process_group();
  });
}

// With forward prefetch, when a layer's forward starts the next layer's all-gather has been
// issued; with backward prefetch, when a layer's backward starts, the previous layer's has.
TEST(Fsdp, PrefetchStartsTheNeighboursGatherEarly) {
  for (bool on : {false, true}) {
    run_threads(2, [on](int) {
      init_process_group("threads");
      Deep model;
      FullyShardOptions o;
      o.forward_prefetch = on;
      o.backward_prefetch = on;
      std::vector<std::shared_ptr<FSDPUnit>> units;
      for (auto& layer : model->layers) units.push_back(fully_shard(layer, o));
      fully_shard(model, o);
      std::vector<int> seen_forward, seen_backward;  // was layer 5 ready when layer 4 ran?
      model->layers[4]->register_forward_hook(
          [&](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>&) {
            seen_forward.push_back(units[5]->is_prefetched());
          });
      model->layers[4]->register_full_backward_pre_hook([&](nn::Module&, std::vector<Tensor>&) {
        seen_backward.push_back(units[3]->is_prefetched());
      });
      const Tensor x = ones({2, 784});
      model(x).sum().backward();  // the first forward learns the order: nothing to prefetch
      model(x).sum().backward();
      EXPECT_EQ(seen_forward, (std::vector<int>{0, on ? 1 : 0}));
      EXPECT_EQ(seen_backward, (std::vector<int>{on ? 1 : 0, on ? 1 : 0}));
      for (const auto& unit : units) EXPECT_FALSE(unit->is_gathered() || unit->is_prefetched());
      destroy_process_group();
    });
  }
}

// Between uses a unit holds its rows only; the whole parameter exists inside its forward and
// its backward, and its gradient is the average of the ranks' rows (hand-worked here).
TEST(Fsdp, AUnitHoldsItsRowsBetweenUsesAndTheWholeOnlyInside) {
  run_threads(2, [](int rank) {
    init_process_group("threads");
    nn::Linear fc(2, 3);  // weight [3, 2]: rows 2 and 1; bias [3]
    {
      NoGradGuard no_grad;
      fc->weight.copy_(tensor({{1., 2.}, {3., 4.}, {5., 6.}}));
      fc->bias.fill_(0.0);
    }
    auto unit = fully_shard(fc);
    const int64_t mine = rank == 0 ? 2 : 1;
    EXPECT_EQ(fc->weight.sizes(), (std::vector<int64_t>{mine, 2}));
    EXPECT_FALSE(unit->params()[0].padded_full.storage().has_bytes());
    std::vector<int64_t> seen_in_forward;
    // Runs after fully_shard's own pre-hook (hooks run in registration order): gathered.
    fc->register_forward_pre_hook([&](nn::Module&, std::vector<Tensor>&) {
      seen_in_forward = std::vector<int64_t>(fc->weight.sizes().begin(), fc->weight.sizes().end());
    });
    // x = [1, 1] on rank 0 and [2, 2] on rank 1: y = W x, loss = sum(y).
    const Tensor x = full({1, 2}, static_cast<double>(rank + 1));
    fc(x).sum().backward();
    EXPECT_EQ(seen_in_forward, (std::vector<int64_t>{3, 2}));
    EXPECT_FALSE(unit->is_gathered());
    EXPECT_FALSE(unit->params()[0].padded_full.storage().has_bytes());
    // dL/dW = 1 xᵀ for every row: the average over ranks is [1.5, 1.5].
    EXPECT_EQ(fc->weight.grad().sizes(), (std::vector<int64_t>{mine, 2}));
    EXPECT_TRUE(glass::testing::close(fc->weight.grad().reshape({-1}),
                                      std::vector<double>(static_cast<size_t>(mine * 2), 1.5)));
    EXPECT_TRUE(glass::testing::close(fc->bias.grad(), std::vector<double>(rank == 0 ? 2 : 1, 1.)));
    // A second backward accumulates into the rows' gradient.
    fc(x).sum().backward();
    EXPECT_TRUE(glass::testing::close(fc->weight.grad().reshape({-1}),
                                      std::vector<double>(static_cast<size_t>(mine * 2), 3.)));
    destroy_process_group();
  });
}

// Two rows on four ranks: ranks 2 and 3 hold none, and still take part.
TEST(Fsdp, RanksWithoutRowsStillTrain) {
  run_threads(4, [](int rank) {
    init_process_group("threads");
    nn::Linear fc(3, 2);
    fully_shard(fc);
    EXPECT_EQ(fc->weight.size(0), rank < 2 ? 1 : 0);
    fc(ones({4, 3})).sum().backward();
    EXPECT_EQ(fc->weight.grad().size(0), rank < 2 ? 1 : 0);
    destroy_process_group();
  });
}

TEST(Fsdp, ShapesThatDifferAcrossRanksAreAnErrorNamingTheParameterAndRanks) {
  std::mutex mutex;
  std::vector<std::string> errors(2);
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    nn::Linear fc(4, rank == 0 ? 4 : 5);
    const std::string error = glass::distributed::testing::error_of([&] { fully_shard(fc); });
    std::lock_guard<std::mutex> lock(mutex);
    errors[static_cast<size_t>(rank)] = error;
    destroy_process_group();
  });
  EXPECT_TRUE(glass::distributed::testing::contains(
      errors[0],
      "fully_shard(Linear): parameter 'weight' is [4, 4] on rank 0 but [5, 4] on rank 1"))
      << errors[0];
  EXPECT_TRUE(
      glass::distributed::testing::contains(errors[1], "parameter 'weight' is [5, 4] on rank 1"))
      << errors[1];
}

struct ScalarImpl : nn::Module {
  ScalarImpl() : Module("Scalar") { s = register_parameter("s", tensor(2.0)); }
  Tensor forward(const Tensor& x) { return x * s; }
  Tensor s;
};
GLASS_MODULE(Scalar);

TEST(Fsdp, BadModulesAreClearErrors) {
  run_threads(1, [](int) {
    init_process_group("threads");
    Scalar scalar;
    EXPECT_GLASS_ERROR(fully_shard(scalar), "fully_shard(Scalar): parameter 's' is 0-dimensional");
    nn::Linear fc(2, 2);
    auto unit = fully_shard(fc);
    EXPECT_GLASS_ERROR(fully_shard(fc), "fully_shard(Linear): this module is a unit already");
    destroy_process_group();
  });
}

}  // namespace
}  // namespace glass::distributed
