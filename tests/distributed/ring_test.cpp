// tests/distributed/ring_test.cpp — the ring all-reduce written out on send/recv, checked
// against the backend's own all-reduce (exact on integers, within the bound of a different
// summation order on floats) and, bit for bit, against a reference that adds in the ring's
// order.
#include "distributed/ring.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

TEST(RingChunk, CutsIntoNearlyEqualContiguousChunks) {
  // 10 elements in 4 chunks: 3, 3, 2, 2.
  EXPECT_EQ(ring_chunk(10, 4, 0).begin, 0);
  EXPECT_EQ(ring_chunk(10, 4, 0).length, 3);
  EXPECT_EQ(ring_chunk(10, 4, 1).begin, 3);
  EXPECT_EQ(ring_chunk(10, 4, 2).begin, 6);
  EXPECT_EQ(ring_chunk(10, 4, 2).length, 2);
  EXPECT_EQ(ring_chunk(10, 4, 3).begin, 8);
  // Fewer elements than ranks: some chunks are empty.
  EXPECT_EQ(ring_chunk(2, 4, 3).length, 0);
}

// Rank r's input: r * 1000 + i (int64) — every sum is known exactly.
Tensor integer_input(int rank, int64_t n) {
  return arange(n, TensorOptions().dtype(kLong)).add(rank * 1000);
}

class Ring : public ::testing::TestWithParam<int> {};

TEST_P(Ring, SumsIntegersExactlyLikeTheBackendsAllReduce) {
  const int world = GetParam();
  for (int64_t n : {1, 3, 10, 1000}) {
    run_threads(world, [&](int rank) {
      init_process_group("threads");
      Tensor mine = integer_input(rank, n);
      Tensor theirs = mine.clone();
      ring_all_reduce(*default_group(), mine);
      all_reduce(theirs);
      EXPECT_TRUE(mine.equal(theirs)) << "n = " << n << ", rank " << rank;
      // By hand: sum over r of (r * 1000 + i) = 1000 * w(w−1)/2 + w * i.
      EXPECT_EQ(mine.data_ptr<int64_t>()[n - 1], 1000 * world * (world - 1) / 2 + world * (n - 1));
      destroy_process_group();
    });
  }
}

TEST_P(Ring, FloatSumsMatchTheRingOrderBitForBitOnEveryRank) {
  const int world = GetParam();
  const int64_t n = 1237;  // not a multiple of any world size here
  std::vector<Tensor> inputs;
  Generator gen = make_generator(Device(kCPU), 42);
  for (int r = 0; r < world; ++r) inputs.push_back(randn({n}, gen));
  const Tensor expected = ring_reference_sum(inputs, world);
  std::vector<Tensor> results(world), backends(world);
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Tensor t = inputs[rank].clone();
    Tensor by_backend = t.clone();
    ring_all_reduce(*default_group(), t);
    all_reduce(by_backend);  // the threads backend adds in rank order, not the ring's
    results[rank] = t;
    backends[rank] = by_backend;
    destroy_process_group();
  });
  for (int r = 0; r < world; ++r) {
    EXPECT_TRUE(results[r].equal(expected)) << "rank " << r;
    testing::expect_within_summation_bound(results[r], backends[r], inputs,
                                           "ring vs backend, rank " + std::to_string(r));
  }
}

TEST_P(Ring, MaxMinProductAndAverage) {
  const int world = GetParam();
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    Tensor base = arange(6, TensorOptions().dtype(kDouble));
    Tensor mx = base.add(rank), mn = base.add(rank), prod = full({6}, 2.0), avg = base.add(rank);
    ring_all_reduce(*default_group(), mx, ReduceOp::MAX);
    ring_all_reduce(*default_group(), mn, ReduceOp::MIN);
    ring_all_reduce(*default_group(), prod, ReduceOp::PRODUCT);
    ring_all_reduce(*default_group(), avg, ReduceOp::AVG);
    EXPECT_TRUE(mx.equal(base.add(world - 1)));
    EXPECT_TRUE(mn.equal(base));
    EXPECT_TRUE(prod.equal(full({6}, static_cast<double>(1 << world))));
    EXPECT_TRUE(avg.allclose(base.add((world - 1) / 2.0)));
    destroy_process_group();
  });
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, Ring, ::testing::Values(1, 2, 3, 4));

TEST(Ring, RejectsNonContiguousTensorsAndIntegerAverages) {
  run_threads(2, [&](int) {
    init_process_group("threads");
    Tensor t = zeros({4, 4}).t();
    EXPECT_THROW(ring_all_reduce(*default_group(), t), std::exception);
    Tensor i = zeros({4}, TensorOptions().dtype(kLong));
    EXPECT_THROW(ring_all_reduce(*default_group(), i, ReduceOp::AVG), std::exception);
    destroy_process_group();
  });
}

}  // namespace
}  // namespace glass::distributed
