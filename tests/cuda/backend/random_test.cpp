// Tests for the CUDA random fills (cuda/kernels/random.cu): every value equals what the
// host computes from Philox (core/philox.h) for the same seed, offset and element index —
// a reference written out here from the stream's definition, not the kernel's code — the
// offset moves on per launch, manual_seed reproduces, and the moments are right.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "core/philox.h"
#include "cuda/backend/backend_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using glass::Device;
using glass::Generator;
using glass::Tensor;
using glass::cuda::testing::error_of;

class CudaRandom : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

glass::TensorOptions on_cuda(glass::ScalarType t) {
  return glass::TensorOptions(t).device(Device(glass::kCUDA, 0));
}

// Word w of group g of the launch at (seed, offset): counter (g, offset), key seed.
uint32_t word(uint64_t seed, uint64_t offset, uint64_t g, int w) {
  const glass::philox::Counter c{
      {uint32_t(g), uint32_t(g >> 32), uint32_t(offset), uint32_t(offset >> 32)}};
  return glass::philox::philox4x32_10(c, {{uint32_t(seed), uint32_t(seed >> 32)}}).word[w];
}
double u24(uint32_t w) { return double(w >> 8) / 16777216.0; }  // 24 bits
double u53(uint32_t lo, uint32_t hi) {
  return double(((uint64_t(hi) << 32) | lo) >> 11) / 9007199254740992.0;  // 53 bits
}

template <class T>
std::vector<T> host_values(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

TEST_F(CudaRandom, UniformEqualsTheHostsPhiloxStream) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 1234);
  gen.set_offset(5);
  // float: 4 elements per Philox call, 24 bits each.
  const std::vector<float> f = host_values<float>(glass::rand({1001}, gen, on_cuda(glass::kFloat)));
  for (size_t i = 0; i < f.size(); ++i)
    ASSERT_EQ(f[i], float(u24(word(1234, 5, i / 4, int(i % 4))))) << "element " << i;
  EXPECT_EQ(gen.get_offset(), 6u);
  // double: 2 elements per call, 53 bits from two words each; [from, to) in double.
  const std::vector<double> d =
      host_values<double>(glass::rand({333}, gen, on_cuda(glass::kDouble)));
  for (size_t i = 0; i < d.size(); ++i) {
    const int k = int(i % 2);
    ASSERT_EQ(d[i], u53(word(1234, 6, i / 2, 2 * k), word(1234, 6, i / 2, 2 * k + 1))) << i;
  }
}

TEST_F(CudaRandom, NormalIsBoxMullerOnTheHostsPhiloxStream) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 99);
  Tensor t = glass::empty({402}, on_cuda(glass::kFloat));
  glass::default_generator(Device(glass::kCUDA, 0)).manual_seed(99);
  t.normal_(2.0, 0.5);  // the default generator at (99, 0)
  const std::vector<float> f = host_values<float>(t);
  for (size_t i = 0; i < f.size(); ++i) {
    const uint64_t g = i / 4;
    const int pair = int(i % 4) / 2;
    const double u1 = 1.0 - u24(word(99, 0, g, 2 * pair)), u2 = u24(word(99, 0, g, 2 * pair + 1));
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2 * M_PI * u2;
    const double z = (i % 2 == 0) ? r * std::cos(theta) : r * std::sin(theta);
    // float math on the device; the GPU's libdevice may differ from the host's by an ulp.
    ASSERT_NEAR(f[i], 2.0 + 0.5 * z, 2e-5 * (1 + std::abs(z))) << "element " << i;
  }
  const std::vector<double> d =
      host_values<double>(glass::randn({51}, gen, on_cuda(glass::kDouble)));
  for (size_t i = 0; i < d.size(); ++i) {
    const uint64_t g = i / 2;
    const double u1 = 1.0 - u53(word(99, 0, g, 0), word(99, 0, g, 1));
    const double u2 = u53(word(99, 0, g, 2), word(99, 0, g, 3));
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2 * M_PI * u2;
    ASSERT_NEAR(d[i], i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta), 1e-12) << i;
  }
}

TEST_F(CudaRandom, RandintEqualsTheHostsPhiloxStream) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 7);
  // A range within 32 bits: one word per value.
  const std::vector<int64_t> small =
      host_values<int64_t>(glass::randint(-3, 10, {257}, gen, on_cuda(glass::kLong)));
  for (size_t i = 0; i < small.size(); ++i)
    ASSERT_EQ(small[i], -3 + int64_t(word(7, 0, i / 4, int(i % 4)) % 13)) << i;
  // The widest int64 range: two words per value, and no overflow.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> wide =
      host_values<int64_t>(glass::randint(lo, hi, {99}, gen, on_cuda(glass::kLong)));
  const uint64_t range = uint64_t(hi) - uint64_t(lo);
  for (size_t i = 0; i < wide.size(); ++i) {
    const int k = int(i % 2);
    const uint64_t r = (uint64_t(word(7, 1, i / 2, 2 * k + 1)) << 32) | word(7, 1, i / 2, 2 * k);
    ASSERT_EQ(wide[i], int64_t(uint64_t(lo) + r % range)) << i;
  }
  // Other dtypes hold the same integers.
  Tensor f = glass::randint(0, 5, {40}, gen, on_cuda(glass::kFloat)).cpu();
  EXPECT_GE(f.min().item<float>(), 0.0f);
  EXPECT_LE(f.max().item<float>(), 4.0f);
  EXPECT_TRUE(glass::equal(f, f.to(glass::kLong).to(glass::kFloat)));
}

// The numbers depend on (seed, offset, index) only: a short fill is the start of a long
// one (which runs on a different grid).
TEST_F(CudaRandom, ValuesDoNotDependOnTheGrid) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 5);
  Tensor shorter = glass::rand({10}, gen, on_cuda(glass::kFloat)).cpu();
  gen.set_offset(0);
  Tensor longer = glass::rand({20000}, gen, on_cuda(glass::kFloat)).cpu();
  EXPECT_TRUE(glass::equal(shorter, longer.narrow(0, 0, 10)));
}

TEST_F(CudaRandom, OffsetAdvancesAndManualSeedReproduces) {
  glass::manual_seed(2026);
  Generator def = glass::default_generator(Device(glass::kCUDA, 0));
  EXPECT_EQ(def.get_offset(), 0u);
  Tensor a = glass::rand({64}, on_cuda(glass::kFloat)).cpu();
  Tensor b = glass::rand({64}, on_cuda(glass::kFloat)).cpu();
  EXPECT_EQ(def.get_offset(), 2u);
  EXPECT_FALSE(glass::equal(a, b));  // a new offset, new numbers
  glass::manual_seed(2026);
  EXPECT_TRUE(glass::equal(glass::rand({64}, on_cuda(glass::kFloat)).cpu(), a));
  EXPECT_TRUE(glass::equal(glass::rand({64}, on_cuda(glass::kFloat)).cpu(), b));
  // An empty fill draws nothing and leaves the offset.
  glass::rand({0}, on_cuda(glass::kFloat));
  EXPECT_EQ(def.get_offset(), 2u);
  // A non-contiguous target is filled through a contiguous temporary.
  Tensor nt = glass::zeros({4, 6}, on_cuda(glass::kFloat)).t();
  nt.uniform_(3, 4);
  Tensor h = nt.cpu();
  EXPECT_GE(h.min().item<float>(), 3.0f);
  EXPECT_LT(h.max().item<float>(), 4.0f);
}

TEST_F(CudaRandom, RandpermIsAPermutationAndReproducible) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 11);
  Tensor p = glass::randperm(50, gen, on_cuda(glass::kLong));
  EXPECT_TRUE(p.is_cuda());
  std::vector<int64_t> v = host_values<int64_t>(p);
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[size_t(i)], i);
  gen.manual_seed(11);
  EXPECT_EQ(host_values<int64_t>(glass::randperm(50, gen, on_cuda(glass::kLong))), v);
}

TEST_F(CudaRandom, MomentsOfOneHundredThousandSamples) {
  Generator gen = glass::make_generator(Device(glass::kCUDA, 0), 31337);
  for (glass::ScalarType t : {glass::kFloat, glass::kDouble}) {
    Tensor u = glass::rand({100000}, gen, on_cuda(t)).cpu().to(glass::kDouble);
    EXPECT_GE(u.min().item<double>(), 0.0);
    EXPECT_LT(u.max().item<double>(), 1.0);
    EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.005);
    EXPECT_NEAR(u.var().item<double>(), 1.0 / 12, 0.002);
    Tensor n = glass::randn({100000}, gen, on_cuda(t)).cpu().to(glass::kDouble);
    EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.015);
    EXPECT_NEAR(n.var().item<double>(), 1.0, 0.02);
  }
  Tensor r = glass::randint(-3, 4, {100000}, gen, on_cuda(glass::kLong)).cpu();
  EXPECT_EQ(r.min().item<int64_t>(), -3);
  EXPECT_EQ(r.max().item<int64_t>(), 3);
  EXPECT_NEAR(r.to(glass::kDouble).mean().item<double>(), 0.0, 0.03);
}

TEST_F(CudaRandom, BadInputGetsClearErrors) {
  Generator cpu = glass::make_generator(glass::kCPU);
  EXPECT_NE(error_of([&] {
              glass::rand({2}, cpu, on_cuda(glass::kFloat));
            }).find("expected a generator for device cuda"),
            std::string::npos);
  EXPECT_NE(error_of([&] { glass::randint(0, 2, {2}, on_cuda(glass::kBool)); }).find("Bool"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { glass::empty({2}, on_cuda(glass::kLong)).uniform_(); }).find("floating-point"),
      std::string::npos);
}

}  // namespace
