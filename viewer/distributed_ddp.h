// viewer/distributed_ddp.h — DDP's buckets over backward, recorded per rank for the
// viewer's bucket timeline (app/distributed_panel.cpp): which bucket's all-reduce overlaps
// which layer's gradient.
//
// record_ddp trains a small MLP (a Sequential of Linear and ReLU) under
// DistributedDataParallel on the threads backend, with a link model so that each
// all-reduce takes the time a real wire would, and records the last iteration's backward
// (the first one rebuilds the buckets in gradient order): every backward node as a bar,
// and every bucket's all-reduce — queued when its last gradient arrived (BucketReady),
// started on the communication thread (CollectiveStep), finished (the Reducer's
// ReducerTimeline, put on the same clock through the queued time both recorded).
//
//   viz::DdpRecording rec = viz::record_ddp({.world_size = 2});
//   for (const auto& b : rec.ranks[0].buckets) ...   // b.ready_ns < rec.ranks[0].backward_end_ns
//   viz::write_text_file("ddp.json", rec.chrome_trace());  // chrome://tracing, one pid per rank
//
// Invariants: times are ns since the earliest rank's backward started; per rank, nodes are
// in the order they ran and do not overlap (one backward thread), each bucket has
// ready_ns <= started_ns <= finished_ns, and buckets are in index order (DDP launches them
// in that order on every rank).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/backends/threads.h"
#include "viewer/distributed_trace.h"

namespace glass::viz {

struct DdpRecordingOptions {
  int world_size = 2;
  std::vector<int64_t> layers = {784, 512, 256, 128, 10};  // a Linear per pair, ReLU between
  int64_t batch = 16;                                      // per rank
  double bucket_cap_mb = 0.5, first_bucket_cap_mb = 0.1;   // small, so there are several
  int iterations = 2;  // the last is recorded; the first rebuilds the buckets
  // A simulated wire: 100 µs per hop and 2 GB/s, so an all-reduce costs about what its
  // layer's gradient does on a laptop, and overlap is visible.
  distributed::ThreadsLinkModel link{std::chrono::microseconds(100), 2e9};
};

struct DdpNodeSpan {
  std::string name;  // "AddmmBackward0", "AccumulateGrad 3.weight", ...
  int64_t start_ns = 0, end_ns = 0;
};

struct DdpBucketSpan {
  int index = 0;
  int64_t bytes = 0;
  std::vector<std::string> parameters;  // the parameters in it, in bucket order
  int64_t ready_ns = 0;                 // its last gradient arrived; the all-reduce was queued
  int64_t started_ns = 0;               // the communication thread began it
  int64_t finished_ns = 0;              // it completed
};

struct DdpRankTimeline {
  int rank = 0;
  int64_t backward_start_ns = 0;  // loss.backward() was called
  int64_t backward_end_ns = 0;    // the last node finished (the end-of-backward callback began)
  int64_t returned_ns = 0;        // backward() returned: every bucket waited for
  std::vector<DdpNodeSpan> nodes;
  std::vector<DdpBucketSpan> buckets;
};

struct DdpRecording {
  DdpRecordingOptions options;
  std::vector<DdpRankTimeline> ranks;
  int64_t t1_ns = 0;                // the latest time in any rank's timeline
  std::vector<TracedEvent> events;  // every event of the recorded iteration, on the same clock

  // The recorded iteration as Chrome trace JSON: the events, with the nodes' and buckets'
  // spans drawn exactly (pid per rank, compute and communication threads).
  std::string chrome_trace() const;
};

// Runs the training on world_size rank-threads and records it (tens of milliseconds).
// Throws glass::Error naming a bad option or a rank's failure.
DdpRecording record_ddp(const DdpRecordingOptions& options = {});

}  // namespace glass::viz
