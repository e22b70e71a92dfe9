// tests/distributed/worker/main.cpp — distributed_worker: runs one scenario by name.
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include "scenarios.h"

namespace glass::distributed::worker {
namespace {

using Scenario = int (*)(const Args&);

const std::map<std::string, Scenario>& scenarios() {
  static const std::map<std::string, Scenario> table = {
      {"print_env", print_env},
      {"fail_rank1", fail_rank1},
      {"wait_forever", wait_forever},
      {"ignore_sigint", ignore_sigint},
      {"store_meet", store_meet},
      {"store_client_until_killed", store_client_until_killed},
      {"all_reduce_sum", all_reduce_sum},
      {"killed_rank1", killed_rank1},
      {"ddp_mlp", ddp_mlp},
      {"sharded_mlp", sharded_mlp},
      {"all_reduce_loop", all_reduce_loop},
      {"fsdp_loop", fsdp_loop},
      {"skip_collective", skip_collective},
      {"mismatched_shapes", mismatched_shapes},
      {"init_only", init_only},
      {"mpi_collectives", mpi_collectives},
      {"mpi_progress", mpi_progress},
      {"mpi_skip", mpi_skip},
      {"mpi_exit_live", mpi_exit_live},
  };
  return table;
}

}  // namespace
}  // namespace glass::distributed::worker

int main(int argc, char** argv) {
  using namespace glass::distributed::worker;
  const std::string name = argc > 1 ? argv[1] : "";
  const auto it = scenarios().find(name);
  if (it == scenarios().end()) {
    std::fprintf(stderr, "distributed_worker: unknown scenario '%s'; known:", name.c_str());
    for (const auto& [known, fn] : scenarios()) std::fprintf(stderr, " %s", known.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  try {
    return it->second(Args(argv + 2, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_worker %s: %s\n", name.c_str(), e.what());
    return 1;
  }
}
