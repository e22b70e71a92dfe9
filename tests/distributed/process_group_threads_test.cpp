// tests/distributed/process_group_threads_test.cpp — ProcessGroup's base (checks, numbering,
// staging, AVG, events, the DETAIL check, failure diagnosis) on the threads backend, and the
// threads backend itself: every collective against values worked out by hand or computed
// single-threaded in rank order, p2p ordering, real asynchrony, and the link model.
//
// Integer AVG divides truncating (toward zero): the sum 10 over 4 ranks averages to 2, and
// -10 to -2, as C++'s integer division does.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/events.h"
#include "core/ops/factories.h"
#include "cuda/cuda.h"  // registers the CUDA backend (the simulated GPU serves it here)
#include "cuda/runtime.h"
#include "distributed/backends/threads.h"
#include "distributed/process_group.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::error_of;

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// This rank's group in the current run_threads world.
std::shared_ptr<ProcessGroup> make_group(int rank, milliseconds timeout = milliseconds(5000),
                                         ThreadsLinkModel link = {}) {
  const ThreadsRendezvous* rv = current_threads_rendezvous();
  EXPECT_NE(rv, nullptr);
  ProcessGroup::Options options;
  options.timeout = timeout;
  return make_threads_group(rv->store, rank, rv->world_size, options, link);
}

std::vector<int64_t> longs(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

std::vector<float> floats(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

// A one-shot signal between rank-threads; waiting is bounded, so a broken test fails.
struct Signal {
  std::promise<void> promise;
  std::shared_future<void> future = promise.get_future().share();
  void set() { promise.set_value(); }
  bool wait(milliseconds timeout = milliseconds(5000)) {
    return future.wait_for(timeout) == std::future_status::ready;
  }
};

// [SECTION] collectives' values --------------------------------------------------------

TEST(ThreadsGroup, AllreduceSumInt64IsExact) {
  run_threads(4, [](int rank) {
    auto group = make_group(rank);
    Tensor t = arange(6, TensorOptions(kInt64)).add(rank * 100);  // rank r: r*100 + i
    group->allreduce(t)->wait();
    // sum over r of (r*100 + i) = 600 + 4i
    EXPECT_EQ(longs(t), (std::vector<int64_t>{600, 604, 608, 612, 616, 620}));
  });
}

TEST(ThreadsGroup, AllreduceEveryOpOnInt64) {
  run_threads(4, [](int rank) {
    auto group = make_group(rank);
    const int64_t v = rank + 1;  // 1, 2, 3, 4
    auto reduce = [&](ReduceOp op) {
      Tensor t = tensor({v, -v, int64_t{7}});
      AllreduceOptions opts;
      opts.reduceOp = op;
      group->allreduce(t, opts)->wait();
      return longs(t);
    };
    EXPECT_EQ(reduce(ReduceOp::SUM), (std::vector<int64_t>{10, -10, 28}));
    EXPECT_EQ(reduce(ReduceOp::AVG), (std::vector<int64_t>{2, -2, 7}));  // truncating
    EXPECT_EQ(reduce(ReduceOp::MAX), (std::vector<int64_t>{4, -1, 7}));
    EXPECT_EQ(reduce(ReduceOp::MIN), (std::vector<int64_t>{1, -4, 7}));
    EXPECT_EQ(reduce(ReduceOp::PRODUCT), (std::vector<int64_t>{24, 24, 2401}));
    EXPECT_EQ(group->sequence_number(), 5u);
  });
}

// Inputs with many significant bits, so a different summation order would change the bits.
float input_value(int rank, int i) { return 1.0f / static_cast<float>(3 + 7 * rank + i) + rank; }

TEST(ThreadsGroup, AllreduceFloatSumsInRankOrderBitForBit) {
  // Each rank's quarter of the sum spans two full 64 KiB blocks of the combining loop and a
  // partial third (threads.cpp), and the quarters are of unequal length.
  constexpr int kRanks = 4, kN = 8 * 16384 + 37;
  std::vector<float> expected(kN);
  for (int i = 0; i < kN; ++i) {
    float acc = input_value(0, i);
    for (int r = 1; r < kRanks; ++r) acc = acc + input_value(r, i);  // ((x0 + x1) + x2) + x3
    expected[i] = acc;
  }
  run_threads(kRanks, [&](int rank) {
    auto group = make_group(rank);
    std::vector<float> mine(kN);
    for (int i = 0; i < kN; ++i) mine[i] = input_value(rank, i);
    Tensor t = tensor(mine);
    Tensor avg = t.clone();
    group->allreduce(t)->wait();
    EXPECT_EQ(std::memcmp(floats(t).data(), expected.data(), kN * sizeof(float)), 0);
    AllreduceOptions opts;
    opts.reduceOp = ReduceOp::AVG;
    group->allreduce(avg, opts)->wait();
    const std::vector<float> averaged = floats(avg);
    for (int i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(averaged[i], expected[i] / kRanks);
  });
}

TEST(ThreadsGroup, BroadcastFromANonZeroRoot) {
  run_threads(4, [](int rank) {
    auto group = make_group(rank);
    Tensor t = full({2, 2}, static_cast<int64_t>(rank), TensorOptions(kInt64));
    BroadcastOptions opts;
    opts.rootRank = 2;
    group->broadcast(t, opts)->wait();
    EXPECT_EQ(longs(t), (std::vector<int64_t>{2, 2, 2, 2}));
  });
}

TEST(ThreadsGroup, AllgatherIntoBothOutputLayouts) {
  run_threads(4, [](int rank) {
    auto group = make_group(rank);
    Tensor input = tensor({{rank * 10, rank * 10 + 1}});         // [1, 2]
    Tensor concatenated = zeros({4, 2}, TensorOptions(kInt64));  // [size * 1, 2]
    Tensor stacked = zeros({4, 1, 2}, TensorOptions(kInt64));    // [size, 1, 2]
    group->allgather(concatenated, input)->wait();
    group->allgather(stacked, input)->wait();
    const std::vector<int64_t> expected{0, 1, 10, 11, 20, 21, 30, 31};
    EXPECT_EQ(longs(concatenated), expected);
    EXPECT_EQ(longs(stacked), expected);
  });
}

TEST(ThreadsGroup, AllgatherIntoASliceOfItsOwnOutput) {
  // FSDP's pattern: the input is this rank's block of the output.
  run_threads(3, [](int rank) {
    auto group = make_group(rank);
    Tensor output = zeros({6}, TensorOptions(kInt64));
    Tensor input = output.narrow(0, 2 * rank, 2);
    input.fill_(rank + 1);
    group->allgather(output, input)->wait();
    EXPECT_EQ(longs(output), (std::vector<int64_t>{1, 1, 2, 2, 3, 3}));
  });
}

TEST(ThreadsGroup, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  run_threads(4, [](int rank) {
    auto group = make_group(rank);
    // rank r holds i + 100 r at position i of 8 = 4 blocks of 2.
    Tensor input = arange(8, TensorOptions(kInt64)).add(100 * rank);
    Tensor output = zeros({2}, TensorOptions(kInt64));
    group->reduce_scatter(output, input)->wait();
    // block `rank`: positions 2r, 2r+1; sum over ranks: 4i + 600
    EXPECT_EQ(longs(output), (std::vector<int64_t>{8 * rank + 600, 8 * rank + 604}));
    ReduceScatterOptions opts;
    opts.reduceOp = ReduceOp::MAX;
    group->reduce_scatter(output, input, opts)->wait();
    EXPECT_EQ(longs(output), (std::vector<int64_t>{2 * rank + 300, 2 * rank + 301}));
  });
}

TEST(ThreadsGroup, GatherToARootAndScatterFromAnother) {
  run_threads(3, [](int rank) {
    auto group = make_group(rank);
    Tensor mine = full({2}, static_cast<int64_t>(rank * 7), TensorOptions(kInt64));
    std::vector<Tensor> gathered;
    if (rank == 1)
      for (int r = 0; r < 3; ++r) gathered.push_back(zeros({2}, TensorOptions(kInt64)));
    GatherOptions gopts;
    gopts.rootRank = 1;
    group->gather(gathered, mine, gopts)->wait();
    if (rank == 1) {
      for (int r = 0; r < 3; ++r) EXPECT_EQ(longs(gathered[r]), (std::vector<int64_t>(2, r * 7)));
    }

    std::vector<Tensor> pieces;
    if (rank == 2)
      for (int r = 0; r < 3; ++r) pieces.push_back(tensor({r, 100 + r}));
    Tensor piece = zeros({2}, TensorOptions(kInt64));
    ScatterOptions sopts;
    sopts.rootRank = 2;
    group->scatter(piece, pieces, sopts)->wait();
    EXPECT_EQ(longs(piece), (std::vector<int64_t>{rank, 100 + rank}));
  });
}

TEST(ThreadsGroup, BarrierLetsNoRankPassBeforeAllArrive) {
  std::atomic<int> arrived{0};
  run_threads(4, [&](int rank) {
    auto group = make_group(rank);
    std::this_thread::sleep_for(milliseconds(15 * rank));  // ranks come late, one by one
    arrived.fetch_add(1);
    group->barrier()->wait();
    EXPECT_EQ(arrived.load(), 4);
  });
}

// [SECTION] point-to-point --------------------------------------------------------------

TEST(ThreadsGroup, SendRecvMatchByTagInSendOrder) {
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    if (rank == 0) {
      for (auto [value, tag] : {std::pair{1, 1}, {2, 2}, {3, 1}}) {
        std::vector<Tensor> msg{tensor({int64_t{value}})};
        group->send(msg, 1, tag)->wait();
      }
    } else {
      auto take = [&](int tag) {
        std::vector<Tensor> buf{zeros({1}, TensorOptions(kInt64))};
        group->recv(buf, 0, tag)->wait();
        return longs(buf[0])[0];
      };
      EXPECT_EQ(take(2), 2);  // tag 2's only message, though sent second
      EXPECT_EQ(take(1), 1);  // tag 1's in the order sent
      EXPECT_EQ(take(1), 3);
    }
  });
}

TEST(ThreadsGroup, RecvPostedBeforeTheSendCompletesWhenItArrives) {
  Signal posted;
  run_threads(2, [&](int rank) {
    auto group = make_group(rank);
    if (rank == 1) {
      std::vector<Tensor> buf{zeros({3})};
      auto work = group->recv(buf, 0);
      EXPECT_FALSE(work->is_completed());
      posted.set();
      work->wait();
      EXPECT_EQ(floats(buf[0]), (std::vector<float>{1.5f, 2.5f, 3.5f}));
    } else {
      ASSERT_TRUE(posted.wait());
      std::vector<Tensor> msg{tensor({1.5f, 2.5f, 3.5f})};
      group->send(msg, 1)->wait();
    }
  });
}

// [SECTION] asynchrony and events -------------------------------------------------------

TEST(ThreadsGroup, AsyncWorkCompletesOnlyWhenTheLateRankJoins) {
  Signal release;
  run_threads(2, [&](int rank) {
    auto group = make_group(rank);
    Tensor t = full({4}, static_cast<int64_t>(rank + 1), TensorOptions(kInt64));
    if (rank == 1) {
      ASSERT_TRUE(release.wait());  // rank 1 is late
    }
    auto work = group->allreduce(t);
    if (rank == 0) {
      std::this_thread::sleep_for(milliseconds(50));  // the collective cannot finish alone
      EXPECT_FALSE(work->is_completed());
      release.set();
    }
    EXPECT_TRUE(work->wait());
    EXPECT_TRUE(work->is_completed());
    EXPECT_EQ(longs(t), (std::vector<int64_t>(4, 3)));
  });
}

TEST(ThreadsGroup, PublishesOneCollectiveStepPerCollectiveWithItsNumber) {
  std::mutex mutex;
  std::vector<std::pair<std::string, int64_t>> steps;
  events::Subscription sub([&](const events::Event& e) {
    if (e.kind != events::Kind::CollectiveStep) return;
    std::lock_guard<std::mutex> lock(mutex);
    steps.emplace_back(e.name, e.value);
  });
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor t = zeros({2});
    group->allreduce(t)->wait();
    group->barrier()->wait();
  });
  std::sort(steps.begin(), steps.end());
  using Step = std::pair<std::string, int64_t>;
  EXPECT_EQ(steps, (std::vector<Step>{
                       {"allreduce", 0}, {"allreduce", 0}, {"barrier", 1}, {"barrier", 1}}));
}

// [SECTION] staging ---------------------------------------------------------------------

TEST(ThreadsGroup, StagesNonContiguousTensorsAndWritesBack) {
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor base = tensor({{1, 2, 3}, {4, 5, 6}}).mul(rank + 1);  // rank 1: doubled
    Tensor view = base.t();                                      // [3, 2], not contiguous
    ASSERT_FALSE(view.is_contiguous());
    group->allreduce(view)->wait();
    // sum = 3 * original, seen through the view and through the base
    EXPECT_EQ(longs(base), (std::vector<int64_t>{3, 6, 9, 12, 15, 18}));
  });
}

TEST(ThreadsGroup, StagesCudaTensorsThroughHostMemory) {
  // The simulated GPU, unless GLASS_CUDA=gpu asks for a real one (scripts/gpu_check.sh).
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") cuda::use_simulator();
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor t = full({3}, static_cast<float>(rank + 1)).to(kCUDA);  // the simulated GPU
    group->allreduce(t)->wait();
    EXPECT_TRUE(t.is_cuda());
    EXPECT_EQ(floats(t), (std::vector<float>(3, 3.0f)));

    std::vector<Tensor> msg{full({2}, 8.0f).to(kCUDA)};
    std::vector<Tensor> buf{zeros({2}).to(kCUDA)};
    if (rank == 0) group->send(msg, 1)->wait();
    if (rank == 1) {
      group->recv(buf, 0)->wait();
      EXPECT_EQ(floats(buf[0]), (std::vector<float>(2, 8.0f)));
    }
  });
}

// A collective's result is the transport's write: the version stays where it was, whether
// the transport wrote into the tensor or into a staging copy that came back.
TEST(ThreadsGroup, ACollectiveLeavesTheVersionAloneStagedOrNot) {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") cuda::use_simulator();
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor direct = full({4}, 1.0f);
    Tensor strided = full({3, 2}, 1.0f).t();    // staged: not contiguous
    Tensor on_gpu = full({4}, 1.0f).to(kCUDA);  // staged: not on the transport's device
    Tensor gathered = empty({8});
    Tensor gathered_on_gpu = empty({8}).to(kCUDA);
    for (Tensor* t : {&direct, &strided, &on_gpu, &gathered, &gathered_on_gpu}) t->add_(0);
    group->allreduce(direct)->wait();
    group->allreduce(strided)->wait();
    group->allreduce(on_gpu)->wait();
    group->allgather(gathered, full({4}, 1.0f))->wait();
    group->allgather(gathered_on_gpu, full({4}, 1.0f).to(kCUDA))->wait();
    for (const Tensor* t : {&direct, &strided, &on_gpu, &gathered, &gathered_on_gpu})
      EXPECT_EQ(t->_version(), 1u) << "rank " << rank << ", " << t->sizes();
    EXPECT_EQ(floats(on_gpu), (std::vector<float>(4, 2.0f)));
    EXPECT_EQ(floats(gathered_on_gpu), (std::vector<float>(8, 1.0f)));
  });
}

// [SECTION] argument errors -------------------------------------------------------------

TEST(ThreadsGroup, BadArgumentsAreNamedAndUseNoSequenceNumber) {
  run_threads(4, [](int rank) {
    if (rank != 0) return;
    auto group = make_group(rank);
    Tensor f = zeros({4});
    Tensor l = zeros({4}, TensorOptions(kInt64));
    std::vector<Tensor> two{f, f};
    EXPECT_EQ(error_of([&] { group->allreduce(two); }),
              "allreduce: expected one tensor per rank, got 2");
    Tensor undefined;
    EXPECT_EQ(error_of([&] { group->allreduce(undefined); }), "allreduce: the tensor is undefined");
    Tensor flags = zeros({4}, TensorOptions(kBool));
    EXPECT_CONTAINS(error_of([&] { group->allreduce(flags); }), "dtype bool");
    BroadcastOptions bopts;
    bopts.rootRank = 5;
    EXPECT_EQ(error_of([&] { group->broadcast(f, bopts); }),
              "broadcast: root rank 5 is out of range for a group of size 4");
    Tensor out15 = zeros({15});
    EXPECT_EQ(error_of([&] { group->allgather(out15, f); }),
              "allgather: the output has shape [15] but must hold 4 copies of the input's [4], "
              "concatenated along dim 0 or stacked in a new dim 0");
    // 16 elements, but laid out [4, 4] the wrong way round would be [n0, size]: only the two
    // documented layouts pass.
    Tensor transposed = zeros({2, 8});
    EXPECT_CONTAINS(error_of([&] { group->allgather(transposed, f); }),
                    "allgather: the output has shape [2, 8] but must hold 4 copies");
    Tensor out16l = zeros({16}, TensorOptions(kInt64));
    EXPECT_EQ(error_of([&] { group->allgather(out16l, f); }),
              "allgather: the output has dtype int64 but the input has float32");
    Tensor out3 = zeros({3});
    EXPECT_CONTAINS(
        error_of([&] { group->reduce_scatter(out3, f); }),
        "reduce_scatter: the input has shape [4] but must hold 4 blocks of the output's [3]");
    std::vector<Tensor> three{f, f, f};
    EXPECT_EQ(error_of([&] { group->gather(three, f); }),
              "gather: the root (rank 0) needs one output tensor per rank (4), got 3");
    GatherOptions gopts;
    gopts.rootRank = 1;
    EXPECT_EQ(
        error_of([&] { group->gather(three, f, gopts); }),
        "gather: rank 0 is not the root (1), so its output list must be empty, got 3 tensors");
    std::vector<Tensor> mixed{f, f, zeros({2, 2}), f};
    EXPECT_EQ(error_of([&] { group->scatter(f, mixed); }),
              "scatter: the input has shape [2, 2] but the output has shape [4]");
    std::vector<Tensor> one{l};
    EXPECT_EQ(error_of([&] { group->send(one, 0); }), "send: rank 0 cannot send to itself");
    EXPECT_EQ(error_of([&] { group->recv(one, 4); }),
              "recv: peer rank 4 is out of range for a group of size 4");
    EXPECT_EQ(error_of([&] { group->send(one, 1, -1); }), "send: the tag must be >= 0, got -1");
    EXPECT_EQ(group->sequence_number(), 0u);  // nothing was queued
  });
}

TEST(ThreadsGroup, RanksCallingDifferentCollectivesFailOnBoth) {
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor t = zeros({4});
    auto work = rank == 0 ? group->allreduce(t) : group->broadcast(t);
    const std::string message = error_of([&] { work->wait(); });
    EXPECT_CONTAINS(message, "ranks called different collectives");
    EXPECT_CONTAINS(message, rank == 0 ? "allreduce #0" : "broadcast #0");
  });
}

// [SECTION] GLASS_DISTRIBUTED_DEBUG=DETAIL ----------------------------------------------

TEST(ThreadsGroup, DetailCheckNamesTheRanksShapesAndDtypesThatDiffer) {
  struct Restore {
    DebugLevel old = debug_level();
    ~Restore() { set_debug_level(old); }
  } restore;
  set_debug_level(DebugLevel::Detail);
  run_threads(2, [](int rank) {
    auto group = make_group(rank);
    Tensor t = rank == 0 ? zeros({4, 3}) : zeros({4});
    EXPECT_EQ(error_of([&] { group->allreduce(t)->wait(); }),
              "allreduce #0: ranks disagree — rank 0: float32 [4, 3]; rank 1: float32 [4]");
    // The same shape in two dtypes: the bytes would even match for int32 and float32.
    Tensor typed = rank == 0 ? zeros({5}) : zeros({5}, TensorOptions().dtype(kInt32));
    EXPECT_EQ(error_of([&] { group->broadcast(typed)->wait(); }),
              "broadcast #1: ranks disagree — rank 0: float32 [5]; rank 1: int32 [5]");
    // Agreeing calls pass the check and run.
    Tensor ok = full({2}, 1.0f);
    group->allreduce(ok)->wait();
    EXPECT_EQ(floats(ok), (std::vector<float>(2, 2.0f)));
  });
}

// [SECTION] failures --------------------------------------------------------------------

TEST(ThreadsGroup, SkippedCollectiveTimesOutNamingOpSeqAndTheMissingRank) {
  Signal checked;
  run_threads(2, [&](int rank) {
    auto group = make_group(rank);
    if (rank == 1) {  // skips the allreduce, but stays alive until rank 0 has looked
      EXPECT_TRUE(checked.wait());
      return;
    }
    Tensor t = zeros({4});
    auto work = group->allreduce(t);
    const std::string message = error_of([&] { work->wait(milliseconds(300)); });
    checked.set();
    EXPECT_CONTAINS(message, "allreduce #0 timed out after 300 ms");
    EXPECT_CONTAINS(message, "ranks that did not join allreduce #0: 1 (rank 1: silent)");
  });
}

TEST(ThreadsGroup, TransportTimeoutNamesTheMissingRank) {
  Signal checked;
  std::atomic<int> looked{0};
  run_threads(3, [&](int rank) {
    auto group = make_group(rank);
    if (rank == 2) {  // skips the allreduce, but stays alive until the others have looked
      EXPECT_TRUE(checked.wait());
      return;
    }
    Tensor t = zeros({4});
    AllreduceOptions opts;
    opts.timeout = milliseconds(300);  // the transport's own bound, not just wait()'s
    const std::string message =
        error_of([&] { group->allreduce(t, opts)->wait(milliseconds(3000)); });
    if (looked.fetch_add(1) == 1) checked.set();
    EXPECT_CONTAINS(message, "allreduce #0: ");
    EXPECT_CONTAINS(message, "300 ms waiting for rank 2");
    // Ranks 0 and 1 both reached allreduce #0, so only rank 2 is named.
    EXPECT_CONTAINS(message, "ranks that did not join allreduce #0: 2 (rank 2: silent)");
  });
}

TEST(ThreadsGroup, AFailingRankDoesNotLeaveTheOthersHanging) {
  const auto start = Clock::now();
  const std::string message = error_of([] {
    run_threads(3, [](int rank) {
      auto group = make_group(rank, milliseconds(20'000));
      if (rank == 1) throw Error("boom");
      Tensor t = zeros({4});
      const std::string why = error_of([&] { group->allreduce(t)->wait(); });
      EXPECT_CONTAINS(why, "rank 1 left the group");
    });
  });
  EXPECT_EQ(message, "rank 1: boom");
  EXPECT_LT(Clock::now() - start, milliseconds(5000));  // not the 20 s timeout
}

// [SECTION] the link model --------------------------------------------------------------

TEST(ThreadsGroup, LinkModelMakesAllreduceTakeTheRingTime) {
  ThreadsLinkModel link;
  link.bytes_per_second = 1e9;  // 1 GB/s
  run_threads(4, [&](int rank) {
    auto group = make_group(rank, milliseconds(5000), link);
    Tensor t = zeros({(1 << 20) / 4});  // 1 MiB of float32
    const auto start = Clock::now();
    group->allreduce(t)->wait();
    // 2(n-1)/n * bytes / bandwidth = 1.5 * 1048576 / 1e9 s = 1.57 ms
    EXPECT_GE(Clock::now() - start, std::chrono::microseconds(1500));
  });
}

TEST(ThreadsGroup, LinkLatencyDelaysEachMessage) {
  ThreadsLinkModel link;
  link.latency = std::chrono::microseconds(3000);
  run_threads(2, [&](int rank) {
    auto group = make_group(rank, milliseconds(5000), link);
    const auto start = Clock::now();
    group->barrier()->wait();  // 2(n-1) = 2 hops
    EXPECT_GE(Clock::now() - start, milliseconds(6));
    std::vector<Tensor> buf{zeros({1})};
    const auto p2p = Clock::now();
    if (rank == 0) group->send(buf, 1)->wait();
    if (rank == 1) group->recv(buf, 0)->wait();
    // The sender pays the wire time in send. (The receiver's clock started whenever it left
    // the barrier, which may be after the message left: no bound holds there.)
    if (rank == 0) {
      EXPECT_GE(Clock::now() - p2p, milliseconds(3));
    }
  });
}

}  // namespace
}  // namespace glass::distributed

namespace glass::distributed {
namespace {

// One ring step as a batch: every rank sends right and receives from the left at once, and
// a non-contiguous receive buffer gets the message through staging.
TEST(ThreadsGroup, BatchIsendIrecvPostsARingStepTogether) {
  run_threads(3, [](int rank) {
    auto group = make_group(rank);
    Tensor out = full({2}, static_cast<int64_t>(10 * rank), TensorOptions(kInt64));
    Tensor in = zeros({2, 2}, TensorOptions(kInt64)).select(1, 0);  // stride 2
    std::vector<P2POp> step{{P2POp::Kind::Send, out, (rank + 1) % 3, 5},
                            {P2POp::Kind::Recv, in, (rank + 2) % 3, 5}};
    auto works = group->batch_isend_irecv(step);
    ASSERT_EQ(works.size(), 2u);
    for (auto& w : works) w->wait();
    EXPECT_EQ(works[1]->op(), "recv");
    const int64_t left = 10 * ((rank + 2) % 3);
    EXPECT_EQ(longs(in.contiguous()), (std::vector<int64_t>{left, left}));
    std::vector<P2POp> bad{{P2POp::Kind::Send, out, rank, 0}};
    EXPECT_THROW(group->batch_isend_irecv(bad), std::exception);  // to itself
  });
}

}  // namespace
}  // namespace glass::distributed
