// bench/bench_distributed_allreduce.cpp — the ring all-reduce written out (distributed/ring.h)
// against Gloo's own allreduce, on the same gloo groups, in the same run.
//
// Ranks are persistent threads of this process (bench/distributed_ranks.h), each with its own
// GlooProcessGroup over one HashStore: the bytes cross real TCP connections over loopback,
// only the rendezvous is in-process. Both contestants use only what the group gives them —
// the ring its send/recv, Gloo its allreduce (a ring too, segmented and pipelined) — and both
// reduce on one thread per rank. float32 sums, sizes 4 KiB to 64 MiB (×4 steps), 2 and 4
// ranks. Every size is checked once before timing (rank r holds r + 1; every element must
// come back n(n + 1)/2), then timed on zeros (the adds cost the same; the values stay put).
//
// Time: manual, the slowest rank's, from a common release (RankThreads). Each iteration runs
// one Gloo allreduce and one ring, in turns (BM_RingVsGloo), so that a shared machine's
// drifting load falls on both alike. Counters: gloo_GBps and ring_GBps = 2(n−1)/n · bytes /
// median time (NCCL's bus bandwidth: what each link carries, comparable across n), and
// ring_vs_gloo = Gloo's median time / the ring's.
//
//   build-p1/bench/bench_distributed_allreduce --benchmark_min_time=1   (bench/RESULTS.md)
//
// MPI_Allreduce (the third contestant) needs ranks that are processes (MPI is
// initialised once per process). Under mpirun this program runs an MPI mode instead: every
// process is one rank with an MPIProcessGroup and a GlooProcessGroup (over a TCPStore that
// rank 0 hosts on port 0 and whose port it broadcasts over MPI), and it times, size by size,
// MPI_Allreduce, Gloo's allreduce, the ring on gloo's send/recv and the ring on MPI's —
// Google Benchmark is not used there (each process would pick its own iteration count);
// rank 0 picks it and broadcasts it, and every iteration starts behind a barrier.
//
//   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2
//       --mca btl self,tcp build-w3b/bench/bench_distributed_allreduce --min_time=0.2
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "core/tensor.h"
#include "distributed/hash_store.h"
#include "distributed/process_group.h"
#include "distributed/ring.h"
#include "distributed_ranks.h"

#ifdef GLASS_HAVE_GLOO
#include "distributed/backends/gloo.h"
#endif
#if defined(GLASS_HAVE_GLOO) && defined(GLASS_HAVE_MPI)
#include <cstdlib>
#include <cstring>

#include "distributed/backends/mpi.h"
#include "distributed/tcp_store.h"
#endif

namespace {

using glass::Tensor;
using namespace glass::distributed;

constexpr int64_t kMinBytes = 4 << 10;
constexpr int64_t kMaxBytes = 64 << 20;

#ifdef GLASS_HAVE_GLOO

// One world of `ranks` gloo ranks, built once and kept for every size and contestant.
struct GlooWorld {
  std::vector<std::shared_ptr<ProcessGroup>> groups;
  std::vector<Tensor> tensors;  // rank r's buffer at the current size
  std::unique_ptr<glass_bench::RankThreads> threads;
  int64_t numel = -1;

  explicit GlooWorld(int ranks) : groups(static_cast<size_t>(ranks)), tensors(groups.size()) {
    auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
    threads = std::make_unique<glass_bench::RankThreads>(
        ranks,
        [this, store, ranks](int rank) {
          ProcessGroup::Options options;
          options.timeout = std::chrono::seconds(30);  // a failing rank ends the bench, bounded
          options.group_name = "bench_allreduce";
          groups[rank] = std::make_shared<GlooProcessGroup>(store, rank, ranks, options);
        },
        [this](int rank) {
          tensors[rank] = Tensor();
          groups[rank].reset();  // the mesh is torn down on its own rank's thread
        });
  }

  // Sizes every rank's buffer to `n` floats, checks `reduce` once with integer data, then
  // zeroes the buffers for timing.
  void prepare(int64_t n, const std::function<void(ProcessGroup&, Tensor&)>& reduce) {
    const int world = threads->world();
    if (n != numel) {
      threads->run([&](int rank) { tensors[rank] = glass::zeros({n}); });
      numel = n;
    }
    threads->run([&](int rank) { tensors[rank].fill_(rank + 1); });
    threads->run([&](int rank) { reduce(*groups[rank], tensors[rank]); });
    const float want = static_cast<float>(world * (world + 1) / 2);
    for (int r = 0; r < world; ++r) {
      const float* p = tensors[r].data_ptr<float>();
      for (int64_t i = 0; i < n; ++i)
        GLASS_CHECK(p[i] == want, "rank ", r, ": element ", i, " of ", n, " is ", p[i],
                    " after the all-reduce, expected ", want);
    }
    threads->run([&](int rank) { tensors[rank].zero_(); });
  }
};

// Worlds live until main() ends them: one per rank count, reused by every benchmark.
std::map<int, std::unique_ptr<GlooWorld>>& worlds() {
  static std::map<int, std::unique_ptr<GlooWorld>> table;
  return table;
}

GlooWorld& world_of(int ranks) {
  auto& w = worlds()[ranks];
  if (!w) w = std::make_unique<GlooWorld>(ranks);
  return *w;
}

void gloo_allreduce(ProcessGroup& group, Tensor& t) { group.allreduce(t)->wait(); }
void ring(ProcessGroup& group, Tensor& t) { ring_all_reduce(group, t); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Gloo and the ring in turns, one all-reduce each per iteration (which goes first alternates),
// so both see the same machine: on a shared machine whose load drifts over seconds, timing
// one contestant for a while and then the other compares two different machines. The
// iteration time is the pair's; the counters are each contestant's median.
// state.range(0): bytes per rank; range(1): ranks.
void BM_RingVsGloo(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  const int ranks = static_cast<int>(state.range(1));
  const int64_t n = bytes / static_cast<int64_t>(sizeof(float));
  GlooWorld* world = nullptr;
  try {
    world = &world_of(ranks);
    world->prepare(n, gloo_allreduce);
    world->prepare(n, ring);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto time = [&](void (*reduce)(ProcessGroup&, Tensor&)) {
    return world->threads->run(
        [&](int rank) { reduce(*world->groups[rank], world->tensors[rank]); });
  };
  std::vector<double> t_gloo, t_ring;
  for (auto _ : state) {
    const bool ring_first = t_ring.size() % 2 == 1;
    if (ring_first) t_ring.push_back(time(ring));
    t_gloo.push_back(time(gloo_allreduce));
    if (!ring_first) t_ring.push_back(time(ring));
    state.SetIterationTime(t_gloo.back() + t_ring.back());
  }
  const double bus_bytes = 2.0 * (ranks - 1) / ranks * static_cast<double>(bytes);
  state.counters["gloo_GBps"] = bus_bytes / median(t_gloo) / 1e9;
  state.counters["ring_GBps"] = bus_bytes / median(t_ring) / 1e9;
  state.counters["ring_vs_gloo"] = median(t_gloo) / median(t_ring);
}

void register_all() {
  for (int ranks : {2, 4}) {
    for (int64_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
      benchmark::RegisterBenchmark("BM_RingVsGloo", BM_RingVsGloo)
          ->ArgNames({"bytes", "ranks"})
          ->Args({bytes, ranks})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

#else

void register_all() {
  std::fprintf(stderr,
               "bench_distributed_allreduce: built without Gloo (apt install libgloo-dev); "
               "nothing to measure\n");
}

#endif  // GLASS_HAVE_GLOO

#if defined(GLASS_HAVE_GLOO) && defined(GLASS_HAVE_MPI)

bool under_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

// One contestant of the MPI mode: what it is called and one all-reduce of `t`.
struct MpiContestant {
  const char* name;
  std::function<void(Tensor&)> reduce;
};

// Seconds of one `reduce`, the slowest rank's, every rank released by a barrier.
double timed_once(ProcessGroup& mpi, const std::function<void(Tensor&)>& reduce, Tensor& t) {
  mpi.barrier()->wait();
  const auto start = std::chrono::steady_clock::now();
  reduce(t);
  Tensor seconds = glass::full(
      {1}, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      glass::TensorOptions().dtype(glass::kFloat64));
  mpi.allreduce(seconds, {ReduceOp::MAX})->wait();
  return seconds.data_ptr<double>()[0];
}

int mpi_main(int argc, char** argv) {
  double min_time = 0.2;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--min_time=", 11) == 0) min_time = std::atof(argv[i] + 11);
  const int rank = mpi_world_rank();
  const int world = mpi_world_size();
  ProcessGroup::Options options;
  options.timeout = std::chrono::seconds(60);
  options.group_name = "bench_mpi";
  auto mpi = std::make_shared<MPIProcessGroup>(rank, world, options);

  // Gloo's rendezvous: rank 0 hosts a TCPStore on any free port and tells the others.
  TCPStoreOptions store_options;
  store_options.timeout = std::chrono::seconds(60);
  store_options.wait_for_workers = false;
  store_options.is_server = rank == 0;
  std::shared_ptr<TCPStore> store;
  if (rank == 0) store = std::make_shared<TCPStore>("127.0.0.1", store_options);
  Tensor port =
      glass::full({1}, rank == 0 ? store->port() : 0, glass::TensorOptions().dtype(glass::kInt64));
  mpi->broadcast(port, {.rootRank = 0})->wait();
  if (rank != 0) {
    store_options.port = static_cast<uint16_t>(port.data_ptr<int64_t>()[0]);
    store = std::make_shared<TCPStore>("127.0.0.1", store_options);
  }
  options.group_name = "bench_gloo";
  auto gloo = std::make_shared<GlooProcessGroup>(store, rank, world, options);

  const std::vector<MpiContestant> contestants = {
      {"MPI_Allreduce", [&](Tensor& t) { mpi->allreduce(t)->wait(); }},
      {"gloo allreduce", [&](Tensor& t) { gloo->allreduce(t)->wait(); }},
      {"ring on gloo", [&](Tensor& t) { ring_all_reduce(*gloo, t); }},
      {"ring on mpi", [&](Tensor& t) { ring_all_reduce(*mpi, t); }},
  };
  if (rank == 0)
    std::printf("%d ranks (processes), float32 sum; busbw = 2(n-1)/n * bytes / time, GB/s\n%10s",
                world, "bytes");
  if (rank == 0) {
    for (const auto& c : contestants) std::printf(" %16s", c.name);
    std::printf("  %s\n", "ring on gloo / best library");
  }
  for (int64_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
    const int64_t n = bytes / static_cast<int64_t>(sizeof(float));
    Tensor t = glass::empty({n});
    std::vector<double> busbw;
    for (const auto& c : contestants) {
      // Correct first: rank r holds r + 1, every element must come back n(n + 1)/2.
      t.fill_(rank + 1);
      c.reduce(t);
      const float want = static_cast<float>(world * (world + 1) / 2);
      const float* p = t.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i)
        GLASS_CHECK(p[i] == want, c.name, ": rank ", rank, " element ", i, " is ", p[i],
                    ", expected ", want);
      t.zero_();
      // Rank 0 sizes the run from three iterations; everyone runs that many.
      double probe = 0;
      for (int i = 0; i < 3; ++i) probe += timed_once(*mpi, c.reduce, t);
      Tensor iters = glass::full(
          {1}, std::clamp<int64_t>(static_cast<int64_t>(min_time / (probe / 3)), 3, 20000),
          glass::TensorOptions().dtype(glass::kInt64));
      mpi->broadcast(iters, {.rootRank = 0})->wait();
      double total = 0;
      const int64_t count = iters.data_ptr<int64_t>()[0];
      for (int64_t i = 0; i < count; ++i) total += timed_once(*mpi, c.reduce, t);
      busbw.push_back(2.0 * (world - 1) / world * static_cast<double>(bytes) *
                      static_cast<double>(count) / total / 1e9);
    }
    if (rank == 0) {
      std::printf("%10lld", static_cast<long long>(bytes));
      for (double b : busbw) std::printf(" %16.3f", b);
      std::printf("  %.3f\n", busbw[2] / std::max(busbw[0], busbw[1]));
      std::fflush(stdout);
    }
  }
  gloo.reset();
  mpi->barrier()->wait();  // nobody closes the store while another rank still uses it
  return 0;
}

#endif  // GLASS_HAVE_GLOO && GLASS_HAVE_MPI

}  // namespace

int main(int argc, char** argv) {
#if defined(GLASS_HAVE_GLOO) && defined(GLASS_HAVE_MPI)
  if (under_mpirun()) {
    try {
      return mpi_main(argc, argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_distributed_allreduce: %s\n", e.what());
      return 1;
    }
  }
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
#ifdef GLASS_HAVE_GLOO
  worlds().clear();  // joins every rank thread before static destruction begins
#endif
  return 0;
}
