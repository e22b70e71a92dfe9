// bench/distributed_ranks.h — ranks as persistent threads of the benchmark process, and a
// clock that times one collective step the way a job would see it: from the moment every
// rank is released until the slowest rank is done.
//
// The distributed benchmarks build their process groups once (gloo's full mesh of TCP
// connections over loopback costs milliseconds) and then run thousands of timed steps on
// them, so the rank threads live as long as the benchmark needs them and take one task at a
// time from the benchmark's thread. Each task starts behind a barrier whose completion
// stamps the common start; each rank stamps its own end; the step's time is the latest end
// minus the start. Invariant: run() returns only when every rank has finished the task (or
// thrown: the first error is rethrown, naming the rank), and the destructor joins every
// thread, so no rank thread outlives its RankThreads.
#pragma once

#include <algorithm>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel.h"

namespace glass_bench {

class RankThreads {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `world` threads. Each runs init(rank) first (build its process group there: the
  // ranks must meet concurrently), then waits for tasks; teardown(rank) runs on the same
  // thread at the end. Throws the first init error, after joining every thread. Rank threads are
  // marked serial: `world` ranks on a 2-core machine must not also fight over glass's intra-op
  // pool, and gloo reduces on one thread per rank too, so ring and library get the same cores.
  RankThreads(int world, std::function<void(int rank)> init,
              std::function<void(int rank)> teardown = {})
      : world_(world), teardown_(std::move(teardown)), ends_(static_cast<size_t>(world)) {
    for (int r = 0; r < world; ++r) threads_.emplace_back([this, r, init] { loop(r, init); });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == world_; });
    if (!error_) return;
    lock.unlock();
    stop_and_join();  // a constructor that throws runs no destructor
    std::rethrow_exception(error_);
  }

  ~RankThreads() { stop_and_join(); }
  RankThreads(const RankThreads&) = delete;
  RankThreads& operator=(const RankThreads&) = delete;

  int world() const { return world_; }

  // Runs step(rank) once on every rank, all released together; returns the seconds from
  // that release until the last rank finished. A rank that throws must not leave its
  // partners waiting for ever: give every collective a timeout (the groups' options do).
  double run(const std::function<void(int rank)>& step) {
    std::barrier start(world_, Completion{&start_});
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = [&](int rank) {
        start.arrive_and_wait();
        step(rank);
        ends_[static_cast<size_t>(rank)] = Clock::now();
      };
      finished_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == world_; });
    if (error_) std::rethrow_exception(error_);
    const Clock::time_point last = *std::max_element(ends_.begin(), ends_.end());
    return std::chrono::duration<double>(last - start_).count();
  }

 private:
  struct Completion {
    Clock::time_point* start;
    void operator()() noexcept { *start = Clock::now(); }
  };

  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // Records the first error (naming the rank) and counts the rank as finished.
  void finish(int rank, std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        error_ = std::make_exception_ptr(
            std::runtime_error("rank " + std::to_string(rank) + ": " + e.what()));
      }
    }
    if (++finished_ == world_) done_.notify_all();
  }

  void loop(int rank, const std::function<void(int)>& init) {
    glass::ThreadSerialGuard serial;
    std::exception_ptr error;
    try {
      init(rank);
    } catch (...) {
      error = std::current_exception();
    }
    finish(rank, error);
    // After a failed init the constructor stops every thread: no task ever comes.
    for (uint64_t seen = 0;;) {
      std::function<void(int)> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stopping_) break;
        task = task_;
      }
      error = nullptr;
      try {
        task(rank);
      } catch (...) {
        error = std::current_exception();
      }
      finish(rank, error);
    }
    if (teardown_) teardown_(rank);
  }

  const int world_;
  std::function<void(int)> teardown_;
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable wake_;  // a new task (or stop)
  std::condition_variable done_;  // a rank finished the task
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::function<void(int)> task_;
  int finished_ = 0;
  std::exception_ptr error_;

  Clock::time_point start_;
  std::vector<Clock::time_point> ends_;
};

}  // namespace glass_bench
