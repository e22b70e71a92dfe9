// bench/bench_distributed_overlap.cpp — how much of DDP's all-reduce time hides behind
// backward: lesson 06's MLP (784-512-512-10, batch 64 per rank) under DistributedDataParallel.
//
// Three times per iteration, each the slowest rank's from a common release (RankThreads):
//   T_backward   loss.backward() of the same model without DDP (no hooks, no communication)
//   T_allreduce  the DDP buckets' all-reduces alone, one after another, on buffers of the
//                buckets' sizes (what backward would pay if it communicated only at its end)
//   T_ddp        loss.backward() under DDP, waiting for every bucket included
// overlap = (T_backward + T_allreduce − T_ddp) / T_allreduce: the fraction of the all-reduce
// time that ran while backward was still computing (1: all hidden; 0: none; below 0: DDP
// costs more than doing the two one after the other). Medians over the iterations.
//
// Rows (ranks 2 and 4; argument `setup`):
//   0  threads, bandwidth-bound link, DDP's default buckets (first 1 MB, then 25 MB: here
//      fc3 + fc2, then fc1). Ranks are threads and each collective's wall time is set by a
//      simulated link (ThreadsLinkModel: kLatency per hop, a bandwidth) — the wire is a
//      sleep, so communication takes no CPU from backward and the overlap measured is the
//      schedule's. The bandwidth is calibrated at start-up so that all the buckets'
//      all-reduces together cost about as much as backward (counters say which link).
//   1  threads, latency-bound link (infinite bandwidth, the latency calibrated the same
//      way), one bucket per layer: every bucket costs the same, whatever its size.
//   2  gloo over real loopback TCP, default buckets: the ranks' backward passes and Gloo's
//      copies and adds compete for the same cores, so this says what the machine allows.
// stand_ins = 1: only rank 0 computes; the others are partners that are always ready
// (World says how), so on a shared 2-core machine rank 0 has a core to itself.
// The bucket timeline of rank 0's DDP backward (ReducerTimeline; ms from backward's first
// gradient, medians) is printed at the end and reported as counters: b<i>_start, b<i>_end
// for bucket i, bwd_done (backward's last node finished), all_done (gradients written back).
//
//   build-w3b/bench/bench_distributed_overlap --benchmark_min_time=0.5
//       --benchmark_repetitions=3 --benchmark_report_aggregates_only=true   (bench/RESULTS.md)
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
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "core/tensor.h"
#include "distributed/backends/threads.h"
#include "distributed/ddp.h"
#include "distributed/hash_store.h"
#include "distributed/reducer.h"
#include "distributed_ranks.h"
#include "nn/functional/loss.h"
#include "nn/modules/linear.h"

#ifdef GLASS_HAVE_GLOO
#include "distributed/backends/gloo.h"
#endif

namespace {

using glass::Tensor;
using namespace glass::distributed;
using glass::nn::parallel::DistributedDataParallel;
using glass::nn::parallel::DistributedDataParallelOptions;

constexpr int64_t kBatch = 64;  // per rank
constexpr auto kLatency = std::chrono::microseconds(50);

// Lesson 06's classifier: 784-512-512-10.
struct MLPImpl : glass::nn::Module {
  MLPImpl() : Module("MLP") {
    fc1 = register_module("fc1", glass::nn::Linear(784, 512));
    fc2 = register_module("fc2", glass::nn::Linear(512, 512));
    fc3 = register_module("fc3", glass::nn::Linear(512, 10));
  }
  Tensor forward(const Tensor& x) const { return fc3(fc2(fc1(x).relu()).relu()); }
  glass::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
GLASS_MODULE(MLP);

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One rank's state: the DDP model, the same model without DDP, its batch, its buffers.
struct Rank {
  MLP model;  // wrapped by ddp
  MLP plain;  // the same weights, no DDP: T_backward
  std::unique_ptr<DistributedDataParallel<MLP>> ddp;
  std::shared_ptr<ProcessGroup> group;
  Tensor x, y, loss;
  std::vector<Tensor> bucket_buffers;  // one per DDP bucket, for T_allreduce
};

using GroupFactory = std::function<std::shared_ptr<ProcessGroup>(std::shared_ptr<Store>, int rank,
                                                                 int size, ThreadsLinkModel)>;

// `ranks` ranks with DDP over groups from `factory`, kept for the whole benchmark.
//
// With stand_ins, only rank 0 computes once set up: the other ranks run the same
// collectives, in the same order and sizes (the buckets' all-reduces, one after another, as
// soon as the previous one is done) but no forward or backward — partners whose gradients
// are always ready. Rank 0 then has a core to itself, so what is measured is its schedule
// and the link, not how a shared 2-core machine interleaves two backward passes. (The
// collectives match DDP's exactly: after the rebuild, and with no buffers in the model,
// DDP's forward issues none, and its backward one all-reduce per bucket, in bucket order.)
class World {
 public:
  World(int ranks, const GroupFactory& factory, ThreadsLinkModel link,
        const DistributedDataParallelOptions& ddp_options, bool stand_ins)
      : ranks_(static_cast<size_t>(ranks)) {
    // Models and data are made here, on one thread: the global generator is not for
    // concurrent use, and every rank must start from the same weights anyway.
    glass::manual_seed(0);
    for (int r = 0; r < ranks; ++r) {
      Rank& k = ranks_[r];
      copy_params(*k.plain, *k.model);
      glass::Generator gen = glass::make_generator(glass::Device(glass::kCPU), 100 + r);
      k.x = glass::randn({kBatch, 784}, gen);
      k.y = glass::randint(0, 10, {kBatch}, gen);
    }
    auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
    threads_ = std::make_unique<glass_bench::RankThreads>(
        ranks,
        [this, store, ranks, factory, link, ddp_options](int rank) {
          Rank& k = ranks_[rank];
          k.group = factory(store, rank, ranks, link);
          k.ddp = std::make_unique<DistributedDataParallel<MLP>>(k.model, k.group, ddp_options);
        },
        [this](int rank) {
          Rank& k = ranks_[rank];
          k.ddp.reset();
          k.group.reset();
        });
    // Two DDP steps: the first records the order gradients arrive in, the second runs on the
    // buckets rebuilt in that order — the buckets every later step uses.
    for (int i = 0; i < 2; ++i) time_ddp_backward();
    threads_->run([&](int rank) {
      Rank& k = ranks_[rank];
      for (const auto& bucket : k.ddp->reducer().buckets()) {
        int64_t numel = 0;
        for (size_t p : bucket) numel += k.ddp->reducer().parameters()[p].second.numel();
        k.bucket_buffers.push_back(glass::zeros({numel}));
      }
    });
    stand_ins_ = stand_ins;
  }

  static void copy_params(glass::nn::Module& to, const glass::nn::Module& from) {
    glass::NoGradGuard no_grad;
    auto dst = to.parameters(), src = from.parameters();
    for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
  }

  double time_plain_backward() {
    threads_->run([&](int rank) {
      if (stand_in(rank)) return;
      Rank& k = ranks_[rank];
      k.plain->zero_grad();
      k.loss = glass::nn::functional::cross_entropy(k.plain(k.x), k.y);
    });
    return threads_->run([&](int rank) {
      if (!stand_in(rank)) ranks_[rank].loss.backward();
    });
  }

  double time_allreduce() {
    return threads_->run([&](int rank) { all_reduce_buckets(rank); });
  }

  double time_ddp_backward() {
    threads_->run([&](int rank) {
      if (stand_in(rank)) return;
      Rank& k = ranks_[rank];
      k.model->zero_grad();
      k.loss = glass::nn::functional::cross_entropy((*k.ddp)(k.x), k.y);
    });
    return threads_->run([&](int rank) {
      if (stand_in(rank)) {
        all_reduce_buckets(rank);
      } else {
        ranks_[rank].loss.backward();
      }
    });
  }

  ReducerTimeline timeline() const { return ranks_[0].ddp->reducer().last_timeline(); }
  size_t gradient_bytes() const {
    size_t bytes = 0;
    for (const Tensor& p : ranks_[0].model->parameters()) bytes += p.nbytes();
    return bytes;
  }
  size_t num_buckets() const { return ranks_[0].bucket_buffers.size(); }

 private:
  bool stand_in(int rank) const { return stand_ins_ && rank != 0; }
  void all_reduce_buckets(int rank) {
    for (Tensor& b : ranks_[rank].bucket_buffers) ranks_[rank].group->allreduce(b)->wait();
  }

  std::vector<Rank> ranks_;
  std::unique_ptr<glass_bench::RankThreads> threads_;
  bool stand_ins_ = false;  // set once the buckets are final (the warm-up runs real DDP)
};

std::shared_ptr<ProcessGroup> threads_group(std::shared_ptr<Store> store, int rank, int size,
                                            ThreadsLinkModel link) {
  ProcessGroup::Options options;
  options.timeout = std::chrono::seconds(30);
  options.group_name = "bench_overlap";
  return make_threads_group(std::move(store), rank, size, options, link);
}

#ifdef GLASS_HAVE_GLOO
std::shared_ptr<ProcessGroup> gloo_group(std::shared_ptr<Store> store, int rank, int size,
                                         ThreadsLinkModel) {
  ProcessGroup::Options options;
  options.timeout = std::chrono::seconds(30);
  options.group_name = "bench_overlap";
  return std::make_shared<GlooProcessGroup>(std::move(store), rank, size, options);
}
#endif

// What one benchmark row measures.
enum class Setup {
  // The case: DDP's default buckets (first 1 MB, then 25 MB: here 2 buckets, fc2+fc3
  // then fc1) over a link whose cost is mostly bytes (kLatency per hop).
  kThreadsBandwidthLink = 0,
  // One bucket per layer (fc3, fc2, fc1, in the order backward finishes them) over a link
  // whose cost is all latency: every bucket costs the same whatever its size, so the two
  // buckets ready before backward's last layer carry two thirds of the all-reduce time.
  kThreadsLatencyLink = 1,
  // Real loopback TCP, default buckets.
  kGloo = 2,
};

const char* setup_name(Setup setup) {
  switch (setup) {
    case Setup::kThreadsBandwidthLink: return "threads, bandwidth-bound link, default buckets";
    case Setup::kThreadsLatencyLink: return "threads, latency-bound link, a bucket per layer";
    case Setup::kGloo: return "gloo over loopback TCP, default buckets";
  }
  return "";
}

DistributedDataParallelOptions ddp_options_of(Setup setup) {
  DistributedDataParallelOptions options;
  // A 15 KiB cap: below each layer's weight (fc3's is 20 KiB), above fc2's and fc1's bias
  // (2 KiB), so a bucket closes after each weight — fc3 (weight, bias), fc2 (bias, weight),
  // fc1 (bias, weight): one bucket per layer.
  if (setup == Setup::kThreadsLatencyLink)
    options.bucket_cap_mb(15.0 / 1024).first_bucket_cap_mb(15.0 / 1024);
  return options;
}

// The link for `ranks` threads ranks, such that all buckets' all-reduces together take as
// long as backward (measured here, with the same buckets and no link). Bandwidth-bound:
// kLatency per hop, the bandwidth makes up the rest. Latency-bound: infinite bandwidth, the
// latency per hop makes it all.
ThreadsLinkModel calibrated_link(int ranks, Setup setup, bool stand_ins) {
  World probe(ranks, threads_group, {}, ddp_options_of(setup), stand_ins);
  for (int i = 0; i < 5; ++i) probe.time_plain_backward();  // warm the allocator and caches
  std::vector<double> backward;
  for (int i = 0; i < 31; ++i) backward.push_back(probe.time_plain_backward());
  const double t_backward = median(backward);
  const double n = ranks;
  const double hops = 2 * (n - 1) * static_cast<double>(probe.num_buckets());
  ThreadsLinkModel link;
  if (setup == Setup::kThreadsLatencyLink) {
    link.latency = std::chrono::microseconds(static_cast<int64_t>(t_backward / hops * 1e6));
    return link;
  }
  const double latency_s = std::chrono::duration<double>(kLatency).count();
  const double wire_bytes = 2 * (n - 1) / n * static_cast<double>(probe.gradient_bytes());
  link.latency = kLatency;
  // If latency alone already exceeds backward, bandwidth is left infinite.
  const double for_bytes = t_backward - hops * latency_s;
  link.bytes_per_second = for_bytes > 0 ? wire_bytes / for_bytes : 0;
  return link;
}

// Worlds (and their calibrated links) are built once per configuration — Google Benchmark
// calls a benchmark several times while it picks the iteration count — and live until
// main() ends them.
struct Configured {
  std::unique_ptr<World> world;
  ThreadsLinkModel link;
};
using Config = std::tuple<int, Setup, bool>;  // ranks, setup, stand-ins
std::map<Config, Configured>& worlds() {
  static std::map<Config, Configured> table;
  return table;
}

std::pair<World*, ThreadsLinkModel> world_of(int ranks, Setup setup, bool stand_ins) {
  Configured& c = worlds()[{ranks, setup, stand_ins}];
  if (!c.world) {
    if (setup == Setup::kGloo) {
#ifdef GLASS_HAVE_GLOO
      c.world =
          std::make_unique<World>(ranks, gloo_group, c.link, ddp_options_of(setup), stand_ins);
#else
      GLASS_CHECK(false, "built without Gloo (apt install libgloo-dev)");
#endif
    } else {
      c.link = calibrated_link(ranks, setup, stand_ins);
      c.world =
          std::make_unique<World>(ranks, threads_group, c.link, ddp_options_of(setup), stand_ins);
    }
  }
  return {c.world.get(), c.link};
}

// The bucket timeline of each configuration's last run, printed when every run is done.
std::map<Config, std::string>& timeline_lines() {
  static std::map<Config, std::string> table;
  return table;
}

// state.range(0): ranks; range(1): the Setup; range(2): 1 = ranks other than 0 are stand-ins.
void BM_DdpOverlap(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const Setup setup = static_cast<Setup>(state.range(1));
  const bool gloo = setup == Setup::kGloo;
  const bool stand_ins = state.range(2) == 1;
  World* world = nullptr;
  ThreadsLinkModel link;
  try {
    std::tie(world, link) = world_of(ranks, setup, stand_ins);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }

  std::vector<double> t_backward, t_allreduce, t_ddp;
  std::vector<ReducerTimeline> timelines;
  for (auto _ : state) {
    t_backward.push_back(world->time_plain_backward());
    t_allreduce.push_back(world->time_allreduce());
    t_ddp.push_back(world->time_ddp_backward());
    timelines.push_back(world->timeline());
    state.SetIterationTime(t_ddp.back());
  }

  const double tb = median(t_backward), ta = median(t_allreduce), td = median(t_ddp);
  state.SetLabel(std::string(setup_name(setup)) + (stand_ins ? ", stand-in partners" : ""));
  state.counters["T_backward_ms"] = tb * 1e3;
  state.counters["T_allreduce_ms"] = ta * 1e3;
  state.counters["T_ddp_ms"] = td * 1e3;
  state.counters["overlap"] = ta > 0 ? (tb + ta - td) / ta : 0;
  if (!gloo) {
    state.counters["link_lat_us"] = static_cast<double>(link.latency.count());
    state.counters["link_GBps"] = link.bytes_per_second / 1e9;
  }
  // The timeline, field by field the median over iterations (ms).
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const ReducerTimeline& t : timelines) v.push_back(field(t));
    return median(v) * 1e3;
  };
  const size_t buckets = timelines.empty() ? 0 : timelines[0].buckets.size();
  std::string line;
  for (size_t b = 0; b < buckets; ++b) {
    const double start = med([&](const ReducerTimeline& t) { return t.buckets[b].ready; });
    const double end = med([&](const ReducerTimeline& t) { return t.buckets[b].finished; });
    state.counters["b" + std::to_string(b) + "_start"] = start;
    state.counters["b" + std::to_string(b) + "_end"] = end;
    char part[96];
    std::snprintf(part, sizeof part, "bucket %zu (%.1f KiB) %.3f..%.3f ms; ", b,
                  static_cast<double>(timelines[0].buckets[b].bytes) / 1024, start, end);
    line += part;
  }
  const double bwd_done = med([](const ReducerTimeline& t) { return t.backward_done; });
  const double all_done = med([](const ReducerTimeline& t) { return t.all_done; });
  state.counters["bwd_done"] = bwd_done;
  state.counters["all_done"] = all_done;
  // Kept, not printed: Google Benchmark calls this several times, only the last run counts.
  char tail[160];
  std::snprintf(tail, sizeof tail, "backward done %.3f ms, gradients written back %.3f ms",
                bwd_done, all_done);
  timeline_lines()[{ranks, setup, stand_ins}] = std::string(setup_name(setup)) +
                                                (stand_ins ? ", stand-in partners" : "") + ", " +
                                                std::to_string(ranks) + " ranks: " + line + tail;
}

}  // namespace

BENCHMARK(BM_DdpOverlap)
    ->ArgNames({"ranks", "setup", "stand_ins"})
    ->Args({2, 0, 0})
    ->Args({2, 0, 1})
    ->Args({2, 1, 0})
    ->Args({2, 1, 1})
    ->Args({2, 2, 0})
    ->Args({2, 2, 1})
    ->Args({4, 0, 0})
    ->Args({4, 0, 1})
    ->Args({4, 2, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("\nBucket timelines (rank 0, medians, ms from backward's first gradient):\n");
  for (const auto& [key, line] : timeline_lines()) std::printf("  %s\n", line.c_str());
  worlds().clear();  // joins every rank thread before static destruction begins
  return 0;
}
