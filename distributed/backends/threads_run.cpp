// distributed/backends/threads_run.cpp — run_threads: a world of rank-threads, started and joined.
//
// Invariant: run_threads returns only after every rank-thread has ended, and rethrows the
// failure that happened first in time (the cause; later ones are usually its echo: partners
// whose collectives failed because that rank stopped joining them).
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/events.h"
#include "core/generator.h"
#include "distributed/backends/threads.h"
#include "distributed/hash_store.h"

namespace glass::distributed {

namespace threads_internal {
void set_current_threads_rendezvous(const ThreadsRendezvous* rendezvous);
}  // namespace threads_internal

void run_threads(int world_size, const std::function<void(int rank)>& fn, ThreadsLinkModel link,
                 std::chrono::milliseconds timeout) {
  GLASS_CHECK(world_size >= 1, "run_threads: world_size must be at least 1, got ", world_size);
  GLASS_CHECK(timeout.count() > 0, "run_threads: the timeout must be positive, got ",
              timeout.count(), " ms");
  auto store = std::make_shared<HashStore>(timeout);

  std::mutex failure_mutex;
  std::exception_ptr first_failure;
  int first_failed_rank = -1;

  auto rank_main = [&](int rank) {
    events::ThreadRankGuard rank_guard(rank);
    // Each rank draws from default generators of its own, as a process would: the same
    // numbers whatever the other ranks draw meanwhile (and what it draws under glassrun).
    ThreadLocalGeneratorGuard generators;
    const ThreadsRendezvous rendezvous{rank, world_size, store, link, timeout};
    threads_internal::set_current_threads_rendezvous(&rendezvous);
    try {
      fn(rank);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!first_failure) {
        first_failure = std::current_exception();
        first_failed_rank = rank;
      }
    }
    threads_internal::set_current_threads_rendezvous(nullptr);
  };

  std::vector<std::thread> threads;
  threads.reserve(world_size);
  try {
    for (int rank = 0; rank < world_size; ++rank) threads.emplace_back(rank_main, rank);
  } catch (...) {
    for (std::thread& t : threads) t.join();  // they end at their timeouts, at the latest
    throw;
  }
  for (std::thread& t : threads) t.join();

  if (!first_failure) return;
  try {
    std::rethrow_exception(first_failure);
  } catch (const std::exception& e) {
    throw Error(detail::str_cat("rank ", first_failed_rank, ": ", e.what()));
  } catch (...) {
    throw Error(detail::str_cat("rank ", first_failed_rank, ": unknown exception"));
  }
}

}  // namespace glass::distributed
