// tests/core/ops/reduce_cpu_test.cpp — the CPU reduction kernel on millions of elements:
// its accumulation type and its split across threads. CPU binaries only (far too large for
// the simulated GPU); the values tests, run on every device, are in reduce_test.cpp.
#include "core/ops/reduce.h"

#include "../test_util.h"

namespace glass {
namespace {

TEST(Reduce, LargeSumsAreAccurateAndThreaded) {
  Tensor big = ones({1 << 22});  // 4M floats: float accumulation would stall at 2^24
  EXPECT_EQ(big.sum().item<float>(), static_cast<float>(1 << 22));
  Tensor r = arange(1 << 20, kFloat64);
  double n = 1 << 20;
  EXPECT_EQ(r.sum().item<double>(), n * (n - 1) / 2);
}

}  // namespace
}  // namespace glass
