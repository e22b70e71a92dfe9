// tests/cuda/exec/shared_race_test.cpp — the shared-memory race detector (racecheck).
//
// Each racy kernel has a twin that differs only in its synchronization: the detector must
// name the race in one (kernel, block, both threads, the array and the byte offset) and
// stay silent on the other, whose results are checked against a hand-worked reference.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/sim/kernel_stats.h"
#include "exec_kernels.h"
#include "exec_test_util.h"
#include "watch_kernels.h"

namespace exec_test {
namespace {

using glass::cuda::sim::kernel_checks;
using glass::cuda::sim::set_kernel_checks;

// Checking on for the test (the simulator turns it on with GLASS_SIM_CHECK=1; these tests
// run blocks directly, with no simulator).
class SharedRace : public ::testing::Test {
 protected:
  void SetUp() override {
    was_on_ = kernel_checks();
    set_kernel_checks(true);
  }
  void TearDown() override { set_kernel_checks(was_on_); }

  // The glass::Error the grid must throw.
  static std::string error_of(const char* kernel, Dim3 grid, Dim3 block,
                              const std::function<void()>& body) {
    try {
      run_grid(kernel, grid, block, 0, body);
    } catch (const glass::Error& e) {
      return e.what();
    }
    ADD_FAILURE() << kernel << " ran without an error";
    return "";
  }

 private:
  bool was_on_ = false;
};

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing \"" << part << "\" in:\n" << text;
}

TEST_F(SharedRace, NeighbourReadWithoutBarrierIsARace) {
  std::vector<int> out(64);
  const std::string msg = error_of("neighbour_exchange", Dim3(2), Dim3(64),
                                   [&] { watch_test::neighbour_exchange(dev(out), false); });
  // Thread 0 runs first and reads cells[1]; thread 1 then writes it.
  expect_contains(msg, "kernel 'neighbour_exchange', block (0, 0, 0): ");
  expect_contains(msg, "shared-memory race on 'cells' at byte offset 4 (of 256)");
  expect_contains(msg, "thread (1, 0, 0) writes it and thread (0, 0, 0) reads it");
  expect_contains(msg, "none since the kernel started");
}

TEST_F(SharedRace, NeighbourReadAfterBarrierIsNot) {
  std::vector<int> out(64);
  run_grid("neighbour_exchange", Dim3(2), Dim3(64), 0,
           [&] { watch_test::neighbour_exchange(dev(out), true); });
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], 100 + (t + 1) % 64) << t;
}

TEST_F(SharedRace, TwoDimensionalTileNamesThreadsAndOffset) {
  const int n = 32;
  std::vector<float> in(n * n), out(n * n);
  std::iota(in.begin(), in.end(), 1.0f);
  const std::string msg = error_of("tile_transpose", Dim3(2, 2), Dim3(16, 16), [&] {
    watch_test::tile_transpose(cdev(in), dev(out), n, false);
  });
  // Thread (1, 0) reads tile[1][0] (17 floats in: byte 68); thread (0, 1) writes it.
  expect_contains(msg, "shared-memory race on 'tile' at byte offset 68 (of 1088)");
  expect_contains(msg, "thread (0, 1, 0) writes it and thread (1, 0, 0) reads it");

  run_grid("tile_transpose", Dim3(2, 2), Dim3(16, 16), 0,
           [&] { watch_test::tile_transpose(cdev(in), dev(out), n, true); });
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) ASSERT_EQ(out[c * n + r], in[r * n + c]) << r << ", " << c;
}

TEST_F(SharedRace, WarpSynchronousCodeNeedsSyncwarp) {
  std::vector<int> in(32), out(1);
  std::iota(in.begin(), in.end(), 1);
  run_grid("warp_tree_sum", Dim3(1), Dim3(32), 0,
           [&] { watch_test::warp_tree_sum(cdev(in), dev(out), true); });
  EXPECT_EQ(out[0], 32 * 33 / 2);

  const std::string msg = error_of("warp_tree_sum", Dim3(1), Dim3(32),
                                   [&] { watch_test::warp_tree_sum(cdev(in), dev(out), false); });
  // Lane 0 runs its whole loop first, reading partial[16], [8], [4], [2], [1]; lane 1 then
  // writes partial[1], the first of 31 conflicting pairs.
  expect_contains(msg, "shared-memory race on 'partial' at byte offset 4 (of 128)");
  expect_contains(msg, "thread (1, 0, 0) writes it and thread (0, 0, 0) reads it");
  expect_contains(msg, "lanes of one warp");
  expect_contains(msg, "(and 30 more conflicting pairs)");
  expect_contains(msg, "or, within a warp, __syncwarp()");
}

TEST_F(SharedRace, ShufflesAndOneBarrierAreEnough) {
  const int threads = 128, blocks = 3;
  std::vector<float> in(threads * blocks), out(blocks);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 7) - 3.0f;
  run_grid("shuffle_block_sum", Dim3(blocks), Dim3(threads), 0,
           [&] { watch_test::shuffle_block_sum(cdev(in), dev(out)); });
  for (int b = 0; b < blocks; ++b) {
    float expected = 0;
    for (int t = 0; t < threads; ++t) expected += in[b * threads + t];
    EXPECT_EQ(out[b], expected) << "block " << b;
  }
}

TEST_F(SharedRace, SharedAtomicsAreNotRaces) {
  std::vector<int> out(2);
  run_grid("shared_atomic_count", Dim3(2), Dim3(96), 0,
           [&] { watch_test::shared_atomic_count(dev(out)); });
  EXPECT_EQ(out, (std::vector<int>{96, 96}));
}

TEST_F(SharedRace, ExistingBlockKernelsAreRaceFree) {
  std::vector<float> in(256), out(1);
  std::iota(in.begin(), in.end(), 0.0f);
  run_grid("block_sum_static", Dim3(1), Dim3(256), 0,
           [&] { block_sum_static(cdev(in), dev(out), 256); });
  EXPECT_EQ(out[0], 255.0f * 256 / 2);
  run_grid("block_sum_dynamic", Dim3(1), Dim3(256), 256 * sizeof(float),
           [&] { block_sum_dynamic(cdev(in), dev(out), 256); });
  EXPECT_EQ(out[0], 255.0f * 256 / 2);
  std::vector<int> scan_in(256), scan_out(256);
  std::iota(scan_in.begin(), scan_in.end(), 1);
  run_grid("block_scan", Dim3(1), Dim3(256), 0, [&] { block_scan(cdev(scan_in), dev(scan_out)); });
  EXPECT_EQ(scan_out[255], 256 * 257 / 2);
}

TEST_F(SharedRace, RaceIsReportedOnEveryRunNotOnlyTheFirst) {
  // Shared memory keeps what the last block wrote; the detector must not mistake the
  // same values written again for reads.
  std::vector<int> out(64);
  for (int run = 0; run < 3; ++run) {
    const std::string msg = error_of("neighbour_exchange", Dim3(1), Dim3(64),
                                     [&] { watch_test::neighbour_exchange(dev(out), false); });
    expect_contains(msg, "shared-memory race on 'cells'");
  }
}

TEST_F(SharedRace, OffWhenCheckingIsOff) {
  set_kernel_checks(false);
  std::vector<int> out(64);
  run_grid("neighbour_exchange", Dim3(1), Dim3(64), 0,
           [&] { watch_test::neighbour_exchange(dev(out), false); });
  EXPECT_EQ(out[63], 100);  // thread 63 runs last and reads thread 0's cell
}

}  // namespace
}  // namespace exec_test
