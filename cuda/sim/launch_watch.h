// cuda/sim/launch_watch.h — what the simulator knows about a launch while its blocks run.
//
// The simulator resolves a launch's pointer arguments to the allocations they point
// into (the caching allocator's blocks, or raw device allocations) once, when the
// launch is queued; each block then finds them through a thread-local pointer, for the
// bounds check of every global access, and adds its counters to the launch's totals
// when it ends. The block runner brackets each block with begin_block_watch() and
// end_block_watch() (kernel_watch.h's hooks work in between).
//
// Invariant: t_launch is set exactly while a block of that launch runs on this OS thread
// (LaunchScope); blocks run outside a launch (tests calling run_block) count into the
// process totals directly and are not bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda/runtime.h"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/tls.h"

namespace glass::cuda::sim {

struct LaunchWatch {
  struct Range {
    uintptr_t begin = 0;
    size_t size = 0;
  };
  std::vector<Range> ranges;  // the allocations the pointer arguments point into
  // Whether `ranges` was resolved: checking was on when the launch was queued. A launch
  // queued before checking was switched on runs unchecked, or every access would look
  // out of bounds.
  bool bounds_resolved = false;
  std::mutex mutex;
  KernelStats totals;  // guarded by mutex; summed per block
  bool counted = false;
};

// The launch whose block runs on this OS thread (null: none, or a block run directly).
extern thread_local constinit GLASS_SIM_TLS LaunchWatch* t_launch;

class LaunchScope {
 public:
  explicit LaunchScope(LaunchWatch* watch) { t_launch = watch; }
  ~LaunchScope() { t_launch = nullptr; }
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;
};

// A block of `block` threads starts / ended without error. Returns whether it is watched.
bool begin_block_watch(Dim3 block);
void end_block_watch(uint64_t barriers, uint64_t warp_syncs);
// Watching off on this OS thread (the block ended, or failed).
void stop_block_watch();

// A counted launch completed with these totals: it becomes last_kernel_stats().
void record_launch_stats(const KernelStats& stats);

}  // namespace glass::cuda::sim
