// tests/distributed/nccl_test.cpp — what the nccl backend can show without a GPU: NCCL loads,
// its unique id is made and handed to every rank through the store, and asking for nccl
// where kCUDA is the simulated GPU is one clear error. The collectives themselves run on a
// GPU machine: scripts/gpu_check.sh carries this binary there and runs its Nccl.* tests
// against that machine's own libnccl.
#ifdef GLASS_HAVE_NCCL
#include "distributed/backends/nccl.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/ops/factories.h"
#include "cuda/cuda.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/hash_store.h"

namespace glass::distributed {
namespace {

TEST(Nccl, TheUniqueIdIsMadeOnceAndEveryRankGetsTheSameBytes) {
  auto store = std::make_shared<HashStore>();
  std::atomic<int> generated{0};
  std::vector<std::vector<uint8_t>> ids(4);
  run_threads(4, [&](int rank) {
    ids[rank] = exchange_unique_id(
        *store, rank,
        [&] {
          ++generated;
          return std::vector<uint8_t>{1, 2, 3, static_cast<uint8_t>(rank)};
        },
        std::chrono::milliseconds(5000));
  });
  EXPECT_EQ(generated.load(), 1);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(ids[r], (std::vector<uint8_t>{1, 2, 3, 0})) << r;
}

TEST(Nccl, ARankWithoutRankZeroTimesOutNamingTheKey) {
  HashStore store;
  try {
    exchange_unique_id(
        store, 1, [] { return std::vector<uint8_t>{}; }, std::chrono::milliseconds(100));
    FAIL() << "expected a timeout";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nccl/unique_id"), std::string::npos) << e.what();
  }
}

TEST(Nccl, NcclMakesRealUniqueIdsWithoutAGpu) {
  std::string why;
  if (!nccl_is_loadable(&why)) GTEST_SKIP() << why;
  const auto a = nccl_unique_id(), b = nccl_unique_id();
  EXPECT_EQ(a.size(), 128u);  // sizeof(ncclUniqueId)
  EXPECT_NE(a, b);
  EXPECT_NE(nccl_version().find('.'), std::string::npos) << nccl_version();
}

TEST(Nccl, OnTheSimulatedGpuItSaysToUseGloo) {
  const char* want = std::getenv("GLASS_CUDA");
  if (want != nullptr && std::string(want) == "gpu") GTEST_SKIP() << "a real GPU is in use";
  cuda::use_simulator();
  std::string why;
  if (!nccl_is_loadable(&why)) GTEST_SKIP() << why;
  try {
    NCCLProcessGroup group(std::make_shared<HashStore>(), 0, 1, ProcessGroup::Options{});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nccl backend: needs a GPU, and kCUDA here is the "
                                         "simulated GPU — use the gloo backend"),
              std::string::npos)
        << e.what();
  }
}

// On a GPU machine (scripts/gpu_check.sh runs this with GLASS_CUDA=gpu): a group of one rank
// runs every collective and a send/recv batch through NCCL on the device, against values
// worked by hand.
TEST(Nccl, OnAGpuAOneRankGroupRunsEveryCollective) {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu" || !cuda::is_available() ||
      cuda::is_simulated())
    GTEST_SKIP() << "needs GLASS_CUDA=gpu and a GPU";
  std::string why_not;
  if (!nccl_is_loadable(&why_not)) GTEST_SKIP() << "this GPU machine has no NCCL: " << why_not;
  NCCLProcessGroup group(std::make_shared<HashStore>(), 0, 1, ProcessGroup::Options{});
  Tensor t = arange(6, TensorOptions().dtype(kFloat32)).to(kCUDA);
  group.allreduce(t)->wait();
  EXPECT_TRUE(t.cpu().equal(arange(6, TensorOptions().dtype(kFloat32))));
  Tensor avg = full({3}, 4.0).to(kCUDA);
  group.allreduce(avg, AllreduceOptions{.reduceOp = ReduceOp::AVG})->wait();
  EXPECT_TRUE(avg.cpu().equal(full({3}, 4.0)));
  Tensor gathered = zeros({6}, TensorOptions().dtype(kFloat32).device(kCUDA));
  group.allgather(gathered, t)->wait();
  EXPECT_TRUE(gathered.cpu().equal(t.cpu()));
  Tensor scattered = zeros({6}, TensorOptions().dtype(kFloat32).device(kCUDA));
  group.reduce_scatter(scattered, t)->wait();
  EXPECT_TRUE(scattered.cpu().equal(t.cpu()));
  Tensor cpu = full({2}, 7, TensorOptions().dtype(kInt64));  // staged to the GPU and back
  group.broadcast(cpu)->wait();
  EXPECT_TRUE(cpu.equal(full({2}, 7, TensorOptions().dtype(kInt64))));
  group.barrier()->wait();
}

}  // namespace
}  // namespace glass::distributed
#endif  // GLASS_HAVE_NCCL
