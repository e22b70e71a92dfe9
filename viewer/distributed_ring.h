// viewer/distributed_ring.h — the ring all-reduce, recorded step by step for the viewer's
// animation (app/distributed_panel.cpp) and lesson 10's figures.
//
// record_ring runs distributed::ring_all_reduce on the threads backend, n ranks as threads,
// on a tensor whose values say whose contributions a number holds: rank r holds 2^r in
// every element, so any partial sum, written in binary, is the set of ranks summed into
// it (rank 0 = 1, rank 1 = 2, rank 2 = 4: the sum 7 is ranks 0, 1 and 2). A RingObserver
// copies each rank's tensor after each of the 2(n−1) steps.
//
//   viz::RingRecording rec = viz::record_ring({.world_size = 4});
//   rec.frames[0]               // before the first step: rank r's chunks all hold 2^r
//   rec.frames.back()           // after the last: every chunk holds 2^n − 1 everywhere
//
// Invariants: frames.size() == 2(n−1) + 1; frame 0 is the state before any step and frame
// k + 1 the state after global step k (reduce-scatter steps 0..n−2, then all-gather's);
// every frame has n ranks × n chunks of cells; a cell's `mask` is its value as the set of
// ranks in it, and `count` is that set's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viewer/distributed_trace.h"

namespace glass::viz {

struct RingRecordingOptions {
  int world_size = 4;  // 1..16 (each rank's 2^r must stay exact in float32)
  int64_t numel = 0;   // elements of the tensor; 0: 2 per chunk. Chunks may be uneven.
};

// One chunk of one rank's tensor, after a step.
struct RingCell {
  std::vector<double> values;  // the chunk's elements (all equal: every rank's are)
  uint32_t mask = 0;           // bit r set: rank r's values are summed in
  int count = 0;               // how many ranks' values are summed in
};

// What one rank did in a step: sent chunk `send_chunk` to `to` and received chunk
// `recv_chunk` from `from` (into place: added to its own in reduce-scatter, copied over it
// in all-gather).
struct RingTransfer {
  int rank = 0, to = 0, from = 0;
  int send_chunk = 0, recv_chunk = 0;
};

struct RingFrame {
  int step = -1;  // the global step this frame is after (0 .. 2(n−1)−1); −1: start
  bool gather_phase = false;                 // the step was all-gather's (false for frame 0)
  int phase_step = -1;                       // the step within its phase (0 .. n−2); −1: start
  std::vector<RingTransfer> transfers;       // per rank (empty for frame 0)
  std::vector<std::vector<RingCell>> cells;  // [rank][chunk]
  std::string caption() const;               // "reduce-scatter step 2 of 3", "start", ...
};

struct RingRecording {
  int world_size = 0;
  int64_t numel = 0;
  std::vector<int64_t> chunk_lengths;  // distributed::ring_chunk's split
  std::vector<RingFrame> frames;
  // What the ranks published while the ring ran: each step's adds and copies, and its sends
  // and receives from post to completion.
  std::vector<TracedEvent> events;
  uint32_t full_mask() const { return world_size >= 32 ? ~0u : (1u << world_size) - 1; }
  // events as a Chrome trace (distributed_trace.h): per rank its compute thread and its
  // messages as slices, for chrome://tracing or Perfetto.
  std::string chrome_trace() const;
};

// Runs the ring on world_size rank-threads and records every step (a few milliseconds).
// Throws glass::Error naming the bad option (world_size out of 1..16, numel < world_size),
// or a rank's failure.
RingRecording record_ring(const RingRecordingOptions& options = {});

}  // namespace glass::viz
