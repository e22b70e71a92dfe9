// tests/distributed/gloo_test.cpp — the gloo backend, with ranks as threads of this process.
//
// Every test starts N threads, each building a GlooProcessGroup over one shared HashStore
// (gloo's TCP connections over loopback are real; only the rendezvous is in-process), runs
// the same program on each rank, and compares with values worked out by hand: integer data
// where exactness matters, float sums against the sum taken in a known order. Every wait is
// bounded (the group timeout, a few seconds at most), and every thread is joined.
#ifdef GLASS_HAVE_GLOO

#include "distributed/backends/gloo.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/generator.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "core/tensor.h"
#include "core/test_util.h"
#include "cuda/cuda.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/hash_store.h"
#include "distributed/ring.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using namespace std::chrono_literals;

using testing::expect_no_errors;
using testing::RankBody;

std::shared_ptr<ProcessGroup> make_gloo(std::shared_ptr<Store> store, int rank, int size,
                                        const ProcessGroup::Options& options) {
  return std::make_shared<GlooProcessGroup>(std::move(store), rank, size, options);
}

// Runs `body` on `world` ranks (threads), each with its own group from `factory` (gloo
// unless told); returns what each rank threw ("" for none).
std::vector<std::string> run_ranks(int world, const RankBody& body,
                                   std::chrono::milliseconds timeout = 5s,
                                   const testing::GroupFactory& factory = make_gloo) {
  return testing::run_rank_threads(world, factory, body, timeout, "gloo_test");
}

std::vector<int64_t> values_of(const Tensor& t) {
  const Tensor c = t.contiguous().to(kInt64);
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// Rank r's integer input: element i is (r + 1) * (i - 2) + r — negatives included, so AVG's
// rounding toward zero is exercised.
int64_t input_value(int r, int i) { return (r + 1) * (i - 2) + r; }
constexpr int kLength = 6;

Tensor int_input(int r) {
  std::vector<int64_t> v;
  for (int i = 0; i < kLength; ++i) v.push_back(input_value(r, i));
  return tensor(v);
}

// What each op should give for element i, reduced over `world` ranks by hand.
int64_t expected(ReduceOp op, int world, int i) {
  int64_t acc = input_value(0, i);
  for (int r = 1; r < world; ++r) {
    const int64_t x = input_value(r, i);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG: acc += x; break;
      case ReduceOp::PRODUCT: acc *= x; break;
      case ReduceOp::MAX: acc = std::max(acc, x); break;
      case ReduceOp::MIN: acc = std::min(acc, x); break;
    }
  }
  return op == ReduceOp::AVG ? acc / world : acc;  // C++ divides toward zero
}

class GlooTest : public ::testing::TestWithParam<int> {};  // the parameter: world size

TEST_P(GlooTest, AllreduceInt64EveryOpIsExact) {
  const int world = GetParam();
  const std::vector<ReduceOp> ops = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MAX,
                                     ReduceOp::MIN};
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    for (ReduceOp op : ops) {
      Tensor t = int_input(rank);
      group.allreduce(t, {op})->wait();
      std::vector<int64_t> want;
      for (int i = 0; i < kLength; ++i) want.push_back(expected(op, world, i));
      EXPECT_EQ(values_of(t), want) << "rank " << rank << ", " << to_string(op);
    }
  }));
}

TEST_P(GlooTest, AllreduceInt32AndFloat64Sum) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    Tensor i32 = int_input(rank).to(kInt32);
    Tensor f64 = int_input(rank).to(kFloat64);
    group.allreduce(i32)->wait();
    group.allreduce(f64)->wait();
    std::vector<int64_t> want;
    for (int i = 0; i < kLength; ++i) want.push_back(expected(ReduceOp::SUM, world, i));
    EXPECT_EQ(i32.dtype(), kInt32);
    EXPECT_EQ(values_of(i32), want);
    EXPECT_EQ(values_of(f64), want);  // small integers: exact in float64
  }));
}

// Floats: gloo's ring adds in its own order; the result must be within a few ulps of the
// sum taken rank by rank.
TEST_P(GlooTest, AllreduceFloat32MatchesSumInRankOrder) {
  const int world = GetParam();
  constexpr int n = 1000;
  // Not representable sums (sevenths), so the order of additions shows in the last bits.
  auto value = [](int r, int i) {
    return static_cast<float>((37 * i + 13 * r) % 101) / 7.0f - 5.0f;
  };
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    std::vector<float> mine;
    for (int i = 0; i < n; ++i) mine.push_back(value(rank, i));
    Tensor t = tensor(mine);
    group.allreduce(t)->wait();
    const float* got = t.data_ptr<float>();
    for (int i = 0; i < n; ++i) {
      float want = 0;
      for (int r = 0; r < world; ++r) want += value(r, i);
      ASSERT_NEAR(got[i], want, 1e-5f * (1.0f + std::abs(want))) << "element " << i;
    }
  }));
}

TEST_P(GlooTest, BroadcastFromRankOne) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    // Rank r holds [10r, 10r + 1, 10r + 2]; everyone ends with rank 1's.
    Tensor t = arange(10 * rank, 10 * rank + 3, TensorOptions(kInt64));
    group.broadcast(t, {.rootRank = 1})->wait();
    EXPECT_EQ(values_of(t), (std::vector<int64_t>{10, 11, 12})) << "rank " << rank;
  }));
}

TEST_P(GlooTest, AllgatherConcatenatedAndStacked) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    Tensor in = arange(100 * rank, 100 * rank + 3, TensorOptions(kInt64));
    Tensor flat = zeros({3 * world}, TensorOptions(kInt64));
    Tensor stacked = zeros({world, 3}, TensorOptions(kInt64));
    group.allgather(flat, in)->wait();
    group.allgather(stacked, in)->wait();
    std::vector<int64_t> want;
    for (int r = 0; r < world; ++r)
      for (int i = 0; i < 3; ++i) want.push_back(100 * r + i);
    EXPECT_EQ(values_of(flat), want) << "rank " << rank;
    EXPECT_EQ(values_of(stacked), want) << "rank " << rank;
  }));
}

TEST_P(GlooTest, ReduceScatterSumAndMax) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    // Rank r's input: world blocks of 2; element j is r * 100 + j.
    Tensor in = arange(100 * rank, 100 * rank + 2 * world, TensorOptions(kInt64));
    Tensor sum = zeros({2}, TensorOptions(kInt64));
    Tensor max = zeros({2}, TensorOptions(kInt64));
    group.reduce_scatter(sum, in)->wait();
    group.reduce_scatter(max, in, {.reduceOp = ReduceOp::MAX})->wait();
    // Block `rank` holds j = 2 * rank + k; summed over ranks: world * j + 100 * (0 + ... ).
    const int64_t rank_sum = 100 * world * (world - 1) / 2;
    for (int k = 0; k < 2; ++k) {
      const int64_t j = 2 * rank + k;
      EXPECT_EQ(values_of(sum)[static_cast<size_t>(k)], world * j + rank_sum) << "rank " << rank;
      EXPECT_EQ(values_of(max)[static_cast<size_t>(k)], 100 * (world - 1) + j) << "rank " << rank;
    }
    // The input is left as it was.
    EXPECT_EQ(values_of(in)[0], 100 * rank);
  }));
}

TEST_P(GlooTest, GatherToRankOneAndScatterFromRankZero) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    Tensor in = full({2}, 7 * rank + 1, TensorOptions(kInt64));
    std::vector<Tensor> gathered;
    if (rank == 1)
      for (int r = 0; r < world; ++r) gathered.push_back(zeros({2}, TensorOptions(kInt64)));
    group.gather(gathered, in, {.rootRank = 1})->wait();
    if (rank == 1) {
      for (int r = 0; r < world; ++r)
        EXPECT_EQ(values_of(gathered[static_cast<size_t>(r)]),
                  (std::vector<int64_t>{7 * r + 1, 7 * r + 1}));
    }

    std::vector<Tensor> pieces;
    if (rank == 0)
      for (int r = 0; r < world; ++r)
        pieces.push_back(arange(10 * r, 10 * r + 3, TensorOptions(kInt64)));
    Tensor out = zeros({3}, TensorOptions(kInt64));
    group.scatter(out, pieces, {.rootRank = 0})->wait();
    EXPECT_EQ(values_of(out), (std::vector<int64_t>{10 * rank, 10 * rank + 1, 10 * rank + 2}));
  }));
}

TEST_P(GlooTest, BarrierWaitsForEveryRank) {
  const int world = GetParam();
  std::atomic<int> arrived{0};
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int) {
    arrived.fetch_add(1);
    group.barrier()->wait();
    EXPECT_EQ(arrived.load(), world);  // nobody leaves before everybody came
  }));
}

// Each rank sends two messages right (tags 7 then 8) and receives from the left in the
// other order: tags, not arrival order, decide which buffer gets which message.
TEST_P(GlooTest, SendRecvRingMatchesByTag) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    const int right = (rank + 1) % world;
    const int left = (rank + world - 1) % world;
    std::vector<Tensor> a = {full({4}, 1000 + rank, TensorOptions(kInt64))};
    std::vector<Tensor> b = {full({4}, 2000 + rank, TensorOptions(kInt64))};
    std::vector<Tensor> got_b = {zeros({4}, TensorOptions(kInt64))};
    std::vector<Tensor> got_a = {zeros({4}, TensorOptions(kInt64))};
    auto recv_b = group.recv(got_b, left, 8);
    auto recv_a = group.recv(got_a, left, 7);
    auto send_a = group.send(a, right, 7);
    auto send_b = group.send(b, right, 8);
    for (auto& w : {send_a, send_b, recv_b, recv_a}) w->wait();
    EXPECT_EQ(values_of(got_a[0]), std::vector<int64_t>(4, 1000 + left));
    EXPECT_EQ(values_of(got_b[0]), std::vector<int64_t>(4, 2000 + left));
  }));
}

// A recv completes when the message lands, whether or not anyone calls wait().
TEST_P(GlooTest, RecvCompletesWithoutWait) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    std::vector<Tensor> buf = {zeros({3}, TensorOptions(kInt64))};
    if (rank == 1) {
      auto recv = group.recv(buf, 0, 0);
      std::promise<void> landed;
      recv->then([&](Work&) { landed.set_value(); });
      ASSERT_EQ(landed.get_future().wait_for(5s), std::future_status::ready);
      EXPECT_TRUE(recv->is_completed());
      EXPECT_EQ(values_of(buf[0]), (std::vector<int64_t>{5, 5, 5}));
    } else if (rank == 0) {
      buf[0].fill_(5);
      group.send(buf, 1, 0)->wait();
    }
  }));
}

// Two allreduces in flight at once, waited for afterwards.
TEST_P(GlooTest, AsyncAllreducesOverlap) {
  const int world = GetParam();
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    Tensor a = full({1000}, rank + 1, TensorOptions(kInt64));
    Tensor b = full({10}, 2 * rank, TensorOptions(kInt64));
    auto wa = group.allreduce(a);
    auto wb = group.allreduce(b);
    wb->wait();
    wa->wait();
    EXPECT_TRUE(wa->is_completed() && wb->is_completed());
    EXPECT_EQ(values_of(a)[999], world * (world + 1) / 2);
    EXPECT_EQ(values_of(b)[0], world * (world - 1));
  }));
}

// The same program on gloo and on the threads backend agrees within the tolerance of a
// different order of additions (exactly, for MAX and the gathers, which add nothing).
TEST_P(GlooTest, AgreesWithTheThreadsBackend) {
  const int world = GetParam();
  // Per backend, per rank: the outputs of the program, in order, as doubles.
  auto program = [world](std::vector<std::vector<double>>& results) {
    return [&results, world](ProcessGroup& group, int rank) {
      std::vector<float> x;
      for (int i = 0; i < 8 * world; ++i)
        x.push_back(static_cast<float>((29 * i + 11 * rank) % 97) / 9.0f - 4.0f);
      Tensor sum = tensor(x), max = tensor(x), scattered = zeros({8});
      Tensor gathered = zeros({8 * world * world});
      group.allreduce(sum)->wait();
      group.allreduce(max, {ReduceOp::MAX})->wait();
      group.reduce_scatter(scattered, tensor(x))->wait();
      group.allgather(gathered, tensor(x))->wait();
      auto& out = results[static_cast<size_t>(rank)];
      for (const Tensor& t : {sum, max, scattered, gathered}) {
        const Tensor d = t.to(kFloat64);
        out.insert(out.end(), d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
      }
    };
  };
  std::vector<std::vector<double>> gloo(static_cast<size_t>(world));
  std::vector<std::vector<double>> threads(static_cast<size_t>(world));
  expect_no_errors(run_ranks(world, program(gloo)));
  expect_no_errors(run_ranks(world, program(threads), 5s, [](auto store, int r, int n, auto& o) {
    return make_threads_group(std::move(store), r, n, o);
  }));
  for (int r = 0; r < world; ++r) {
    const auto& g = gloo[static_cast<size_t>(r)];
    const auto& t = threads[static_cast<size_t>(r)];
    ASSERT_EQ(g.size(), t.size());
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_NEAR(g[i], t[i], 1e-5 * (1 + std::abs(t[i]))) << "rank " << r << ", value " << i;
  }
}

// The ring written out on gloo's send/recv against gloo's own allreduce: exact on integers;
// on floats within the bound of a different summation order, and bit for bit against a
// reference that adds in the ring's order.
TEST_P(GlooTest, TheRingAgreesWithGloosAllreduce) {
  const int world = GetParam();
  const int64_t n = 1003;  // not a multiple of 2 or 4: chunks differ in length
  std::vector<Tensor> floats;
  Generator gen = make_generator(Device(kCPU), 11);
  for (int r = 0; r < world; ++r) floats.push_back(randn({n}, gen));
  const Tensor expected = ring_reference_sum(floats, world);
  std::vector<Tensor> results(static_cast<size_t>(world)), gloos(static_cast<size_t>(world));
  expect_no_errors(run_ranks(world, [&](ProcessGroup& group, int rank) {
    Tensor mine = arange(n, TensorOptions(kInt64)).mul(rank + 1);
    Tensor theirs = mine.clone();
    ring_all_reduce(group, mine);
    group.allreduce(theirs)->wait();
    EXPECT_EQ(values_of(mine), values_of(theirs)) << "rank " << rank;
    Tensor f = floats[static_cast<size_t>(rank)].clone();
    Tensor by_gloo = f.clone();
    ring_all_reduce(group, f);
    group.allreduce(by_gloo)->wait();
    results[static_cast<size_t>(rank)] = f;
    gloos[static_cast<size_t>(rank)] = by_gloo;
  }));
  for (int r = 0; r < world; ++r) {
    const auto i = static_cast<size_t>(r);
    EXPECT_TRUE(results[i].equal(expected)) << "rank " << r;
    testing::expect_within_summation_bound(results[i], gloos[i], floats,
                                           "ring vs gloo, rank " + std::to_string(r));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// Non-contiguous tensors travel through contiguous staging copies and come back in place.
TEST(Gloo, NonContiguousTensorIsStaged) {
  expect_no_errors(run_ranks(2, [&](ProcessGroup& group, int rank) {
    Tensor base = arange(0, 6, TensorOptions(kInt64)).reshape({2, 3});
    Tensor t = base.t();  // (3, 2), strides (1, 3)
    if (rank == 1) t.mul_(10);
    group.allreduce(t)->wait();
    EXPECT_FALSE(t.is_contiguous());
    EXPECT_EQ(values_of(base), (std::vector<int64_t>{0, 11, 22, 33, 44, 55}));
  }));
}

// CUDA tensors (the simulated GPU) meet gloo through host copies, as in PyTorch's gloo
// backend, and the results land back on the device. The simulated GPU, unless GLASS_CUDA=gpu
// asks for a real one (scripts/gpu_check.sh).
TEST(Gloo, CudaTensorsAreStagedThroughHostMemory) {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") cuda::use_simulator();
  expect_no_errors(run_ranks(2, [&](ProcessGroup& group, int rank) {
    Tensor t = full({3}, static_cast<int64_t>(rank + 1), TensorOptions(kInt64)).to(kCUDA);
    group.allreduce(t)->wait();
    EXPECT_TRUE(t.is_cuda());
    EXPECT_EQ(values_of(t.cpu()), (std::vector<int64_t>{3, 3, 3}));

    std::vector<Tensor> buf = {full({2}, static_cast<int64_t>(8), TensorOptions(kInt64)).to(kCUDA)};
    if (rank == 1) buf[0].zero_();
    if (rank == 0) group.send(buf, 1, 0)->wait();
    if (rank == 1) group.recv(buf, 0, 0)->wait();
    EXPECT_TRUE(buf[0].is_cuda());
    EXPECT_EQ(values_of(buf[0].cpu()), (std::vector<int64_t>{8, 8}));
  }));
}

// One rank skips a collective: the others fail at their timeout, naming the op.
TEST(Gloo, SkippedCollectiveTimesOutNamingTheOp) {
  std::promise<void> others_failed;
  std::shared_future<void> failed = others_failed.get_future().share();
  std::atomic<int> failures{0};
  const auto start = std::chrono::steady_clock::now();
  auto errors = run_ranks(
      3,
      [&](ProcessGroup& group, int rank) {
        if (rank == 2) {
          // Stay connected (a closed connection is a different error) until the others gave up.
          failed.wait_for(5s);
          return;
        }
        Tensor t = ones({4}, TensorOptions(kInt64));
        try {
          group.allreduce(t)->wait();
        } catch (...) {
          if (failures.fetch_add(1) == 1) others_failed.set_value();
          throw;
        }
      },
      500ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 8s);  // the 500 ms timeout, not a hang; generous for busy CI cores
  EXPECT_EQ(errors[2], "");
  for (int r : {0, 1}) {
    EXPECT_NE(errors[static_cast<size_t>(r)].find("allreduce #0"), std::string::npos)
        << errors[static_cast<size_t>(r)];
    EXPECT_NE(errors[static_cast<size_t>(r)].find("500 ms"), std::string::npos)
        << errors[static_cast<size_t>(r)];
  }
}

// A rank that never arrives: the rendezvous fails at the timeout naming who waited for what.
TEST(Gloo, RendezvousWithoutPeerNamesTheMissingKey) {
  auto store = std::make_shared<HashStore>(300ms);
  ProcessGroup::Options options;
  options.timeout = 300ms;
  try {
    GlooProcessGroup group(store, 0, 2, options);
    ADD_FAILURE() << "expected the rendezvous to fail";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 of 2"), std::string::npos) << what;
    EXPECT_NE(what.find("gloo/1"), std::string::npos) << what;
  }
}

// Destroying a group with a recv still pending fails that recv instead of hanging. Rank 0
// stays connected until rank 1's group is gone, so the recv fails for that reason alone.
TEST(Gloo, PendingRecvFailsWhenTheGroupIsDestroyed) {
  auto store = std::make_shared<HashStore>(5s);
  ProcessGroup::Options options;
  options.timeout = 5s;
  std::promise<void> rank0_ready, rank1_done;
  std::shared_ptr<Work> orphan;
  std::string rank0_error, rank1_error;
  std::thread rank0([&] {
    try {
      GlooProcessGroup group(store, 0, 2, options);
      rank0_ready.set_value();
      rank1_done.get_future().wait_for(5s);  // never sends
    } catch (const std::exception& e) {
      rank0_error = e.what();
    }
  });
  try {
    GlooProcessGroup group(store, 1, 2, options);
    std::vector<Tensor> buf = {zeros({3}, TensorOptions(kInt64))};
    orphan = group.recv(buf, 0, 3);
    // Rank 1's constructor can return before rank 0's has finished its side of their
    // connection; closing it now would fail rank 0's construction instead of the recv.
    rank0_ready.get_future().wait_for(5s);
  } catch (const std::exception& e) {
    rank1_error = e.what();
  }
  rank1_done.set_value();
  rank0.join();
  EXPECT_EQ(rank0_error, "");
  EXPECT_EQ(rank1_error, "");
  ASSERT_NE(orphan, nullptr);
  EXPECT_TRUE(orphan->is_completed());
  EXPECT_GLASS_ERROR(orphan->wait(1s), "recv from rank 0 (tag 3)",
                     "still pending when its gloo group was destroyed");
}

// gloo misses a peer that dies while it reads one of the peer's messages: the collective would
// wait out its timeout. The watchdog notices instead, from the store's record of the exit.
// Here rank 1 stays alive and silent (so gloo sees nothing) while the store says it exited,
// as init_process_group's TCPStore would for a killed rank; rank 0's allreduce must fail
// long before its timeout, naming rank 1, and the group must refuse later work.
TEST(Gloo, TheWatchdogFailsACollectiveWhoseSilentPeerTheStoreSaysExited) {
  auto store = std::make_shared<HashStore>(10s);
  ProcessGroup::Options options;
  options.timeout = 12s;  // far past the watchdog's tick, grace and diagnosis (about 4 s)
  options.store = store;
  std::promise<void> rank0_done;
  std::string rank1_error, first, later;
  std::chrono::steady_clock::duration took{};
  std::thread rank1([&] {
    try {
      GlooProcessGroup group(store, 1, 2, options);
      rank0_done.get_future().wait_for(15s);  // connected, never joins the allreduce
    } catch (const std::exception& e) {
      rank1_error = e.what();
    }
  });
  {
    GlooProcessGroup group(store, 0, 2, options);
    Tensor t = ones({4}, TensorOptions(kInt64));
    auto work = group.allreduce(t);
    std::this_thread::sleep_for(200ms);
    store->set("glass/exited/1", testing::bytes("pid 4242 on test"));
    store->set("glass/exited/any", testing::bytes("rank 1, pid 4242 on test"));
    const auto start = std::chrono::steady_clock::now();
    first = testing::error_of([&] { work->wait(); });
    took = std::chrono::steady_clock::now() - start;
    const auto asked = std::chrono::steady_clock::now();
    later = testing::error_of([&] { group.allreduce(t)->wait(); });
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 1s) << "later work waited: " << later;
    rank0_done.set_value();
  }  // waits for the stuck allreduce to reach gloo's timeout: bounded by options.timeout
  rank1.join();
  EXPECT_TRUE(testing::contains(first,
                                "allreduce #0: connection to rank 1 closed: it exited (recorded by "
                                "the store; gloo was still waiting 2000 ms later)"))
      << first;
  EXPECT_LT(took, 9s) << "the watchdog took too long: " << first;
  // A collective after the group gave up fails at once, naming why.
  EXPECT_TRUE(testing::contains(later, "allreduce: the gloo process group")) << later;
  EXPECT_TRUE(testing::contains(later, "is unusable: connection to rank 1 closed")) << later;
  EXPECT_EQ(rank1_error, "");
}

TEST(Gloo, FactoryBuildsAGroupNamedGloo) {
  auto store = std::make_shared<HashStore>(2s);
  ProcessGroup::Options options;
  options.timeout = 2s;
  auto group = make_gloo_group(store, 0, 1, options);
  EXPECT_EQ(group->backend_name(), "gloo");
  Tensor t = full({2}, 3, TensorOptions(kInt64));
  group->allreduce(t)->wait();  // a world of one: the identity
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{3, 3}));
}

}  // namespace
}  // namespace glass::distributed

#endif  // GLASS_HAVE_GLOO
