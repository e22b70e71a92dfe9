// tests/core/generator_test.cpp — Philox's known answers, and glass::Generator: seeding,
// offsets, the per-device defaults, independent generators and thread safety.
#include "core/generator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "core/philox.h"
#include "test_util.h"

namespace glass {
namespace {

// Random123's known-answer vectors for philox4x32_10 (kat_vectors).
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    philox::Counter counter;
    philox::Key key;
    uint32_t expected[4];
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       {{0xffffffff, 0xffffffff}},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       {{0xa4093822, 0x299f31d0}},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    const philox::Counter out = philox::philox4x32_10(k.counter, k.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.word[i], k.expected[i]) << "word " << i;
  }
}

TEST(Philox, GroupWordsPutTheGroupLowAndTheOffsetHighInTheCounter) {
  const uint64_t seed = 0x0123456789abcdefull, offset = 0x1122334455667788ull, group = 5;
  const philox::Counter a = philox::group_words(seed, offset, group);
  const philox::Counter b = philox::philox4x32_10(philox::Counter{{5, 0, 0x55667788, 0x11223344}},
                                                  philox::Key{{0x89abcdef, 0x01234567}});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.word[i], b.word[i]);
}

TEST(Philox, WordsToUniformsStayBelowOne) {
  EXPECT_EQ(philox::uniform_float(0), 0.0f);
  EXPECT_LT(philox::uniform_float(0xffffffffu), 1.0f);
  EXPECT_EQ(philox::uniform_float(0xffffffffu), 1.0f - 0x1.0p-24f);
  EXPECT_EQ(philox::uniform_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1.0p-53);
  EXPECT_EQ(philox::uniform_double(0, 0x80000000u), 0.5);
}

// The default CPU generator is std::mt19937_64, drawn from in order: seeded runs give the
// numbers they always gave (53 bits per double).
TEST(Generator, CpuNumbersAreTheMersenneTwistersInOrder) {
  manual_seed(123);
  Tensor u = rand({6}, kFloat64);
  std::mt19937_64 reference(123);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(u.data_ptr<double>()[i], static_cast<double>(reference() >> 11) * 0x1.0p-53);
  EXPECT_EQ(initial_seed(), 123u);
  EXPECT_EQ(default_generator(kCPU).current_seed(), 123u);
}

TEST(Generator, AnExplicitGeneratorIsIndependentOfTheDefault) {
  manual_seed(1);
  Tensor expected_default = rand({4});
  manual_seed(1);
  Generator gen = make_generator(kCPU, 99);
  Tensor a = rand({4}, gen);
  EXPECT_TRUE(testing::close(rand({4}), expected_default, 0, 0));  // the default did not move

  gen.manual_seed(99);
  EXPECT_TRUE(testing::close(rand({4}, gen), a, 0, 0));
  EXPECT_EQ(gen.current_seed(), 99u);
  EXPECT_EQ(gen.device(), Device(kCPU));

  gen.manual_seed(99);
  Tensor n1 = randn({5}, gen, kFloat64);
  Tensor i1 = randint(-5, 5, {7}, gen);
  Tensor p1 = randperm(9, gen);
  gen.manual_seed(99);
  EXPECT_TRUE(testing::close(randn({5}, gen, kFloat64), n1, 0, 0));
  EXPECT_TRUE(equal(randint(-5, 5, {7}, gen), i1));
  EXPECT_TRUE(equal(randperm(9, gen), p1));
  EXPECT_EQ(randint(10, {3}, gen, kInt32).dtype(), kInt32);
}

TEST(Generator, TheWidestIntegerRangeWorks) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  Generator gen = make_generator(kCPU, 3);
  Tensor r = randint(lo, hi, {1000}, gen);
  EXPECT_LT(r.max().item<int64_t>(), hi);
  EXPECT_GT(r.max().item<int64_t>(), 0);  // both halves of the range are drawn
  EXPECT_LT(r.min().item<int64_t>(), 0);
}

TEST(Generator, PhiloxStateIsASeedAndAnOffset) {
  Generator gen = make_generator(Device(kCUDA, 0), 42);
  EXPECT_EQ(gen.device(), Device(kCUDA, 0));
  EXPECT_EQ(gen.current_seed(), 42u);
  EXPECT_EQ(gen.get_offset(), 0u);
  auto* impl = gen.get<CUDAGeneratorImpl>();
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    const PhiloxState first = impl->next_launch();
    const PhiloxState second = impl->next_launch();
    EXPECT_EQ(first.seed, 42u);
    EXPECT_EQ(first.offset, 0u);
    EXPECT_EQ(second.offset, 1u);  // each launch owns an offset
  }
  EXPECT_EQ(gen.get_offset(), 2u);
  gen.set_offset(17);
  EXPECT_EQ(gen.get_offset(), 17u);
  gen.manual_seed(5);  // a new seed restarts the stream
  EXPECT_EQ(gen.get_offset(), 0u);
  EXPECT_EQ(gen.current_seed(), 5u);
}

TEST(Generator, ManualSeedSeedsEveryDevicesDefault) {
  Generator cuda0 = default_generator(Device(kCUDA, 0));
  cuda0.set_offset(9);
  manual_seed(77);
  EXPECT_EQ(cuda0.current_seed(), 77u);
  EXPECT_EQ(cuda0.get_offset(), 0u);
  // A device whose default did not exist yet starts from the same seed.
  EXPECT_EQ(default_generator(Device(kCUDA, 5)).current_seed(), 77u);
  EXPECT_EQ(default_generator(kCPU).current_seed(), 77u);
  // One default per device, the same every time.
  EXPECT_TRUE(default_generator(Device(kCUDA, 0)) == cuda0);
  EXPECT_FALSE(default_generator(Device(kCUDA, 5)) == cuda0);
  EXPECT_TRUE(default_generator(kCPU) == default_generator(kCPU));
}

TEST(Generator, MisuseGivesClearErrors) {
  EXPECT_GLASS_ERROR(make_generator(kCPU).get_offset(), "only the Philox generators");
  EXPECT_GLASS_ERROR(make_generator(kCPU).set_offset(3), "has no offset");
  EXPECT_GLASS_ERROR(Generator().current_seed(), "undefined");
  EXPECT_GLASS_ERROR(make_generator(kCPU).get<CUDAGeneratorImpl>(), "expected a cuda generator");
  Generator cuda = make_generator(Device(kCUDA, 0));
  EXPECT_GLASS_ERROR(rand({2}, cuda), "expected a generator for device cpu");
  EXPECT_GLASS_ERROR(randint(0, 3, {2}, cuda), "randint(): expected a generator");
  EXPECT_GLASS_ERROR(randperm(3, cuda), "randperm(): expected a generator");
}

// Each fill holds the generator's mutex for all its draws: fills racing on one generator
// get disjoint, consecutive runs of its stream — together exactly the numbers that the
// same fills made one after another would get, in some order.
TEST(Generator, ConcurrentFillsGetDisjointRunsOfTheStream) {
  constexpr int kThreads = 4;
  constexpr int64_t kPer = 2000;
  Generator gen = make_generator(kCPU, 2024);
  std::vector<Tensor> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { got[t] = rand({kPer}, gen, kFloat64); });
  for (std::thread& th : threads) th.join();

  gen.manual_seed(2024);
  std::vector<double> first_of_run;
  for (int t = 0; t < kThreads; ++t)
    first_of_run.push_back(rand({kPer}, gen, kFloat64).data_ptr<double>()[0]);
  for (int t = 0; t < kThreads; ++t) {
    const double first = got[t].data_ptr<double>()[0];
    const auto run = std::find(first_of_run.begin(), first_of_run.end(), first);
    ASSERT_NE(run, first_of_run.end()) << "thread " << t << " did not start a run";
    gen.manual_seed(2024);
    for (auto r = first_of_run.begin(); r != run; ++r) rand({kPer}, gen, kFloat64);
    EXPECT_TRUE(testing::close(got[t], rand({kPer}, gen, kFloat64), 0, 0)) << "thread " << t;
  }
}

}  // namespace
}  // namespace glass
