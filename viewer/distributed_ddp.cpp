// viewer/distributed_ddp.cpp — record_ddp: DDP's bucket timeline over backward, per rank
// (distributed_ddp.h).
//
// Three sources, one clock. The EventTrace stamps every event as it is published: backward
// nodes starting (on the rank's thread), buckets queued (BucketReady, same thread) and
// collectives starting (CollectiveStep, on the communication thread). A bucket's end is
// published by nobody, but the Reducer notes it in its ReducerTimeline, in seconds since
// its own start; the queued time is in both, which puts the Reducer's clock on the trace's.
#include "viewer/distributed_ddp.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/generator.h"
#include "core/ops/random.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "nn/functional/loss.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"

namespace glass::viz {

namespace {

// What one rank-thread leaves behind for the assembly after run_threads.
struct RankResult {
  int64_t backward_start_ns = 0, returned_ns = 0;
  distributed::ReducerTimeline timeline;
  std::vector<std::vector<std::string>> bucket_parameters;
};

nn::Sequential make_mlp(const std::vector<int64_t>& layers) {
  nn::Sequential model;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    if (i > 0) model->push_back("relu" + std::to_string(i), nn::ReLU());
    model->push_back("fc" + std::to_string(i + 1), nn::Linear(layers[i], layers[i + 1]));
  }
  return model;
}

// The recorded iteration on one rank, from its events (already cut to its backward).
DdpRankTimeline assemble(int rank, const RankResult& r, const std::vector<TracedEvent>& events) {
  DdpRankTimeline t;
  t.rank = rank;
  t.backward_start_ns = r.backward_start_ns;
  t.returned_ns = r.returned_ns;
  std::vector<int64_t> queued(r.timeline.buckets.size(), -1), started;
  for (const TracedEvent& e : events) {
    if (e.rank != rank || e.t_ns < r.backward_start_ns || e.t_ns > r.returned_ns) continue;
    if (e.kind == events::Kind::BackwardNodeRun && !e.comm) {
      if (!t.nodes.empty()) t.nodes.back().end_ns = e.t_ns;
      t.nodes.push_back({e.name, e.t_ns, e.t_ns});
    } else if (e.kind == events::Kind::BucketReady && e.value >= 0 &&
               static_cast<size_t>(e.value) < queued.size()) {
      queued[static_cast<size_t>(e.value)] = e.t_ns;
    } else if (e.kind == events::Kind::CollectiveStep && e.comm && e.name == "allreduce") {
      started.push_back(e.t_ns);  // buckets are all-reduced in index order
    }
  }
  // The Reducer's clock onto the trace's: bucket 0 was queued at the same instant in both.
  const auto ns = [](double s) { return static_cast<int64_t>(s * 1e9); };
  int64_t offset = r.backward_start_ns;
  if (!queued.empty() && queued[0] >= 0) offset = queued[0] - ns(r.timeline.buckets[0].ready);
  t.backward_end_ns =
      std::clamp(offset + ns(r.timeline.backward_done),
                 t.nodes.empty() ? r.backward_start_ns : t.nodes.back().start_ns, r.returned_ns);
  if (!t.nodes.empty()) t.nodes.back().end_ns = t.backward_end_ns;
  for (size_t i = 0; i < r.timeline.buckets.size(); ++i) {
    const distributed::ReducerTimeline::Bucket& b = r.timeline.buckets[i];
    DdpBucketSpan s;
    s.index = static_cast<int>(i);
    s.bytes = static_cast<int64_t>(b.bytes);
    if (i < r.bucket_parameters.size()) s.parameters = r.bucket_parameters[i];
    s.ready_ns = queued[i] >= 0 ? queued[i] : offset + ns(b.ready);
    s.started_ns = std::max(i < started.size() ? started[i] : s.ready_ns, s.ready_ns);
    s.finished_ns = std::clamp(offset + ns(b.finished), s.started_ns, r.returned_ns);
    t.buckets.push_back(std::move(s));
  }
  return t;
}

}  // namespace

DdpRecording record_ddp(const DdpRecordingOptions& options) {
  const int n = options.world_size;
  GLASS_CHECK(n >= 1 && n <= 16, "record_ddp: world_size must be 1..16, got ", n);
  GLASS_CHECK(options.layers.size() >= 2,
              "record_ddp: layers needs at least an input and an "
              "output width, got ",
              options.layers.size(), " numbers");
  GLASS_CHECK(options.batch >= 1 && options.iterations >= 1, "record_ddp: batch (", options.batch,
              ") and iterations (", options.iterations, ") must be positive");
  DdpRecording rec;
  rec.options = options;
  std::vector<RankResult> results(static_cast<size_t>(n));
  EventTrace trace;
  distributed::run_threads(
      n,
      [&](int rank) {
        RankResult& mine = results[static_cast<size_t>(rank)];
        distributed::init_process_group("threads");
        nn::Sequential model = make_mlp(options.layers);
        trace.name_parameters(model->named_parameters());
        nn::parallel::DistributedDataParallel ddp(
            model, nullptr,
            nn::parallel::DistributedDataParallelOptions()
                .bucket_cap_mb(options.bucket_cap_mb)
                .first_bucket_cap_mb(options.first_bucket_cap_mb));
        Generator gen = make_generator(Device(kCPU), 1000 + static_cast<uint64_t>(rank));
        Tensor x = randn({options.batch, options.layers.front()}, gen);
        Tensor y = randint(0, options.layers.back(), {options.batch}, gen);
        for (int it = 0; it < options.iterations; ++it) {
          model->zero_grad();
          Tensor loss = nn::functional::cross_entropy(ddp(x), y);
          const bool last = it + 1 == options.iterations;
          if (last) mine.backward_start_ns = trace.now_ns();
          loss.backward();
          if (last) mine.returned_ns = trace.now_ns();
        }
        mine.timeline = ddp.reducer().last_timeline();
        const auto& params = ddp.reducer().parameters();
        for (const auto& bucket : ddp.reducer().buckets()) {
          std::vector<std::string> names;
          for (size_t p : bucket) names.push_back(params[p].first);
          mine.bucket_parameters.push_back(std::move(names));
        }
        distributed::destroy_process_group();
      },
      options.link);
  trace.stop();

  const std::vector<TracedEvent> all = trace.events();
  for (int r = 0; r < n; ++r)
    rec.ranks.push_back(assemble(r, results[static_cast<size_t>(r)], all));
  // One clock for the panel: 0 when the first rank's backward began.
  int64_t t0 = rec.ranks[0].backward_start_ns, t1 = 0;
  for (const DdpRankTimeline& t : rec.ranks) {
    t0 = std::min(t0, t.backward_start_ns);
    t1 = std::max(t1, t.returned_ns);
  }
  for (DdpRankTimeline& t : rec.ranks) {
    t.backward_start_ns -= t0;
    t.backward_end_ns -= t0;
    t.returned_ns -= t0;
    for (DdpNodeSpan& s : t.nodes) s.start_ns -= t0, s.end_ns -= t0;
    for (DdpBucketSpan& b : t.buckets) b.ready_ns -= t0, b.started_ns -= t0, b.finished_ns -= t0;
  }
  for (const TracedEvent& e : all)
    if (e.t_ns >= t0 && e.t_ns <= t1) {
      rec.events.push_back(e);
      rec.events.back().t_ns -= t0;
    }
  rec.t1_ns = t1 - t0;
  return rec;
}

std::string DdpRecording::chrome_trace() const {
  // Nodes are drawn from the timelines (their exact ends), so their instants are left out.
  std::vector<TracedEvent> instants;
  for (const TracedEvent& e : events)
    if (e.kind != events::Kind::BackwardNodeRun) instants.push_back(e);
  std::vector<TraceSpan> spans;
  for (const DdpRankTimeline& t : ranks) {
    spans.push_back({"backward", t.rank, false, t.backward_start_ns, t.returned_ns});
    for (const DdpNodeSpan& s : t.nodes)
      spans.push_back({s.name, t.rank, false, s.start_ns, s.end_ns});
    for (const DdpBucketSpan& b : t.buckets) {
      const std::string name = "bucket " + std::to_string(b.index);
      spans.push_back({name + " queued", t.rank, true, b.ready_ns, b.started_ns});
      spans.push_back({name + " all-reduce", t.rank, true, b.started_ns, b.finished_ns});
    }
  }
  return chrome_trace_json(instants, spans);
}

}  // namespace glass::viz
