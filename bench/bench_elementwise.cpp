// bench/bench_elementwise.cpp — elementwise ops on 16M floats (64 MiB) against memcpy.
//
// Reference: memcpy of 64 MiB into a preallocated buffer (split over the same number of
// threads on glass's pool), the usual yardstick for a kernel that streams through memory.
// Every op reports the bytes it must move (inputs read once, outputs written once) per
// second, and `ratio_vs_memcpy` = its bytes/s over memcpy's, measured earlier in the run
// at the same thread count. Broadcast and transposed operands also report
// `ratio_vs_contiguous`, over the bytes/s of the contiguous `c = a + b`.
//
//   ref_add_loop       out[i] = a[i] + b[i], a plain loop on raw pointers (split on the pool):
//                      the second reference, the same arithmetic with nothing around it
//   add_new            c = a + b, a fresh result each call (the caching allocator recycles it)
//   add_new_nocache    the same with glass::cpu_set_caching_enabled(false): every result
//                      is a fresh 64 MiB from the OS, faulted in page by page
//   add_out            glass::add_out(out, a, b) into a preallocated out
//   chain6             ((a*b + a) * 0.5 - b).relu().sigmoid(): six kernels, each reading
//                      and writing whole tensors: 15 x 64 MiB (a fused kernel would move 3)
//   relu, exp, sigmoid, tanh
//                      y = a.relu() / a.exp() / ... alone, a in [-1, 1): one read and one
//                      write each. relu is the yardstick (no math); the others show what
//                      the math costs on top (core/cpu/vec_math.h)
//   add_row            a (4096x4096) + row (4096): stride 0 along dim 0
//   add_col            a (4096x4096) + col (4096x1): stride 0 along dim 1
//   add_transposed     a.t() + b: one operand walks memory 16 KiB per element
//
//   build-bench/bench/bench_elementwise --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <glass/glass.h>

#include <cstdint>

#include "bench_util.h"

namespace {

using glass_bench::kBytes;
using glass_bench::kRows;

// Inputs shared by every benchmark, made once and touched, so no page fault is timed.
struct Inputs {
  glass::Tensor a, b, row, col, out;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    glass::manual_seed(0);
    Inputs x;
    x.a = glass::empty({kRows, kRows}).uniform_(-1, 1);
    x.b = glass::empty({kRows, kRows}).uniform_(-1, 1);
    x.row = glass::empty({kRows}).uniform_(-1, 1);
    x.col = glass::empty({kRows, 1}).uniform_(-1, 1);
    x.out = glass::zeros({kRows, kRows});
    return x;
  }();
  return in;
}

int setup_threads(const benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  glass::set_num_threads(threads);
  return threads;
}

// Reports bytes/s and the ratios; `as` stores this run's bytes/s as a reference.
void finish(benchmark::State& state, int threads, int64_t bytes, glass_bench::Clock::time_point t0,
            bool vs_contiguous = false, const char* as = nullptr) {
  const double bps = glass_bench::report_bytes(state, bytes, t0);
  if (as) glass_bench::store_reference(as, threads, bps);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
  if (vs_contiguous)
    glass_bench::report_ratio(state, "ratio_vs_contiguous", "add_new", threads, bps);
}

void BM_memcpy(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const void* src = in.a.data_ptr();
  void* dst = in.out.data_ptr();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass_bench::parallel_memcpy(dst, src, kBytes);
    benchmark::ClobberMemory();
  }
  finish(state, threads, 2 * kBytes, t0, false, "memcpy");
}

// The same sum as a plain loop over raw pointers, split on the pool: what `a + b` costs
// with no TensorIterator, dispatcher or allocation around it.
void BM_ref_add_loop(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const float* a = in.a.data_ptr<float>();
  const float* b = in.b.data_ptr<float>();
  float* out = in.out.data_ptr<float>();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::parallel_for(0, glass_bench::kNumel, 1 << 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = a[i] + b[i];
    });
    benchmark::ClobberMemory();
  }
  finish(state, threads, 3 * kBytes, t0);
}

void BM_add_new(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor c = in.a + in.b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  finish(state, threads, 3 * kBytes, t0, false, "add_new");
}

void BM_add_new_nocache(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  glass::cpu_set_caching_enabled(false);
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor c = in.a + in.b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  finish(state, threads, 3 * kBytes, t0);
  glass::cpu_set_caching_enabled(true);
}

void BM_add_out(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  glass::Tensor out = in.out;
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::add_out(out, in.a, in.b);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  finish(state, threads, 3 * kBytes, t0);
}

void BM_chain6(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const glass::Tensor &a = in.a, &b = in.b;
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = ((a * b + a) * 0.5 - b).relu().sigmoid();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  // mul 3 + add 3 + mul-by-scalar 2 + sub 3 + relu 2 + sigmoid 2 passes over 64 MiB.
  finish(state, threads, 15 * kBytes, t0);
}

// One unary op alone: 2 x 64 MiB moved. `op` is a member function pointer.
void run_unary(benchmark::State& state, glass::Tensor (glass::Tensor::*op)() const) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = (in.a.*op)();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  finish(state, threads, 2 * kBytes, t0);
}
void BM_relu(benchmark::State& state) { run_unary(state, &glass::Tensor::relu); }
void BM_exp(benchmark::State& state) { run_unary(state, &glass::Tensor::exp); }
void BM_sigmoid(benchmark::State& state) { run_unary(state, &glass::Tensor::sigmoid); }
void BM_tanh(benchmark::State& state) { run_unary(state, &glass::Tensor::tanh); }

void BM_add_row(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor c = in.a + in.row;  // (4096, 4096) + (4096,)
    benchmark::DoNotOptimize(c.data_ptr());
  }
  finish(state, threads, 2 * kBytes + in.row.nbytes(), t0, true);
}

void BM_add_col(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor c = in.a + in.col;  // (4096, 4096) + (4096, 1)
    benchmark::DoNotOptimize(c.data_ptr());
  }
  finish(state, threads, 2 * kBytes + in.col.nbytes(), t0, true);
}

void BM_add_transposed(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const glass::Tensor at = in.a.t();  // strides (1, 4096): a view, no copy
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor c = at + in.b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  finish(state, threads, 3 * kBytes, t0, true);
}

// Registration order is run order: the references (memcpy, then add_new) come first.
BENCHMARK(BM_memcpy)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_ref_add_loop)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_new)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_new_nocache)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_out)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_chain6)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_relu)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_exp)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_sigmoid)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_tanh)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_row)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_col)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_add_transposed)->Apply(glass_bench::at_1_and_2_threads);

}  // namespace

BENCHMARK_MAIN();
