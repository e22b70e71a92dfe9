// tests/distributed/init_test.cpp — init_process_group, the default group (per thread for
// the threads backend), new_group, the free functions, env:// over a real TCPStore, and
// the errors each misuse gets. Integer data throughout, so every expected value is exact
// and worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/tcp_store.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::contains;
using testing::error_of;

Tensor longs(const std::vector<int64_t>& values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, TensorOptions().dtype(kLong));
  for (size_t i = 0; i < values.size(); ++i) t.data_ptr<int64_t>()[i] = values[i];
  return t;
}

std::vector<int64_t> values_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

class FreeFunctions : public ::testing::TestWithParam<int> {};

TEST_P(FreeFunctions, RunOnTheThreadsDefaultGroupWithExactResults) {
  const int w = GetParam();
  run_threads(w, [&](int rank) {
    EXPECT_FALSE(is_initialized());
    init_process_group("threads");
    ASSERT_TRUE(is_initialized());
    EXPECT_EQ(get_rank(), rank);
    EXPECT_EQ(get_world_size(), w);
    EXPECT_EQ(default_group()->backend_name(), "threads");

    // all_reduce SUM of [r+1, 10(r+1)]: [w(w+1)/2, 10·w(w+1)/2].
    Tensor sum = longs({rank + 1, 10 * (rank + 1)});
    EXPECT_EQ(all_reduce(sum), nullptr);  // blocking: no Work to wait on
    EXPECT_EQ(values_of(sum), (std::vector<int64_t>{w * (w + 1) / 2, 10 * w * (w + 1) / 2}));

    // MAX of [r, -r]: [w-1, 0].
    Tensor mx = longs({rank, -rank});
    all_reduce(mx, ReduceOp::MAX);
    EXPECT_EQ(values_of(mx), (std::vector<int64_t>{w - 1, 0}));

    // broadcast from the last rank.
    Tensor b = rank == w - 1 ? longs({7, 8, 9}) : longs({0, 0, 0});
    broadcast(b, w - 1);
    EXPECT_EQ(values_of(b), (std::vector<int64_t>{7, 8, 9}));

    // all_gather_into_tensor of [r, 10r]: [0, 0, 1, 10, 2, 20, ...].
    Tensor gathered = longs(std::vector<int64_t>(2 * w, -1));
    all_gather_into_tensor(gathered, longs({rank, 10 * rank}));
    std::vector<int64_t> expect_gathered;
    for (int r = 0; r < w; ++r) expect_gathered.insert(expect_gathered.end(), {r, 10 * r});
    EXPECT_EQ(values_of(gathered), expect_gathered);

    // reduce_scatter_tensor: rank r's input is [100r + j for j < 2w]; rank q gets block q,
    // element i: sum over r of (100r + 2q + i) = 100·w(w−1)/2 + w(2q + i).
    std::vector<int64_t> input;
    for (int j = 0; j < 2 * w; ++j) input.push_back(100 * rank + j);
    Tensor block = longs({0, 0});
    reduce_scatter_tensor(block, longs(input));
    const int64_t base = 100 * w * (w - 1) / 2;
    EXPECT_EQ(values_of(block),
              (std::vector<int64_t>{base + w * (2 * rank), base + w * (2 * rank + 1)}));

    // gather [r·r] to rank 0.
    std::vector<Tensor> gather_list;
    if (rank == 0)
      for (int r = 0; r < w; ++r) gather_list.push_back(longs({-1}));
    gather(longs({rank * rank}), gather_list, 0);
    if (rank == 0) {
      for (int r = 0; r < w; ++r)
        EXPECT_EQ(values_of(gather_list[r]), (std::vector<int64_t>{r * r}));
    }

    // scatter [100 + i] from rank 1.
    std::vector<Tensor> scatter_list;
    if (rank == 1)
      for (int r = 0; r < w; ++r) scatter_list.push_back(longs({100 + r}));
    Tensor piece = longs({-1});
    scatter(piece, scatter_list, 1);
    EXPECT_EQ(values_of(piece), (std::vector<int64_t>{100 + rank}));

    // A ring of sends: each rank passes its rank to the right.
    const int right = (rank + 1) % w, left = (rank + w - 1) % w;
    std::shared_ptr<Work> sent = isend(longs({rank}), right);
    Tensor from_left = longs({-1});
    recv(from_left, left);
    sent->wait();
    EXPECT_EQ(values_of(from_left), (std::vector<int64_t>{left}));
    send(longs({rank + 50}), right, nullptr, /*tag=*/3);
    std::shared_ptr<Work> received = irecv(from_left, left, nullptr, /*tag=*/3);
    received->wait();
    EXPECT_EQ(values_of(from_left), (std::vector<int64_t>{left + 50}));

    // async_op: the Work comes back and holds the result once waited on.
    Tensor async_sum = longs({1});
    std::shared_ptr<Work> work = all_reduce(async_sum, ReduceOp::SUM, nullptr, /*async_op=*/true);
    ASSERT_NE(work, nullptr);
    work->wait();
    EXPECT_EQ(values_of(async_sum), (std::vector<int64_t>{w}));
    barrier();
    std::shared_ptr<Work> async_barrier = barrier(nullptr, /*async_op=*/true);
    ASSERT_NE(async_barrier, nullptr);
    async_barrier->wait();

    destroy_process_group();
    EXPECT_FALSE(is_initialized());
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, FreeFunctions, ::testing::Values(2, 4));

TEST(NewGroup, BuildsGroupsOfSomeRanksNumberedByTheirPlaceInTheList) {
  run_threads(4, [](int rank) {
    init_process_group("threads");
    std::shared_ptr<ProcessGroup> evens = new_group({0, 2});
    std::shared_ptr<ProcessGroup> odds_reversed = new_group({3, 1});
    if (rank % 2 == 0) {
      ASSERT_NE(evens, nullptr);
      EXPECT_EQ(odds_reversed, nullptr);
      EXPECT_EQ(evens->size(), 2);
      EXPECT_EQ(evens->rank(), rank / 2);
      Tensor t = longs({rank});
      all_reduce(t, ReduceOp::SUM, evens);
      EXPECT_EQ(values_of(t), (std::vector<int64_t>{0 + 2}));
    } else {
      EXPECT_EQ(evens, nullptr);
      ASSERT_NE(odds_reversed, nullptr);
      EXPECT_EQ(odds_reversed->rank(), rank == 3 ? 0 : 1);
      // Broadcast from group rank 0, which is global rank 3.
      Tensor t = longs({rank});
      broadcast(t, 0, odds_reversed);
      EXPECT_EQ(values_of(t), (std::vector<int64_t>{3}));
    }
    // The default group is untouched: 0 + 1 + 2 + 3.
    Tensor all = longs({rank});
    all_reduce(all);
    EXPECT_EQ(values_of(all), (std::vector<int64_t>{6}));
    evens.reset();
    odds_reversed.reset();
    destroy_process_group();
  });
}

TEST(NewGroup, BadListsAreNamed) {
  run_threads(2, [](int) {
    init_process_group("threads");
    EXPECT_EQ(error_of([] {
                new_group({0, 2});
              }),
              "new_group([0, 2]): rank 2 is not in the default group (ranks 0..1)");
    EXPECT_EQ(error_of([] { new_group({1, 1}); }), "new_group([1, 1]): rank 1 appears twice");
    EXPECT_EQ(error_of([] { new_group({}); }), "new_group: the list of ranks is empty");
    destroy_process_group();
  });
}

TEST(InitProcessGroup, DestroyThenInitAgainGivesAFreshWorkingGroup) {
  run_threads(3, [](int rank) {
    for (int round = 1; round <= 3; ++round) {
      init_process_group("threads");
      Tensor t = longs({round * (rank + 1)});
      all_reduce(t);  // round · (1 + 2 + 3)
      EXPECT_EQ(values_of(t), (std::vector<int64_t>{6 * round})) << "round " << round;
      std::shared_ptr<ProcessGroup> pair = new_group({0, 1});
      if (pair) {
        Tensor p = longs({rank + 1});
        all_reduce(p, ReduceOp::SUM, pair);
        EXPECT_EQ(values_of(p), (std::vector<int64_t>{3}));
      }
      pair.reset();
      destroy_process_group();
    }
  });
}

TEST(InitProcessGroup, ErrorsSayWhatWasWrong) {
  // The message lists every backend this build registered, in name order.
  std::string available;
  for (const std::string name : {"gloo", "mpi", "nccl", "threads"})
    if (is_backend_available(name)) available += (available.empty() ? "" : ", ") + name;
  const std::string unknown = error_of([] { init_process_group("foo"); });
  EXPECT_TRUE(contains(unknown, "init_process_group: unknown backend 'foo' (available: "))
      << unknown;
  EXPECT_TRUE(contains(unknown, available)) << unknown;
#ifdef GLASS_HAVE_NCCL
  EXPECT_TRUE(is_backend_available("nccl"));  // nccl_test.cpp tests what it says without a GPU
#else
  const std::string nccl = error_of([] { init_process_group("nccl"); });
  EXPECT_TRUE(contains(nccl,
                       "init_process_group: backend 'nccl' was not built into this "
                       "glasstorch (it needs NCCL"))
      << nccl;
  EXPECT_FALSE(is_backend_available("nccl"));
#endif
  EXPECT_TRUE(is_backend_available("threads"));

  EXPECT_EQ(error_of([] { init_process_group("threads"); }),
            "init_process_group(\"threads\"): the threads backend runs ranks as threads: call it "
            "inside run_threads() (or pass store=, rank= and world_size=)");
  EXPECT_FALSE(is_initialized());

  EXPECT_EQ(error_of([] { get_rank(); }),
            "get_rank: the default process group is not initialized; call init_process_group() "
            "first");
  EXPECT_EQ(error_of([] { default_group(); }),
            "default_group: the default process group is not initialized; call "
            "init_process_group() first");
  Tensor t = longs({1});
  EXPECT_EQ(error_of([&] { all_reduce(t); }),
            "all_reduce: no group given and the default process group is not initialized; call "
            "init_process_group() first");
  EXPECT_EQ(error_of([] { destroy_process_group(); }),
            "destroy_process_group: the default process group is not initialized");

  run_threads(2, [](int rank) {
    init_process_group("threads");
    EXPECT_EQ(error_of([] { init_process_group("threads"); }),
              "init_process_group(\"threads\"): the default process group is already "
              "initialized (backend 'threads', rank " +
                  std::to_string(rank) + " of 2); call destroy_process_group() first");
    destroy_process_group();
  });
}

// A clean rendezvous environment per test (test_util.h), and a store to meet through.
class EnvInit : public testing::RendezvousEnv {
 protected:
  void SetUp() override {
    RendezvousEnv::SetUp();
    // A backend that is not "threads", so init_process_group takes the process-wide path
    // (env://, a TCPStore, the global slot), with the threads transport for a 1-rank world.
    register_backend("threads_over_tcp", [](std::shared_ptr<Store> store, int rank, int size,
                                            const ProcessGroup::Options& options) {
      return make_threads_group(std::move(store), rank, size, options);
    });
  }
  void TearDown() override {
    if (is_initialized()) destroy_process_group();
    RendezvousEnv::TearDown();
  }
  // The store glassrun would host: a server on a port the kernel picked.
  static std::unique_ptr<TCPStore> host_store() {
    TCPStoreOptions opts;
    opts.is_server = true;
    opts.wait_for_workers = false;
    opts.timeout = std::chrono::seconds(5);
    return std::make_unique<TCPStore>("127.0.0.1", opts);
  }
  void set_env_for(uint16_t port) {
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    ::setenv("RANK", "0", 1);
    ::setenv("WORLD_SIZE", "1", 1);
    ::setenv("GLASS_USE_AGENT_STORE", "1", 1);
  }
};

void one_rank_world_works() {
  EXPECT_EQ(get_rank(), 0);
  EXPECT_EQ(get_world_size(), 1);
  Tensor t = longs({3, 4});
  all_reduce(t);
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{3, 4}));
  barrier();
}

TEST_F(EnvInit, ConnectsToTheLaunchersStoreAndRecordsTheRanksExit) {
  std::unique_ptr<TCPStore> server = host_store();
  set_env_for(server->port());
  InitOptions opts;
  opts.timeout = std::chrono::seconds(5);
  init_process_group("threads_over_tcp", opts);
  one_rank_world_works();
  const std::string exited_key = default_group()->options().group_name + "/glass/exited/0";
  EXPECT_FALSE(server->check({exited_key}));
  destroy_process_group();
  // The rank's connection closed: the store now says so, naming the process.
  server->wait({exited_key}, std::chrono::seconds(2));
  EXPECT_TRUE(contains(server->get_string(exited_key), "pid ")) << server->get_string(exited_key);
  EXPECT_FALSE(is_initialized());
}

TEST_F(EnvInit, MissingVariableIsOneLine) {
  EXPECT_EQ(error_of([] { init_process_group("threads_over_tcp"); }),
            "init_process_group(env://): MASTER_ADDR is not set (glassrun and torchrun set it; "
            "or use init_method=\"tcp://host:port\")");
  EXPECT_FALSE(is_initialized());
  InitOptions opts;
  opts.init_method = "tcp://127.0.0.1:29500";
  EXPECT_EQ(error_of([&] { init_process_group("threads_over_tcp", opts); }),
            "init_process_group: init_method='tcp://127.0.0.1:29500' needs rank= and "
            "world_size= (got rank=-1, world_size=-1)");
}

TEST_F(EnvInit, ProcessWideGroupIsSeenFromOtherThreadsAndCannotBeInitTwice) {
  std::unique_ptr<TCPStore> server = host_store();
  set_env_for(server->port());
  init_process_group("threads_over_tcp");
  EXPECT_TRUE(contains(error_of([] { init_process_group("threads_over_tcp"); }),
                       "already initialized (backend 'threads_over_tcp', rank 0 of 1)"));
  int rank_seen_elsewhere = -1;
  std::thread([&] { rank_seen_elsewhere = get_rank(); }).join();
  EXPECT_EQ(rank_seen_elsewhere, 0);
  destroy_process_group();
  // And again, on the same store: the second group gets a fresh namespace.
  init_process_group("threads_over_tcp");
  one_rank_world_works();
  destroy_process_group();
}

#ifdef GLASS_HAVE_GLOO
TEST_F(EnvInit, GlooOverEnvWithTheLaunchersStore) {
  std::unique_ptr<TCPStore> server = host_store();
  set_env_for(server->port());
  InitOptions opts;
  opts.timeout = std::chrono::seconds(10);
  init_process_group("gloo", opts);
  EXPECT_EQ(default_group()->backend_name(), "gloo");
  one_rank_world_works();
  destroy_process_group();
}
#endif

}  // namespace
}  // namespace glass::distributed
