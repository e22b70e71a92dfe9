// tests/cuda/exec/kernel_watch_test.cpp — bounds checks and per-kernel counters, on the
// simulated GPU.
//
// Counters are checked against values worked out by hand from each kernel's source; the
// out-of-bounds errors must name the kernel, the block, the thread, the address and the
// allocation it missed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/launch.h"
#include "cuda/runtime.h"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/sim_runtime.h"
#include "exec_test_util.h"
#include "watch_kernels.h"

namespace exec_test {
namespace {

using glass::cuda::CopyKind;
using glass::cuda::runtime;
using glass::cuda::StreamHandle;
using glass::cuda::sim::KernelStats;
using glass::cuda::sim::last_kernel_stats;
using glass::cuda::sim::ScopedKernelStats;
using glass::cuda::sim::simulator;

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing \"" << part << "\" in:\n" << text;
}

// Two tensors of n floats in one device allocation, registered as the caching allocator
// registers its blocks: [in, in + n) and [out, out + n), 4 KiB apart, so an access just
// past either is inside the allocation but outside its block.
class KernelWatch : public ::testing::Test {
 protected:
  static constexpr int n = 1000;
  void SetUp() override {
    glass::cuda::use_simulator();
    was_on_ = simulator().race_check();
    simulator().set_race_check(true);
    stream_ = runtime().default_stream(0);
    base_ = static_cast<char*>(runtime().malloc(0, 1 << 16));
    ASSERT_NE(base_, nullptr);
    in_ = reinterpret_cast<float*>(base_);
    out_ = reinterpret_cast<float*>(base_ + 4096);
    simulator().register_block(in_, n * sizeof(float));
    simulator().register_block(out_, n * sizeof(float));
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 1.0f);
    runtime().memcpy_async(in_, host.data(), n * sizeof(float), CopyKind::HostToDevice, stream_);
  }
  void TearDown() override {
    runtime().device_synchronize(0);
    simulator().unregister_block(in_);
    simulator().unregister_block(out_);
    runtime().free(0, base_);
    simulator().set_race_check(was_on_);
  }
  std::vector<float> download_out() {
    std::vector<float> v(n);
    runtime().memcpy_async(v.data(), out_, n * sizeof(float), CopyKind::DeviceToHost, stream_);
    return v;
  }
  // The error the launch's next synchronize throws (the kernel's sticky error), cleared.
  std::string kernel_error() {
    std::string msg;
    try {
      runtime().stream_synchronize(stream_);
      ADD_FAILURE() << "no error";
    } catch (const glass::Error& e) {
      msg = e.what();
    }
    simulator().reset_sticky_error(0);
    return msg;
  }

  StreamHandle stream_ = nullptr;
  char* base_ = nullptr;
  float* in_ = nullptr;
  float* out_ = nullptr;

 private:
  bool was_on_ = false;
};

std::string hex(const void* p) {
  char text[24];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

TEST_F(KernelWatch, OutOfBoundsReadNamesKernelBlockThreadAndAllocation) {
  GLASS_LAUNCH(watch_test::read_shifted, Dim3(4), Dim3(256), 0, stream_, in_, out_, n, 1);
  const std::string msg = kernel_error();
  // i = 999 (block 3, thread 231) reads in[1000], the first float past the block.
  expect_contains(msg, "kernel 'watch_test::read_shifted', block (3, 0, 0), thread (231, 0, 0): ");
  expect_contains(msg, "out-of-bounds global load of 4 bytes at " + hex(in_ + n));
  expect_contains(msg, "the nearest is [" + hex(in_) + ", " + hex(in_ + n) + ") (4000 bytes)");
  expect_contains(msg, "ends 4 bytes past its end");
}

TEST_F(KernelWatch, OutOfBoundsWriteIsReportedToo) {
  GLASS_LAUNCH(watch_test::write_shifted, Dim3(4), Dim3(256), 0, stream_, in_, out_, n, 3);
  const std::string msg = kernel_error();
  // i = 997 writes out[1000].
  expect_contains(msg,
                  "block (3, 0, 0), thread (229, 0, 0): out-of-bounds global store of 4 bytes");
  expect_contains(msg, "the nearest is [" + hex(out_) + ", " + hex(out_ + n) + ")");
}

TEST_F(KernelWatch, InBoundsKernelsRunUnchanged) {
  GLASS_LAUNCH(watch_test::read_shifted, Dim3(4), Dim3(256), 0, stream_, in_, out_, n - 1, 1);
  const std::vector<float> out = download_out();
  for (int i = 0; i < n - 1; ++i) ASSERT_EQ(out[i], float(i + 2)) << i;
}

TEST_F(KernelWatch, VectorAccessesAreCountedAndCheckedWhole) {
  // 250 groups of 4 floats: 16-byte loads and stores.
  GLASS_LAUNCH(watch_test::copy_vec4, Dim3(1), Dim3(256), 0, stream_, in_, out_, n / 4, 0);
  const std::vector<float> out = download_out();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], float(i + 1)) << i;
  EXPECT_EQ(last_kernel_stats().global_load_bytes, uint64_t{n * 4});
  EXPECT_EQ(last_kernel_stats().global_store_bytes, uint64_t{n * 4});

  // Shifted by one group, the last thread reads 16 bytes starting at the end of `in`.
  GLASS_LAUNCH(watch_test::copy_vec4, Dim3(1), Dim3(256), 0, stream_, in_, out_, n / 4, 1);
  const std::string msg = kernel_error();
  expect_contains(msg,
                  "thread (249, 0, 0): out-of-bounds global load of 16 bytes at " + hex(in_ + n));
  expect_contains(msg, "ends 16 bytes past its end");
}

TEST_F(KernelWatch, CopyMovesFourBytesEachWay) {
  GLASS_LAUNCH(watch_test::copy, Dim3(4), Dim3(256), 0, stream_, in_, out_, n);
  runtime().stream_synchronize(stream_);
  KernelStats expected;
  expected.global_load_bytes = n * 4;
  expected.global_store_bytes = n * 4;
  expected.blocks = 4;
  expected.launches = 1;
  EXPECT_EQ(last_kernel_stats(), expected) << to_string(last_kernel_stats());
  EXPECT_EQ(last_kernel_stats().arithmetic_intensity(), 0.0);

  // The same numbers on the launch's timeline record and in the Chrome trace's args.
  const auto timeline = simulator().timeline();
  auto it = std::find_if(timeline.rbegin(), timeline.rend(),
                         [](const auto& r) { return r.name == "watch_test::copy"; });
  ASSERT_NE(it, timeline.rend());
  ASSERT_TRUE(it->has_stats);
  EXPECT_EQ(it->stats, expected);
  const std::string trace = simulator().chrome_trace_json();
  const size_t event = trace.find("\"seq\":" + std::to_string(it->seq) + ",");
  ASSERT_NE(event, std::string::npos);
  const std::string args = trace.substr(event, trace.find('}', event) - event);
  expect_contains(args, "\"global_load_bytes\":4000,\"global_store_bytes\":4000");
  expect_contains(args, "\"flops\":0,\"arithmetic_intensity\":0");
}

TEST_F(KernelWatch, FlopsGiveArithmeticIntensity) {
  ScopedKernelStats stats;
  GLASS_LAUNCH(watch_test::affine, Dim3(4), Dim3(256), 0, stream_, in_, out_, 2.0f, 1.0f, n);
  const std::vector<float> out = download_out();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * float(i + 1) + 1.0f) << i;
  const KernelStats s = last_kernel_stats();
  EXPECT_EQ(s.flops, uint64_t{2 * n});
  EXPECT_EQ(s.global_bytes(), uint64_t{8 * n});
  EXPECT_DOUBLE_EQ(s.arithmetic_intensity(), 0.25);  // 2 flops per 8 bytes
  EXPECT_EQ(stats.total().launches, 1u);
  EXPECT_EQ(stats.total().flops, uint64_t{2 * n});
}

// A 16 x 16 tile per block: each thread stores one element of it and loads one, around
// one barrier; the grid of 2 x 2 blocks moves the 32 x 32 matrix in and out once.
TEST(KernelStatsDirect, SharedTileCountsLoadsStoresAndBarriers) {
  const int m = 32;
  std::vector<float> in(m * m), out(m * m);
  std::iota(in.begin(), in.end(), 1.0f);
  ScopedKernelStats stats;
  run_grid("tile_transpose", Dim3(2, 2), Dim3(16, 16), 0,
           [&] { watch_test::tile_transpose(cdev(in), dev(out), m, true); });
  const KernelStats s = stats.total();
  EXPECT_EQ(s.shared_stores, uint64_t{m * m});
  EXPECT_EQ(s.shared_loads, uint64_t{m * m});
  EXPECT_EQ(s.barriers, 4u);  // one per block
  EXPECT_EQ(s.global_load_bytes, uint64_t{m * m * 4});
  EXPECT_EQ(s.global_store_bytes, uint64_t{m * m * 4});
  EXPECT_EQ(s.blocks, 4u);
  EXPECT_EQ(s.launches, 0u);  // blocks run directly, outside a launch
}

TEST(KernelStatsDirect, WarpSyncsAreCountedPerWarp) {
  std::vector<int> in(32, 1), out(1);
  ScopedKernelStats stats;
  run_grid("warp_tree_sum", Dim3(1), Dim3(32), 0,
           [&] { watch_test::warp_tree_sum(cdev(in), dev(out), true); });
  EXPECT_EQ(out[0], 32);
  EXPECT_EQ(stats.total().warp_syncs, 11u);  // 1 + 2 per halving step (5 steps)
  EXPECT_EQ(stats.total().barriers, 0u);
}

TEST(KernelStatsDirect, NothingIsCountedWithoutACollector) {
  const bool checks = glass::cuda::sim::kernel_checks();
  glass::cuda::sim::set_kernel_checks(false);  // checking counts too
  if (glass::cuda::sim::kernel_counting()) {
    glass::cuda::sim::set_kernel_checks(checks);
    GTEST_SKIP() << "counting is on for the process (GLASS_SIM_STATS=1)";
  }
  const KernelStats before = glass::cuda::sim::total_kernel_stats();
  std::vector<float> in(64, 1.0f), out(64);
  run_grid("copy", Dim3(1), Dim3(64), 0, [&] { watch_test::copy(cdev(in), dev(out), 64); });
  EXPECT_EQ(glass::cuda::sim::total_kernel_stats(), before);
  EXPECT_EQ(out[63], 1.0f);
  glass::cuda::sim::set_kernel_checks(checks);
}

}  // namespace
}  // namespace exec_test
