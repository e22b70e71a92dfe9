// bench/bench_distributed_overlap.cpp — how much of DDP's all-reduce time hides behind
// backward: lesson 06's MLP (784-512-512-10, batch 64 per rank) and a model whose
// last-computed layer is small (256-1024-1024-1024-10) under DistributedDataParallel.
//
// Three times per iteration, each the slowest rank's from a common release (RankThreads):
//   T_backward   loss.backward() of the same model without DDP (no hooks, no communication)
//   T_allreduce  the DDP buckets' all-reduces alone, one after another, on buffers of the
//                buckets' sizes (what backward would pay if it communicated only at its end)
//   T_ddp        loss.backward() under DDP, waiting for every bucket included
// overlap = (T_backward + T_allreduce − T_ddp) / T_allreduce: the fraction of the all-reduce
// time that ran while backward was still computing (1: all hidden; 0: none; below 0: DDP
// costs more than doing the two one after the other). Medians over the iterations. The
// counter `ceiling` is what the buckets allow: the last bucket is ready only when backward
// ends, so at most (bytes not in the last bucket) / (all bytes) of a bandwidth-bound
// all-reduce can hide.
//
// Rows (ranks 2 and 4; argument `setup`):
//   0  threads, bandwidth-bound link, DDP's default buckets (first 1 MB, then 25 MB: for
//      lesson 06's MLP fc3 + fc2, then fc1). Ranks are threads and each collective's wall
//      time is set by a simulated link (ThreadsLinkModel: kLatency per hop, a bandwidth) —
//      the wire is a sleep, so communication takes no CPU from backward and the overlap
//      measured is the schedule's. The bandwidth is calibrated at start-up so that all the
//      buckets' all-reduces together — the backend's own work and the link's — cost about as
//      much as backward (counters say which link).
//   1  threads, latency-bound link (infinite bandwidth, the latency calibrated the same
//      way), one bucket per layer: every bucket costs the same, whatever its size.
//   2  gloo over real loopback TCP, default buckets: the ranks' backward passes and Gloo's
//      copies and adds compete for the same cores, so this says what the machine allows.
// stand_ins = 1: only rank 0 computes; the others are partners that are always ready
// (World says how), so on a shared 2-core machine rank 0 has a core to itself. views = 1:
// DDP with gradient_as_bucket_view (no copy back after the all-reduce).
// model (Model): 0 lesson 06's MLP; 1 the wide MLP with 4 MB buckets (fc4 + fc3, fc2, fc1);
// 2 the wide MLP with the default buckets (fc4 + fc3, then fc2 + fc1); 3 a deeper one with
// 4 MB buckets (a bucket per 1024-wide layer); 4 one twice as deep again. The counter `bound` is
// what the schedule allows given when DDP found each bucket ready and what each costs alone
// (schedule_bound). The bucket timeline of rank 0's DDP backward (ReducerTimeline; ms from
// backward's first gradient, medians) is printed at the end and reported as counters: b<i>_start,
// b<i>_end for bucket i, bwd_done (backward's last node finished), all_done (gradients written
// back).
//
//   build-p1/bench/bench_distributed_overlap --benchmark_min_time=0.5
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

// An MLP: Linear layers fc1, fc2, … between the given widths, ReLU between them. Lesson 06's
// classifier is {784, 512, 512, 10}: its parameters are made in the same order, so with the
// same seed it has the same weights.
struct MLPImpl : glass::nn::Module {
  explicit MLPImpl(const std::vector<int64_t>& widths) : Module("MLP") {
    for (size_t i = 0; i + 1 < widths.size(); ++i)
      layers.push_back(register_module("fc" + std::to_string(i + 1),
                                       glass::nn::Linear(widths[i], widths[i + 1])));
  }
  Tensor forward(const Tensor& x) const {
    Tensor h = x;
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i](h);
      if (i + 1 < layers.size()) h = h.relu();
    }
    return h;
  }
  std::vector<glass::nn::Linear> layers;
};
GLASS_MODULE(MLP);

// The models of the rows (argument `model`).
enum class Model {
  // Lesson 06's 784-512-512-10 (2.68 MB of gradients). fc1 holds 60% of the bytes and its
  // gradient comes last: at most 40% of a bandwidth-bound all-reduce can hide.
  kLesson06 = 0,
  // 256-1024-1024-1024-10 (9.49 MB) with 4 MB buckets (fc4 + fc3, fc2, fc1): the layer whose
  // gradient comes last is small (fc1: 1.05 MB), so up to 89% can hide.
  kWide = 1,
  // The same model with DDP's default buckets (1 MB, then 25 MB): fc2 shares fc1's bucket, so
  // the last bucket holds 55% of the bytes and at most 45% can hide.
  kWideDefaultBuckets = 2,
  // 256-1024-1024-1024-1024-1024-10 (17.9 MB) with 4 MB buckets (fc6 + fc5, fc4, fc3, fc2,
  // fc1): more layers of equal cost, so a bucket's all-reduce runs while the next layers
  // compute, and only the last two buckets' wait shows.
  kDeep = 3,
  // 256-1024×10-10 (38.8 MB), 4 MB buckets (fc11 + fc10, then one per layer): twice the depth,
  // so the first bucket's wait (one layer's backward) and the last bucket's tail are each a
  // smaller part of the whole.
  kDeeper = 4,
};

std::vector<int64_t> widths_of(Model model) {
  if (model == Model::kLesson06) return {784, 512, 512, 10};
  if (model == Model::kDeep) return {256, 1024, 1024, 1024, 1024, 1024, 10};
  if (model == Model::kDeeper) {
    std::vector<int64_t> widths(11, 1024);
    widths.front() = 256;
    widths.push_back(10);
    return widths;
  }
  return {256, 1024, 1024, 1024, 10};
}

const char* model_name(Model model) {
  switch (model) {
    case Model::kLesson06: return "MLP 784-512-512-10";
    case Model::kWide: return "MLP 256-1024-1024-1024-10, 4 MB buckets";
    case Model::kWideDefaultBuckets: return "MLP 256-1024-1024-1024-10, default buckets";
    case Model::kDeep: return "MLP 256-1024x5-10, 4 MB buckets";
    case Model::kDeeper: return "MLP 256-1024x10-10, 4 MB buckets";
  }
  return "";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One rank's state: the DDP model, the same model without DDP, its batch, its buffers.
struct Rank {
  explicit Rank(const std::vector<int64_t>& widths) : model(widths), plain(widths) {}
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
  World(int ranks, Model model, const GroupFactory& factory, ThreadsLinkModel link,
        const DistributedDataParallelOptions& ddp_options, bool stand_ins) {
    // Models and data are made here, on one thread: the global generator is not for
    // concurrent use, and every rank must start from the same weights anyway.
    glass::manual_seed(0);
    const std::vector<int64_t> widths = widths_of(model);
    ranks_.reserve(static_cast<size_t>(ranks));  // DDP and the threads keep references
    for (int r = 0; r < ranks; ++r) {
      Rank& k = ranks_.emplace_back(widths);
      copy_params(*k.plain, *k.model);
      glass::Generator gen = glass::make_generator(glass::Device(glass::kCPU), 100 + r);
      k.x = glass::randn({kBatch, widths.front()}, gen);
      k.y = glass::randint(0, widths.back(), {kBatch}, gen);
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
    return threads_->run([&](int rank) {
      if (rank != 0) return all_reduce_buckets(rank);
      // Rank 0 also times each bucket alone: the costs the schedule bound is built from.
      bucket_seconds_.clear();
      for (Tensor& b : ranks_[0].bucket_buffers) {
        const auto start = std::chrono::steady_clock::now();
        ranks_[0].group->allreduce(b)->wait();
        bucket_seconds_.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    });
  }
  // Rank 0's seconds per bucket in the last time_allreduce().
  const std::vector<double>& bucket_seconds() const { return bucket_seconds_; }

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
  // The most of a bandwidth-bound all-reduce that can hide behind backward: the bytes not in
  // the last bucket (which is ready only when backward ends) over all the bytes.
  double ceiling() const {
    const auto& buffers = ranks_[0].bucket_buffers;
    double all = 0;
    for (const Tensor& b : buffers) all += static_cast<double>(b.nbytes());
    return buffers.empty() ? 0 : 1 - static_cast<double>(buffers.back().nbytes()) / all;
  }

 private:
  bool stand_in(int rank) const { return stand_ins_ && rank != 0; }
  void all_reduce_buckets(int rank) {
    for (Tensor& b : ranks_[rank].bucket_buffers) ranks_[rank].group->allreduce(b)->wait();
  }

  std::vector<Rank> ranks_;
  std::unique_ptr<glass_bench::RankThreads> threads_;
  bool stand_ins_ = false;  // set once the buckets are final (the warm-up runs real DDP)
  std::vector<double> bucket_seconds_;
};

// What the schedule allows: bucket i is ready at ready[i] (as DDP saw it) and its all-reduce
// alone costs cost[i]; one all-reduce at a time, in bucket order, each as soon as it is ready
// and the previous one is done. Returns the fraction of sum(cost) that falls before
// backward_done — the overlap a transport with no CPU cost of its own would give. Below the
// byte ceiling when the last buckets become ready only just before backward ends.
double schedule_bound(const std::vector<double>& ready, const std::vector<double>& cost,
                      double backward_done) {
  double free_at = 0, hidden = 0, total = 0;
  for (size_t i = 0; i < ready.size() && i < cost.size(); ++i) {
    const double start = std::max(ready[i], free_at);
    free_at = start + cost[i];
    hidden += std::clamp(backward_done - start, 0.0, cost[i]);
    total += cost[i];
  }
  return total > 0 ? hidden / total : 0;
}

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
    case Setup::kThreadsBandwidthLink: return "threads, bandwidth-bound link";
    case Setup::kThreadsLatencyLink: return "threads, latency-bound link, a bucket per layer";
    case Setup::kGloo: return "gloo over loopback TCP";
  }
  return "";
}

DistributedDataParallelOptions ddp_options_of(Setup setup, Model model, bool views) {
  DistributedDataParallelOptions options;
  options.gradient_as_bucket_view(views);
  // 4 MB: fc2's weight (4.19 MB) closes a bucket of its own, so fc1 is alone in the last one.
  if (model == Model::kWide || model == Model::kDeep || model == Model::kDeeper)
    options.bucket_cap_mb(4);
  // A 15 KiB cap: below each layer's weight (fc3's is 20 KiB), above fc2's and fc1's bias
  // (2 KiB), so a bucket closes after each weight — fc3 (weight, bias), fc2 (bias, weight),
  // fc1 (bias, weight): one bucket per layer.
  if (setup == Setup::kThreadsLatencyLink)
    options.bucket_cap_mb(15.0 / 1024).first_bucket_cap_mb(15.0 / 1024);
  return options;
}

// The link for `ranks` threads ranks, such that all the buckets' all-reduces together take
// as long as backward: communication that costs as much as computation, the case where
// overlap decides the step time. An all-reduce's cost is the backend's own work (the adds
// and copies between rank threads, measured here with no link) plus the link's, so the link
// gets what backward's time leaves after the backend's work. Bandwidth-bound: kLatency per
// hop, the bandwidth makes up the rest. Latency-bound: infinite bandwidth, the latency per
// hop makes it all. (A link that costs nothing is left when the backend's work alone already
// takes as long as backward.)
ThreadsLinkModel calibrated_link(int ranks, Setup setup, Model model, bool stand_ins) {
  World probe(ranks, model, threads_group, {}, ddp_options_of(setup, model, false), stand_ins);
  for (int i = 0; i < 5; ++i) probe.time_plain_backward();  // warm the allocator and caches
  std::vector<double> backward, own_work;
  for (int i = 0; i < 31; ++i) {
    backward.push_back(probe.time_plain_backward());
    own_work.push_back(probe.time_allreduce());
  }
  const double for_link = median(backward) - median(own_work);
  const double n = ranks;
  const double hops = 2 * (n - 1) * static_cast<double>(probe.num_buckets());
  ThreadsLinkModel link;
  if (setup == Setup::kThreadsLatencyLink) {
    if (for_link > 0)
      link.latency = std::chrono::microseconds(static_cast<int64_t>(for_link / hops * 1e6));
    return link;
  }
  const double latency_s = std::chrono::duration<double>(kLatency).count();
  const double wire_bytes = 2 * (n - 1) / n * static_cast<double>(probe.gradient_bytes());
  link.latency = kLatency;
  // If latency alone already takes what is left, bandwidth is left infinite.
  const double for_bytes = for_link - hops * latency_s;
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
using Config = std::tuple<int, Setup, Model, bool, bool>;  // ranks, setup, model, stand-ins, views
std::map<Config, Configured>& worlds() {
  static std::map<Config, Configured> table;
  return table;
}

// One calibrated link per configuration apart from gradient_as_bucket_view, so that rows with
// and without it compare DDP on the same link.
ThreadsLinkModel link_of(int ranks, Setup setup, Model model, bool stand_ins) {
  static std::map<std::tuple<int, Setup, Model, bool>, ThreadsLinkModel> links;
  auto key = std::make_tuple(ranks, setup, model, stand_ins);
  auto it = links.find(key);
  if (it == links.end())
    it = links.emplace(key, calibrated_link(ranks, setup, model, stand_ins)).first;
  return it->second;
}

std::pair<World*, ThreadsLinkModel> world_of(int ranks, Setup setup, Model model, bool stand_ins,
                                             bool views) {
  Configured& c = worlds()[{ranks, setup, model, stand_ins, views}];
  if (!c.world) {
    const DistributedDataParallelOptions options = ddp_options_of(setup, model, views);
    if (setup == Setup::kGloo) {
#ifdef GLASS_HAVE_GLOO
      c.world = std::make_unique<World>(ranks, model, gloo_group, c.link, options, stand_ins);
#else
      GLASS_CHECK(false, "built without Gloo (apt install libgloo-dev)");
#endif
    } else {
      c.link = link_of(ranks, setup, model, stand_ins);
      c.world = std::make_unique<World>(ranks, model, threads_group, c.link, options, stand_ins);
    }
  }
  return {c.world.get(), c.link};
}

// The bucket timeline of each configuration's last run, printed when every run is done.
std::map<Config, std::string>& timeline_lines() {
  static std::map<Config, std::string> table;
  return table;
}

// state.range(0): ranks; range(1): the Setup; range(2): 1 = ranks other than 0 are stand-ins;
// range(3): the Model; range(4): 1 = gradient_as_bucket_view.
void BM_DdpOverlap(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const Setup setup = static_cast<Setup>(state.range(1));
  const bool gloo = setup == Setup::kGloo;
  const bool stand_ins = state.range(2) == 1;
  const Model model = static_cast<Model>(state.range(3));
  const bool views = state.range(4) == 1;
  World* world = nullptr;
  ThreadsLinkModel link;
  try {
    std::tie(world, link) = world_of(ranks, setup, model, stand_ins, views);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }

  std::vector<double> t_backward, t_allreduce, t_ddp;
  std::vector<ReducerTimeline> timelines;
  std::vector<std::vector<double>> bucket_seconds;
  for (auto _ : state) {
    t_backward.push_back(world->time_plain_backward());
    t_allreduce.push_back(world->time_allreduce());
    bucket_seconds.push_back(world->bucket_seconds());
    t_ddp.push_back(world->time_ddp_backward());
    timelines.push_back(world->timeline());
    state.SetIterationTime(t_ddp.back());
  }

  const double tb = median(t_backward), ta = median(t_allreduce), td = median(t_ddp);
  const std::string label =
      std::string(model_name(model)) + ", " + setup_name(setup) +
      (model == Model::kLesson06 && setup != Setup::kThreadsLatencyLink ? ", default buckets"
                                                                        : "") +
      (stand_ins ? ", stand-in partners" : "") + (views ? ", gradient_as_bucket_view" : "");
  state.SetLabel(label);
  state.counters["ceiling"] = world->ceiling();
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
  std::vector<double> ready, cost;
  for (size_t b = 0; b < buckets; ++b) {
    ready.push_back(med([&](const ReducerTimeline& t) { return t.buckets[b].ready; }));
    std::vector<double> c;
    for (const auto& run : bucket_seconds) c.push_back(run.at(b));
    cost.push_back(median(c) * 1e3);
  }
  state.counters["bound"] = schedule_bound(ready, cost, bwd_done);
  // Kept, not printed: Google Benchmark calls this several times, only the last run counts.
  char tail[160];
  std::snprintf(tail, sizeof tail, "backward done %.3f ms, gradients written back %.3f ms",
                bwd_done, all_done);
  timeline_lines()[{ranks, setup, model, stand_ins, views}] =
      label + ", " + std::to_string(ranks) + " ranks: " + line + tail;
}

}  // namespace

BENCHMARK(BM_DdpOverlap)
    ->ArgNames({"ranks", "setup", "stand_ins", "model", "views"})
    ->Args({2, 0, 0, 0, 0})
    ->Args({2, 0, 1, 0, 0})
    ->Args({2, 1, 0, 0, 0})
    ->Args({2, 1, 1, 0, 0})
    ->Args({2, 2, 0, 0, 0})
    ->Args({2, 2, 1, 0, 0})
    ->Args({4, 0, 0, 0, 0})
    ->Args({4, 0, 1, 0, 0})
    ->Args({4, 2, 0, 0, 0})
    ->Args({2, 0, 0, 1, 0})
    ->Args({2, 0, 1, 1, 0})
    ->Args({2, 0, 1, 2, 0})
    ->Args({2, 2, 0, 1, 0})
    ->Args({2, 2, 1, 1, 0})
    ->Args({2, 0, 1, 3, 0})
    ->Args({2, 2, 1, 3, 0})
    ->Args({2, 0, 1, 0, 1})
    ->Args({2, 0, 1, 1, 1})
    ->Args({2, 0, 1, 3, 1})
    ->Args({2, 0, 0, 3, 1})
    ->Args({2, 2, 1, 3, 1})
    ->Args({2, 0, 1, 4, 0})
    ->Args({2, 0, 1, 4, 1})
    ->Args({2, 0, 0, 4, 1})
    ->Args({2, 2, 1, 4, 1})
    ->Args({4, 0, 1, 4, 1})
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
