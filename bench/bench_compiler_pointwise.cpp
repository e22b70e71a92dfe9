// bench/bench_compiler_pointwise.cpp — the seed's chain fused into one generated kernel,
// against the same chain in eager mode and against memcpy, plus what compiling costs.
//
//   memcpy            64 MiB into a preallocated buffer: the bandwidth yardstick
//   chain_eager       ((a*b + a) * 0.5 - b).relu().sigmoid() as six eager ops: 15 passes
//                     of 64 MiB (each op reads its inputs and writes its result)
//   chain_compiled    the same as one generated loop (compiler/pointwise.h): reads a and b
//                     once, writes the result once: 3 passes
// Both chains report the 3 x 64 MiB a fused kernel must move, so `ratio_vs_memcpy` is the
// fraction of memcpy's bandwidth that useful work got; `speedup_vs_eager` divides the
// eager chain's time by this one's (same thread count, same run).
//
//   compile_cold      generating and compiling one new kernel (a fresh source each time)
//   load_cached       loading it again from the disk cache, verified (a new process's cost)
//
//   build-bench/bench/bench_compiler_pointwise --benchmark_min_time=0.5
//       --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// Kernels are cached in a folder of its own under /tmp, removed at the end.
#include <benchmark/benchmark.h>
#include <glass/glass.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "bench_kernel_cache.h"
#include "bench_util.h"
#include "compiler/kernel_cache.h"
#include "compiler/pointwise.h"

namespace {

using glass_bench::kBytes;
using glass_bench::kRows;
namespace compiler = glass::compiler;

struct Inputs {
  glass::Tensor a, b, out;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    glass::manual_seed(0);
    Inputs x;
    x.a = glass::empty({kRows, kRows}).uniform_(-1, 1);
    x.b = glass::empty({kRows, kRows}).uniform_(-1, 1);
    x.out = glass::zeros({kRows, kRows});
    return x;
  }();
  return in;
}

compiler::PointwiseProgram chain() {
  compiler::PointwiseProgram p;
  const int a = p.input(0, glass::kFloat), b = p.input(1, glass::kFloat);
  const int ab_a = p.binary(glass::BinaryOp::Add, p.binary(glass::BinaryOp::Mul, a, b), a);
  const int t =
      p.binary(glass::BinaryOp::Sub, p.binary(glass::BinaryOp::Mul, ab_a, p.scalar(0.5)), b);
  p.set_output(p.unary(glass::UnaryOp::Sigmoid, p.unary(glass::UnaryOp::Relu, t)));
  return p;
}

int setup_threads(const benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  glass::set_num_threads(threads);
  return threads;
}

std::map<int, double>& eager_seconds() {
  static std::map<int, double> table;  // per thread count: one eager chain
  return table;
}

void BM_memcpy(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass_bench::parallel_memcpy(in.out.data_ptr(), in.a.data_ptr(), kBytes);
    benchmark::ClobberMemory();
  }
  glass_bench::store_reference("memcpy", threads, glass_bench::report_bytes(state, 2 * kBytes, t0));
}

void BM_chain_eager(benchmark::State& state) {
  const int threads = setup_threads(state);
  const Inputs& in = inputs();
  // Once untimed: the first call's temporaries are fresh pages (the allocator keeps them).
  benchmark::DoNotOptimize(((in.a * in.b + in.a) * 0.5 - in.b).relu().sigmoid().data_ptr());
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = ((in.a * in.b + in.a) * 0.5 - in.b).relu().sigmoid();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const double bps = glass_bench::report_bytes(state, 3 * kBytes, t0);
  eager_seconds()[threads] = 3.0 * static_cast<double>(kBytes) / bps;
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
}

void BM_chain_compiled(benchmark::State& state) {
  const int threads = setup_threads(state);
  if (!compiler::host_compiler().available()) {
    state.SkipWithError("no C++ compiler on this machine");
    return;
  }
  const Inputs& in = inputs();
  const compiler::CompiledPointwise fused = compiler::compile_pointwise(chain());
  benchmark::DoNotOptimize(fused({in.a, in.b}).data_ptr());  // untimed, as for eager
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) {
    glass::Tensor y = fused({in.a, in.b});
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const double bps = glass_bench::report_bytes(state, 3 * kBytes, t0);
  glass_bench::report_ratio(state, "ratio_vs_memcpy", "memcpy", threads, bps);
  if (auto it = eager_seconds().find(threads); it != eager_seconds().end())
    state.counters["speedup_vs_eager"] = it->second / (3.0 * static_cast<double>(kBytes) / bps);
}

// A source no earlier run compiled: the chain with a comment that names the iteration.
std::string fresh_source(int64_t n) {
  return "// bench_compiler_pointwise iteration " + std::to_string(::getpid()) + "." +
         std::to_string(n) + "\n" + compiler::emit_cpp(chain());
}

void BM_compile_cold(benchmark::State& state) {
  if (!compiler::host_compiler().available()) {
    state.SkipWithError("no C++ compiler on this machine");
    return;
  }
  // Across repetitions too: a counter that restarted would ask for sources already cached.
  static int64_t n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(compiler::load_or_compile(fresh_source(n++)));
}

void BM_load_cached(benchmark::State& state) {
  if (!compiler::host_compiler().available()) {
    state.SkipWithError("no C++ compiler on this machine");
    return;
  }
  const std::string source = compiler::emit_cpp(chain());
  compiler::load_or_compile(source);  // in the disk cache from here on
  for (auto _ : state) {
    compiler::forget_loaded_kernels();  // as a new process: from disk, verified, dlopen()ed
    benchmark::DoNotOptimize(compiler::load_or_compile(source));
  }
}

BENCHMARK(BM_memcpy)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_chain_eager)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_chain_compiled)->Apply(glass_bench::at_1_and_2_threads);
BENCHMARK(BM_compile_cold)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_load_cached)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  glass_bench::ScopedKernelCache cache;  // "cold" is cold, and nothing is left behind
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
