// tests/distributed/worker/ddp_scenarios.cpp — DistributedDataParallel across real processes:
// lesson 06's MLP trained over gloo, every rank writing its parameters after every step for
// ddp_process_test.cpp to compare with each other and with one process.
#include <chrono>
#include <cstdio>
#include <string>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "mlp_training.h"
#include "nn/functional/loss.h"
#include "nn/optim/sgd.h"
#include "scenarios.h"

namespace glass::distributed::worker {

int ddp_mlp(const Args& args) {
  exit_after(60);
  GLASS_CHECK(args.size() == 1, "ddp_mlp: expected one argument, the output directory");
  const std::string& dir = args[0];
  InitOptions opts;
  opts.timeout = std::chrono::seconds(30);
  init_process_group("gloo", opts);
  const int rank = get_rank();
  const int world = get_world_size();
  GLASS_CHECK(kGlobalBatch % world == 0, "ddp_mlp: the global batch ", kGlobalBatch,
              " does not split over ", world, " ranks");

  // Rank 0 starts from the reference's parameters, the others from elsewhere: DDP's
  // construction must make them all rank 0's.
  manual_seed(rank == 0 ? 0 : 1000 + rank);
  MLP model;
  nn::parallel::DistributedDataParallel ddp(model);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(kLearningRate).momentum(kMomentum));

  const auto batches = global_batches();
  const int64_t local = kGlobalBatch / world;
  for (int s = 0; s < kTrainSteps; ++s) {
    sgd.zero_grad();
    Tensor x = batches[s].x.narrow(0, rank * local, local);  // (local, 784)
    Tensor y = batches[s].y.narrow(0, rank * local, local);  // (local,)
    nn::functional::cross_entropy(ddp(x), y).backward();
    sgd.step();
    write_parameters(*model, parameter_file(dir, s, rank));
  }
  std::printf("trained %d steps\n", kTrainSteps);
  std::fflush(stdout);
  destroy_process_group();
  return 0;
}

}  // namespace glass::distributed::worker
