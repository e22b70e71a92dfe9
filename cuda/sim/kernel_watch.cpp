// cuda/sim/kernel_watch.cpp — the watch hooks' slow paths, the bounds check, and the
// process-wide stats (kernel_watch.h, kernel_stats.h, launch_watch.h).
#include "cuda/sim/kernel_watch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "cuda/sim/address_space.h"
#include "cuda/sim/block_runner.h"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/launch_watch.h"
#include "cuda/sim/shared_race.h"
#include "cuda/sim/timeline.h"

namespace glass::cuda::sim {

namespace detail {
thread_local constinit GLASS_SIM_TLS bool t_watch = false;
thread_local constinit GLASS_SIM_TLS BlockCounters t_counters{};
thread_local constinit GLASS_SIM_TLS GlobalBounds t_bounds{};
}  // namespace detail
thread_local constinit GLASS_SIM_TLS LaunchWatch* t_launch = nullptr;

namespace {

using glass::detail::str_cat;

std::atomic<bool> g_checks{false};
std::atomic<int> g_collectors{0};
const bool g_env_stats = [] {
  const char* v = std::getenv("GLASS_SIM_STATS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}();

std::mutex g_stats_mutex;
KernelStats g_total, g_last;  // guarded by g_stats_mutex

std::string hex(uintptr_t a) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(a));
  return text;
}

}  // namespace

// ---- hooks (kernel_watch.h) --------------------------------------------------------------

namespace detail {

// The bounds check failed: name the access and the allocation it most likely meant.
void global_out_of_bounds(const void* address, size_t size, bool load) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  const GlobalBounds& b = t_bounds;
  int nearest = -1;
  uintptr_t best = UINTPTR_MAX;
  for (int i = 0; i < b.count; ++i) {
    const uintptr_t d = a < b.begin[i] ? b.begin[i] - a : a - b.end[i];
    if (d < best) best = d, nearest = i;
  }
  std::string where = "it lies outside every allocation the launch's pointer arguments point into";
  if (nearest >= 0) {
    const uintptr_t begin = b.begin[nearest], end = b.end[nearest];
    where += str_cat("; the nearest is [", hex(begin), ", ", hex(end), ") (", end - begin,
                     " bytes), and the access ",
                     a < begin ? str_cat("starts ", begin - a, " bytes before it")
                               : str_cat("ends ", a + size - end, " bytes past its end"));
  }
  glass::detail::throw_error(
      str_cat(current_thread_where(), "out-of-bounds global ", load ? "load" : "store", " of ",
              size, " bytes at ", hex(a), ": ", where,
              ". Check the index against the tensor's size (a guard such as if (i < n)); memory "
              "reached through pointers that are not kernel arguments must be declared with "
              "append_accesses (cuda/launch.h)."));
}

void watch_shared(const void* element, size_t size, const void* array, size_t array_bytes,
                  const char* name) {
  shared_watcher().touch(element, size, array, array_bytes, name);
}

void watch_decay(const void* array, size_t array_bytes) {
  shared_watcher().decay(array, array_bytes);
}

void watch_atomic(const void* address) { shared_watcher().atomic(address); }

}  // namespace detail

// ---- blocks (launch_watch.h) -------------------------------------------------------------

bool begin_block_watch(Dim3 block) {
  if (!kernel_counting()) return false;  // checking counts too: one test when all is off
  const bool check = kernel_checks();
  detail::t_watch = true;
  detail::t_counters = {};
  // Bounds: only inside a launch (a block run directly has no allocations to go by).
  detail::GlobalBounds& b = detail::t_bounds;
  b.count = 0;
  b.check = check && t_launch != nullptr && t_launch->bounds_resolved &&
            t_launch->ranges.size() <= size_t{detail::GlobalBounds::kMaxRanges};
  if (b.check) {
    for (const LaunchWatch::Range& r : t_launch->ranges) {
      b.begin[b.count] = r.begin;
      b.end[b.count] = r.begin + r.size;
      ++b.count;
    }
  }
  shared_watcher().begin_block(check, block);
  return true;
}

void stop_block_watch() {
  detail::t_watch = false;
  detail::t_bounds.check = false;
}

void end_block_watch(uint64_t barriers, uint64_t warp_syncs) {
  const detail::BlockCounters& c = detail::t_counters;
  KernelStats s;
  s.global_load_bytes = c.global_load_bytes;
  s.global_store_bytes = c.global_store_bytes;
  s.shared_loads = c.shared_loads;
  s.shared_stores = c.shared_stores;
  s.flops = c.flops;
  s.barriers = barriers;
  s.warp_syncs = warp_syncs;
  s.blocks = 1;
  stop_block_watch();
  if (LaunchWatch* launch = t_launch) {
    std::lock_guard<std::mutex> lock(launch->mutex);
    launch->totals += s;
    launch->counted = true;
  } else {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    g_total += s;
  }
}

void record_launch_stats(const KernelStats& stats) {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  g_last = stats;
  g_total += stats;
}

// ---- the public API (kernel_stats.h) -----------------------------------------------------

KernelStats& KernelStats::operator+=(const KernelStats& o) {
  global_load_bytes += o.global_load_bytes;
  global_store_bytes += o.global_store_bytes;
  shared_loads += o.shared_loads;
  shared_stores += o.shared_stores;
  barriers += o.barriers;
  warp_syncs += o.warp_syncs;
  flops += o.flops;
  blocks += o.blocks;
  launches += o.launches;
  return *this;
}

KernelStats operator-(KernelStats a, const KernelStats& b) {
  a.global_load_bytes -= b.global_load_bytes;
  a.global_store_bytes -= b.global_store_bytes;
  a.shared_loads -= b.shared_loads;
  a.shared_stores -= b.shared_stores;
  a.barriers -= b.barriers;
  a.warp_syncs -= b.warp_syncs;
  a.flops -= b.flops;
  a.blocks -= b.blocks;
  a.launches -= b.launches;
  return a;
}

std::string to_string(const KernelStats& s) {
  char intensity[32];
  std::snprintf(intensity, sizeof intensity, "%.3g", s.arithmetic_intensity());
  return str_cat("global loads ", format_bytes(s.global_load_bytes), ", stores ",
                 format_bytes(s.global_store_bytes), "; shared ", s.shared_loads, " loads, ",
                 s.shared_stores, " stores; ", s.barriers, " barriers, ", s.warp_syncs,
                 " warp syncs; ", s.flops, " flops (", intensity, " flops/byte)");
}

bool kernel_counting() {
  return g_env_stats || g_checks.load(std::memory_order_relaxed) ||
         g_collectors.load(std::memory_order_relaxed) > 0;
}

void set_kernel_checks(bool on) { g_checks.store(on, std::memory_order_relaxed); }
bool kernel_checks() { return g_checks.load(std::memory_order_relaxed); }

KernelStats last_kernel_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  return g_last;
}

KernelStats total_kernel_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  return g_total;
}

ScopedKernelStats::ScopedKernelStats() : start_(total_kernel_stats()) {
  g_collectors.fetch_add(1, std::memory_order_relaxed);
}

ScopedKernelStats::~ScopedKernelStats() { g_collectors.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace glass::cuda::sim
