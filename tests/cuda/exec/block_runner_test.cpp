// tests/cuda/exec/block_runner_test.cpp — blocks, barriers and shared memory on the runner.
//
// Every result is checked against a serial computation on the host; the runner's
// counters check how the threads ran (a plain loop, or fibers), never timings.
#include "cuda/sim/block_runner.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "exec_kernels.h"
#include "exec_test_util.h"

namespace exec_test {
namespace {

using glass::cuda::sim::block_runner_stats;
using glass::cuda::sim::reset_block_runner_stats;

// Small integers as floats: every summation order gives the exact same float.
std::vector<float> random_integers(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-50, 50);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// out[b] must be the sum of in[b * per_block, (b + 1) * per_block).
void expect_block_sums(const std::vector<float>& in, const std::vector<float>& out,
                       size_t per_block) {
  for (size_t b = 0; b < out.size(); ++b) {
    float expected = 0;
    for (size_t i = b * per_block; i < std::min(in.size(), (b + 1) * per_block); ++i)
      expected += in[i];
    EXPECT_EQ(out[b], expected) << "block " << b;
  }
}

TEST(BlockRunner, BuiltinsDescribeEveryThreadOfA3DGrid) {
  const Dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<int> out(12 * grid.count() * block.count(), -1);
  run_grid("write_builtins", grid, block, 0, [&] { write_builtins(dev(out)); });
  size_t k = 0;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx, k += 12) {
              const std::vector<int> expected = {
                  int(tx), int(ty), int(tz), int(bx), int(by), int(bz), 4, 3, 2, 3, 2, 2};
              EXPECT_EQ(std::vector<int>(out.begin() + k, out.begin() + k + 12), expected)
                  << "block (" << bx << "," << by << "," << bz << ") thread (" << tx << "," << ty
                  << "," << tz << ")";
            }
}

TEST(BlockRunner, BarrierFreeKernelRunsAsAPlainLoopWithoutFibers) {
  std::vector<int> out(12 * 8 * 256);
  reset_block_runner_stats();
  run_grid("write_builtins", Dim3(8), Dim3(256), 0, [&] { write_builtins(dev(out)); });
  const auto s = block_runner_stats();
  EXPECT_EQ(s.blocks_run, 8u);
  EXPECT_EQ(s.fibers_created, 0u);
  EXPECT_EQ(s.switches, 0u);
  EXPECT_EQ(s.barriers, 0u);
  EXPECT_EQ(out[12 * (7 * 256 + 255)], 255);  // threadIdx.x of the last thread
}

TEST(BlockRunner, SharedMemoryTreeReductionMatchesASerialSum) {
  const int n = 1000;  // the last of the 4 blocks is partly empty
  const std::vector<float> in = random_integers(n, 1);
  std::vector<float> out(4, -1.0f);
  reset_block_runner_stats();
  run_grid("block_sum_static", Dim3(4), Dim3(256), 0,
           [&] { block_sum_static(cdev(in), dev(out), n); });
  expect_block_sums(in, out, 256);

  // Thread 0 reaches the first barrier on the worker's stack; the other 255 become fibers.
  // 9 barriers (1 + log2(256)); each costs about one switch per waiting thread.
  const auto s = block_runner_stats();
  EXPECT_EQ(s.fibers_created, 4u * 255);
  EXPECT_EQ(s.barriers, 4u * 9);
  EXPECT_GE(s.switches, 4u * 9 * 255);
  EXPECT_LE(s.switches, 4u * 11 * 256);
}

TEST(BlockRunner, FiberStacksAreReusedFromBlockToBlock) {
  const std::vector<float> in = random_integers(512, 2);
  std::vector<float> out(2);
  auto body = [&] { block_sum_static(cdev(in), dev(out), 512); };
  run_grid("block_sum_static", Dim3(2), Dim3(256), 0, body);  // the pool holds 255 stacks now
  reset_block_runner_stats();
  run_grid("block_sum_static", Dim3(2), Dim3(256), 0, body);
  EXPECT_EQ(block_runner_stats().fibers_created, 2u * 255);
  EXPECT_EQ(block_runner_stats().stacks_allocated, 0u);
  expect_block_sums(in, out, 256);
}

TEST(BlockRunner, DynamicSharedMemoryHasTheLaunchsSize) {
  for (unsigned threads : {256u, 128u, 32u}) {
    const int n = 3 * threads - 5;
    const std::vector<float> in = random_integers(n, threads);
    std::vector<float> out(3);
    run_grid("block_sum_dynamic", Dim3(3), Dim3(threads), threads * sizeof(float),
             [&] { block_sum_dynamic(cdev(in), dev(out), n); });
    expect_block_sums(in, out, threads);
  }
  std::vector<int> data(3 * 64);
  std::iota(data.begin(), data.end(), 0);
  run_grid("reverse_blocks", Dim3(3), Dim3(64), 64 * sizeof(int),
           [&] { reverse_blocks(dev(data)); });
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 64; ++t) EXPECT_EQ(data[b * 64 + t], b * 64 + 63 - t);
}

TEST(BlockRunner, TiledTransposeWithTwoDimensionalBlocks) {
  const int rows = 37, cols = 50;
  const std::vector<float> in = random_integers(rows * cols, 3);
  std::vector<float> out(rows * cols, -100.0f);
  run_grid("transpose_tiled", Dim3((cols + 15) / 16, (rows + 15) / 16), Dim3(16, 16), 0,
           [&] { transpose_tiled(cdev(in), dev(out), rows, cols); });
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << "," << c;
}

TEST(BlockRunner, ScanThroughManyBarriersMatchesPartialSum) {
  for (unsigned threads : {256u, 200u, 1u}) {
    std::vector<int> in(threads), out(threads, -1), expected(threads);
    std::mt19937 rng(threads);
    for (int& x : in) x = static_cast<int>(rng() % 100);
    std::partial_sum(in.begin(), in.end(), expected.begin());
    run_grid("block_scan", Dim3(1), Dim3(threads), 0, [&] { block_scan(cdev(in), dev(out)); });
    EXPECT_EQ(out, expected) << threads << " threads";
  }
}

TEST(BlockRunner, ThreadsThatReturnedCountAsArrivedAtABarrier) {
  std::vector<int> in(256);
  std::iota(in.begin(), in.end(), 1);
  std::vector<int> out(1, -1);

  // Threads 100..255 return before the barrier; thread 0 reached it first.
  run_grid("sum_with_trailing_exits", Dim3(1), Dim3(256), 0,
           [&] { sum_with_trailing_exits(cdev(in), dev(out), 100); });
  EXPECT_EQ(out[0], 100 * 101 / 2);

  // Thread 0 returns before thread 1 reaches the barrier (plain mode), and every third
  // thread after it returns while the others wait.
  run_grid("sum_with_interleaved_exits", Dim3(1), Dim3(256), 0,
           [&] { sum_with_interleaved_exits(cdev(in), dev(out)); });
  int expected = 0;
  for (int t = 0; t < 256; ++t)
    if (t % 3 != 0) expected += in[t];
  EXPECT_EQ(out[0], expected);

  // Only the last thread reaches the barrier, when all others have returned: it passes
  // at once, and no thread ever needed a fiber.
  reset_block_runner_stats();
  out[0] = 0;
  run_grid("barrier_in_last_thread", Dim3(2), Dim3(128), 0,
           [&] { barrier_in_last_thread(dev(out)); });
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(block_runner_stats().fibers_created, 0u);
  EXPECT_EQ(block_runner_stats().barriers, 2u);
}

TEST(BlockRunner, SyncthreadsCountAndOr) {
  std::vector<int> out(3, -1);
  std::vector<int> pred(64);
  for (int t = 0; t < 64; ++t) pred[t] = t % 5 == 0 ? 7 : 0;  // 13 non-zero
  run_grid("barrier_votes", Dim3(1), Dim3(64), 0, [&] { barrier_votes(cdev(pred), dev(out)); });
  EXPECT_EQ(out, (std::vector<int>{13, 0, 1}));
  pred.assign(64, 1);
  run_grid("barrier_votes", Dim3(1), Dim3(64), 0, [&] { barrier_votes(cdev(pred), dev(out)); });
  EXPECT_EQ(out, (std::vector<int>{64, 1, 1}));
  pred.assign(64, 0);
  run_grid("barrier_votes", Dim3(1), Dim3(64), 0, [&] { barrier_votes(cdev(pred), dev(out)); });
  EXPECT_EQ(out, (std::vector<int>{0, 0, 0}));
}

TEST(BlockRunner, BlocksOnDifferentOSThreadsHaveTheirOwnSharedMemory) {
  const int blocks = 64, n = blocks * 256;
  const std::vector<float> in = random_integers(n, 4);
  std::vector<float> out(blocks, -1.0f);
  run_grid_concurrently(
      "block_sum_static", Dim3(blocks), Dim3(256), 0,
      [&] { block_sum_static(cdev(in), dev(out), n); }, 4);
  expect_block_sums(in, out, 256);
}

}  // namespace
}  // namespace exec_test
