// tests/cuda/gpu/gpu_runtime_test.cpp — the real CUDA runtime (cuda/gpu/gpu_runtime.h) on a GPU.
//
// GPU-only: without a usable GPU (CI, the build machines, most laptops) main() prints why
// and exits 77, which CTest reports as skipped. scripts/gpu_check.sh runs it on a lent GPU.
//
// Expected values come from cudart itself (device properties, the current device) or from
// host data put through the device and read back. Asynchrony is asserted without clocks:
// a StreamGate holds a stream with a host function that waits for the test to release it,
// so "the call returned while the stream was held" is a fact, not a race.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "cuda/gpu/gpu_runtime.h"
#include "cuda/runtime.h"

namespace glass::cuda {
namespace {

// True when `text` contains `part`; failure messages print both.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

Runtime& gpu() { return *gpu::gpu_runtime(nullptr); }

// Holds a stream: a host function queued on it waits until release(), so everything
// queued behind it waits too, however fast the GPU is. If the test never releases it
// (a runtime that wrongly blocks on the held stream), a watchdog does after `patience`,
// and released_by_watchdog() says so: the test fails instead of hanging.
class StreamGate {
 public:
  StreamGate(StreamHandle stream, std::chrono::milliseconds patience) : stream_(stream) {
    EXPECT_EQ(cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), &StreamGate::hold, this),
              cudaSuccess);
    watchdog_ = std::thread([this, patience] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, patience, [this] { return open_.load(); })) {
        by_watchdog_ = true;
        open_ = true;
      }
    });
  }
  ~StreamGate() {
    release();
    watchdog_.join();
    gpu().stream_synchronize(stream_);  // the host function reads *this until it returns
  }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool released_by_watchdog() {
    std::lock_guard<std::mutex> lock(mu_);
    return by_watchdog_;
  }

 private:
  static void hold(void* self) {
    auto* gate = static_cast<StreamGate*>(self);
    while (!gate->open_.load()) std::this_thread::yield();
  }

  StreamHandle stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> open_{false};
  bool by_watchdog_ = false;
  std::thread watchdog_;
};

constexpr std::chrono::milliseconds kNeverInACorrectRun{30000};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

TEST(GpuRuntime, PropertiesAreCudartsOwn) {
  Runtime& rt = gpu();
  EXPECT_FALSE(rt.is_simulated());
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(rt.device_count(), count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    const DeviceProperties& p = rt.properties(d);
    EXPECT_EQ(p.name, std::string(prop.name));
    EXPECT_EQ(p.total_memory, static_cast<int64_t>(prop.totalGlobalMem));
    EXPECT_EQ(p.multi_processor_count, prop.multiProcessorCount);
    EXPECT_EQ(p.max_threads_per_block, prop.maxThreadsPerBlock);
    EXPECT_EQ(p.max_block_dim.x, static_cast<unsigned>(prop.maxThreadsDim[0]));
    EXPECT_EQ(p.max_grid_dim.x, static_cast<unsigned>(prop.maxGridSize[0]));
    EXPECT_EQ(p.shared_mem_per_block, prop.sharedMemPerBlock);
    EXPECT_EQ(p.warp_size, 32);
    EXPECT_EQ(p.major, prop.major);
    EXPECT_EQ(p.minor, prop.minor);
  }
  try {
    rt.properties(count);
    FAIL() << "properties() of a device that does not exist did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(
        Contains(e.what(), std::string("cuda:") + std::to_string(count) + " does not exist"));
  }
}

// GLASS_CUDA=gpu makes runtime.cpp choose this runtime (main() sets it).
TEST(GpuRuntime, IsTheRuntimeChosenForGlassCudaGpu) {
  EXPECT_EQ(&runtime(), &gpu());
  EXPECT_FALSE(is_simulated());
  EXPECT_TRUE(is_available());
  EXPECT_EQ(device_count(), gpu().device_count());
}

TEST(GpuRuntime, CopiesRoundTripThroughEveryDevice) {
  Runtime& rt = gpu();
  const size_t n = (1 << 20) + 13;  // not a multiple of anything the hardware likes
  const std::vector<uint8_t> src = pattern(n);
  for (int d = 0; d < rt.device_count(); ++d) {
    StreamHandle s = rt.create_stream(d);
    void* a = rt.malloc(d, n);
    void* b = rt.malloc(d, n);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(rt.device_of(a), d);
    EXPECT_EQ(rt.device_of(static_cast<char*>(a) + 100), d);
    EXPECT_FALSE(rt.is_pinned(a));
    rt.memcpy_async(a, src.data(), n, CopyKind::HostToDevice, s);
    rt.memcpy_async(b, a, n, CopyKind::DeviceToDevice, s);
    std::vector<uint8_t> back(n, 0);
    // Into pageable memory: complete when the call returns, with no synchronize.
    rt.memcpy_async(back.data(), b, n, CopyKind::DeviceToHost, s);
    EXPECT_EQ(back, src) << "on cuda:" << d;
    rt.free(d, a);
    rt.free(d, b);
    rt.destroy_stream(s);
  }
}

TEST(GpuRuntime, MemsetFillsBytes) {
  Runtime& rt = gpu();
  const size_t n = 4099;
  StreamHandle s = rt.default_stream(0);
  void* a = rt.malloc(0, n);
  ASSERT_NE(a, nullptr);
  rt.memset_async(a, 0xAB, n, s);
  std::vector<uint8_t> back(n, 0);
  rt.memcpy_async(back.data(), a, n, CopyKind::DeviceToHost, s);
  EXPECT_EQ(back, std::vector<uint8_t>(n, 0xAB));
  rt.free(0, a);
}

TEST(GpuRuntime, PinnedMemoryIsRecognisedAnywhereInside) {
  Runtime& rt = gpu();
  void* p = rt.host_alloc(1 << 16);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rt.is_pinned(p));
  EXPECT_TRUE(rt.is_pinned(static_cast<char*>(p) + 12345));
  EXPECT_EQ(rt.device_of(p), -1);
  std::vector<char> pageable(100);
  EXPECT_FALSE(rt.is_pinned(pageable.data()));
  EXPECT_EQ(rt.device_of(pageable.data()), -1);
  EXPECT_FALSE(rt.is_pinned(nullptr));
  rt.host_free(p);
}

TEST(GpuRuntime, PinnedCopiesAreQueuedAndReturnAtOnce) {
  Runtime& rt = gpu();
  const size_t n = 1 << 20;
  const std::vector<uint8_t> src = pattern(n);
  StreamHandle s = rt.create_stream(0);
  auto* up = static_cast<uint8_t*>(rt.host_alloc(n));
  auto* down = static_cast<uint8_t*>(rt.host_alloc(n));
  void* a = rt.malloc(0, n);
  ASSERT_TRUE(up && down && a);
  std::memcpy(up, src.data(), n);
  std::memset(down, 0, n);
  EventHandle done = rt.event_create(0, /*enable_timing=*/false);
  {
    StreamGate gate(s, kNeverInACorrectRun);
    rt.memcpy_async(a, up, n, CopyKind::HostToDevice, s);
    rt.memcpy_async(down, a, n, CopyKind::DeviceToHost, s);
    rt.event_record(done, s);
    // Both copies returned while the stream was held: they were only queued.
    EXPECT_FALSE(gate.released_by_watchdog());
    EXPECT_FALSE(rt.stream_query(s));
    EXPECT_FALSE(rt.event_query(done));
    EXPECT_EQ(down[0], 0) << "a copy ran while its stream was held";
  }
  rt.event_synchronize(done);
  EXPECT_TRUE(rt.event_query(done));
  EXPECT_TRUE(rt.stream_query(s));
  EXPECT_EQ(std::memcmp(down, src.data(), n), 0);
  rt.event_destroy(done);
  rt.free(0, a);
  rt.host_free(up);
  rt.host_free(down);
  rt.destroy_stream(s);
}

// runtime.h: a copy into pageable memory has finished when the call returns. The stream
// is held by a gate that only its watchdog opens, so a correct runtime cannot return
// before the watchdog fires, and one that returns early finds the old bytes.
TEST(GpuRuntime, PageableCopyToHostWaitsForTheStream) {
  Runtime& rt = gpu();
  const size_t n = 1 << 16;
  StreamHandle s = rt.create_stream(0);
  void* a = rt.malloc(0, n);
  ASSERT_NE(a, nullptr);
  std::vector<uint8_t> back(n, 0);
  {
    StreamGate gate(s, std::chrono::milliseconds(500));
    rt.memset_async(a, 0x5A, n, s);
    rt.memcpy_async(back.data(), a, n, CopyKind::DeviceToHost, s);
    EXPECT_TRUE(gate.released_by_watchdog())
        << "the pageable copy returned while its stream was held";
    EXPECT_EQ(back, std::vector<uint8_t>(n, 0x5A));
  }
  rt.free(0, a);
  rt.destroy_stream(s);
}

// Stream s2 waits for an event of s1, which is held: s2's work cannot start until s1 is
// released, and then it sees what s1 wrote.
TEST(GpuRuntime, EventsOrderStreams) {
  Runtime& rt = gpu();
  const size_t n = 1 << 20;
  StreamHandle s1 = rt.create_stream(0), s2 = rt.create_stream(0);
  void* a = rt.malloc(0, n);
  void* b = rt.malloc(0, n);
  auto* h = static_cast<uint8_t*>(rt.host_alloc(n));
  ASSERT_TRUE(a && b && h);
  rt.memset_async(a, 0, n, s1);
  rt.stream_synchronize(s1);
  EventHandle written = rt.event_create(0, false);
  {
    StreamGate gate(s1, kNeverInACorrectRun);
    rt.memset_async(a, 1, n, s1);
    rt.event_record(written, s1);
    rt.stream_wait_event(s2, written);
    rt.memcpy_async(b, a, n, CopyKind::DeviceToDevice, s2);
    rt.memcpy_async(h, b, n, CopyKind::DeviceToHost, s2);
    EXPECT_FALSE(rt.event_query(written));
    EXPECT_FALSE(rt.stream_query(s2)) << "s2 ran past an event of a held stream";
  }
  rt.stream_synchronize(s2);
  EXPECT_EQ(std::vector<uint8_t>(h, h + n), std::vector<uint8_t>(n, 1));
  rt.event_destroy(written);
  rt.free(0, a);
  rt.free(0, b);
  rt.host_free(h);
  rt.destroy_stream(s1);
  rt.destroy_stream(s2);
}

TEST(GpuRuntime, TimingEventsMeasureWorkBetweenThem) {
  Runtime& rt = gpu();
  const size_t n = size_t{64} << 20;
  StreamHandle s = rt.create_stream(0);
  void* a = rt.malloc(0, n);
  void* b = rt.malloc(0, n);
  ASSERT_TRUE(a && b);
  EventHandle start = rt.event_create(0, true), end = rt.event_create(0, true);
  rt.event_record(start, s);
  rt.memcpy_async(b, a, n, CopyKind::DeviceToDevice, s);
  rt.event_record(end, s);
  rt.event_synchronize(end);
  EXPECT_GT(rt.event_elapsed_ms(start, end), 0.0f);

  EventHandle untimed = rt.event_create(0, false);
  rt.event_record(untimed, s);
  rt.event_synchronize(untimed);
  try {
    rt.event_elapsed_ms(start, untimed);
    FAIL() << "elapsed time against an event without timing did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "cudaEventElapsedTime"));
    EXPECT_TRUE(Contains(e.what(), "kEventDefault"));
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failure was left in cudart's last error";
  for (EventHandle e : {start, end, untimed}) rt.event_destroy(e);
  rt.free(0, a);
  rt.free(0, b);
  rt.destroy_stream(s);
}

TEST(GpuRuntime, DefaultStreamIsOnePerDeviceAndPermanent) {
  Runtime& rt = gpu();
  for (int d = 0; d < rt.device_count(); ++d) {
    StreamHandle s = rt.default_stream(d);
    EXPECT_EQ(rt.default_stream(d), s);
    EXPECT_NE(s, nullptr) << "the legacy NULL stream synchronizes with other streams";
    EXPECT_EQ(rt.stream_device(s), d);
    unsigned flags = 0;
    ASSERT_EQ(cudaStreamGetFlags(static_cast<cudaStream_t>(s), &flags), cudaSuccess);
    EXPECT_EQ(flags, unsigned{cudaStreamNonBlocking});
    EXPECT_THROW(rt.destroy_stream(s), Error);
  }
}

TEST(GpuRuntime, OutOfMemoryIsNullAndLeavesNoError) {
  Runtime& rt = gpu();
  const size_t too_much = static_cast<size_t>(rt.properties(0).total_memory) * 4;
  EXPECT_EQ(rt.malloc(0, too_much), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  void* ok = rt.malloc(0, 1024);
  EXPECT_NE(ok, nullptr);
  rt.free(0, ok);
}

TEST(GpuRuntime, FailedCallsNameTheCallAndTheDevice) {
  Runtime& rt = gpu();
  std::vector<char> not_device_memory(64);
  try {
    rt.free(0, not_device_memory.data());
    FAIL() << "cudaFree of host memory did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "cudaFree("));
    EXPECT_TRUE(Contains(e.what(), "on cuda:0 failed"));
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_THROW(rt.malloc(rt.device_count(), 16), Error);
  void* ok = rt.malloc(0, 16);  // the runtime still works
  EXPECT_NE(ok, nullptr);
  rt.free(0, ok);
}

TEST(GpuRuntime, CallsLeaveTheThreadsCurrentDeviceAlone) {
  Runtime& rt = gpu();
  const int last = rt.device_count() - 1;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* p = rt.malloc(last, 256);
  StreamHandle s = rt.create_stream(last);
  EventHandle e = rt.event_create(last, false);
  rt.memset_async(p, 0, 256, s);
  rt.event_record(e, s);
  rt.stream_synchronize(s);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
  EXPECT_EQ(rt.device_of(p), last);
  EXPECT_EQ(rt.stream_device(s), last);
  rt.event_destroy(e);
  rt.destroy_stream(s);
  rt.free(last, p);
}

}  // namespace
}  // namespace glass::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string why_not;
  if (glass::cuda::gpu::gpu_runtime(&why_not) == nullptr) {
    std::printf("SKIPPED: no GPU to test the real CUDA runtime on: %s\n", why_not.c_str());
    return 77;  // CTest's SKIP_RETURN_CODE
  }
  setenv("GLASS_CUDA", "gpu", /*overwrite=*/1);  // before runtime.cpp makes its choice
  return RUN_ALL_TESTS();
}
