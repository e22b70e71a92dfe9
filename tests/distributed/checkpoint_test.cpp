// tests/distributed/checkpoint_test.cpp — sharded checkpoints on the threads backend: saved
// by 2 FSDP ranks, loaded into 4 and into one process, training on as if never stopped (the
// reference: the 2 ranks themselves, carrying on); Adam's state resharded row for row; the
// index; the commit protocol with a rank that fails mid-save; loads that must fail whole.
#include "distributed/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/test_util.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "distributed/sharding_reference.h"
#include "distributed/test_util.h"
#include "nn/functional/loss.h"
#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"
#include "nn/serialize/checkpoint.h"

namespace glass::distributed {
namespace {

namespace fs = std::filesystem;
using testing::copy_params;
using testing::expect_close;
using worker::MLP;

MLP small_mlp() { return MLP(784, 64, 10); }

void shard(MLP& model) {
  fully_shard(model->fc1);
  fully_shard(model->fc2);
  fully_shard(model->fc3);
  fully_shard(model);
}

// A fresh directory under the test temp dir, removed with the object.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path((fs::path(::testing::TempDir()) / ("glass_ckpt_" + name)).string()) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

// Steps [first, last) of the worker's batches on `world` ranks (or one process when world
// is 1 and `sharded` is false), SGD with momentum.
void train_steps(MLP& model, optim::Optimizer& opt, int world, int rank, size_t first,
                 size_t last) {
  const auto batches = worker::global_batches();
  const int64_t local = worker::kGlobalBatch / world;
  for (size_t s = first; s < last; ++s) {
    opt.zero_grad();
    Tensor x = batches[s].x.narrow(0, rank * local, local);
    Tensor y = batches[s].y.narrow(0, rank * local, local);
    nn::functional::cross_entropy(model(x), y).backward();
    opt.step();
  }
}

std::unique_ptr<optim::Optimizer> sgd(MLP& model) {
  return testing::make_optimizer(/*adam=*/false, model->parameters());
}

// A full checkpoint's tensors by name (a file keeps them in its own order).
std::map<std::string, Tensor> full_state(const std::string& path) {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : glass::load(path)) out[name] = t;
  return out;
}

// Saved by 2 ranks after 2 steps; then the 2 ranks, 4 ranks loading it, and one process
// loading it each train 2 more steps: all three end with the same parameters.
TEST(ShardedCheckpoint, SavedByTwoRanksTrainsOnInFourAndInOneProcess) {
  TempDir dir("reshard"), out("reshard_out");
  fs::create_directories(out.path);
  manual_seed(0);
  MLP initial = small_mlp();
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    MLP model = small_mlp();
    if (rank == 0) copy_params(*model, *initial);
    shard(model);
    auto opt = sgd(model);
    train_steps(model, *opt, 2, rank, 0, 2);
    save_sharded_checkpoint(dir.path, *model, opt.get());
    train_steps(model, *opt, 2, rank, 2, 4);
    save_full_checkpoint(out.path + "/two.safetensors", *model);
    destroy_process_group();
  });
  run_threads(4, [&](int rank) {
    init_process_group("threads");
    manual_seed(100 + rank);  // different weights everywhere: only the checkpoint counts
    MLP model = small_mlp();
    shard(model);
    auto opt = sgd(model);
    load_sharded_checkpoint(dir.path, *model, opt.get());
    train_steps(model, *opt, 4, rank, 2, 4);
    save_full_checkpoint(out.path + "/four.safetensors", *model);
    destroy_process_group();
  });
  MLP alone = small_mlp();
  auto opt = sgd(alone);
  load_sharded_checkpoint(dir.path, *alone, opt.get());
  train_steps(alone, *opt, 1, 0, 2, 4);

  auto two = full_state(out.path + "/two.safetensors");
  auto four = full_state(out.path + "/four.safetensors");
  ASSERT_EQ(two.size(), 6u);
  ASSERT_EQ(four.size(), 6u);
  for (const auto& [name, p] : alone->named_parameters()) {
    ASSERT_TRUE(two.count(name) && four.count(name)) << name;
    expect_close(four[name], two[name], "4 ranks: " + name);
    expect_close(p, two[name], "one process: " + name);
  }
}

// Adam's moments and step, saved as 2 ranks' rows, are each rank's rows under 4 ranks and
// the whole in one process — the same bits.
TEST(ShardedCheckpoint, AdamStateIsReshardedRowForRow) {
  TempDir dir("adam");
  manual_seed(0);
  MLP initial = small_mlp();
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    MLP model = small_mlp();
    if (rank == 0) copy_params(*model, *initial);
    shard(model);
    optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));
    train_steps(model, adam, 2, rank, 0, 2);
    save_sharded_checkpoint(dir.path, *model, &adam);
    destroy_process_group();
  });
  MLP alone = small_mlp();
  optim::Adam whole(alone->parameters(), optim::AdamOptions(1e-3));
  load_sharded_checkpoint(dir.path, *alone, &whole);
  const auto params = alone->named_parameters();
  run_threads(4, [&](int rank) {
    init_process_group("threads");
    MLP model = small_mlp();
    shard(model);
    optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));
    load_sharded_checkpoint(dir.path, *model, &adam);
    const auto mine = model->named_parameters();
    for (size_t i = 0; i < mine.size(); ++i) {
      const auto& state = dynamic_cast<const optim::AdamParamState&>(adam.state_of(mine[i].second));
      const auto& ref =
          dynamic_cast<const optim::AdamParamState&>(whole.state_of(params[i].second));
      EXPECT_EQ(state.step(), 2) << mine[i].first;
      const int64_t rows = (params[i].second.size(0) + 3) / 4;
      const int64_t here = mine[i].second.size(0);
      if (here == 0) continue;
      EXPECT_TRUE(state.exp_avg().equal(ref.exp_avg().narrow(0, rank * rows, here)))
          << mine[i].first;
      EXPECT_TRUE(state.exp_avg_sq().equal(ref.exp_avg_sq().narrow(0, rank * rows, here)))
          << mine[i].first;
    }
    destroy_process_group();
  });
}

TEST(ShardedCheckpoint, TheIndexRecordsShapesDtypesAndEachShardsRows) {
  TempDir dir("index");
  run_threads(2, [&](int) {
    init_process_group("threads");
    MLP model = small_mlp();
    shard(model);
    save_sharded_checkpoint(dir.path, *model);
    destroy_process_group();
  });
  std::ifstream in(dir.path + "/index.json");
  const nlohmann::json index = nlohmann::json::parse(in);
  EXPECT_EQ(index["format"], "glasstorch-sharded-checkpoint");
  EXPECT_EQ(index["world_size"], 2);
  EXPECT_EQ(index["save"], 1);
  const auto& w = index["tensors"]["fc3.weight"];  // 10 rows: 5 and 5
  EXPECT_EQ(w["dtype"], "float32");
  EXPECT_EQ(w["shape"], (std::vector<int64_t>{10, 64}));
  ASSERT_EQ(w["shards"].size(), 2u);
  EXPECT_EQ(w["shards"][0]["file"], "save000001-rank00000-of-00002.safetensors");
  EXPECT_EQ(w["shards"][1]["rows"], (std::vector<int64_t>{5, 10}));
  EXPECT_TRUE(fs::exists(dir.path + "/save000001-rank00001-of-00002.safetensors"));
}

// Save 2 fails on rank 1 (its file's path is taken by a directory): every rank is told,
// nothing is committed, and save 1 still loads as it was.
TEST(ShardedCheckpoint, ARankThatFailsMidSaveLeavesThePreviousCheckpointLoadable) {
  TempDir dir("commit");
  manual_seed(0);
  MLP initial = small_mlp();
  std::mutex mutex;
  std::vector<std::string> errors(2);
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    MLP model = small_mlp();
    if (rank == 0) copy_params(*model, *initial);
    shard(model);
    save_sharded_checkpoint(dir.path, *model);  // save 1
    if (rank == 1) fs::create_directories(dir.path + "/save000002-rank00001-of-00002.safetensors");
    {
      NoGradGuard no_grad;
      for (Tensor& p : model->parameters()) p.fill_(9.0);
    }
    const std::string e =
        glass::distributed::testing::error_of([&] { save_sharded_checkpoint(dir.path, *model); });
    std::lock_guard<std::mutex> lock(mutex);
    errors[static_cast<size_t>(rank)] = e;
    destroy_process_group();
  });
  EXPECT_TRUE(glass::distributed::testing::contains(errors[1], "rank 1 could not write its file"))
      << errors[1];
  EXPECT_TRUE(glass::distributed::testing::contains(errors[0], "another rank could not write"))
      << errors[0];
  EXPECT_TRUE(
      glass::distributed::testing::contains(errors[0], "the previous checkpoint is intact"));
  MLP alone = small_mlp();
  load_sharded_checkpoint(dir.path, *alone);
  const auto expected = initial->named_parameters(), got = alone->named_parameters();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].second.equal(expected[i].second)) << got[i].first;
}

TEST(ShardedCheckpoint, LoadsThatCannotSucceedChangeNothing) {
  TempDir dir("errors");
  EXPECT_GLASS_ERROR(load_sharded_checkpoint(dir.path, *small_mlp()), "no checkpoint in",
                     "index.json is missing");
  run_threads(1, [&](int) {
    init_process_group("threads");
    MLP model = small_mlp();
    save_sharded_checkpoint(dir.path, *model);
    destroy_process_group();
  });
  MLP other(784, 64, 12);  // fc3 (read last) has 12 rows here, 10 in the file
  const Tensor before = other->fc1->weight.detach().clone();
  EXPECT_GLASS_ERROR(load_sharded_checkpoint(dir.path, *other), "'fc3.weight' is [10, 64]",
                     "but [12, 64] here");
  EXPECT_TRUE(other->fc1->weight.equal(before));  // read before the error, not written
  // An SGD checkpoint into Adam: the model could load, the state cannot; neither does.
  run_threads(1, [&](int) {
    init_process_group("threads");
    MLP model = small_mlp();
    auto opt = sgd(model);
    train_steps(model, *opt, 1, 0, 0, 1);
    save_sharded_checkpoint(dir.path, *model, opt.get());
    destroy_process_group();
  });
  MLP target = small_mlp();
  optim::Adam adam(target->parameters());
  const Tensor kept = target->fc2->weight.detach().clone();
  EXPECT_GLASS_ERROR(load_sharded_checkpoint(dir.path, *target, &adam),
                     "AdamParamState has no slot 'momentum_buffer'");
  EXPECT_TRUE(target->fc2->weight.equal(kept));
  EXPECT_TRUE(adam.state().empty());
}

}  // namespace
}  // namespace glass::distributed
