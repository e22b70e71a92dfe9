// bench/bench_util.h — what the bandwidth benchmarks share: the memcpy reference, the
// bytes/s bookkeeping, and the "ratio vs reference" counter.
//
// Every bandwidth benchmark counts the bytes its kernels must move at least (each input
// read once, each output written once) and reports them with SetBytesProcessed over wall
// time (UseRealTime: with 2 threads the calling thread's CPU time is only half the story).
// A reference benchmark runs first at the same thread count and stores its bytes/s under
// a name; later benchmarks divide their own bytes/s by it, so every ratio compares two
// figures taken minutes apart in the same process.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "core/parallel.h"

namespace glass_bench {

// 16M floats: a 4096 x 4096 matrix, 64 MiB.
inline constexpr int64_t kRows = 4096;
inline constexpr int64_t kNumel = kRows * kRows;
inline constexpr int64_t kBytes = kNumel * static_cast<int64_t>(sizeof(float));

// memcpy split into one contiguous chunk per thread on glass's own pool, so the reference
// at 2 threads pays the same wake-up cost as the ops it is compared with. At 1 thread it
// is exactly std::memcpy.
inline void parallel_memcpy(void* dst, const void* src, int64_t nbytes) {
  constexpr int64_t kChunk = 1 << 20;  // grain: 1 MiB per chunk at least
  const int64_t nchunks = (nbytes + kChunk - 1) / kChunk;
  glass::parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
    const int64_t lo = b * kChunk, hi = std::min(e * kChunk, nbytes);
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo,
                static_cast<size_t>(hi - lo));
  });
}

// Reference figures in bytes/s, keyed by (name, threads).
inline std::map<std::pair<std::string, int>, double>& references() {
  static std::map<std::pair<std::string, int>, double> table;
  return table;
}

using Clock = std::chrono::steady_clock;

// Sets bytes/s (bytes_per_iter per iteration) and returns this run's bytes/s over
// the wall time since `start`, the moment the timed loop began.
inline double report_bytes(benchmark::State& state, int64_t bytes_per_iter,
                           Clock::time_point start) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  state.SetBytesProcessed(bytes_per_iter * state.iterations());
  return seconds > 0 ? static_cast<double>(bytes_per_iter) * state.iterations() / seconds : 0;
}

inline void store_reference(const std::string& name, int threads, double bytes_per_s) {
  references()[{name, threads}] = bytes_per_s;
}

// Adds counter `counter` = bytes_per_s / the stored reference (skipped when the reference
// did not run, e.g. under a --benchmark_filter that excludes it).
inline void report_ratio(benchmark::State& state, const char* counter, const std::string& name,
                         int threads, double bytes_per_s) {
  auto it = references().find({name, threads});
  if (it == references().end() || it->second <= 0) return;
  state.counters[counter] = bytes_per_s / it->second;
}

// Every bandwidth benchmark runs at 1 and 2 threads (glass::set_num_threads), on wall time.
inline void at_1_and_2_threads(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace glass_bench
