// tests/distributed/rank_memory_test.cpp — the per-rank memory ledger against hand-counted
// allocations: each rank's own blocks, a block freed by another thread charged back to the
// rank that made it, blocks from before the ledger ignored, and, with one rank, the same
// bytes as the allocator's own statistics.
#include "distributed/rank_memory.h"

#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "core/allocator.h"
#include "core/events.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/backends/threads.h"

namespace glass::distributed {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(RankMemoryLedger, CountsEachRanksOwnBlocksAndTheirPeaks) {
  RankMemoryLedger ledger(2);
  std::barrier sync(2);
  run_threads(2, [&](int rank) {
    // Rank 0: 4 MiB, then 2 more, then frees the 4. Rank 1: 8 MiB, kept to the end.
    if (rank == 0) {
      Tensor a = empty({kMiB}, kFloat);  // 4 MiB
      Tensor b = empty({kMiB / 2}, kFloat);
      a = Tensor();
      sync.arrive_and_wait();
      EXPECT_EQ(ledger.current(0), 2 * kMiB);
      EXPECT_EQ(ledger.peak(0), 6 * kMiB);
      sync.arrive_and_wait();
    } else {
      Tensor c = empty({2 * kMiB}, kFloat);
      sync.arrive_and_wait();
      EXPECT_EQ(ledger.current(1), 8 * kMiB);
      EXPECT_EQ(ledger.peak(1), 8 * kMiB);
      sync.arrive_and_wait();
    }
  });
  EXPECT_EQ(ledger.current(0), 0);
  EXPECT_EQ(ledger.current(1), 0);
  EXPECT_EQ(ledger.peak(0), 6 * kMiB);
  ledger.reset_peak();
  EXPECT_EQ(ledger.peak(0), 0);
}

TEST(RankMemoryLedger, ABlockFreedByAnotherThreadIsChargedToTheRankThatMadeIt) {
  RankMemoryLedger ledger(2);
  Tensor handed_over;
  std::barrier sync(2);
  run_threads(2, [&](int rank) {
    if (rank == 0) handed_over = empty({kMiB}, kFloat);
    sync.arrive_and_wait();
    if (rank == 1) {
      EXPECT_EQ(ledger.current(0), 4 * kMiB);
      EXPECT_EQ(ledger.current(1), 0);
      handed_over = Tensor();  // rank 1 drops rank 0's block
      EXPECT_EQ(ledger.current(0), 0);
      EXPECT_EQ(ledger.current(1), 0);
    }
  });
}

TEST(RankMemoryLedger, IgnoresBlocksFromBeforeItAndFromThreadsWithoutARank) {
  Tensor before = empty({kMiB}, kFloat);
  RankMemoryLedger ledger(1);
  Tensor unranked = empty({kMiB}, kFloat);  // this thread has no rank
  run_threads(1, [&](int) {
    before = Tensor();
    unranked = Tensor();
  });
  EXPECT_EQ(ledger.current(0), 0);
  EXPECT_EQ(ledger.peak(0), 0);
}

TEST(RankMemoryLedger, WithOneRankAgreesWithTheAllocatorsStatistics) {
  RankMemoryLedger ledger(1);
  run_threads(1, [&](int) {
    const int64_t base = cpu_memory_stats().allocated_bytes;
    Tensor a = randn({300, 200});
    Tensor b = a.matmul(a.t()).relu();  // packing buffers come and go inside
    EXPECT_EQ(ledger.current(0), cpu_memory_stats().allocated_bytes - base);
  });
}

TEST(RankMemoryLedger, RecordsOneSamplePerChangeWhileRecording) {
  RankMemoryLedger ledger(1);
  run_threads(1, [&](int) {
    Tensor a = empty({kMiB}, kFloat);
    ledger.set_recording(true);
    Tensor b = empty({kMiB / 4}, kFloat);
    b = Tensor();
    a = Tensor();
    ledger.set_recording(false);
    Tensor c = empty({16}, kFloat);
  });
  const auto samples = ledger.samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].bytes, 5 * kMiB);
  EXPECT_EQ(samples[1].bytes, 4 * kMiB);
  EXPECT_EQ(samples[2].bytes, 0);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].order, static_cast<int64_t>(i));
    EXPECT_EQ(samples[i].rank, 0);
  }
  ledger.clear_samples();
  EXPECT_TRUE(ledger.samples().empty());
}

TEST(RankMemoryLedger, NamesABadRankOrWorldSize) {
  EXPECT_THROW(
      {
        try {
          RankMemoryLedger ledger(0);
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("world_size must be >= 1, got 0"),
                    std::string::npos);
          throw;
        }
      },
      std::exception);
  RankMemoryLedger ledger(2);
  try {
    ledger.peak(2);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is not in [0, 2)"), std::string::npos);
  }
}

// The allocator publishes a block's Free before it can hand the block out again, so a
// ledger keyed by address never sees an Allocation of a block it still counts.
TEST(RankMemoryLedger, StaysExactWhileRanksRecycleEachOthersBlocks) {
  RankMemoryLedger ledger(2);
  run_threads(2, [&](int) {
    for (int i = 0; i < 2000; ++i) {
      Tensor t = empty({1024 + (i % 3) * 16}, kFloat);
    }
  });
  EXPECT_EQ(ledger.current(0), 0);
  EXPECT_EQ(ledger.current(1), 0);
}

}  // namespace
}  // namespace glass::distributed
