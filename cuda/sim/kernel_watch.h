// cuda/sim/kernel_watch.h — the simulator watching a kernel's memory: counters and checks.
//
// While a block runs with watching on, every global access through a gptr, every
// element access of a shared array (GLASS_SHARED) and every GLASS_FLOPS(n) reaches a hook
// here. The hooks count (kernel_stats.h: bytes moved, shared accesses, flops) and, when
// checking is on (GLASS_SIM_CHECK=1), check: a global access must lie inside an
// allocation the launch's pointer arguments point into, and shared accesses feed the
// shared-memory race detector (shared_race.h).
//
// Invariant: with watching off (t_watch false), every hook is one thread-local load and
// a branch not taken; the kernel's memory is accessed exactly as without the hooks.
// Counters are per OS thread (one block at a time runs on it), added to the launch's
// totals once per block: no atomic per access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda/sim/tls.h"

namespace glass::cuda::sim::detail {

// The counters of the block running on this OS thread (summed into KernelStats).
struct BlockCounters {
  uint64_t global_load_bytes = 0;
  uint64_t global_store_bytes = 0;
  uint64_t shared_loads = 0;
  uint64_t shared_stores = 0;
  uint64_t flops = 0;
};

// True while the block on this OS thread is watched (counted or checked).
extern thread_local constinit GLASS_SIM_TLS bool t_watch;
extern thread_local constinit GLASS_SIM_TLS BlockCounters t_counters;

// What a global access is checked against: the allocations the launch's pointer
// arguments point into (launch_watch.h copies them here when a checked block starts).
struct GlobalBounds {
  static constexpr int kMaxRanges = 16;  // a launch with more is not bounds-checked
  bool check = false;
  int count = 0;
  uintptr_t begin[kMaxRanges] = {};
  uintptr_t end[kMaxRanges] = {};
};
extern thread_local constinit GLASS_SIM_TLS GlobalBounds t_bounds;

// Throws glass::Error naming the kernel, block, thread, address and nearest allocation.
[[noreturn, gnu::cold]] void global_out_of_bounds(const void* address, size_t size, bool load);

// A global access of `size` bytes at device address `address`: counted, and bounds-checked
// when checking is on. `load`: through a gptr<const T> (a gptr<T> access counts as a
// store, as the launch counts the argument as written).
//
// Inline, and calling nothing that returns: a call that may return, even on a branch
// never taken, makes every kernel keep its live values in saved registers around each
// global access (c = a + b on 16M floats: 20% slower with the hooks off).
inline void watch_global(const void* address, size_t size, bool load) {
  (load ? t_counters.global_load_bytes : t_counters.global_store_bytes) += size;
  if (!t_bounds.check) return;
  const auto a = reinterpret_cast<uintptr_t>(address);
  for (int i = 0; i < t_bounds.count; ++i)
    if (a >= t_bounds.begin[i] && a + size <= t_bounds.end[i]) return;
  global_out_of_bounds(address, size, load);
}
// An element of a shared array is about to be accessed (shared_array.h).
void watch_shared(const void* element, size_t size, const void* array, size_t array_bytes,
                  const char* name);
// A shared array's storage is used as a plain pointer (tile[i] as a float*, s + k).
void watch_decay(const void* array, size_t array_bytes);
// An atomic operation on `address`: a shared-memory atomic is not a race.
void watch_atomic(const void* address);

inline void add_flops(uint64_t n) {
  if (t_watch) [[unlikely]]
    t_counters.flops += n;
}

inline void note_atomic(const void* address) {
  if (t_watch) [[unlikely]]
    watch_atomic(address);
}

}  // namespace glass::cuda::sim::detail
