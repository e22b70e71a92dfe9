// tests/cuda/sim/copy_test.cpp — memcpy_async and memset_async on the simulated GPU.
//
// The host-side rules of runtime.h, each shown with a held stream: a pageable source is
// staged before the call returns (changing it afterwards changes nothing); a pinned
// source is read later, by the copy engine; a pinned destination is filled later; a
// pageable destination makes the call wait (for a release from another thread). And the
// copy engines are separate from the SMs: a copy completes while a kernel holds them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::DeviceBuffer;
using testing::error_of;
using testing::sim;
using testing::single_kernel;
using testing::TestStream;

// Pinned host memory for one test.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t nbytes) : ptr_(sim().host_alloc(nbytes)) {
    EXPECT_NE(ptr_, nullptr) << "page-locking refused (RLIMIT_MEMLOCK)";
  }
  ~PinnedBuffer() { sim().host_free(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T = int>
  T* get() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_;
};

std::vector<int> iota(size_t n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(SimCopy, RoundTripThroughTwoDevices) {
  constexpr size_t kN = 3 * 1024 * 1024 / sizeof(int) + 123;  // over three DtoD chunks
  const std::vector<int> src = iota(kN, 7);
  DeviceBuffer a(kN * sizeof(int), 0), b(kN * sizeof(int), 1);
  TestStream s;
  std::vector<int> back(kN, -1);
  sim().memcpy_async(a.get(), src.data(), kN * sizeof(int), CopyKind::HostToDevice, s);
  sim().memcpy_async(b.get(), a.get(), kN * sizeof(int), CopyKind::DeviceToDevice, s);
  sim().memcpy_async(back.data(), b.get(), kN * sizeof(int), CopyKind::DeviceToHost, s);
  EXPECT_EQ(back, src);  // the pageable DtoH returned with the data
}

TEST(SimCopy, PageableSourceIsStagedBeforeTheCallReturns) {
  DeviceBuffer dev(64 * sizeof(int));
  std::vector<int> src = iota(64);
  TestStream s;
  sim().hold(s);
  sim().memcpy_async(dev.get(), src.data(), 64 * sizeof(int), CopyKind::HostToDevice, s);
  EXPECT_FALSE(sim().stream_query(s));
  std::fill(src.begin(), src.end(), -1);  // the caller may reuse its buffer at once
  sim().release(s);
  sim().stream_synchronize(s);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(dev.view<int>()[i], i);
}

TEST(SimCopy, PinnedSourceIsReadWhenTheCopyRuns) {
  DeviceBuffer dev(64 * sizeof(int));
  PinnedBuffer src(64 * sizeof(int));
  std::iota(src.get(), src.get() + 64, 0);
  TestStream s;
  sim().hold(s);
  sim().memcpy_async(dev.get(), src.get(), 64 * sizeof(int), CopyKind::HostToDevice, s);
  // Only queued: writing the pinned buffer now changes what arrives (which is why
  // PyTorch's host allocator keeps such a block until the copy's event completes).
  for (int i = 0; i < 64; ++i) src.get()[i] = 100 + i;
  sim().release(s);
  sim().stream_synchronize(s);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(dev.view<int>()[i], 100 + i);
}

TEST(SimCopy, PinnedDestinationReturnsAtOnceAndIsFilledLater) {
  DeviceBuffer dev(64 * sizeof(int));
  std::iota(dev.view<int>(), dev.view<int>() + 64, 1);
  PinnedBuffer dst(64 * sizeof(int));
  std::memset(dst.get(), 0, 64 * sizeof(int));
  TestStream s;
  sim().hold(s);
  sim().memcpy_async(dst.get(), dev.get(), 64 * sizeof(int), CopyKind::DeviceToHost, s);
  EXPECT_EQ(dst.get()[63], 0);  // returned with the stream held: not copied yet
  sim().release(s);
  sim().stream_synchronize(s);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(dst.get()[i], i + 1);
}

TEST(SimCopy, PageableDestinationBlocksUntilTheCopyHasRun) {
  DeviceBuffer dev(64 * sizeof(int));
  std::iota(dev.view<int>(), dev.view<int>() + 64, 1);
  TestStream s;
  sim().hold(s);
  std::vector<int> dst(64, 0);
  std::atomic<bool> returned{false};
  std::vector<int> seen_on_return;
  std::thread copier([&] {
    sim().memcpy_async(dst.data(), dev.get(), 64 * sizeof(int), CopyKind::DeviceToHost, s);
    seen_on_return = dst;
    returned = true;
  });
  // Once the copy is queued it cannot complete while the stream is held, so the call
  // cannot have returned: deterministic, whatever the thread's timing.
  while (sim().pending_ops(s) == 0) std::this_thread::yield();
  EXPECT_FALSE(returned);
  sim().release(s);
  copier.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(seen_on_return, iota(64, 1));  // the data was there when it returned
}

TEST(SimCopy, CopyEnginesRunWhileAKernelOccupiesTheSms) {
  // The kernel on stream a spins until the host has seen b's copy complete; it finishes
  // only if the copy ran on an engine of its own while the kernel held the SMs.
  DeviceBuffer dev(1024);
  PinnedBuffer src(1024);
  std::memset(src.get(), 1, 1024);
  TestStream a, b;
  std::atomic<bool> copy_done{false}, kernel_saw_it{false};
  enqueue_kernel(
      a, single_kernel("wait_for_copy", [&] { kernel_saw_it = testing::wait_for(copy_done); }));
  sim().memcpy_async(dev.get(), src.get(), 1024, CopyKind::HostToDevice, b);
  sim().stream_synchronize(b);
  copy_done = true;
  sim().stream_synchronize(a);
  EXPECT_TRUE(kernel_saw_it);
  EXPECT_EQ(dev.view<char>()[1023], 1);
}

TEST(SimCopy, MemsetFillsExactlyTheRange) {
  constexpr size_t kBytes = 3 * 1024 * 1024 + 77;  // several SM chunks and a tail
  DeviceBuffer dev(kBytes + 64);
  TestStream s;
  sim().memset_async(dev.get(), 0x11, kBytes + 64, s);
  sim().memset_async(dev.get<char>() + 32, 0xab, kBytes, s);
  std::vector<unsigned char> back(kBytes + 64);
  sim().memcpy_async(back.data(), dev.get(), back.size(), CopyKind::DeviceToHost, s);
  for (size_t i = 0; i < back.size(); ++i) {
    ASSERT_EQ(back[i], (i >= 32 && i < 32 + kBytes) ? 0xab : 0x11) << i;
  }
}

TEST(SimCopy, OverlappingDeviceToDeviceMovesLikeMemmove) {
  DeviceBuffer dev(256 * sizeof(int));
  std::iota(dev.view<int>(), dev.view<int>() + 256, 0);
  TestStream s;
  sim().memcpy_async(dev.get<int>() + 1, dev.get<int>(), 200 * sizeof(int),
                     CopyKind::DeviceToDevice, s);
  sim().stream_synchronize(s);
  EXPECT_EQ(dev.view<int>()[0], 0);
  for (int i = 1; i <= 200; ++i) ASSERT_EQ(dev.view<int>()[i], i - 1);
  EXPECT_EQ(dev.view<int>()[201], 201);
}

TEST(SimCopy, BadCopiesNameTheProblem) {
  DeviceBuffer dev(4096);
  std::vector<char> host(8192);
  TestStream s;
  std::string msg =
      error_of([&] { sim().memcpy_async(dev.get(), dev.get(), 16, CopyKind::HostToDevice, s); });
  EXPECT_NE(msg.find("memcpy_async(HtoD): the source"), std::string::npos) << msg;
  EXPECT_NE(msg.find("DeviceToDevice"), std::string::npos) << msg;
  msg = error_of(
      [&] { sim().memcpy_async(host.data(), host.data(), 16, CopyKind::DeviceToHost, s); });
  EXPECT_NE(msg.find("not device memory"), std::string::npos) << msg;
  // 2 MiB + 1 bytes from the start of a 4096-byte malloc (a 2 MiB range).
  msg = error_of([&] {
    std::vector<char> big((2 << 20) + 1);
    sim().memcpy_async(dev.get(), big.data(), big.size(), CopyKind::HostToDevice, s);
  });
  EXPECT_NE(msg.find("run past the end of its allocation"), std::string::npos) << msg;
  void* freed = sim().malloc(0, 16);
  sim().free(0, freed);
  msg = error_of([&] { sim().memset_async(freed, 0, 16, s); });
  EXPECT_NE(msg.find("not inside a live allocation"), std::string::npos) << msg;
  EXPECT_EQ(sim().pending_ops(s), 0u);
  sim().memcpy_async(dev.get(), host.data(), 0, CopyKind::HostToDevice, s);  // nothing to do
  EXPECT_EQ(sim().pending_ops(s), 0u);
}

TEST(SimCopy, TimelineTellsPinnedFromPageable) {
  DeviceBuffer dev(4096);
  PinnedBuffer pinned(4096);
  std::vector<char> pageable(4096);
  TestStream s;
  sim().clear_timeline();
  sim().memcpy_async(dev.get(), pageable.data(), 4096, CopyKind::HostToDevice, s);
  sim().memcpy_async(dev.get(), pinned.get(), 4096, CopyKind::HostToDevice, s);
  sim().memcpy_async(pinned.get(), dev.get(), 4096, CopyKind::DeviceToHost, s);
  sim().memcpy_async(pageable.data(), dev.get(), 2048, CopyKind::DeviceToHost, s);
  const std::vector<TimelineRecord> t = sim().timeline();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "HtoD 4.0 KiB");
  EXPECT_EQ(t[0].engine, Engine::CopyHtoD);
  EXPECT_FALSE(t[0].pinned);
  EXPECT_TRUE(t[1].pinned);
  EXPECT_EQ(t[2].engine, Engine::CopyDtoH);
  EXPECT_TRUE(t[2].pinned);
  EXPECT_FALSE(t[2].host_waited);
  EXPECT_EQ(t[3].name, "DtoH 2.0 KiB");
  EXPECT_EQ(t[3].bytes, 2048u);
  EXPECT_FALSE(t[3].pinned);
  EXPECT_TRUE(t[3].host_waited);
  EXPECT_EQ(t[3].returned_ns, t[3].end_ns);
  for (const TimelineRecord& r : t) {
    EXPECT_EQ(r.kind, OpKind::Copy);
    EXPECT_EQ(r.stream, sim().stream_id(s));
  }
}

}  // namespace
}  // namespace glass::cuda::sim
