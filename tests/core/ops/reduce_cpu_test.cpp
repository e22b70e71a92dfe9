// tests/core/ops/reduce_cpu_test.cpp — the CPU reduction kernel on millions of elements:
// its accumulation type and its split across threads. CPU binaries only (far too large for
// the simulated GPU); the values tests, run on every device, are in reduce_test.cpp.
#include "core/ops/reduce.h"

#include <thread>
#include <vector>

#include "../test_util.h"
#include "core/ops/random.h"

namespace glass {
namespace {

TEST(Reduce, LargeSumsAreAccurateAndThreaded) {
  Tensor big = ones({1 << 22});  // 4M floats: float accumulation would stall at 2^24
  EXPECT_EQ(big.sum().item<float>(), static_cast<float>(1 << 22));
  Tensor r = arange(1 << 20, kFloat64);
  double n = 1 << 20;
  EXPECT_EQ(r.sum().item<double>(), n * (n - 1) / 2);
}

// A full sum folds per-thread slices and adds them in order (core/cpu/fold_slices.h): the
// same bits whether the pool was free or another thread was reducing at the same time, as
// rank-threads do (the pool then runs a call's chunks serially).
TEST(Reduce, AFullSumHasTheSameBitsWhileAnotherThreadReduces) {
  Tensor x = randn({1 << 22}, kFloat64);
  const double alone = x.sum().item<double>();
  std::vector<double> seen[2];
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 12; ++round) seen[t].push_back(x.sum().item<double>());
      });
    for (std::thread& th : threads) th.join();
  }
  for (const auto& sums : seen)
    for (double s : sums) EXPECT_EQ(s, alone);
}

}  // namespace
}  // namespace glass
