// distributed/backends/threads.h — the threads backend: ranks are threads of one process.
//
// For lessons, deterministic tests and the viewer's animation: no sockets, no processes,
// and every result is computed in rank order 0..n−1, so it is the same bits on every rank
// and in every run. An optional link model makes each collective take the wall time a
// real ring would (latency per hop, bytes over a bandwidth), which is how overlap of
// communication with backward is measured on a laptop.
//
//   run_threads(4, [](int rank) {
//     auto store = current_threads_rendezvous()->store;
//     auto group = make_threads_group(store, rank, 4, {});
//     Tensor t = full({3}, rank + 1);
//     group->allreduce(t)->wait();  // every rank: [10, 10, 10]
//   });
//
// Invariant: every wait in this backend is bounded by the collective's timeout, and a rank
// that destroys its group makes every collective still waiting for it fail at once, naming
// it — so a failing rank never leaves the others hanging.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "distributed/process_group.h"
#include "distributed/store.h"

namespace glass::distributed {

// A simulated wire. Zero means free: latency 0, bandwidth infinite.
struct ThreadsLinkModel {
  std::chrono::microseconds latency{0};
  double bytes_per_second = 0;  // 0: infinite
};

// What run_threads gives each of its rank-threads (read it with
// current_threads_rendezvous(); init_process_group("threads") does).
struct ThreadsRendezvous {
  int rank = 0;
  int world_size = 1;
  std::shared_ptr<Store> store;  // one HashStore for the whole world
  ThreadsLinkModel link;
  std::chrono::milliseconds timeout{0};
};

// nullptr outside run_threads.
const ThreadsRendezvous* current_threads_rendezvous();

// A group of `size` rank-threads that meet through `store` (the same store and
// options.group_name on every rank; options.store defaults to `store`). The four-argument
// form is a BackendFactory: inside run_threads it takes the link model from the current
// rendezvous, and its timeout is at most run_threads'.
std::shared_ptr<ProcessGroup> make_threads_group(std::shared_ptr<Store> store, int rank, int size,
                                                 const ProcessGroup::Options& options);
std::shared_ptr<ProcessGroup> make_threads_group(std::shared_ptr<Store> store, int rank, int size,
                                                 const ProcessGroup::Options& options,
                                                 ThreadsLinkModel link);

// Starts world_size threads, runs fn(rank) on each (events tagged with the rank), joins them
// all, and rethrows the first failure as "rank 2: <what>". `timeout` bounds every collective
// of groups made inside (a failing rank's partners fail within it, or at once when the
// failing rank's group is destroyed). Each rank has default generators of its own
// (ThreadLocalGeneratorGuard, core/generator.h), starting from the default seed as a new
// process's do: manual_seed() inside a rank seeds that rank only, and a rank draws the same
// numbers whatever the others draw meanwhile — those it would draw as a process.
void run_threads(int world_size, const std::function<void(int rank)>& fn,
                 ThreadsLinkModel link = {},
                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace glass::distributed
