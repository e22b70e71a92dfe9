// tests/core/events_rank_test.cpp — events carry the rank of whoever published them:
// the process's rank, a thread's override (threads-backend ranks), or an explicit one.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/events.h"
#include "core/parallel.h"
#include "test_util.h"

namespace glass {
namespace {

// Every test leaves the process without a rank, as it found it.
struct ProcessRankReset {
  ~ProcessRankReset() { events::set_process_rank(-1); }
};

std::vector<int32_t> ranks_of_bucket_events(const std::function<void()>& body) {
  std::vector<int32_t> ranks;
  std::mutex mutex;
  events::Subscription sub([&](const events::Event& e) {
    if (e.kind != events::Kind::BucketReady) return;
    std::lock_guard<std::mutex> lock(mutex);
    ranks.push_back(e.rank);
  });
  body();
  return ranks;
}

void publish_bucket(int32_t rank = -1) {
  events::publish({.kind = events::Kind::BucketReady, .value = 0, .rank = rank});
}

TEST(EventsRank, WithoutARankEventsSayMinusOne) {
  EXPECT_EQ(events::current_rank(), -1);
  EXPECT_EQ(ranks_of_bucket_events([] { publish_bucket(); }), std::vector<int32_t>{-1});
}

TEST(EventsRank, TheProcessRankIsStampedIntoEveryEvent) {
  ProcessRankReset reset;
  events::set_process_rank(3);
  EXPECT_EQ(events::current_rank(), 3);
  EXPECT_EQ(ranks_of_bucket_events([] { publish_bucket(); }), std::vector<int32_t>{3});
}

TEST(EventsRank, AnExplicitRankIsKept) {
  ProcessRankReset reset;
  events::set_process_rank(3);
  EXPECT_EQ(ranks_of_bucket_events([] { publish_bucket(7); }), std::vector<int32_t>{7});
}

TEST(EventsRank, AThreadRankOverridesTheProcessRankAndTheGuardRestoresIt) {
  ProcessRankReset reset;
  events::set_process_rank(1);
  auto ranks = ranks_of_bucket_events([] {
    publish_bucket();
    {
      events::ThreadRankGuard outer(5);
      publish_bucket();
      {
        events::ThreadRankGuard inner(6);
        publish_bucket();
      }
      publish_bucket();
    }
    publish_bucket();
  });
  EXPECT_EQ(ranks, (std::vector<int32_t>{1, 5, 6, 5, 1}));
  events::set_thread_rank(2);
  EXPECT_EQ(events::current_rank(), 2);
  events::set_thread_rank(-1);
  EXPECT_EQ(events::current_rank(), 1);
}

// The threads backend runs rank r on its own thread: each thread's events carry its rank,
// and a thread's override does not leak into the others.
TEST(EventsRank, ThreadRanksArePerThread) {
  constexpr int kRanks = 4;
  auto ranks = ranks_of_bucket_events([] {
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([r] {
        events::ThreadRankGuard guard(r);
        publish_bucket();
      });
    for (auto& t : threads) t.join();
    publish_bucket();  // the main thread has no rank
  });
  ASSERT_EQ(ranks.size(), static_cast<size_t>(kRanks + 1));
  EXPECT_EQ(ranks.back(), -1);
  std::vector<int32_t> from_threads(ranks.begin(), ranks.end() - 1);
  std::sort(from_threads.begin(), from_threads.end());
  EXPECT_EQ(from_threads, (std::vector<int32_t>{0, 1, 2, 3}));
}

// Op events published by tensor code get the rank too, with no change at the publish site.
TEST(EventsRank, OpEventsCarryTheThreadRank) {
  events::ThreadRankGuard guard(2);
  std::vector<int32_t> ranks;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::OpDispatched) ranks.push_back(e.rank);
    });
    Tensor c = ones({2}) + ones({2});
  }
  ASSERT_FALSE(ranks.empty());
  for (int32_t r : ranks) EXPECT_EQ(r, 2);
}

// A parallel region's chunks run on pool threads that no rank owns; what they publish is
// the caller's (with the threads backend, the pool is shared by every rank).
TEST(EventsRank, PoolThreadsPublishWithTheCallersRank) {
  if (get_num_threads() < 2) GTEST_SKIP() << "one thread: no pool worker to check";
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> worker_ran{false};
  std::vector<int32_t> ranks = ranks_of_bucket_events([&] {
    events::ThreadRankGuard rank(3);
    parallel_for(0, 64, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != caller) {
        worker_ran = true;
        publish_bucket();
        return;
      }
      // The caller's chunks wait (boundedly) for a worker to take one, so a worker does
      // publish even when the caller could have run all 64 chunks by itself.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!worker_ran && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      publish_bucket();
    });
  });
  ASSERT_TRUE(worker_ran) << "no pool worker ran a chunk within 2 s";
  EXPECT_TRUE(std::all_of(ranks.begin(), ranks.end(), [](int32_t r) { return r == 3; }));
}

}  // namespace
}  // namespace glass
