// tests/distributed/worker/fault_scenarios.cpp — ranks that go wrong on purpose, for
// faults_test.cpp: one is killed mid-loop, one skips a collective, ranks disagree on a
// shape, a rank's environment is bad. faults_test.cpp starts these ranks itself (not under
// glassrun), so what ends the survivors is the library noticing, not the launcher.
//
// A failure reaches main.cpp as an exception, which prints e.what() on stderr and exits 1:
// that line is what the tests read.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "autograd/variable.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/distributed.h"
#include "distributed/env.h"
#include "distributed/fsdp.h"
#include "distributed/tcp_store.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "nn/optim/sgd.h"
#include "scenarios.h"

namespace glass::distributed::worker {
namespace {

// args[i] as milliseconds, or `fallback` when absent.
std::chrono::milliseconds millis_arg(const Args& args, size_t i, int64_t fallback) {
  return std::chrono::milliseconds(i < args.size() ? std::stoll(args[i]) : fallback);
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// A store client of its own (not the group's), for the test's bookkeeping.
TCPStore bookkeeping_store() {
  const EnvRendezvous env = read_env();
  TCPStoreOptions opts;
  opts.port = env.master_port;
  opts.timeout = std::chrono::seconds(20);
  return TCPStore(env.master_addr, opts);
}

}  // namespace

int all_reduce_loop(const Args&) {
  exit_after(30);
  InitOptions opts;
  // Far longer than the test waits: the survivors must learn of a death from the closed
  // connection, not from a timeout.
  opts.timeout = std::chrono::seconds(25);
  init_process_group("gloo", opts);
  Tensor t = ones({1 << 14});
  for (int i = 0;; ++i) {
    all_reduce(t);
    t.fill_(1.0);
    if (i == 3) print_line("looping");
  }
}

int fsdp_loop(const Args& args) {
  exit_after(30);
  GLASS_CHECK(args.size() == 1 && (args[0] == "forward" || args[0] == "backward"),
              "fsdp_loop: expected forward|backward");
  const bool in_forward = args[0] == "forward";
  InitOptions opts;
  opts.timeout = std::chrono::seconds(25);  // as all_reduce_loop: a death, not a timeout
  init_process_group("gloo", opts);
  const int rank = get_rank();

  // Four units of 512 x 512 (1 MiB each): each step is mostly all-gathers (two per unit)
  // and reduce-scatters.
  nn::Sequential model;
  for (int i = 0; i < 4; ++i) model->push_back(nn::Linear(512, 512));
  bool die = false;
  // Rank 1 kills itself at a known point of step 3: as the third unit's forward starts
  // (the others are then in its all-gather, or the next one), or as the last unit's weight
  // gets its gradient, before that unit's reduce-scatter (with backward prefetch off, the
  // others' next collective is that reduce-scatter).
  if (in_forward)
    model->ptr(2)->register_forward_pre_hook([&](nn::Module&, std::vector<Tensor>&) {
      if (die) ::raise(SIGKILL);
    });
  else
    autograd::register_post_accumulate_grad_hook(model->ptr(3)->parameters()[0],
                                                 [&](const Tensor&) {
                                                   if (die) ::raise(SIGKILL);
                                                 });
  FullyShardOptions shard;
  shard.backward_prefetch = in_forward;
  for (int i = 0; i < 4; ++i) fully_shard(model->ptr(i), shard);
  fully_shard(model, shard);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.01));

  Tensor x = randn({8, 512});
  for (int i = 0;; ++i) {
    die = rank == 1 && i == 3;
    sgd.zero_grad();
    Tensor y = model->forward(x);
    (y * y).mean().backward();
    sgd.step();
    if (i == 1) print_line("looping");
  }
}

int skip_collective(const Args& args) {
  exit_after(30);
  // Every rank is up before the clock starts: the short timeout also bounds the rendezvous,
  // and a slow process start must not be mistaken for the skipped collective.
  meet("skip_collective");
  InitOptions opts;
  opts.timeout = millis_arg(args, 0, 1000);
  init_process_group("gloo", opts);
  Tensor t = ones({4});
  all_reduce(t);  // allreduce #0: everyone
  const int rank = get_rank();
  const int world = get_world_size();
  TCPStore store = bookkeeping_store();
  if (rank == 1) {
    // Skips allreduce #1, then stays (connected, silent) until every other rank has failed,
    // so they time out rather than see this process exit.
    store.wait({"worker/skip/failed/all"});
    print_line("skipped allreduce #1");
    return 0;
  }
  try {
    all_reduce(t);  // allreduce #1: rank 1 never comes
  } catch (const std::exception&) {
    if (store.add("worker/skip/failed", 1) == world - 1) store.set("worker/skip/failed/all", "1");
    throw;
  }
  print_line("allreduce #1 returned");
  return 0;
}

int mismatched_shapes(const Args&) {
  exit_after(30);
  InitOptions opts;
  opts.timeout = std::chrono::seconds(10);
  init_process_group("gloo", opts);
  // Rank r reduces r + 2 elements: every pair of ranks disagrees.
  Tensor t = ones({get_rank() + 2});
  all_reduce(t);
  print_line("allreduce returned");
  return 0;
}

int init_only(const Args& args) {
  exit_after(30);
  InitOptions opts;
  opts.timeout = millis_arg(args, 0, 10000);
  init_process_group("gloo", opts);
  print_line("initialized rank " + std::to_string(get_rank()));
  destroy_process_group();
  return 0;
}

}  // namespace glass::distributed::worker
