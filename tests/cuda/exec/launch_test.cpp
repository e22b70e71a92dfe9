// tests/cuda/exec/launch_test.cpp — GLASS_LAUNCH end to end, on the simulated GPU.
//
// Kernels run on the simulator's SM workers, on device memory, queued on streams. The
// results are copied back and checked against serial references; asynchrony is checked
// by holding the stream (the simulator's test hook), never by timing.
#include "cuda/launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/runtime.h"
#include "cuda/sim/sim_runtime.h"
#include "exec_kernels.h"

namespace exec_test {
namespace {

using glass::cuda::CopyKind;
using glass::cuda::Dim3;
using glass::cuda::runtime;
using glass::cuda::StreamHandle;
using glass::cuda::sim::simulator;

// Device memory on cuda:0, freed (once the device is idle) at the end of the test.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    ptr_ = static_cast<T*>(runtime().malloc(0, n * sizeof(T)));
    EXPECT_NE(ptr_, nullptr);
  }
  ~DeviceArray() {
    try {
      runtime().device_synchronize(0);
    } catch (const glass::Error& e) {
      ADD_FAILURE() << "device_synchronize at the end of the test: " << e.what();
    }
    runtime().free(0, ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  void upload(const std::vector<T>& v, StreamHandle s) {
    runtime().memcpy_async(ptr_, v.data(), n_ * sizeof(T), CopyKind::HostToDevice, s);
  }
  // A pageable device-to-host copy: returns once the stream's work so far has finished.
  std::vector<T> download(StreamHandle s) const {
    std::vector<T> v(n_);
    runtime().memcpy_async(v.data(), ptr_, n_ * sizeof(T), CopyKind::DeviceToHost, s);
    return v;
  }

 private:
  size_t n_;
  T* ptr_ = nullptr;
};

class Launch : public ::testing::Test {
 protected:
  void SetUp() override {
    glass::cuda::use_simulator();
    stream_ = runtime().default_stream(0);
  }
  StreamHandle stream_ = nullptr;
};

std::vector<float> ramp(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = float(i % 31 - 15);
  return v;
}

TEST_F(Launch, RunsTheKernelOnTheSimulatedGpu) {
  const int n = 16 * 256 - 9;
  const std::vector<float> in = ramp(n);
  DeviceArray<float> d_in(n), d_out(16);
  d_in.upload(in, stream_);
  GLASS_LAUNCH(block_sum_static, Dim3(16), Dim3(256), 0, stream_, d_in.get(), d_out.get(), n);
  const std::vector<float> out = d_out.download(stream_);
  for (int b = 0; b < 16; ++b) {
    float expected = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) expected += in[i];
    EXPECT_EQ(out[b], expected) << "block " << b;
  }
  const auto timeline = simulator().timeline();
  auto it = std::find_if(timeline.rbegin(), timeline.rend(),
                         [](const auto& r) { return r.name == "block_sum_static"; });
  ASSERT_NE(it, timeline.rend());
  EXPECT_EQ(it->grid.x, 16u);
  EXPECT_EQ(it->block.x, 256u);
}

TEST_F(Launch, DynamicSharedMemoryAndTwoDimensionalGrids) {
  const int rows = 40, cols = 33;
  const std::vector<float> in = ramp(rows * cols);
  DeviceArray<float> d_in(rows * cols), d_out(rows * cols);
  d_in.upload(in, stream_);
  GLASS_LAUNCH(transpose_tiled, Dim3((cols + 15) / 16, (rows + 15) / 16), Dim3(16, 16), 0, stream_,
               d_in.get(), d_out.get(), rows, cols);
  std::vector<float> out = d_out.download(stream_);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]);

  DeviceArray<float> d_sums(3);
  GLASS_LAUNCH(block_sum_dynamic, Dim3(3), Dim3(128), 128 * sizeof(float), stream_, d_in.get(),
               d_sums.get(), 3 * 128);
  out = d_sums.download(stream_);
  for (int b = 0; b < 3; ++b)
    EXPECT_EQ(out[b], std::accumulate(in.begin() + b * 128, in.begin() + (b + 1) * 128, 0.0f));
}

TEST_F(Launch, TemplateKernelsAndNullPointers) {
  DeviceArray<double> d(150);
  GLASS_LAUNCH(fill_value<double>, Dim3(3), Dim3(64), 0, stream_, d.get(), 2.5, 150);
  EXPECT_EQ(d.download(stream_), std::vector<double>(150, 2.5));
  const auto timeline = simulator().timeline();
  EXPECT_TRUE(std::any_of(timeline.begin(), timeline.end(),
                          [](const auto& r) { return r.name == "fill_value<double>"; }));
  // A null pointer is a valid argument (no memory named); n = 0 keeps the kernel off it.
  GLASS_LAUNCH(fill_value<double>, Dim3(1), Dim3(32), 0, stream_, nullptr, 1.0, 0);
  runtime().stream_synchronize(stream_);
}

TEST_F(Launch, ReturnsBeforeTheKernelRunsAndCopiesItsArguments) {
  const int n = 1000;
  const std::vector<float> x = ramp(n);
  std::vector<float> y(n, 1.0f);
  DeviceArray<float> d_x(n), d_y(n);
  d_x.upload(x, stream_);
  d_y.upload(y, stream_);
  runtime().stream_synchronize(stream_);

  AxpyArgs args;
  args.n = n;
  args.a = 2.0f;
  args.x = gptr<const float>(d_x.get());
  args.y = gptr<float>(d_y.get());
  simulator().hold(stream_);
  GLASS_LAUNCH(axpy_packed, Dim3((n + 127) / 128), Dim3(128), 0, stream_, args);
  // Returned, and the kernel has not started: the stream is held.
  EXPECT_EQ(simulator().pending_ops(stream_), 1u);
  EXPECT_FALSE(runtime().stream_query(stream_));
  args.a = 100.0f;  // the launch copied its arguments; this must not reach the kernel
  simulator().release(stream_);
  runtime().stream_synchronize(stream_);
  const std::vector<float> out = d_y.download(stream_);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.0f + 2.0f * x[i]) << i;
}

TEST_F(Launch, InvalidLaunchThrowsAndQueuesNothing) {
  DeviceArray<float> d(256);
  simulator().hold(stream_);
  const size_t pending = simulator().pending_ops(stream_);
  auto expect_refused = [&](Dim3 grid, Dim3 block, size_t shmem, const std::string& part) {
    try {
      GLASS_LAUNCH(block_sum_dynamic, grid, block, shmem, stream_, d.get(), d.get(), 256);
      ADD_FAILURE() << "launch accepted";
    } catch (const glass::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("launch of kernel 'block_sum_dynamic'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
    EXPECT_EQ(simulator().pending_ops(stream_), pending);
  };
  expect_refused(Dim3(0), Dim3(256), 0, "at least 1");
  expect_refused(Dim3(1), Dim3(2048), 0, "block.x = 2048");
  expect_refused(Dim3(1), Dim3(512, 4), 0, "2048 threads");
  expect_refused(Dim3(1, 1, 70000), Dim3(256), 0, "grid.z = 70000");
  expect_refused(Dim3(1), Dim3(256), 1 << 20, "1048576 bytes of dynamic shared memory");
  simulator().release(stream_);
}

TEST_F(Launch, HostPointerArgumentIsRefused) {
  std::vector<float> host(256);
  DeviceArray<float> d_out(1);
  try {
    GLASS_LAUNCH(block_sum_static, Dim3(1), Dim3(256), 0, stream_, host.data(), d_out.get(), 256);
    FAIL() << "launch accepted";
  } catch (const glass::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel 'block_sum_static': argument 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not an address in the simulated GPU's memory"), std::string::npos) << msg;
  }
}

TEST_F(Launch, KernelErrorSurfacesAtTheNextSynchronize) {
  DeviceArray<int> d(32);
  GLASS_LAUNCH(divergent_barriers, Dim3(2), Dim3(32), 0, stream_, d.get());
  try {
    runtime().stream_synchronize(stream_);
    FAIL() << "no error";
  } catch (const glass::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel 'divergent_barriers', block ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("error_kernels.cu:" + std::to_string(kDivergentLine + 2)), std::string::npos)
        << msg;
  }
  simulator().reset_sticky_error(0);
}

TEST_F(Launch, PointerArgumentsFeedTheStreamRaceChecker) {
  const bool was_on = simulator().race_check();
  simulator().set_race_check(true);
  const int n = 256;
  const std::vector<float> x = ramp(n);
  DeviceArray<float> d_x(n), d_y(n), d_sum(1);
  d_x.upload(x, stream_);
  d_y.upload(std::vector<float>(n, 0.0f), stream_);
  runtime().stream_synchronize(stream_);
  const StreamHandle other = runtime().create_stream(0);

  AxpyArgs args;
  args.n = n;
  args.a = 1.0f;
  args.x = gptr<const float>(d_x.get());
  args.y = gptr<float>(d_y.get());
  // axpy writes y (through the struct's append_accesses) on the default stream; reading
  // y on another stream with nothing ordering the two is a race.
  GLASS_LAUNCH(axpy_packed, Dim3(2), Dim3(128), 0, stream_, args);
  try {
    GLASS_LAUNCH(block_sum_static, Dim3(1), Dim3(256), 0, other, d_y.get(), d_sum.get(), n);
    ADD_FAILURE() << "the race was not reported";
  } catch (const glass::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("axpy_packed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("block_sum_static"), std::string::npos) << msg;
  }
  // An event orders them: no race.
  const glass::cuda::EventHandle done = runtime().event_create(0, false);
  runtime().event_record(done, stream_);
  runtime().stream_wait_event(other, done);
  GLASS_LAUNCH(block_sum_static, Dim3(1), Dim3(256), 0, other, d_y.get(), d_sum.get(), n);
  EXPECT_EQ(d_sum.download(other)[0], std::accumulate(x.begin(), x.end(), 0.0f));
  runtime().event_destroy(done);
  runtime().destroy_stream(other);
  simulator().set_race_check(was_on);
}

}  // namespace
}  // namespace exec_test
