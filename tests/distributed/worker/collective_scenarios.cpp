// tests/distributed/worker/collective_scenarios.cpp — ranks that really talk: the default
// group made from glassrun's environment (env://), a collective across processes.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "core/ops/factories.h"
#include "distributed/distributed.h"
#include "distributed/env.h"
#include "scenarios.h"

namespace glass::distributed::worker {

int all_reduce_sum(const Args& args) {
  exit_after(30);
  const std::string backend = args.empty() ? "gloo" : args[0];
  InitOptions opts;
  opts.timeout = std::chrono::seconds(20);
  init_process_group(backend, opts);
  // Rank r contributes [r + 1, 10 (r + 1)]; every rank prints the sums.
  Tensor t = empty({2}, TensorOptions().dtype(kLong));
  t.data_ptr<int64_t>()[0] = get_rank() + 1;
  t.data_ptr<int64_t>()[1] = 10 * (get_rank() + 1);
  all_reduce(t);
  std::printf("sum=%lld,%lld\n", static_cast<long long>(t.data_ptr<int64_t>()[0]),
              static_cast<long long>(t.data_ptr<int64_t>()[1]));
  std::fflush(stdout);
  barrier();
  destroy_process_group();
  return 0;
}

int killed_rank1(const Args&) {
  exit_after(30);
  meet("killed_rank1");
  if (read_env().rank == 1) std::raise(SIGKILL);
  for (;;) ::pause();
}

}  // namespace glass::distributed::worker
