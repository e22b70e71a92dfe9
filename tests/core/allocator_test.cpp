// tests/core/allocator_test.cpp — the CPU caching allocator reuses blocks and counts exactly.
#include "core/allocator.h"

#include <thread>

#include "core/parallel.h"
#include "test_util.h"

namespace glass {
namespace {

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    was_enabled_ = cpu_caching_enabled();
    cpu_set_caching_enabled(true);
    cpu_empty_cache();
  }
  void TearDown() override { cpu_set_caching_enabled(was_enabled_); }
  bool was_enabled_ = true;
};

TEST_F(AllocatorTest, FreedBlocksAreReusedForTheSameSizeClass) {
  void* first;
  {
    Tensor a = empty({1 << 20});  // 4 MiB
    first = a.data_ptr();
  }
  MemoryStats s = cpu_memory_stats();
  EXPECT_GE(s.cached_bytes, 4 << 20);
  Tensor b = empty({1 << 20});
  EXPECT_EQ(b.data_ptr(), first);  // the same block, no new page faults
  EXPECT_GT(cpu_memory_stats().num_cache_hits, s.num_cache_hits);
}

TEST_F(AllocatorTest, LargeBlocksAreHugePageAligned) {
  Tensor big = empty({3 << 18});  // 3 MiB: rounded to a 2 MiB multiple, 2 MiB-aligned
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data_ptr()) % (2 << 20), 0u);
  big.fill_(1);
  EXPECT_EQ(big.sum().item<float>(), static_cast<float>(3 << 18));
  Tensor small = empty({100});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data_ptr()) % 64, 0u);
}

TEST_F(AllocatorTest, StatsTrackAllocatedCachedAndPeak) {
  MemoryStats before = cpu_memory_stats();
  cpu_reset_peak_memory_stats();
  {
    Tensor a = empty({1000}, kFloat64);  // 8000 B, rounded up to a size class
    MemoryStats during = cpu_memory_stats();
    EXPECT_GE(during.allocated_bytes - before.allocated_bytes, 8000);
    EXPECT_LE(during.allocated_bytes - before.allocated_bytes, 10240);  // at most 25% waste
    EXPECT_GE(during.peak_allocated_bytes, during.allocated_bytes);
  }
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before.allocated_bytes);
  cpu_empty_cache();
  EXPECT_EQ(cpu_memory_stats().cached_bytes, 0);
}

// matmul's packing buffers (kept per thread between calls) come from the allocator too, so
// the statistics count every byte a matmul holds. A fresh thread owns fresh buffers; they go
// back when it exits.
TEST_F(AllocatorTest, MatmulPackingBuffersAreCounted) {
  const Tensor a = ones({512, 512});
  const Tensor b = ones({512, 512});
  const int64_t before = cpu_memory_stats().allocated_bytes;
  int64_t held_by_the_thread = 0;
  std::thread worker([&] {
    ThreadSerialGuard serial;  // no pool threads: only this thread packs
    {
      Tensor c = a.mm(b);
      EXPECT_EQ(c.data_ptr<float>()[3 * 512 + 5], 512.0f);
    }  // c is freed; the packing buffers stay with the thread
    held_by_the_thread = cpu_memory_stats().allocated_bytes - before;
  });
  worker.join();
  EXPECT_GT(held_by_the_thread, 512 * 64 * 4);  // at least a packed panel of A or B
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before);
}

TEST_F(AllocatorTest, CachingCanBeTurnedOffAndAllocationsArePublished) {
  cpu_set_caching_enabled(false);
  int allocs = 0, frees = 0;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::Allocation) ++allocs;
      if (e.kind == events::Kind::Free) {
        ++frees;
        EXPECT_EQ(e.value, 0);  // not kept: caching is off
      }
    });
    Tensor a = empty({256});
  }
  EXPECT_EQ(allocs, 1);
  EXPECT_EQ(frees, 1);
  EXPECT_EQ(cpu_memory_stats().cached_bytes, 0);
}

}  // namespace
}  // namespace glass
