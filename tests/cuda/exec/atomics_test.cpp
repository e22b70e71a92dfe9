// tests/cuda/exec/atomics_test.cpp — atomics from many threads, on several OS threads.
//
// The blocks run on 4 OS threads at once (as on the simulator's SM workers), so a
// non-atomic read-modify-write would lose updates; every total is checked exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "exec_kernels.h"
#include "exec_test_util.h"

namespace exec_test {
namespace {

TEST(Atomics, HistogramFromEveryThreadOfManyBlocks) {
  const int n = 64 * 256, nbins = 7;
  std::vector<int> in(n);
  std::mt19937 rng(5);
  for (int& x : in) x = static_cast<int>(rng() % 1000);
  std::vector<unsigned> bins(nbins, 0), expected(nbins, 0);
  for (int x : in) ++expected[x % nbins];
  run_grid_concurrently(
      "histogram", Dim3(64), Dim3(256), 0, [&] { histogram(cdev(in), n, dev(bins), nbins); }, 4);
  EXPECT_EQ(bins, expected);
}

TEST(Atomics, AddSubMaxMinCasOnEveryCudaType) {
  const int n = 40 * 128 - 3;
  std::vector<int> in(n);
  std::mt19937 rng(6);
  for (int& x : in) x = static_cast<int>(rng() % 2001) - 1000;
  // Float sums of small integers stay exact (|total| < 2^24).
  std::vector<float> fsum(1, 0.0f);
  std::vector<double> dsum(1, 0.0);
  std::vector<unsigned long long> usum(1, 0), cas_sum(1, 0);
  std::vector<int> isub(1, 0), maxv(1, -5000), minv(1, 5000);
  run_grid_concurrently(
      "atomic_mix", Dim3(40), Dim3(128), 0,
      [&] {
        atomic_mix(cdev(in), n, dev(fsum), dev(dsum), dev(usum), dev(isub), dev(maxv), dev(minv),
                   dev(cas_sum));
      },
      4);
  const long long total = std::accumulate(in.begin(), in.end(), 0LL);
  EXPECT_EQ(fsum[0], float(total));
  EXPECT_EQ(dsum[0], double(total));
  EXPECT_EQ(usum[0], static_cast<unsigned long long>(total));  // wraps as unsigned, like the GPU
  EXPECT_EQ(cas_sum[0], static_cast<unsigned long long>(total));
  EXPECT_EQ(isub[0], -total);
  EXPECT_EQ(maxv[0], *std::max_element(in.begin(), in.end()));
  EXPECT_EQ(minv[0], *std::min_element(in.begin(), in.end()));
}

TEST(Atomics, SharedMemoryAtomicsCountEachBlock) {
  std::vector<int> out(32, 0);
  run_grid_concurrently(
      "count_threads_in_shared", Dim3(32), Dim3(96), 0, [&] { count_threads_in_shared(dev(out)); },
      4);
  EXPECT_EQ(out, std::vector<int>(32, 96));
}

TEST(Atomics, AtomicIncWrapsAtItsLimit) {
  // 16 blocks x 60 threads = 960 tickets, wrapping after 11: each of 0..11 drawn 80 times.
  std::vector<unsigned> counter(1, 0), seen(12, 0);
  run_grid_concurrently(
      "tickets", Dim3(16), Dim3(60), 0, [&] { tickets(dev(counter), 11u, dev(seen)); }, 4);
  EXPECT_EQ(seen, std::vector<unsigned>(12, 80));
  EXPECT_EQ(counter[0], 0u);  // 960 is a multiple of 12
}

}  // namespace
}  // namespace exec_test
