// tests/distributed/ring_segments_test.cpp — the ring with chunks large enough to travel in
// several segments (adds overlapping the wire), and the gloo backend's pool of p2p waiters.
//
// The ring must give the same bits however a chunk is cut: checked against
// ring_reference_sum (the ring's order of addition) on the threads backend and on gloo.
// The waiter pool must finish each posted op on its own, in whatever order they complete,
// with no thread left behind when the group goes.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/hash_store.h"
#include "distributed/ring.h"
#include "distributed/test_util.h"

#ifdef GLASS_HAVE_GLOO
#include "distributed/backends/gloo.h"
#endif

namespace glass::distributed {
namespace {

using namespace std::chrono_literals;

TEST(RingSegments, CountFollowsTheChunkSize) {
  const int64_t per_segment = kRingSegmentBytes / 4;  // floats in one segment's bytes
  // Small chunks: one message per step.
  EXPECT_EQ(ring_segments(1000, 2, 4), 1);
  EXPECT_EQ(ring_segments(2 * per_segment, 2, 4), 1);
  // A chunk of 2.5 segments' bytes: 3 segments (rounded up, so none is larger than asked).
  EXPECT_EQ(ring_segments(2 * (5 * per_segment / 2), 2, 4), 3);
  // Huge chunks stop at the cap; doubles count their bytes.
  EXPECT_EQ(ring_segments(100 * per_segment, 2, 4), kRingMaxSegments);
  EXPECT_EQ(ring_segments(2 * per_segment, 2, 8), 2);
  // Never more segments than the smallest chunk has elements.
  EXPECT_EQ(ring_segments(3, 4, 4), 1);
}

// Inputs of `numel` floats per rank whose chunks travel in several segments of uneven length.
std::vector<Tensor> random_inputs(int world, int64_t numel, uint64_t seed) {
  std::vector<Tensor> inputs;
  Generator gen = make_generator(Device(kCPU), seed);
  for (int r = 0; r < world; ++r) inputs.push_back(randn({numel}, gen));
  return inputs;
}

// 2.1 segments' bytes per chunk (so 3 segments), plus a few elements so that chunks (and
// segments) differ in length.
int64_t segmented_numel(int world) { return world * (21 * kRingSegmentBytes / 4 / 10) + world - 1; }

class RingSegmented : public ::testing::TestWithParam<int> {};

TEST_P(RingSegmented, FloatSumsMatchTheRingOrderBitForBit) {
  const int world = GetParam();
  const int64_t numel = segmented_numel(world);
  ASSERT_EQ(ring_segments(numel, world, 4), 3);
  const std::vector<Tensor> inputs = random_inputs(world, numel, 7);
  const Tensor expected = ring_reference_sum(inputs, world);
  std::vector<Tensor> results(static_cast<size_t>(world));
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Tensor t = inputs[rank].clone();
    ring_all_reduce(*default_group(), t);
    results[rank] = t;
    destroy_process_group();
  });
  for (int r = 0; r < world; ++r) EXPECT_TRUE(results[r].equal(expected)) << "rank " << r;
}

TEST_P(RingSegmented, IntegerSumsAndMaxAreExact) {
  const int world = GetParam();
  const int64_t numel = segmented_numel(world);
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Tensor sum = arange(numel, TensorOptions().dtype(kInt32)).add(rank);
    Tensor mx = sum.clone();
    ring_all_reduce(*default_group(), sum);
    ring_all_reduce(*default_group(), mx, ReduceOp::MAX);
    // By hand: sum over r of (i + r) = w·i + w(w−1)/2; the max is i + w − 1.
    EXPECT_TRUE(sum.equal(
        arange(numel, TensorOptions().dtype(kInt32)).mul(world).add(world * (world - 1) / 2)));
    EXPECT_TRUE(mx.equal(arange(numel, TensorOptions().dtype(kInt32)).add(world - 1)));
    destroy_process_group();
  });
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, RingSegmented, ::testing::Values(2, 3));

#ifdef GLASS_HAVE_GLOO

using testing::expect_no_errors;

// Runs `body` on `world` gloo ranks (threads over one HashStore); returns what each threw.
std::vector<std::string> run_gloo(int world, const testing::RankBody& body) {
  auto gloo = [](std::shared_ptr<Store> store, int rank, int size,
                 const ProcessGroup::Options& options) -> std::shared_ptr<ProcessGroup> {
    return std::make_shared<GlooProcessGroup>(std::move(store), rank, size, options);
  };
  return testing::run_rank_threads(world, gloo, body, 5s, "ring_segments_test");
}

TEST(RingSegmentedGloo, FloatSumsMatchTheRingOrderBitForBit) {
  for (int world : {2, 4}) {
    const int64_t numel = segmented_numel(world);
    const std::vector<Tensor> inputs = random_inputs(world, numel, 8);
    const Tensor expected = ring_reference_sum(inputs, world);
    std::vector<Tensor> results(static_cast<size_t>(world));
    expect_no_errors(run_gloo(world, [&](ProcessGroup& group, int rank) {
      Tensor t = inputs[static_cast<size_t>(rank)].clone();
      ring_all_reduce(group, t);
      results[static_cast<size_t>(rank)] = t;
    }));
    for (int r = 0; r < world; ++r)
      EXPECT_TRUE(results[static_cast<size_t>(r)].equal(expected)) << world << " ranks, rank " << r;
  }
}

// Many messages in flight at once, received in the opposite order to the one they were sent
// in: each needs a waiter of its own, and each must land in its own buffer.
TEST(GlooWaiters, ManyOpsInFlightCompleteInAnyOrder) {
  constexpr int kMessages = 12;
  expect_no_errors(run_gloo(2, [&](ProcessGroup& group, int rank) {
    std::vector<std::shared_ptr<Work>> works;
    std::vector<std::vector<Tensor>> buffers;
    for (int i = 0; i < kMessages; ++i) {
      const int tag = rank == 0 ? i : kMessages - 1 - i;
      buffers.push_back({full({3}, rank == 0 ? tag : -1, TensorOptions().dtype(kInt64))});
      works.push_back(rank == 0 ? group.send(buffers.back(), 1, tag)
                                : group.recv(buffers.back(), 0, tag));
    }
    for (auto& w : works) w->wait();
    if (rank != 1) return;
    for (int i = 0; i < kMessages; ++i) {
      const Tensor want = full({3}, kMessages - 1 - i, TensorOptions().dtype(kInt64));
      EXPECT_TRUE(buffers[i][0].equal(want)) << "message " << i;
    }
  }));
}

// A recv posted early whose sender first needs a barrier with us: the later send must still
// complete on its own (its waiter must not queue behind the recv's), or the barrier below
// could never be reached and both ranks would sit until the timeout.
TEST(GlooWaiters, AnEarlyRecvDoesNotHoldBackALaterSend) {
  expect_no_errors(run_gloo(2, [&](ProcessGroup& group, int rank) {
    std::vector<Tensor> early = {zeros({4}, TensorOptions().dtype(kInt64))};
    std::vector<Tensor> later = {full({4}, 5, TensorOptions().dtype(kInt64))};
    if (rank == 0) {
      auto pending = group.recv(early, 1, /*tag=*/1);
      group.send(later, 1, /*tag=*/2)->wait(1s);
      group.barrier()->wait(1s);
      pending->wait(1s);
      EXPECT_TRUE(early[0].equal(full({4}, 7, TensorOptions().dtype(kInt64))));
    } else {
      group.recv(later, 0, /*tag=*/2)->wait(1s);
      group.barrier()->wait(1s);
      early[0].fill_(7);
      group.send(early, 0, /*tag=*/1)->wait(1s);
    }
  }));
}

#endif  // GLASS_HAVE_GLOO

}  // namespace
}  // namespace glass::distributed
