// tests/cuda/exec/warp_test.cpp — warp shuffles and votes against serial references.
//
// A warp is 32 consecutive threads in the block's linear (x-major) order; each test
// computes what every lane must hold from that definition alone.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cuda/sim/block_runner.h"
#include "exec_kernels.h"
#include "exec_test_util.h"

namespace exec_test {
namespace {

std::vector<int> random_ints(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int> v(n);
  for (int& x : v) x = static_cast<int>(rng() % 1000) - 500;
  return v;
}

TEST(Warp, ShuffleDownTreeSumsEachWarp) {
  const int n = 2 * 128;  // 2 blocks of 4 warps
  const std::vector<int> in = random_ints(n, 1);
  std::vector<int> out(n / 32, 0);
  glass::cuda::sim::reset_block_runner_stats();
  run_grid("warp_sum_down", Dim3(2), Dim3(128), 0, [&] { warp_sum_down(cdev(in), dev(out)); });
  for (int w = 0; w < n / 32; ++w) {
    int expected = 0;
    for (int l = 0; l < 32; ++l) expected += in[w * 32 + l];
    EXPECT_EQ(out[w], expected) << "warp " << w;
  }
  EXPECT_EQ(glass::cuda::sim::block_runner_stats().warp_collectives, 8u * 5);  // 5 steps a warp
}

TEST(Warp, XorButterflyGivesEveryLaneItsSegmentsSum) {
  const int n = 96;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float(i % 17 - 8);
  for (int width : {32, 16, 8, 2}) {
    std::vector<float> out(n, -1.0f);
    run_grid("warp_sum_xor", Dim3(1), Dim3(n), 0, [&] { warp_sum_xor(cdev(in), dev(out), width); });
    for (int i = 0; i < n; ++i) {
      float expected = 0;
      for (int j = i / width * width; j < (i / width + 1) * width; ++j) expected += in[j];
      ASSERT_EQ(out[i], expected) << "lane " << i << ", width " << width;
    }
  }
}

TEST(Warp, ShuffleUpScanMatchesAPrefixSumPerWarp) {
  const int n = 3 * 64;
  const std::vector<int> in = random_ints(n, 2);
  std::vector<int> out(n, 0);
  run_grid("warp_inclusive_scan", Dim3(3), Dim3(64), 0,
           [&] { warp_inclusive_scan(cdev(in), dev(out)); });
  for (int w = 0; w < n / 32; ++w) {
    int running = 0;
    for (int l = 0; l < 32; ++l) {
      running += in[w * 32 + l];
      ASSERT_EQ(out[w * 32 + l], running) << "warp " << w << " lane " << l;
    }
  }
}

TEST(Warp, ShuffleBroadcastsOneLanePerSegment) {
  const int n = 64;
  std::vector<double> in(n);
  for (int i = 0; i < n; ++i) in[i] = 0.5 * i;
  // src wraps modulo the width, as CUDA's srcLane does.
  for (auto [src, width] : std::vector<std::pair<int, int>>{{3, 32}, {5, 8}, {9, 8}, {-1, 4}}) {
    std::vector<double> out(n);
    run_grid("warp_broadcast", Dim3(1), Dim3(n), 0,
             [&] { warp_broadcast(cdev(in), dev(out), src, width); });
    for (int i = 0; i < n; ++i) {
      const int expected_lane = i / width * width + (src & (width - 1));
      ASSERT_EQ(out[i], in[expected_lane]) << "i " << i << " src " << src << " width " << width;
    }
  }
}

TEST(Warp, LanesFollowTheLinearOrderOfATwoDimensionalBlock) {
  // Block (8, 8): warp 0 is rows 0-3. Shifting down by 8 lanes reads the row below,
  // except in the last row of each warp, which keeps its own value.
  std::vector<int> in(64), out(64);
  for (int i = 0; i < 64; ++i) in[i] = 100 + i;
  run_grid("warp_shift_down", Dim3(1), Dim3(8, 8), 0,
           [&] { warp_shift_down(cdev(in), dev(out), 8u); });
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i % 32 < 24 ? in[i + 8] : in[i]) << i;
}

TEST(Warp, BallotAnyAllMatchTheSerialPredicate) {
  const int n = 128;
  const std::vector<int> in = random_ints(n, 3);
  for (int threshold : {-600, 0, 400, 600}) {
    std::vector<unsigned> ballots(n / 32);
    std::vector<int> any(n / 32), all(n / 32);
    run_grid("warp_votes", Dim3(1), Dim3(n), 0,
             [&] { warp_votes(cdev(in), threshold, dev(ballots), dev(any), dev(all)); });
    for (int w = 0; w < n / 32; ++w) {
      unsigned expected = 0;
      for (int l = 0; l < 32; ++l)
        if (in[w * 32 + l] > threshold) expected |= 1u << l;
      EXPECT_EQ(ballots[w], expected) << "warp " << w << " threshold " << threshold;
      EXPECT_EQ(any[w], expected != 0);
      EXPECT_EQ(all[w], expected == 0xffffffffu);
    }
  }
}

TEST(Warp, PartialLastWarpVotesOverItsExistingLanes) {
  // 48 threads: warp 1 has 16 lanes; the missing ones do not hold the vote up.
  std::vector<int> in(48, 1);
  std::vector<unsigned> ballots(2);
  std::vector<int> any(2), all(2);
  run_grid("warp_votes", Dim3(1), Dim3(48), 0,
           [&] { warp_votes(cdev(in), 0, dev(ballots), dev(any), dev(all)); });
  EXPECT_EQ(ballots[0], 0xffffffffu);
  EXPECT_EQ(ballots[1], 0x0000ffffu);
  EXPECT_EQ(all[1], 1);
}

TEST(Warp, TwoLevelBlockSumWithSharedMemoryAndShuffles) {
  const int n = 5 * 256 - 77;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float((i * 7) % 23 - 11);
  std::vector<float> out(5, -1.0f);
  run_grid("block_sum_two_level", Dim3(5), Dim3(256), 0,
           [&] { block_sum_two_level(cdev(in), dev(out), n); });
  for (int b = 0; b < 5; ++b) {
    float expected = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) expected += in[i];
    EXPECT_EQ(out[b], expected) << "block " << b;
  }
}

TEST(Warp, CollectivesWithDisjointMasksCompleteSeparately) {
  std::vector<int> in(64), out(64);
  for (int i = 0; i < 64; ++i) in[i] = i;
  run_grid("split_warp_swaps", Dim3(1), Dim3(64), 0, [&] { split_warp_swaps(cdev(in), dev(out)); });
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i % 32 < 16 ? i ^ 1 : i ^ 2) << i;
}

}  // namespace
}  // namespace exec_test
