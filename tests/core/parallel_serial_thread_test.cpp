// tests/core/parallel_serial_thread_test.cpp — threads marked serial leave the pool alone.
//
// A process group's communication thread runs reduction loops beside backward. Marked
// serial, its parallel_for runs the whole range on itself, and a parallel_for on another
// thread at the same moment still gets the pool's workers. Every wait here is bounded, and
// the helper thread is always released and joined, so a failing test fails, never hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/parallel.h"

namespace glass {
namespace {

using namespace std::chrono_literals;

class ParallelSerialThread : public ::testing::Test {
 protected:
  void SetUp() override { saved_threads_ = get_num_threads(); }
  void TearDown() override { set_num_threads(saved_threads_); }

 private:
  int saved_threads_ = 1;
};

// A one-shot flag threads can wait on with a timeout.
class Flag {
 public:
  void set() {
    std::lock_guard<std::mutex> lock(mutex_);
    set_ = true;
    cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

TEST_F(ParallelSerialThread, SerialThreadRunsTheWholeRangeItself) {
  set_num_threads(4);
  EXPECT_FALSE(thread_runs_serial());
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::set<std::thread::id> threads;
  std::mutex mutex;
  {
    ThreadSerialGuard serial;
    EXPECT_TRUE(thread_runs_serial());
    parallel_for(0, 1000, 1, [&](int64_t lo, int64_t hi) {
      std::lock_guard<std::mutex> lock(mutex);
      chunks.emplace_back(lo, hi);
      threads.insert(std::this_thread::get_id());
    });
    {
      ThreadSerialGuard nested;
      set_thread_runs_serial(true);
    }
    EXPECT_TRUE(thread_runs_serial());  // the nested guard restored "serial"
  }
  EXPECT_FALSE(thread_runs_serial());
  EXPECT_EQ(chunks, (std::vector<std::pair<int64_t, int64_t>>{{0, 1000}}));
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

// Runs a parallel_for on a second thread (marked serial or not) whose loop body blocks
// until released, and, while it is inside, a two-chunk parallel_for on this thread.
// Returns how many distinct threads ran this thread's two chunks, and how many chunks the
// other thread's loop was cut into.
struct Overlap {
  size_t main_threads = 0;
  size_t other_chunks = 0;
};

Overlap parallel_for_beside_a_busy_thread(bool other_is_serial) {
  Flag other_inside, release;
  std::atomic<size_t> other_chunks{0};
  std::thread other([&] {
    if (other_is_serial) set_thread_runs_serial(true);
    parallel_for(0, 100, 1, [&](int64_t, int64_t) {
      ++other_chunks;
      other_inside.set();
      release.wait_for(5s);
    });
  });

  Overlap result;
  if (other_inside.wait_for(5s)) {
    // Each chunk waits briefly for the other one to start: on two threads both start.
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::atomic<int> started{0};
    parallel_for(0, 2, 1, [&](int64_t lo, int64_t hi) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      ++started;
      if (hi - lo == 2) return;  // the whole range in one call: there is no other chunk
      const auto deadline = std::chrono::steady_clock::now() + 1s;
      while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    });
    result.main_threads = threads.size();
  } else {
    ADD_FAILURE() << "the other thread never entered its loop";
  }
  release.set();
  other.join();
  result.other_chunks = other_chunks.load();
  return result;
}

TEST_F(ParallelSerialThread, ThePoolStaysAvailableWhileASerialThreadRunsLoops) {
  set_num_threads(2);
  Overlap o = parallel_for_beside_a_busy_thread(/*other_is_serial=*/true);
  EXPECT_EQ(o.other_chunks, 1u);  // the whole range, on the serial thread
  EXPECT_EQ(o.main_threads, 2u);  // the caller plus a pool worker
}

// Why the flag exists: without it the other thread's loop takes the pool, and this
// thread's loop runs alone (the try_lock in parallel_for loses).
TEST_F(ParallelSerialThread, WithoutTheFlagABusyThreadTakesThePool) {
  set_num_threads(2);
  Overlap o = parallel_for_beside_a_busy_thread(/*other_is_serial=*/false);
  EXPECT_EQ(o.other_chunks, 2u);
  EXPECT_EQ(o.main_threads, 1u);
}

}  // namespace
}  // namespace glass
