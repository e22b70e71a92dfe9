// tests/cuda/sim/pinned_test.cpp — page-locked host memory (cuda/sim/pinned.h).
//
// host_alloc really locks pages (mlock), is_pinned answers for every byte of a live block,
// and when the kernel refuses to lock (RLIMIT_MEMLOCK) the answer is null, not a throw.
// The refusal is tested in a child process with a lowered limit; since root ignores
// RLIMIT_MEMLOCK (CAP_IPC_LOCK), a child running as root also drops to user "nobody"
// first — so the refusal path is exercised under CI's root as well.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "cuda/sim/pinned.h"
#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::error_of;
using testing::sim;

// AddressSanitizer and ThreadSanitizer replace mlock with a no-op that always succeeds
// (locking would pin their shadow memory too), so locking cannot be observed under them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMlockIsReal = false;
#else
constexpr bool kMlockIsReal = true;
#endif

TEST(SimPinned, HostAllocIsPinnedEverywhereInsideUntilFreed) {
  const size_t n = 10000;
  char* p = static_cast<char*>(sim().host_alloc(n));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), 0u);
  std::memset(p, 7, n);  // writable host memory
  EXPECT_TRUE(sim().is_pinned(p));
  EXPECT_TRUE(sim().is_pinned(p + n - 1));
  EXPECT_EQ(sim().device_of(p), -1);
  int on_stack = 0;
  EXPECT_FALSE(sim().is_pinned(&on_stack));
  std::string msg = error_of([&] { sim().host_free(p + 8); });
  EXPECT_NE(msg.find("middle of a pinned block"), std::string::npos) << msg;
  sim().host_free(p);
  EXPECT_FALSE(sim().is_pinned(p));
  msg = error_of([&] { sim().host_free(p); });
  EXPECT_NE(msg.find("not returned by host_alloc"), std::string::npos) << msg;
  sim().host_free(nullptr);
}

TEST(SimPinned, PagesAreLocked) {
  if (!kMlockIsReal) GTEST_SKIP() << "the sanitizer intercepts mlock";
  PinnedHostMemory pinned;
  void* p = pinned.allocate(1 << 16);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pinned.bytes_pinned(), size_t{1} << 16);
  // VmLck in /proc/self/status counts this process's locked memory.
  std::FILE* f = std::fopen("/proc/self/status", "r");
  ASSERT_NE(f, nullptr);
  char line[256];
  long locked_kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmLck: %ld kB", &locked_kb) == 1) break;
  }
  std::fclose(f);
  EXPECT_GE(locked_kb, 64);
  pinned.free(p);
  EXPECT_EQ(pinned.bytes_pinned(), 0u);
}

// The child's side: exits 0 only if every expectation held (gtest's EXPECTs do not reach
// the parent from a death-test child, so it reports through its exit code).
[[noreturn]] void lock_under_a_low_limit() {
  const rlimit limit{64 * 1024, 64 * 1024};  // as `prlimit --memlock=65536`
  int code = setrlimit(RLIMIT_MEMLOCK, &limit) == 0 ? 0 : 10;
  if (geteuid() == 0 && setuid(65534) != 0) code = 11;  // root ignores the limit
  PinnedHostMemory pinned;
  void* big = pinned.allocate(1 << 20);  // 1 MiB > 64 KiB: refused
  if (big != nullptr) code = 12;
  void* small = pinned.allocate(16 * 1024);  // under the limit: granted
  if (small == nullptr || !pinned.contains(small)) code = 13;
  if (pinned.bytes_pinned() != 16 * 1024) code = 14;
  _exit(code);
}

TEST(SimPinnedDeathTest, RefusedPageLockingIsNullUnderALowMemlockLimit) {
  if (!kMlockIsReal) GTEST_SKIP() << "the sanitizer intercepts mlock";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(lock_under_a_low_limit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace glass::cuda::sim
