// tests/cuda/alloc/caching_allocator_test.cpp — the device caching allocator on the simulated
// GPU: rounding, pools, split/merge, best fit, per-stream reuse, record_stream, OOM, stats.
//
// Every test makes its own CUDACachingAllocator over the simulator, so its pools and
// statistics start empty; expected sizes and addresses are worked out by hand from the rules
// in Note [Caching allocator design] (512 B rounding, 2 MiB small segments, 20 MiB large
// segments for 1..10 MiB, 2 MiB multiples beyond), never read back from the allocator.
#include "cuda/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "core/error.h"
#include "cuda/runtime.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/stream.h"
#include "sim_test_hooks.h"

namespace glass::cuda {
namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB;

char* at(void* p) { return static_cast<char*>(p); }

Runtime& simulated_gpu() {
  use_simulator();
  return runtime();
}

class CachingAllocatorTest : public ::testing::Test {
 protected:
  MemoryStats stats() { return alloc_.stats(0); }
  void* allocate(int64_t n) { return alloc_.allocate(static_cast<size_t>(n)); }
  void free(void* p) { alloc_.deallocate(p, 0); }

  CUDACachingAllocator alloc_{simulated_gpu(), /*caching=*/true};
};

TEST(FormatBytes, PrintsHumanUnitsAsPyTorchDoes) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(20 * MiB), "20.00 MiB");
  EXPECT_EQ(format_bytes(2458 * MiB), "2.40 GiB");
  EXPECT_EQ(format_bytes(int64_t{4} << 30), "4.00 GiB");
}

TEST_F(CachingAllocatorTest, RoundsTo512BytesAndCarvesOneSmallSegment) {
  EXPECT_EQ(allocate(0), nullptr);  // no block for an empty tensor, as in PyTorch
  void* a = allocate(1);
  void* b = allocate(513);
  void* c = allocate(1024);
  MemoryStats s = stats();
  EXPECT_EQ(s.allocated_bytes, 512 + 1024 + 1024);
  EXPECT_EQ(s.active_blocks, 3);
  EXPECT_EQ(s.segments, 1);
  EXPECT_EQ(s.reserved_bytes, 2 * MiB);
  // Front-first splitting of one segment: the blocks lie back to back.
  EXPECT_EQ(at(b), at(a) + 512);
  EXPECT_EQ(at(c), at(b) + 1024);
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.num_device_alloc, 1);
  EXPECT_EQ(s.num_cache_hits, 2);  // b and c came from the segment's free remainder
  EXPECT_EQ(s.num_splits, 3);
  free(a), free(b), free(c);
  s = stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.inactive_split_blocks, 0);  // all merged back into one block
  alloc_.empty_cache();
  s = stats();
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.segments, 0);
  EXPECT_EQ(s.num_device_free, 1);
}

TEST_F(CachingAllocatorTest, SmallAndLargePoolsSizeTheirSegments) {
  void* small = allocate(1 * MiB);    // small pool: a 2 MiB segment, split
  void* eleven = allocate(11 * MiB);  // >= 10 MiB: a segment of its own, rounded to 12 MiB;
                                      // 1 MiB left is not > 1 MiB, so the block keeps it all
  void* mid = allocate(1 * MiB + 1);  // 1 MiB + 512 B: large pool, a 20 MiB segment, split
  void* ten = allocate(10 * MiB);     // best fit: the 20 MiB segment's remainder, not a new one
  MemoryStats s = stats();
  EXPECT_EQ(at(ten), at(mid) + 1 * MiB + 512);
  EXPECT_EQ(s.segments, 3);
  EXPECT_EQ(s.reserved_bytes, (2 + 12 + 20) * MiB);
  EXPECT_EQ(s.allocated_bytes, 1 * MiB + 12 * MiB + (1 * MiB + 512) + 10 * MiB);
  EXPECT_EQ(s.num_splits, 3);  // small, mid, ten

  // A small request comes from the small segment's remainder, never from the large pool's;
  // a 2 MiB request from what is left of the 20 MiB segment.
  void* tiny = allocate(4 * KiB);
  EXPECT_EQ(at(tiny), at(small) + 1 * MiB);
  void* two = allocate(2 * MiB);
  EXPECT_EQ(at(two), at(ten) + 10 * MiB);
  // 25 MiB + 512 B: a 26 MiB segment (2 MiB multiple), not split (1 MiB - 512 B left).
  void* big = allocate(25 * MiB + 1);
  s = stats();
  EXPECT_EQ(s.segments, 4);
  EXPECT_EQ(s.reserved_bytes, (2 + 12 + 20 + 26) * MiB);
  EXPECT_EQ(s.num_splits, 5);  // + tiny, two
  EXPECT_EQ(s.allocated_bytes,
            1 * MiB + 12 * MiB + (1 * MiB + 512) + 10 * MiB + 4 * KiB + 2 * MiB + 26 * MiB);
  for (void* p : {small, eleven, mid, ten, tiny, two, big}) free(p);
  alloc_.empty_cache();
  EXPECT_EQ(stats().reserved_bytes, 0);
  EXPECT_EQ(stats().num_device_free, 4);
}

TEST_F(CachingAllocatorTest, FreeingBThenAMergesThemIntoOneBlock) {
  void* a = allocate(256 * KiB);
  void* b = allocate(256 * KiB);
  void* c = allocate(256 * KiB);
  free(b);
  MemoryStats s = stats();
  EXPECT_EQ(s.inactive_split_blocks, 2);  // b, and the segment's tail after c
  EXPECT_EQ(s.inactive_split_bytes, 256 * KiB + (2 * MiB - 768 * KiB));
  EXPECT_EQ(s.num_merges, 0);  // b's neighbours a and c are in use
  free(a);
  s = stats();
  EXPECT_EQ(s.num_merges, 1);
  EXPECT_EQ(s.inactive_split_blocks, 2);  // a+b as one 512 KiB block, and the tail
  EXPECT_EQ(s.inactive_split_bytes, 512 * KiB + (2 * MiB - 768 * KiB));
  // The merged block serves a 512 KiB request whole (best fit: 512 KiB < 1280 KiB tail).
  void* ab = allocate(512 * KiB);
  EXPECT_EQ(ab, a);
  EXPECT_EQ(stats().num_splits, 3);  // no new split: an exact fit
  free(ab);
  free(c);  // merges with a+b before it and the tail after it
  s = stats();
  EXPECT_EQ(s.num_merges, 3);
  EXPECT_EQ(s.inactive_split_blocks, 0);
  EXPECT_EQ(s.segments, 1);
  // One whole block again: a request is carved from the segment's start.
  void* again = allocate(1 * MiB);
  EXPECT_EQ(again, a);
  free(again);
}

TEST_F(CachingAllocatorTest, BestFitTakesTheSmallestBlockThatFits) {
  // One 2 MiB segment: h1 768K | x1 64K | h2 256K | x2 64K | h3 512K | x3 384K.
  void* h1 = allocate(768 * KiB);
  void* x1 = allocate(64 * KiB);
  void* h2 = allocate(256 * KiB);
  void* x2 = allocate(64 * KiB);
  void* h3 = allocate(512 * KiB);
  void* x3 = allocate(384 * KiB);
  ASSERT_EQ(at(x3), at(h1) + 2 * MiB - 384 * KiB);
  ASSERT_EQ(stats().segments, 1);
  free(h1), free(h2), free(h3);        // three holes, separated by x1, x2, x3
  EXPECT_EQ(allocate(300 * KiB), h3);  // 512K is the smallest hole >= 300K (not 768K)
  EXPECT_EQ(allocate(256 * KiB), h2);  // exact fit
  EXPECT_EQ(allocate(600 * KiB), h1);  // the only hole left that fits
  EXPECT_EQ(stats().segments, 1);
  EXPECT_EQ(stats().num_device_alloc, 1);
  for (void* p : {h1, h2, h3, x1, x2, x3}) free(p);
}

TEST_F(CachingAllocatorTest, BestFitBreaksTiesByLowestAddress) {
  void* y1 = allocate(256 * KiB);
  void* z1 = allocate(64 * KiB);
  void* y2 = allocate(256 * KiB);
  void* z2 = allocate(2 * MiB - 576 * KiB);  // the rest of the segment
  free(y1);
  free(y2);  // freed last: a LIFO list would hand it out first
  EXPECT_EQ(allocate(256 * KiB), y1);
  EXPECT_EQ(allocate(256 * KiB), y2);
  for (void* p : {y1, y2, z1, z2}) free(p);
}

TEST_F(CachingAllocatorTest, AFreedBlockIsACacheHit) {
  void* p = allocate(1 * MiB);
  free(p);
  void* q = allocate(1 * MiB);
  EXPECT_EQ(q, p);
  MemoryStats s = stats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.num_cache_hits, 1);
  EXPECT_EQ(s.num_device_alloc, 1);
  free(q);
}

TEST_F(CachingAllocatorTest, ABlockIsReusedOnlyByItsOwnStream) {
  CUDAStream s1 = getStreamFromPool(), s2 = getStreamFromPool();
  ASSERT_NE(s1, s2);
  void* p;
  {
    CUDAStreamGuard g(s1);
    p = allocate(4 * KiB);
  }
  {
    CUDAStreamGuard g(s2);
    free(p);  // goes back to s1's list, whatever stream is current now
    void* q = allocate(4 * KiB);
    EXPECT_NE(q, p);  // not handed to stream 2: a new segment
    EXPECT_EQ(stats().num_device_alloc, 2);
    free(q);
  }
  {
    CUDAStreamGuard g(s1);
    void* r = allocate(4 * KiB);
    EXPECT_EQ(r, p);
    EXPECT_EQ(stats().num_device_alloc, 2);
    free(r);
  }
}

TEST_F(CachingAllocatorTest, RecordStreamDelaysReuseUntilTheOtherStreamCatchesUp) {
  CUDAStream s1 = getStreamFromPool(), s2 = getStreamFromPool();
  CUDAStreamGuard g(s1);
  void* p = allocate(1 * MiB);
  void* filler = allocate(1 * MiB);  // the rest of p's 2 MiB segment
  alloc_.record_stream(p, s2);
  alloc_.record_stream(p, s1);  // its own stream: nothing to wait for
  {
    HoldStream hold(s2);  // s2 cannot progress: the event recorded at free stays pending
    free(p);
    EXPECT_EQ(stats().pending_free_blocks, 1);
    void* q = allocate(1 * MiB);
    EXPECT_NE(q, p);  // p is not reused while s2 may still read it: a new segment
    EXPECT_EQ(stats().num_device_alloc, 2);
    EXPECT_EQ(stats().pending_free_blocks, 1);
    free(q);  // its segment is whole again: one free 2 MiB block
  }
  s2.synchronize();
  // The next allocation polls the event: p is free again, and best fit prefers it (1 MiB)
  // to the other segment's whole 2 MiB block.
  void* r = allocate(1 * MiB);
  EXPECT_EQ(r, p);
  EXPECT_EQ(stats().pending_free_blocks, 0);
  EXPECT_EQ(stats().num_device_alloc, 2);
  free(r), free(filler);
  // A pointer inside a block is not a block: record_stream wants the storage's data pointer.
  void* t = allocate(4 * KiB);
  EXPECT_THROW(alloc_.record_stream(at(t) + 512, s2), Error);
  free(t);
}

// A free runs from a tensor's destructor and must not throw. After a kernel error the
// device's queue is dead (the error is sticky), so recording the other stream's event
// fails: the block is simply free, since no queued work will ever touch it again.
TEST_F(CachingAllocatorTest, AFreeAfterAStickyKernelErrorNeitherThrowsNorLeaks) {
  CUDAGuard device(1);
  CUDAStream s1 = getStreamFromPool(false, 1), s2 = getStreamFromPool(false, 1);
  CUDAStreamGuard g(s1);
  void* p = alloc_.allocate(4 * KiB);
  alloc_.record_stream(p, s2);
  sim::KernelLaunch failing;
  failing.name = "failing";
  failing.grid = failing.block = Dim3(1);
  failing.run_block = [](Dim3) { throw Error("this kernel fails"); };
  sim::enqueue_kernel(s1, std::move(failing));
  EXPECT_THROW(s1.synchronize(), Error);  // the error is now sticky on cuda:1
  EXPECT_NO_THROW(alloc_.deallocate(p, 0));
  EXPECT_EQ(alloc_.stats(1).pending_free_blocks, 0);
  EXPECT_EQ(alloc_.stats(1).active_blocks, 0);
  sim::simulator().reset_sticky_error(1);
}

TEST_F(CachingAllocatorTest, EmptyCacheWaitsForPendingFrees) {
  CUDAStream s1 = getStreamFromPool(), s2 = getStreamFromPool();
  CUDAStreamGuard g(s1);
  void* p = allocate(4 * KiB);
  alloc_.record_stream(p, s2);
  free(p);
  EXPECT_EQ(stats().pending_free_blocks, 1);
  alloc_.empty_cache();  // synchronizes the event, merges the block, frees the segment
  MemoryStats s = stats();
  EXPECT_EQ(s.pending_free_blocks, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.num_device_free, 1);
}

TEST_F(CachingAllocatorTest, FragmentationForcesANewSegment) {
  void* a = allocate(512 * KiB);
  void* b = allocate(512 * KiB);
  void* c = allocate(512 * KiB);
  void* d = allocate(512 * KiB);
  free(a), free(c);
  MemoryStats s = stats();
  EXPECT_EQ(s.inactive_split_blocks, 2);  // 1 MiB free in all, but no 768 KiB run
  EXPECT_EQ(s.inactive_split_bytes, 1 * MiB);
  void* e = allocate(768 * KiB);
  s = stats();
  EXPECT_EQ(s.num_device_alloc, 2);
  EXPECT_EQ(s.reserved_bytes, 4 * MiB);
  EXPECT_TRUE(at(e) < at(a) || at(e) >= at(a) + 2 * MiB);
  free(b), free(d), free(e);
}

TEST_F(CachingAllocatorTest, OutOfMemoryEmptiesTheCacheRetriesOnceThenThrows) {
  const int64_t capacity = runtime().properties(0).total_memory;
  const int64_t big = capacity * 6 / 10 / (2 * MiB) * (2 * MiB);
  void* p = allocate(big);
  free(p);  // cached: reserved, but no tensor uses it
  EXPECT_EQ(stats().reserved_bytes, big);
  // big + 2 MiB does not fit next to the cached segment: free the cache, retry, succeed.
  void* q = allocate(big + 2 * MiB);
  MemoryStats s = stats();
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.num_device_free, 1);
  EXPECT_EQ(s.reserved_bytes, big + 2 * MiB);

  // Now nothing is cached and big does not fit: a real out of memory.
  try {
    allocate(big);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    std::string want = "CUDA out of memory. Tried to allocate " + format_bytes(big) +
                       " (device 0; capacity " + format_bytes(capacity) + "; " +
                       format_bytes(big + 2 * MiB) + " allocated by tensors; " +
                       format_bytes(big + 2 * MiB) + " reserved by the allocator).";
    EXPECT_EQ(std::string(e.what()).substr(0, want.size()), want);
    EXPECT_NE(std::string(e.what()).find("GLASS_SIM_MEMORY_MB"), std::string::npos);
  }
  s = stats();
  EXPECT_EQ(s.num_alloc_retries, 2);
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.allocated_bytes, big + 2 * MiB);  // the failed call changed nothing else
  EXPECT_EQ(s.active_blocks, 1);
  free(q);
}

TEST_F(CachingAllocatorTest, OutOfMemoryNamesTheSegmentASmallRequestNeeded) {
  const int64_t capacity = runtime().properties(0).total_memory;
  void* all = allocate(capacity);
  try {
    allocate(1);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    std::string want = "CUDA out of memory. Tried to allocate 512 bytes (device 0; capacity " +
                       format_bytes(capacity) + "; " + format_bytes(capacity) +
                       " allocated by tensors; " + format_bytes(capacity) +
                       " reserved by the allocator) (the allocator asked the device for a 2.00 "
                       "MiB segment to hold it).";
    EXPECT_EQ(std::string(e.what()).substr(0, want.size()), want);
  }
  free(all);
}

TEST_F(CachingAllocatorTest, StatisticsAndResetPeak) {
  void* p = allocate(3 * MiB);  // a 20 MiB segment
  void* q = allocate(5 * MiB);  // from its remainder
  MemoryStats s = stats();
  EXPECT_EQ(s.allocated_bytes, 8 * MiB);
  EXPECT_EQ(s.max_allocated_bytes, 8 * MiB);
  EXPECT_EQ(s.reserved_bytes, 20 * MiB);
  EXPECT_EQ(s.max_reserved_bytes, 20 * MiB);
  EXPECT_EQ(s.active_blocks, 2);
  free(p);
  s = stats();
  EXPECT_EQ(s.allocated_bytes, 5 * MiB);
  EXPECT_EQ(s.max_allocated_bytes, 8 * MiB);
  alloc_.reset_peak_stats(0);
  EXPECT_EQ(stats().max_allocated_bytes, 5 * MiB);
  free(q);
  alloc_.empty_cache();
  s = stats();
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.max_reserved_bytes, 20 * MiB);
  EXPECT_EQ(s.max_allocated_bytes, 5 * MiB);
  alloc_.reset_peak_stats(0);
  EXPECT_EQ(stats().max_reserved_bytes, 0);
  EXPECT_EQ(stats().max_allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, EachDeviceHasItsOwnPoolsAndTheCurrentOneServes) {
  ASSERT_GE(runtime().device_count(), 2);
  void* p;
  {
    CUDAGuard g(1);
    p = allocate(4 * KiB);
    EXPECT_EQ(alloc_.device(), Device(kCUDA, 1));
    EXPECT_EQ(runtime().device_of(p), 1);
  }
  EXPECT_EQ(alloc_.stats(1).allocated_bytes, 4 * KiB);
  EXPECT_EQ(alloc_.stats(0).allocated_bytes, 0);
  free(p);  // found on device 1 while device 0 is current
  EXPECT_EQ(alloc_.stats(1).allocated_bytes, 0);
  EXPECT_THROW(alloc_.stats(7), Error);
}

TEST_F(CachingAllocatorTest, TheRaceCheckerSeesEachBlockAsOneTensor) {
  sim::SimRuntime& sim = sim::simulator();
  const bool was_on = sim.race_check();
  sim.set_race_check(true);
  CUDAStream s1 = getStreamFromPool(), s2 = getStreamFromPool();
  void* a = allocate(64 * KiB);
  void* b = allocate(64 * KiB);
  ASSERT_EQ(at(b), at(a) + 64 * KiB);  // one 2 MiB device allocation holds both
  std::vector<char> host(64 * KiB, 1);
  auto write = [&](void* dst, const CUDAStream& s) {
    runtime().memcpy_async(dst, host.data(), host.size(), CopyKind::HostToDevice, s);
  };
  write(a, s1);
  // Two tensors, two streams: not a race, because each block was registered; without that
  // both would resolve to the one 2 MiB segment.
  EXPECT_NO_THROW(write(b, s2));
  try {
    write(a, s2);  // unordered with s1's write of the same tensor: a race
    FAIL() << "expected a stream race";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("tensor memory"), std::string::npos) << what;
    EXPECT_NE(what.find("(65536 bytes)"), std::string::npos) << what;
  }
  s1.synchronize();
  s2.synchronize();
  free(a), free(b);
  sim.set_race_check(was_on);
}

TEST(CachingAllocatorOff, EveryFreeGoesStraightToTheDevice) {
  use_simulator();
  CUDACachingAllocator alloc(runtime(), /*caching=*/false);
  void* p = alloc.allocate(1000);
  void* q = alloc.allocate(1000);
  MemoryStats s = alloc.stats(0);
  EXPECT_EQ(s.reserved_bytes, 2 * 1024);  // each block its own allocation of the rounded size
  EXPECT_EQ(s.segments, 2);
  alloc.deallocate(p, 1000);
  s = alloc.stats(0);
  EXPECT_EQ(s.reserved_bytes, 1024);
  EXPECT_EQ(s.num_device_free, 1);
  void* r = alloc.allocate(1000);
  EXPECT_EQ(alloc.stats(0).num_cache_hits, 0);
  EXPECT_EQ(alloc.stats(0).num_device_alloc, 3);
  alloc.deallocate(q, 1000);
  alloc.deallocate(r, 1000);
  EXPECT_EQ(alloc.stats(0).reserved_bytes, 0);

  setenv("GLASS_CUDA_CACHING", "0", 1);
  EXPECT_FALSE(CUDACachingAllocator::caching_enabled_by_env());
  unsetenv("GLASS_CUDA_CACHING");
  EXPECT_TRUE(CUDACachingAllocator::caching_enabled_by_env());
}

TEST(CachingAllocatorGlobal, TorchCudaFunctionsReadTheProcessAllocator) {
  use_simulator();
  const int64_t before = memory_allocated(0);
  void* p = caching_allocator().allocate(3000);
  EXPECT_EQ(memory_allocated(), before + 3072);  // the current device, 0
  EXPECT_GE(max_memory_allocated(), before + 3072);
  EXPECT_GE(memory_reserved(), 2 * MiB);
  EXPECT_EQ(memory_stats(0).allocated_bytes, before + 3072);
  record_stream(p, getStreamFromPool());
  caching_allocator().deallocate(p, 3000);
  EXPECT_EQ(memory_allocated(), before);
  reset_peak_memory_stats();
  EXPECT_EQ(max_memory_allocated(), before);
  empty_cache();
  EXPECT_THROW(record_stream(p, getDefaultCUDAStream()), Error);  // freed: no longer a block
}

TEST_F(CachingAllocatorTest, ConcurrentThreadsKeepTheBooksExact) {
  auto worker = [this](CUDAStream s) {
    CUDAStreamGuard g(s);
    std::vector<void*> held;
    for (int i = 0; i < 2000; ++i) {
      held.push_back(allocate((i % 7 + 1) * 3000));
      if (held.size() > 5) {
        free(held.front());
        held.erase(held.begin());
      }
    }
    for (void* p : held) free(p);
  };
  std::thread t1(worker, getStreamFromPool()), t2(worker, getStreamFromPool());
  t1.join(), t2.join();
  MemoryStats s = stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.active_blocks, 0);
  EXPECT_EQ(s.num_allocs, 4000);
  EXPECT_EQ(s.inactive_split_blocks, 0);  // every segment merged back whole
  alloc_.empty_cache();
  EXPECT_EQ(stats().reserved_bytes, 0);
}

}  // namespace
}  // namespace glass::cuda
