// tests/cuda/alloc/host_allocator_test.cpp — the caching pinned-host allocator on the
// simulated GPU: power-of-two blocks, reuse, event-gated reuse after queued copies, and the
// pageable fallback when page-locking is refused.
//
// The fallback is exercised two ways: through a Runtime that refuses every host_alloc (the
// allocator takes its Runtime as a constructor argument, so no test-only switch is needed),
// and for real, in a child process that lowers RLIMIT_MEMLOCK and drops CAP_IPC_LOCK (root
// ignores the limit otherwise), so the simulator's mlock is refused.
#include "cuda/host_allocator.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"
#include "sim_test_hooks.h"

namespace glass::cuda {
namespace {

constexpr size_t KiB = 1024, MiB = 1024 * KiB;

char* at(void* p) { return static_cast<char*>(p); }

class HostAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override { use_simulator(); }
};

TEST_F(HostAllocatorTest, RoundsToPowersOfTwoAndReusesFreedBlocks) {
  CachingHostAllocator h(runtime());
  EXPECT_EQ(h.allocate(0), nullptr);
  void* p = h.allocate(3000);  // a 4 KiB block
  EXPECT_TRUE(runtime().is_pinned(p));
  EXPECT_EQ(h.device(), Device(kCPU));
  std::memset(p, 7, 3000);  // host memory: the host may touch it
  HostMemoryStats s = h.stats();
  EXPECT_EQ(s.allocated_bytes, 4096);
  EXPECT_EQ(s.reserved_bytes, 4096);
  EXPECT_EQ(s.num_host_alloc, 1);
  h.deallocate(p, 3000);
  s = h.stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.cached_bytes, 4096);
  void* q = h.allocate(4000);  // also 4 KiB: the cached block
  EXPECT_EQ(q, p);
  void* r = h.allocate(5000);  // 8 KiB: a new block
  EXPECT_NE(r, p);
  s = h.stats();
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.num_cache_hits, 1);
  EXPECT_EQ(s.num_host_alloc, 2);
  EXPECT_EQ(s.allocated_bytes, 4096 + 8192);
  EXPECT_EQ(s.max_allocated_bytes, 4096 + 8192);
  EXPECT_EQ(s.reserved_bytes, 4096 + 8192);
  h.deallocate(q, 4000);
  h.deallocate(r, 5000);
  h.reset_peak_stats();
  EXPECT_EQ(h.stats().max_allocated_bytes, 0);
  h.empty_cache();
  s = h.stats();
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.cached_bytes, 0);
  EXPECT_EQ(s.num_host_free, 2);
  EXPECT_FALSE(runtime().is_pinned(p));
}

TEST_F(HostAllocatorTest, ABlockIsNotReusedWhileAQueuedCopyReadsIt) {
  CachingHostAllocator h(runtime());
  CUDAStream s = getStreamFromPool();
  void* dev = runtime().malloc(0, MiB);
  void* p = h.allocate(MiB);
  std::memset(p, 1, MiB);
  void* q;
  {
    HoldStream hold(s);  // the copy below is queued and cannot run yet
    runtime().memcpy_async(dev, p, MiB, CopyKind::HostToDevice, s);
    EXPECT_TRUE(h.record_event(at(p) + 100, s));  // any address inside the block
    h.deallocate(p, MiB);
    EXPECT_EQ(h.stats().pending_bytes, static_cast<int64_t>(MiB));
    q = h.allocate(MiB);
    EXPECT_NE(q, p);  // p still feeds the copy engine
    EXPECT_EQ(h.stats().num_host_alloc, 2);
  }
  s.synchronize();
  void* r = h.allocate(MiB);  // polls the copy's event: p is free again
  EXPECT_EQ(r, p);
  HostMemoryStats st = h.stats();
  EXPECT_EQ(st.pending_bytes, 0);
  EXPECT_EQ(st.num_cache_hits, 1);
  EXPECT_EQ(st.num_host_alloc, 2);
  // The copy read what was there when it was queued.
  std::vector<unsigned char> back(MiB);
  runtime().memcpy_async(back.data(), dev, MiB, CopyKind::DeviceToHost, s);
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[MiB - 1], 1);
  // A freed block cannot be recorded on; foreign memory is not ours to track.
  h.deallocate(q, MiB);
  EXPECT_THROW(h.record_event(q, s), Error);
  int on_stack = 0;
  EXPECT_FALSE(h.record_event(&on_stack, s));
  h.deallocate(r, MiB);
  runtime().free(0, dev);
}

// Forwards everything to the simulator, except that page-locking is always refused.
class RefusesPinning final : public Runtime {
 public:
  explicit RefusesPinning(Runtime& rt) : rt_(rt) {}
  int host_alloc_calls = 0;

  bool is_simulated() const override { return rt_.is_simulated(); }
  int device_count() override { return rt_.device_count(); }
  const DeviceProperties& properties(int d) override { return rt_.properties(d); }
  void device_synchronize(int d) override { rt_.device_synchronize(d); }
  void* malloc(int d, size_t n) override { return rt_.malloc(d, n); }
  void free(int d, void* p) override { rt_.free(d, p); }
  void* host_alloc(size_t) override {
    host_alloc_calls++;
    return nullptr;
  }
  void host_free(void* p) override { rt_.host_free(p); }
  bool is_pinned(const void* p) override { return rt_.is_pinned(p); }
  int device_of(const void* p) override { return rt_.device_of(p); }
  StreamHandle default_stream(int d) override { return rt_.default_stream(d); }
  StreamHandle create_stream(int d) override { return rt_.create_stream(d); }
  void destroy_stream(StreamHandle s) override { rt_.destroy_stream(s); }
  int stream_device(StreamHandle s) override { return rt_.stream_device(s); }
  void stream_synchronize(StreamHandle s) override { rt_.stream_synchronize(s); }
  bool stream_query(StreamHandle s) override { return rt_.stream_query(s); }
  EventHandle event_create(int d, bool t) override { return rt_.event_create(d, t); }
  void event_destroy(EventHandle e) override { rt_.event_destroy(e); }
  void event_record(EventHandle e, StreamHandle s) override { rt_.event_record(e, s); }
  void stream_wait_event(StreamHandle s, EventHandle e) override { rt_.stream_wait_event(s, e); }
  bool event_query(EventHandle e) override { return rt_.event_query(e); }
  void event_synchronize(EventHandle e) override { rt_.event_synchronize(e); }
  float event_elapsed_ms(EventHandle a, EventHandle b) override {
    return rt_.event_elapsed_ms(a, b);
  }
  void memcpy_async(void* d, const void* s, size_t n, CopyKind k, StreamHandle st) override {
    rt_.memcpy_async(d, s, n, k, st);
  }
  void memset_async(void* d, int v, size_t n, StreamHandle s) override {
    rt_.memset_async(d, v, n, s);
  }

 private:
  Runtime& rt_;
};

// What the fallback message says the limit is, worked out here from getrlimit.
std::string memlock_limit_text() {
  rlimit rl{};
  EXPECT_EQ(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
  if (rl.rlim_cur == RLIM_INFINITY) return "unlimited";
  return format_bytes(static_cast<int64_t>(rl.rlim_cur));
}

TEST_F(HostAllocatorTest, RefusedPageLockingFallsBackToPageableMemoryOnce) {
  RefusesPinning refusing(runtime());
  CachingHostAllocator h(refusing);
  testing::internal::CaptureStderr();
  void* p = h.allocate(16 * MiB);
  void* q = h.allocate(100);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "pin_memory(): page-locking 16.00 MiB was refused (RLIMIT_MEMLOCK is " +
                     memlock_limit_text() +
                     "; see `ulimit -l`); using pageable memory, so copies from it are not "
                     "asynchronous\n");  // once, not once per allocation
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  std::memset(p, 3, 16 * MiB);
  EXPECT_FALSE(runtime().is_pinned(p));
  EXPECT_EQ(refusing.host_alloc_calls, 4);  // each: try, empty the cache, try again
  HostMemoryStats s = h.stats();
  EXPECT_EQ(s.num_pageable_fallbacks, 2);
  EXPECT_EQ(s.pageable_bytes, static_cast<int64_t>(16 * MiB + 128));
  EXPECT_EQ(s.num_host_alloc, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_FALSE(h.record_event(p, getStreamFromPool()));  // pageable: copies were synchronous
  h.deallocate(p, 16 * MiB);
  h.deallocate(q, 100);
  EXPECT_EQ(h.stats().pageable_bytes, 0);
}

// Drops CAP_IPC_LOCK from this process, so that RLIMIT_MEMLOCK applies even to root.
bool drop_ipc_lock() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
  data[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

// In a fresh child process: a 64 KiB mlock limit, then a 1 MiB pinned allocation.
void pin_under_a_small_memlock_limit() {
  rlimit small{64 * KiB, 64 * KiB};
  if (setrlimit(RLIMIT_MEMLOCK, &small) != 0 || !drop_ipc_lock()) std::_Exit(3);
  use_simulator();
  CachingHostAllocator h(runtime());
  void* p = h.allocate(MiB);
  if (p == nullptr) std::_Exit(4);
  if (runtime().is_pinned(p)) std::_Exit(5);
  std::memset(p, 0, MiB);
  h.deallocate(p, MiB);
  std::_Exit(0);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST(HostAllocatorMemlock, TheSimulatorsRefusedMlockFallsBackWithTheMessage) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer makes mlock a no-op that never fails";
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs the binary from main
  EXPECT_EXIT(pin_under_a_small_memlock_limit(), testing::ExitedWithCode(0),
              "pin_memory\\(\\): page-locking 1.00 MiB was refused \\(RLIMIT_MEMLOCK is 64.00 "
              "KiB; see `ulimit -l`\\); using pageable memory");
}

TEST(HostAllocatorGlobal, ShorthandsReachTheProcessAllocator) {
  use_simulator();
  void* p = host_allocator().allocate(1000);
  EXPECT_GE(host_memory_stats().allocated_bytes, 1024);
  EXPECT_TRUE(host_allocator_record_event(p, getDefaultCUDAStream()));
  host_allocator().deallocate(p, 1000);
  getDefaultCUDAStream().synchronize();
  host_empty_cache();
  EXPECT_EQ(host_memory_stats().cached_bytes, 0);
}

}  // namespace
}  // namespace glass::cuda
