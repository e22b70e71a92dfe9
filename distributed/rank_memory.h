// distributed/rank_memory.h — memory per rank when the ranks are threads of one process.
//
// cpu_memory_stats() counts the whole process, which is one rank under glassrun but every
// rank at once under the threads backend. The ledger counts per rank from core's events:
// each Allocation event carries the rank of the thread that made it (run_threads tags its
// threads, pool workers carry their caller's rank, a group's communication thread its
// group's), so a block belongs to the rank that allocated it, and its Free — published by
// whichever thread dropped the last reference — is charged back to that rank.
//
//   RankMemoryLedger ledger(/*world_size=*/2);
//   run_threads(2, [&](int rank) { ... train ... });
//   ledger.peak(0);                 // rank 0's high-water mark, in bytes
//   ledger.samples();               // (order, rank, bytes) after every change: the sawtooth
//
// Invariants: current(r) is the bytes of blocks allocated by rank r since the ledger was
// made and not yet freed; blocks allocated before it, or by threads without a rank, are
// not counted (their frees are ignored too). Only blocks of `device` count.
//
// A block is charged to who allocated it, even when it serves everyone afterwards: the
// packing buffers a pool worker keeps for matmul (grown on demand, never freed) count for
// the rank whose matmul first grew them. Lesson 11 and the viewer's shard panel keep each
// rank's matmuls off the pool (ThreadSerialGuard) and warm the buffers before the ledger
// starts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.h"

namespace glass::distributed {

class RankMemoryLedger {
 public:
  // Subscribes to core's events until destroyed. Records a sample per change only while
  // recording (set_recording), which is off by default: the counters alone cost a map
  // update per allocation.
  explicit RankMemoryLedger(int world_size, Device device = Device(kCPU));
  ~RankMemoryLedger();
  RankMemoryLedger(const RankMemoryLedger&) = delete;
  RankMemoryLedger& operator=(const RankMemoryLedger&) = delete;

  int world_size() const { return world_size_; }
  int64_t current(int rank) const;
  int64_t peak(int rank) const;
  // Every rank's peak back to its current bytes (torch.cuda.reset_peak_memory_stats).
  void reset_peak();

  struct Sample {
    int64_t order;  // position in the ledger's single order of changes, from 0
    int rank;
    int64_t bytes;  // the rank's current bytes after the change
  };
  void set_recording(bool on);
  std::vector<Sample> samples() const;
  int64_t sample_count() const;  // samples().size(), without the copy
  void clear_samples();

 private:
  void check_rank(int rank, const char* what) const;

  // The counters live apart from the ledger, shared with the event callback: a thread
  // still inside the callback when the ledger is destroyed (a pool worker or a group's
  // communication thread freeing a tensor) keeps them alive, instead of writing into a
  // destroyed object.
  struct State;
  std::shared_ptr<State> state_;
  const int world_size_;
  int handle_ = -1;
};

}  // namespace glass::distributed
