// tests/cuda/sim/sim_test_util.h — small helpers for the simulator's own tests.
//
// Kernels here are hand-written KernelLaunch values (no device header): run_block loops
// over the block's threads and reaches memory through host_view, as the block runner
// does. Every helper leaves the simulator as it found it (buffers freed after their
// device is synchronized), since all tests share one simulator per process.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cuda/sim/address_space.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::cuda::sim::testing {

inline SimRuntime& sim() { return simulator(); }

// Device memory for one test; freed (after its device is idle) when the test ends.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t nbytes, int device = 0) : device_(device), nbytes_(nbytes) {
    ptr_ = sim().malloc(device, nbytes);
    EXPECT_NE(ptr_, nullptr) << "out of simulated device memory";
  }
  ~DeviceBuffer() {
    if (ptr_ == nullptr) return;
    try {
      sim().device_synchronize(device_);
    } catch (const Error& e) {  // a test that failed with its device in error: report, go on
      ADD_FAILURE() << "device_synchronize at the end of the test: " << e.what();
    }
    sim().free(device_, ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T = float>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  // What the SMs see; only for reading results after a synchronize.
  template <class T = float>
  T* view() const {
    return host_view(static_cast<T*>(ptr_));
  }
  size_t nbytes() const { return nbytes_; }

 private:
  int device_;
  size_t nbytes_;
  void* ptr_ = nullptr;
};

// A stream of its own, destroyed (after finishing its work) when the test ends.
class TestStream {
 public:
  explicit TestStream(int device = 0) : handle_(sim().create_stream(device)) {}
  ~TestStream() { sim().destroy_stream(handle_); }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  operator StreamHandle() const { return handle_; }  // NOLINT: used where a handle is

 private:
  StreamHandle handle_;
};

// An event, destroyed when the test ends.
class TestEvent {
 public:
  explicit TestEvent(int device = 0, bool timing = false)
      : handle_(sim().event_create(device, timing)) {}
  ~TestEvent() { sim().event_destroy(handle_); }
  TestEvent(const TestEvent&) = delete;
  TestEvent& operator=(const TestEvent&) = delete;
  operator EventHandle() const { return handle_; }  // NOLINT

 private:
  EventHandle handle_;
};

// A kernel whose every thread i (global index) does body(i).
inline KernelLaunch elementwise_kernel(std::string name, unsigned blocks, unsigned threads,
                                       std::function<void(size_t)> body,
                                       std::vector<Access> accesses = {}) {
  KernelLaunch launch;
  launch.name = std::move(name);
  launch.grid = Dim3(blocks);
  launch.block = Dim3(threads);
  launch.run_block = [threads, body = std::move(body)](Dim3 block_idx) {
    for (unsigned t = 0; t < threads; ++t) body(size_t{block_idx.x} * threads + t);
  };
  launch.accesses = std::move(accesses);
  return launch;
}

// out[i] = value for i < n (a device pointer), as a kernel declaring its write.
inline KernelLaunch fill_kernel(float* out, size_t n, float value, unsigned threads = 64) {
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  return elementwise_kernel("fill", blocks, threads,
                            [out, n, value](size_t i) {
                              if (i < n) host_view(out)[i] = value;
                            },
                            {{out, true}});
}

// A kernel with one block that runs `body` once, declaring `accesses`.
inline KernelLaunch single_kernel(std::string name, std::function<void()> body,
                                  std::vector<Access> accesses = {}) {
  KernelLaunch launch;
  launch.name = std::move(name);
  launch.run_block = [body = std::move(body)](Dim3) { body(); };
  launch.accesses = std::move(accesses);
  return launch;
}

// Spins until flag is set, for at most `limit`; false on timeout. Kernels use it to stay
// busy until the host observed something (a bound, so a broken simulator fails, not hangs).
inline bool wait_for(const std::atomic<bool>& flag,
                     std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Runs `f` and returns the glass::Error message it threw ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const glass::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace glass::cuda::sim::testing
