// tests/core/generator_test.cpp — Philox's known answers, and glass::Generator: seeding,
// offsets, the per-device defaults, independent generators, thread safety and a thread's
// own defaults (ThreadLocalGeneratorGuard).
#include "core/generator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
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

// A guarded thread's defaults start where a new process's do, whatever the process's
// defaults have drawn, and seeding them leaves the process's alone.
TEST(ThreadLocalGeneratorGuard, AThreadsOwnDefaultsStartAsANewProcesssAndLeaveTheProcesssAlone) {
  Tensor fresh = rand({5}, make_generator(kCPU), kFloat64);  // kDefaultRngSeed's first numbers
  manual_seed(31);
  rand({3}, kFloat64);  // the process's default moves on
  Tensor from_thread, after_seed;
  uint64_t seed_inside = 0;
  std::thread([&] {
    ThreadLocalGeneratorGuard own;
    from_thread = rand({5}, kFloat64);
    manual_seed(8);
    seed_inside = initial_seed();
    after_seed = rand({2}, kFloat64);
  }).join();
  EXPECT_TRUE(testing::close(from_thread, fresh, 0, 0));
  EXPECT_EQ(seed_inside, 8u);
  EXPECT_TRUE(testing::close(after_seed, rand({2}, make_generator(kCPU, 8), kFloat64), 0, 0));
  // The process's default: still seeded 31 and three floats in, untouched by the thread.
  EXPECT_EQ(initial_seed(), 31u);
  Generator reference = make_generator(kCPU, 31);
  rand({3}, reference, kFloat64);
  EXPECT_TRUE(testing::close(rand({4}, kFloat64), rand({4}, reference, kFloat64), 0, 0));
  manual_seed(kDefaultRngSeed);  // later tests start from the defaults a process starts with
}

// The point of the guard: threads that seed and draw at the same moment each get their
// seed's stream, every time — what one thread alone gets. (Unguarded, they would split one
// stream between them: ConcurrentFillsGetDisjointRunsOfTheStream.)
TEST(ThreadLocalGeneratorGuard, RacingThreadsEachDrawTheirSeedsStreamEveryTime) {
  constexpr int kThreads = 4, kDraws = 50;
  std::vector<Tensor> expected;
  for (int t = 0; t < kThreads; ++t) {
    Generator g = make_generator(kCPU, 500 + t);
    std::vector<Tensor> parts;
    for (int d = 0; d < kDraws; ++d) parts.push_back(rand({16}, g, kFloat64));
    expected.push_back(cat(parts));
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<Tensor> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&got, t] {
        ThreadLocalGeneratorGuard own(500 + t);
        std::vector<Tensor> parts;
        for (int d = 0; d < kDraws; ++d) {
          parts.push_back(rand({16}, kFloat64));
          std::this_thread::yield();
        }
        got[t] = cat(parts);
      });
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t)
      EXPECT_TRUE(testing::close(got[t], expected[t], 0, 0))
          << "round " << round << " thread " << t;
  }
}

TEST(ThreadLocalGeneratorGuard, EachDeviceHasItsOwnPhiloxDefaultUnderTheGuard) {
  Generator process_cuda0 = default_generator(Device(kCUDA, 0));
  manual_seed(5);
  process_cuda0.set_offset(3);
  std::thread([&] {
    ThreadLocalGeneratorGuard own(40);
    Generator mine = default_generator(Device(kCUDA, 0));
    EXPECT_FALSE(mine == process_cuda0);
    EXPECT_TRUE(default_generator(Device(kCUDA, 0)) == mine);  // one per device, as always
    EXPECT_EQ(mine.current_seed(), 40u);
    EXPECT_EQ(mine.get_offset(), 0u);
    mine.set_offset(9);
    manual_seed(41);  // reseeds this thread's defaults, those made and those to come
    EXPECT_EQ(mine.current_seed(), 41u);
    EXPECT_EQ(mine.get_offset(), 0u);
    EXPECT_EQ(default_generator(Device(kCUDA, 2)).current_seed(), 41u);
  }).join();
  EXPECT_EQ(process_cuda0.current_seed(), 5u);
  EXPECT_EQ(process_cuda0.get_offset(), 3u);
  EXPECT_EQ(default_generator(Device(kCUDA, 2)).current_seed(), 5u);
  manual_seed(kDefaultRngSeed);  // later tests start from the defaults a process starts with
}

// Each guarded thread's Philox default hands out its own launches, (seed, 0), (seed, 1), …,
// however the threads interleave: CUDA random ops in racing ranks are reproducible too.
TEST(ThreadLocalGeneratorGuard, RacingThreadsEachGetTheirOwnPhiloxLaunches) {
  constexpr int kThreads = 4, kLaunches = 200;
  std::vector<std::vector<PhiloxState>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&got, t] {
      ThreadLocalGeneratorGuard own(900 + t);
      auto* philox = default_generator(Device(kCUDA, 0)).get<CUDAGeneratorImpl>();
      for (int k = 0; k < kLaunches; ++k) {
        std::lock_guard<std::mutex> lock(philox->mutex());
        got[t].push_back(philox->next_launch());
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kLaunches; ++k) {
      EXPECT_EQ(got[t][k].seed, 900u + t) << "thread " << t << " launch " << k;
      EXPECT_EQ(got[t][k].offset, static_cast<uint64_t>(k)) << "thread " << t << " launch " << k;
    }
}

// A handle taken under a guard outlives it: the generator goes on where it was.
TEST(ThreadLocalGeneratorGuard, AHandleTakenUnderTheGuardOutlivesIt) {
  Generator kept;
  {
    ThreadLocalGeneratorGuard own(12);
    kept = default_generator(kCPU);
    rand({3}, kFloat64);
  }
  EXPECT_FALSE(kept == default_generator(kCPU));  // the process's default is back
  EXPECT_EQ(kept.current_seed(), 12u);
  Generator reference = make_generator(kCPU, 12);
  rand({3}, reference, kFloat64);
  EXPECT_TRUE(testing::close(rand({4}, kept, kFloat64), rand({4}, reference, kFloat64), 0, 0));
}

// The newest guard wins; when it ends, the one below goes on from where it was.
TEST(ThreadLocalGeneratorGuard, GuardsNestAndTheOuterStreamResumes) {
  Generator outer_ref = make_generator(kCPU, 1), inner_ref = make_generator(kCPU, 2);
  ThreadLocalGeneratorGuard outer(1);
  Tensor a = rand({3}, kFloat64);
  Tensor b;
  {
    ThreadLocalGeneratorGuard inner(2);
    b = rand({3}, kFloat64);
  }
  Tensor c = rand({3}, kFloat64);
  EXPECT_TRUE(testing::close(a, rand({3}, outer_ref, kFloat64), 0, 0));
  EXPECT_TRUE(testing::close(b, rand({3}, inner_ref, kFloat64), 0, 0));
  EXPECT_TRUE(testing::close(c, rand({3}, outer_ref, kFloat64), 0, 0));
  EXPECT_EQ(initial_seed(), 1u);
}

TEST(ThreadLocalGeneratorGuardDeathTest, EndingAGuardOutOfOrderAbortsNamingTheMistake) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto outer = std::make_unique<ThreadLocalGeneratorGuard>(1);
        auto inner = std::make_unique<ThreadLocalGeneratorGuard>(2);
        outer.reset();  // before `inner`: the thread would be left pointing at a freed set
      },
      "ended out of order");
}

}  // namespace
}  // namespace glass
