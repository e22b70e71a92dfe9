// tests/core/ops/random_cpu_test.cpp — the CPU fills' exact numbers from an explicit
// generator: its Mersenne Twister stream, in order (core/cpu/cpu_random.cpp). CPU binaries
// only: a CUDA device draws Philox numbers (tests/cuda/backend/random_test.cpp). The
// properties that hold on every device are in random_test.cpp.
#include "core/ops/random.h"

#include <cmath>
#include <random>
#include <vector>

#include "../test_util.h"

namespace glass {
namespace {

double uniform01(std::mt19937_64& ref) { return static_cast<double>(ref() >> 11) * 0x1.0p-53; }

TEST(Random, FillsFromAGivenCpuGeneratorFollowItsStream) {
  Generator gen = make_generator(kCPU, 2024);
  Tensor u = empty({5}, kFloat64).uniform_(-1, 3, gen);
  Tensor n = empty({4}, kFloat64).normal_(2, 0.5, gen);

  std::mt19937_64 ref(2024);
  std::vector<double> want_u, want_n;
  for (int i = 0; i < 5; ++i) want_u.push_back(-1 + 4 * uniform01(ref));
  for (int i = 0; i < 2; ++i) {  // Box-Muller: a pair of uniforms gives a pair of normals
    const double u1 = 1.0 - uniform01(ref), u2 = uniform01(ref);
    const double r = std::sqrt(-2.0 * std::log(u1));
    want_n.push_back(2 + 0.5 * r * std::cos(2 * M_PI * u2));
    want_n.push_back(2 + 0.5 * r * std::sin(2 * M_PI * u2));
  }
  EXPECT_TRUE(testing::close(u, want_u, 1e-15, 0));
  EXPECT_TRUE(testing::close(n, want_n, 1e-15, 0));
}

}  // namespace
}  // namespace glass
