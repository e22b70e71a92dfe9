// tests/cuda/sim/device_heap_test.cpp — the driver-level allocator (device_heap.h).
//
// 2 MiB rounding, best fit, merging of free neighbours, out-of-memory as an answer, and a
// random alloc/free sequence checked against a page-by-page reference model.
#include "cuda/sim/device_heap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace glass::cuda::sim {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(DeviceHeap, RoundsToTwoMiBPages) {
  DeviceHeap heap(16 * kMiB);
  EXPECT_EQ(heap.allocate(1), 0u);
  EXPECT_EQ(heap.bytes_in_use(), 2 * kMiB);
  EXPECT_EQ(heap.allocate(3 * kMiB), 2 * kMiB);
  EXPECT_EQ(heap.bytes_in_use(), 6 * kMiB);
  EXPECT_EQ(heap.allocate(2 * kMiB), 6 * kMiB);
  EXPECT_EQ(heap.bytes_in_use(), 8 * kMiB);
}

TEST(DeviceHeap, OutOfMemoryIsNulloptAndChangesNothing) {
  DeviceHeap heap(8 * kMiB);
  EXPECT_FALSE(heap.allocate(8 * kMiB + 1).has_value());
  EXPECT_FALSE(heap.allocate(0).has_value());
  ASSERT_EQ(heap.allocate(6 * kMiB), 0u);
  EXPECT_FALSE(heap.allocate(4 * kMiB).has_value());
  EXPECT_EQ(heap.bytes_in_use(), 6 * kMiB);
  EXPECT_EQ(heap.allocate(2 * kMiB), 6 * kMiB);
  EXPECT_FALSE(heap.allocate(1).has_value());
}

TEST(DeviceHeap, ReleaseOfAnUnknownOffsetChangesNothing) {
  DeviceHeap heap(8 * kMiB);
  ASSERT_EQ(heap.allocate(4 * kMiB), 0u);
  EXPECT_FALSE(heap.release(2 * kMiB).has_value());  // inside, not the start
  EXPECT_FALSE(heap.release(4 * kMiB).has_value());  // free
  EXPECT_EQ(heap.bytes_in_use(), 4 * kMiB);
  EXPECT_EQ(heap.release(0), 4 * kMiB);
  EXPECT_FALSE(heap.release(0).has_value());  // double free
}

TEST(DeviceHeap, FreedNeighboursMerge) {
  DeviceHeap heap(16 * kMiB);
  const size_t a = *heap.allocate(4 * kMiB), b = *heap.allocate(4 * kMiB);
  const size_t c = *heap.allocate(4 * kMiB), d = *heap.allocate(4 * kMiB);
  EXPECT_EQ(heap.num_free_ranges(), 0u);
  heap.release(b);
  heap.release(c);
  EXPECT_EQ(heap.num_free_ranges(), 1u);
  EXPECT_EQ(heap.largest_free_range(), 8 * kMiB);
  EXPECT_EQ(heap.allocate(8 * kMiB), b);  // fits only because b and c merged
  heap.release(a);
  heap.release(d);
  heap.release(b);
  EXPECT_EQ(heap.num_free_ranges(), 1u);
  EXPECT_EQ(heap.largest_free_range(), 16 * kMiB);
  EXPECT_EQ(heap.bytes_in_use(), 0u);
}

TEST(DeviceHeap, BestFitTakesTheSmallestHoleThatFits) {
  DeviceHeap heap(16 * kMiB);
  const size_t a = *heap.allocate(6 * kMiB);  // [0, 6)
  heap.allocate(2 * kMiB);                    // [6, 8)
  const size_t c = *heap.allocate(4 * kMiB);  // [8, 12)
  heap.allocate(4 * kMiB);                    // [12, 16)
  heap.release(a);
  heap.release(c);
  EXPECT_EQ(heap.allocate(4 * kMiB), 8 * kMiB);  // first fit would say 0
  EXPECT_EQ(heap.allocate(6 * kMiB), 0u);
}

TEST(DeviceHeap, AllocationContaining) {
  DeviceHeap heap(16 * kMiB);
  heap.allocate(2 * kMiB);
  const size_t b = *heap.allocate(4 * kMiB);
  auto hit = heap.allocation_containing(b + 3 * kMiB);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->first, b);
  EXPECT_EQ(hit->second, 4 * kMiB);
  EXPECT_FALSE(heap.allocation_containing(b + 4 * kMiB).has_value());
}

// Random allocations and frees against a model that marks every page: allocations never
// overlap, bytes_in_use is the sum of live sizes, and an allocation fails only when no run
// of free pages is long enough (best fit wastes nothing that first fit would keep).
TEST(DeviceHeap, RandomSequenceMatchesAPageModel) {
  constexpr size_t kPages = 64;
  DeviceHeap heap(kPages * DeviceHeap::kPageBytes);
  std::vector<bool> used(kPages, false);
  std::map<size_t, size_t> live;  // offset -> pages
  std::mt19937 rng(1234);
  auto longest_free_run = [&] {
    size_t best = 0, run = 0;
    for (bool u : used) {
      run = u ? 0 : run + 1;
      best = std::max(best, run);
    }
    return best;
  };
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const size_t pages = 1 + rng() % 8;
      const auto offset = heap.allocate(pages * DeviceHeap::kPageBytes - rng() % 1000);
      ASSERT_EQ(offset.has_value(), longest_free_run() >= pages) << "step " << step;
      if (!offset) continue;
      const size_t first = *offset / DeviceHeap::kPageBytes;
      for (size_t p = first; p < first + pages; ++p) {
        ASSERT_FALSE(used[p]) << "overlap at page " << p << ", step " << step;
        used[p] = true;
      }
      live[*offset] = pages;
    } else {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      ASSERT_EQ(heap.release(it->first), it->second * DeviceHeap::kPageBytes);
      const size_t first = it->first / DeviceHeap::kPageBytes;
      for (size_t p = first; p < first + it->second; ++p) used[p] = false;
      live.erase(it);
    }
    size_t in_use = 0;
    for (const auto& [offset, pages] : live) in_use += pages * DeviceHeap::kPageBytes;
    ASSERT_EQ(heap.bytes_in_use(), in_use);
  }
  for (const auto& [offset, pages] : live) heap.release(offset);
  EXPECT_EQ(heap.num_free_ranges(), 1u);
  EXPECT_EQ(heap.largest_free_range(), kPages * DeviceHeap::kPageBytes);
}

}  // namespace
}  // namespace glass::cuda::sim
