// tests/distributed/worker/sharding_scenarios.cpp — ZeRO and FSDP across real processes:
// lesson 06's MLP trained over gloo as ddp_mlp trains it, for ddp_process_test.cpp to compare
// with one process. ZeRO ranks write their (whole) parameters after every step; FSDP ranks
// hold rows only, so after the last step they write the whole state through
// save_full_checkpoint, rank 0 one file.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "core/generator.h"
#include "distributed/checkpoint.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "distributed/zero.h"
#include "mlp_training.h"
#include "nn/functional/loss.h"
#include "nn/optim/sgd.h"
#include "scenarios.h"

namespace glass::distributed::worker {

int sharded_mlp(const Args& args) {
  exit_after(60);
  GLASS_CHECK(args.size() == 2 && (args[0] == "zero1" || args[0] == "zero2" || args[0] == "fsdp"),
              "sharded_mlp: expected zero1|zero2|fsdp and the output directory");
  const std::string& rung = args[0];
  const std::string& dir = args[1];
  InitOptions opts;
  opts.timeout = std::chrono::seconds(30);
  init_process_group("gloo", opts);
  const int rank = get_rank();
  const int world = get_world_size();

  // Rank 0 starts from the reference's parameters, the others from elsewhere: each rung
  // makes them all rank 0's.
  manual_seed(rank == 0 ? 0 : 1000 + rank);
  MLP model;
  const auto sgd = [](std::vector<Tensor> params) {
    return std::make_unique<optim::SGD>(std::move(params),
                                        optim::SGDOptions(kLearningRate).momentum(kMomentum));
  };
  std::unique_ptr<ZeroRedundancyOptimizer> zero;
  std::unique_ptr<optim::Optimizer> plain;
  if (rung == "fsdp") {
    fully_shard(model->fc1);
    fully_shard(model->fc2);
    fully_shard(model);  // the root owns fc3
    plain = sgd(model->parameters());
  } else {
    zero = std::make_unique<ZeroRedundancyOptimizer>(
        model->parameters(), sgd, ZeroOptions().stage(rung == "zero1" ? 1 : 2).bucket_cap_mb(0.25));
  }

  const auto batches = global_batches();
  const int64_t local = kGlobalBatch / world;
  for (int s = 0; s < kTrainSteps; ++s) {
    zero ? zero->zero_grad() : plain->zero_grad();
    Tensor x = batches[s].x.narrow(0, rank * local, local);
    Tensor y = batches[s].y.narrow(0, rank * local, local);
    nn::functional::cross_entropy(model(x), y).backward();
    zero ? zero->step() : static_cast<void>(plain->step());
    if (zero) write_parameters(*model, parameter_file(dir, s, rank));
  }
  if (!zero) save_full_checkpoint(dir + "/full.safetensors", *model);
  std::printf("trained %d steps\n", kTrainSteps);
  std::fflush(stdout);
  destroy_process_group();
  return 0;
}

}  // namespace glass::distributed::worker
