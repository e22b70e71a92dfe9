// tests/core/ops/random_test.cpp — seeding, ranges and moments of the random factories and
// fills, and the generator argument of uniform_/normal_, on every device (device_test.h).
//
// The CPU draws from a Mersenne Twister and a CUDA device from Philox, so the same seed
// gives different numbers on the two: these tests assert only what holds on both
// (reproducibility, ranges, moments, which generator moves). The CPU's exact numbers are
// tested in random_cpu_test.cpp and generator_test.cpp, a CUDA device's in
// tests/cuda/backend/random_test.cpp.
#include "core/ops/random.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Random : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Random);

TEST_P(Random, ManualSeedMakesRunsReproducible) {
  manual_seed(42);
  Tensor a = randn({100}, opts());
  manual_seed(42);
  Tensor b = randn({100}, opts());
  EXPECT_TRUE(close(a, b, 0, 0));
  EXPECT_FALSE(equal(randn({100}, opts()), a));  // the stream moves on
  EXPECT_EQ(initial_seed(), 42u);
}

TEST_P(Random, DistributionsHaveTheRightRangeAndMoments) {
  manual_seed(0);
  Tensor u = rand({100000}, opts(kFloat64));
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.01);
  Tensor n = randn({100000}, opts(kFloat64));
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(n.std().item<double>(), 1.0, 0.02);
  Tensor r = randint(-3, 4, {10000}, opts());
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.min().item<int64_t>(), -3);
  EXPECT_EQ(r.max().item<int64_t>(), 3);
  Tensor p = randperm(50, opts());
  EXPECT_EQ(p.sum().item<int64_t>(), 49 * 50 / 2);
  Tensor nt = zeros({4, 4}, opts()).t();
  nt.normal_(5, 0);  // non-contiguous target
  EXPECT_EQ(nt.mean().item<float>(), 5.0f);
  EXPECT_GLASS_ERROR(randint(3, 3, {2}, opts()), "low < high");
  EXPECT_GLASS_ERROR(zeros({2}, opts(kInt64)).uniform_(), "floating-point");
}

// uniform_(from, to, generator) and normal_(mean, std, generator), as libtorch's: a seeded
// generator gives the same numbers again, and the device's default generator does not move.
TEST_P(Random, FillsDrawFromAGivenGeneratorAndLeaveTheDefaultAlone) {
  manual_seed(7);
  Tensor default_stream = rand({8}, opts(kFloat64));
  manual_seed(7);
  Generator gen = make_generator(device(), 123);
  Tensor u = empty({64}, opts(kFloat64)).uniform_(-2, 3, gen);
  Tensor n = empty({64}, opts(kFloat64)).normal_(10, 0.5, gen);
  EXPECT_TRUE(close(rand({8}, opts(kFloat64)), default_stream, 0, 0));

  Generator same_seed = make_generator(device(), 123);
  EXPECT_TRUE(close(empty({64}, opts(kFloat64)).uniform_(-2, 3, same_seed), u, 0, 0));
  EXPECT_TRUE(close(empty({64}, opts(kFloat64)).normal_(10, 0.5, same_seed), n, 0, 0));
  EXPECT_FALSE(equal(empty({64}, opts(kFloat64)).uniform_(-2, 3, gen), u));  // gen moved on

  EXPECT_GE(u.min().item<double>(), -2.0);
  EXPECT_LT(u.max().item<double>(), 3.0);
  EXPECT_NEAR(n.mean().item<double>(), 10.0, 0.5);  // 8 standard errors
  // rand(size, generator) is uniform_(0, 1, generator) on a new tensor.
  gen.manual_seed(123);
  EXPECT_TRUE(close(rand({64}, gen, opts(kFloat64)) * 5 - 2, u));
}

// Passing the device's default generator is the same as passing none, and a fill that
// draws moves that generator: on a CUDA device, a Philox launch takes one offset.
TEST_P(Random, FillsUseTheGeneratorOfTheTensorsDevice) {
  manual_seed(3);
  Tensor implicit = empty({16}, opts()).normal_();
  manual_seed(3);
  Generator dev_default = default_generator(device());
  EXPECT_EQ(dev_default.device().type(), device().type());
  EXPECT_TRUE(close(empty({16}, opts()).normal_(0, 1, dev_default), implicit, 0, 0));
  if (!device().is_cpu()) {
    Generator philox = make_generator(device(), 11);
    empty({16}, opts()).uniform_(0, 1, philox);
    EXPECT_EQ(philox.get_offset(), 1u);
    EXPECT_EQ(dev_default.get_offset(), 1u);  // only the normal_ above drew from the default
  }
}

// A generator fills tensors of its own device type only, as rand(size, generator) checks;
// the tensor is left as it was.
TEST_P(Random, AGeneratorOfAnotherDeviceTypeIsAClearError) {
  const bool cpu = device().is_cpu();
  Generator wrong = make_generator(cpu ? Device(kCUDA, 0) : Device(kCPU), 1);
  const char* want = cpu ? "expected a generator for device cpu, but got one for cuda:0"
                         : "expected a generator for device cuda, but got one for cpu";
  Tensor t = zeros({3}, opts());
  EXPECT_GLASS_ERROR(t.uniform_(0, 1, wrong), "uniform_()", want);
  EXPECT_GLASS_ERROR(t.normal_(0, 1, wrong), "normal_()", want);
  EXPECT_GLASS_ERROR(rand({2}, wrong, opts()), want);
  EXPECT_TRUE(close(t, {0, 0, 0}));
}

// The autograd handler of the fills passes the generator on; the fill's gradient is zero,
// since the new values do not depend on the old.
TEST_P(Random, AGeneratorReachesTheFillThroughAutograd) {
  Tensor leaf = ones({6}, opts(kFloat64)).requires_grad_();
  Tensor y = leaf * 2;
  y.uniform_(0, 1, make_generator(device(), 5));
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "UniformBackward0");
  EXPECT_TRUE(
      close(y, empty({6}, opts(kFloat64)).uniform_(0, 1, make_generator(device(), 5)), 0, 0));
  y.sum().backward();
  EXPECT_TRUE(close(leaf.grad(), {0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace glass
