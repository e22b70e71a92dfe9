// bench/bench_reduce.cpp — a full sum and a transposing copy, each against a plain loop.
//
// sum over 16M floats (64 MiB read once), in bytes/s, against two references in the same
// run at the same thread count (chunks split on glass's pool, partial sums added):
//   ref_accumulate   std::accumulate(p, p + n, 0.0f): what a user would write; one
//                    dependent add per element, so it is bound by the add's latency
//   ref_read_roof    the same sum with 16 independent float lanes, which the compiler
//                    vectorizes: about as fast as this machine can read 64 MiB
// counters ratio_vs_accumulate and ratio_vs_read_roof divide glass::sum's bytes/s by theirs.
//
// x.t().contiguous() on a 4096 x 4096 float (64 MiB read, 64 MiB written) against memcpy of
// 64 MiB (counter ratio_vs_memcpy); libtorch manages ~2-6 GB/s here. Two more rows say
// where the time goes: clone() of the contiguous x (glass's copy path without the
// transpose), and ref_transpose_tiled, a plain-C++ tiled transpose (64 x 64 tiles of
// 8 x 8 blocks), which shows what blocking alone buys on this machine.
//
//   build-bench/bench/bench_reduce --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <glass/glass.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <numeric>

#include "bench_util.h"

namespace {

using glass_bench::kBytes;
using glass_bench::kNumel;
using glass_bench::kRows;

const glass::Tensor& input() {
  static const glass::Tensor x = [] {
    glass::manual_seed(0);
    return glass::empty({kRows, kRows}).uniform_(-1, 1);
  }();
  return x;
}

int setup_threads(const benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  glass::set_num_threads(threads);
  return threads;
}

// Sums p[0, n) with `chunk_sum` on one contiguous chunk per thread, then adds the partials.
template <class ChunkSum>
float threaded_sum(const float* p, int64_t n, ChunkSum chunk_sum) {
  float total = 0;
  std::mutex m;
  glass::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
    const float partial = chunk_sum(p + b, e - b);
    std::lock_guard<std::mutex> lock(m);
    total += partial;
  });
  return total;
}

float accumulate_chunk(const float* p, int64_t n) { return std::accumulate(p, p + n, 0.0f); }

float lanes16_chunk(const float* p, int64_t n) {
  constexpr int kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += p[i + l];
  float s = 0;
  for (int l = 0; l < kLanes; ++l) s += lanes[l];
  for (; i < n; ++i) s += p[i];
  return s;
}

void sum_ratios(benchmark::State& state, int threads, double bps) {
  glass_bench::report_ratio(state, "ratio_vs_accumulate", "accumulate", threads, bps);
  glass_bench::report_ratio(state, "ratio_vs_read_roof", "read_roof", threads, bps);
}

// [SECTION] sum ----------------------------------------------------------------------------

void BM_ref_accumulate(benchmark::State& state) {
  const int threads = setup_threads(state);
  const float* p = input().data_ptr<float>();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(threaded_sum(p, kNumel, accumulate_chunk));
  const double bps = glass_bench::report_bytes(state, kBytes, t0);
  glass_bench::store_reference("accumulate", threads, bps);
  sum_ratios(state, threads, bps);
}

void BM_ref_read_roof(benchmark::State& state) {
  const int threads = setup_threads(state);
  const float* p = input().data_ptr<float>();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(threaded_sum(p, kNumel, lanes16_chunk));
  const double bps = glass_bench::report_bytes(state, kBytes, t0);
  glass_bench::store_reference("read_roof", threads, bps);
  sum_ratios(state, threads, bps);
}

void BM_sum(benchmark::State& state) {
  const int threads = setup_threads(state);
  const glass::Tensor& x = input();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor s = x.sum();
    benchmark::DoNotOptimize(s.data_ptr());
  }
  sum_ratios(state, threads, glass_bench::report_bytes(state, kBytes, t0));
}

// [SECTION] layout -------------------------------------------------------------------------

void BM_memcpy(benchmark::State& state) {
  const int threads = setup_threads(state);
  const glass::Tensor& x = input();
  glass::Tensor dst = glass::zeros({kRows, kRows});
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass_bench::parallel_memcpy(dst.data_ptr(), x.data_ptr(), kBytes);
    benchmark::ClobberMemory();
  }
  const double bps = glass_bench::report_bytes(state, 2 * kBytes, t0);
  glass_bench::store_reference("memcpy", threads, bps);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
}

void BM_clone(benchmark::State& state) {
  const int threads = setup_threads(state);
  const glass::Tensor& x = input();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = x.clone();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const double bps = glass_bench::report_bytes(state, 2 * kBytes, t0);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
}

void BM_transpose_contiguous(benchmark::State& state) {
  const int threads = setup_threads(state);
  const glass::Tensor& x = input();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = x.t().contiguous();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const double bps = glass_bench::report_bytes(state, 2 * kBytes, t0);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
}

// dst = src^T for n x n row-major floats (n a multiple of 64), in plain C++: 64 x 64 tiles,
// tile rows split over the pool; inside a tile, 8 x 8 blocks are read into a local array
// (8 rows of 8 contiguous floats) and written out transposed (8 rows of 8 contiguous
// floats), so no access walks memory one element per 16 KiB stride.
void transpose_tiled(float* dst, const float* src, int64_t n) {
  constexpr int64_t kTile = 64, kBlock = 8;
  glass::parallel_for(0, n / kTile, 1, [&](int64_t tb, int64_t te) {
    for (int64_t i0 = tb * kTile; i0 < te * kTile; i0 += kTile)
      for (int64_t j0 = 0; j0 < n; j0 += kTile)
        for (int64_t i = i0; i < i0 + kTile; i += kBlock)
          for (int64_t j = j0; j < j0 + kTile; j += kBlock) {
            float block[kBlock][kBlock];
            for (int64_t a = 0; a < kBlock; ++a)
              for (int64_t b = 0; b < kBlock; ++b) block[a][b] = src[(i + a) * n + j + b];
            for (int64_t b = 0; b < kBlock; ++b)
              for (int64_t a = 0; a < kBlock; ++a) dst[(j + b) * n + i + a] = block[a][b];
          }
  });
}

void BM_ref_transpose_tiled(benchmark::State& state) {
  const int threads = setup_threads(state);
  const glass::Tensor& x = input();
  glass::Tensor dst = glass::zeros({kRows, kRows});
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    transpose_tiled(dst.data_ptr<float>(), x.data_ptr<float>(), kRows);
    benchmark::ClobberMemory();
  }
  const double bps = glass_bench::report_bytes(state, 2 * kBytes, t0);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
}

// Registration order is run order: each reference runs before what is compared with it.
BENCHMARK(BM_ref_accumulate)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_ref_read_roof)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_sum)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_memcpy)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_clone)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_transpose_contiguous)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_ref_transpose_tiled)->Apply(glass_bench::at_1_and_2_threads);

}  // namespace

BENCHMARK_MAIN();
