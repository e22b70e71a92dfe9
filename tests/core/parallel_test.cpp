// tests/core/parallel_test.cpp — the contract of core/parallel.h.
//
// parallel_for must visit every index exactly once in chunks of at least `grain`, use
// at most num_threads chunks, rethrow the first exception on the caller, run nested
// calls serially, and keep working across set_num_threads changes. Each test restores
// the thread count it found, since the pool is process-wide.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"

namespace glass {
namespace {

class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_threads_ = get_num_threads(); }
  void TearDown() override { set_num_threads(saved_threads_); }

 private:
  int saved_threads_ = 1;
};

TEST_F(ParallelTest, DefaultThreadCountIsPositive) { EXPECT_GE(get_num_threads(), 1); }

TEST_F(ParallelTest, EveryIndexOnceInFewEnoughBigEnoughChunks) {
  for (int threads : {1, 2, 3, 4, 7}) {
    set_num_threads(threads);
    struct Range {
      int64_t begin, end, grain;
    };
    for (const Range& r :
         {Range{0, 1, 1}, Range{0, 10, 1}, Range{5, 15, 3}, Range{0, 10, 3}, Range{-7, 100, 1},
          Range{0, 1000, 64}, Range{0, 100, 1000}, Range{3, 4, 0}, Range{0, 10007, 1}}) {
      const int64_t begin = r.begin, end = r.end, grain = r.grain;
      SCOPED_TRACE(::testing::Message()
                   << threads << " threads, [" << begin << ", " << end << ") grain " << grain);
      std::vector<std::atomic<int>> visits(end - begin);
      std::mutex mutex;
      std::vector<std::pair<int64_t, int64_t>> chunks;
      parallel_for(begin, end, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) ++visits[i - begin];
        std::lock_guard<std::mutex> lock(mutex);
        chunks.emplace_back(lo, hi);
      });
      for (const auto& v : visits) ASSERT_EQ(v.load(), 1);
      EXPECT_LE(static_cast<int>(chunks.size()), threads);
      if (chunks.size() > 1) {
        for (auto [lo, hi] : chunks) EXPECT_GE(hi - lo, grain);
      }
    }
  }
}

TEST_F(ParallelTest, EmptyRangeNeverCallsTheFunction) {
  set_num_threads(2);
  bool called = false;
  parallel_for(5, 5, 1, [&](int64_t, int64_t) { called = true; });
  parallel_for(5, 2, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST_F(ParallelTest, ChunksRunConcurrently) {
  set_num_threads(2);
  // Each of the two chunks waits for the other to start. If both ran on one thread, the
  // first would time out waiting.
  std::atomic<int> started{0};
  std::atomic<bool> saw_other{true};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    ++started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) {
        saw_other = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(saw_other.load());
}

TEST_F(ParallelTest, RethrowsTheExceptionOnTheCaller) {
  set_num_threads(2);
  EXPECT_THROW(parallel_for(0, 100, 1,
                            [](int64_t lo, int64_t hi) {
                              if (lo <= 60 && 60 < hi) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  try {
    parallel_for(0, 100, 1, [](int64_t, int64_t) { GLASS_CHECK(false, "chunk failed"); });
    ADD_FAILURE() << "expected a throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk failed"), std::string::npos);
  }
  // The pool survives: the next region runs normally.
  std::atomic<int64_t> sum{0};
  parallel_for(0, 1000, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
}

TEST_F(ParallelTest, InParallelRegionOnlyInside) {
  set_num_threads(2);
  EXPECT_FALSE(in_parallel_region());
  std::atomic<int> inside{0}, chunks{0};
  parallel_for(0, 100, 1, [&](int64_t, int64_t) {
    ++chunks;
    if (in_parallel_region()) ++inside;
  });
  EXPECT_EQ(inside.load(), chunks.load());
  EXPECT_FALSE(in_parallel_region());
}

TEST_F(ParallelTest, NestedCallsRunSeriallyOnTheSameThread) {
  set_num_threads(2);
  std::atomic<int> bad{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    const auto outer_thread = std::this_thread::get_id();
    int inner_calls = 0;
    parallel_for(0, 1000, 1, [&](int64_t lo, int64_t hi) {
      ++inner_calls;
      if (lo != 0 || hi != 1000 || std::this_thread::get_id() != outer_thread) ++bad;
    });
    if (inner_calls != 1) ++bad;
  });
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(ParallelTest, SetNumThreadsRejectsNonPositiveCounts) {
  set_num_threads(2);
  EXPECT_THROW(set_num_threads(0), Error);
  EXPECT_THROW(set_num_threads(-3), Error);
  EXPECT_EQ(get_num_threads(), 2);
}

TEST_F(ParallelTest, SetNumThreadsInsideARegionIsAnError) {
  set_num_threads(2);
  std::atomic<int> threw{0}, chunks{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    ++chunks;
    try {
      set_num_threads(1);
    } catch (const Error&) {
      ++threw;
    }
  });
  EXPECT_EQ(threw.load(), chunks.load());
  EXPECT_EQ(get_num_threads(), 2);
}

TEST_F(ParallelTest, ResizingThePoolKeepsItWorking) {
  for (int threads : {3, 1, 2, 4, 2}) {
    set_num_threads(threads);
    EXPECT_EQ(get_num_threads(), threads);
    std::atomic<int64_t> sum{0};
    parallel_for(0, 10000, 10, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) sum += i;
    });
    EXPECT_EQ(sum.load(), int64_t{9999} * 10000 / 2);
  }
}

TEST_F(ParallelTest, CallersOnSeveralThreadsAllGetCorrectResults) {
  set_num_threads(2);
  // Only one region holds the pool at a time; the others must fall back to serial.
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        std::atomic<int64_t> sum{0};
        parallel_for(0, 5000, 1, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) sum += i;
        });
        if (sum.load() != int64_t{4999} * 5000 / 2) ++wrong;
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace glass
