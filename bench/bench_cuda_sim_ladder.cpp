// bench/bench_cuda_sim_ladder.cpp — the matmul ladder's rungs, counted on the simulated GPU.
//
// A simulated GPU cannot say how fast a kernel would be on a real one, but it can count
// what makes it fast (cuda/sim/kernel_stats.h): how many bytes each rung moves through
// global memory, how often it reuses them from shared memory, how many barriers that
// costs, and the flops per global byte (arithmetic intensity, when the kernels declare
// their flops with GLASS_FLOPS). One row per rung (cuda/kernels/gemm.h), C = A·B with
// n x n floats; the time is the simulator's, not a GPU's.
//
//   build/bench/bench_cuda_sim_ladder --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <glass/glass.h>

#include "cuda/cuda.h"
#include "cuda/kernels/gemm.h"
#include "cuda/sim/kernel_stats.h"

namespace {

namespace sim = glass::cuda::sim;

void BM_gemm_rung(benchmark::State& state) {
  const auto rung = static_cast<glass::cuda::GemmVersion>(state.range(0));
  const int64_t n = state.range(1);
  glass::cuda::use_simulator();
  const glass::cuda::GemmVersionGuard guard(rung);
  glass::manual_seed(0);
  const glass::Tensor a = glass::randn({n, n}).to(glass::kCUDA);
  const glass::Tensor b = glass::randn({n, n}).to(glass::kCUDA);
  glass::cuda::synchronize();
  sim::KernelStats stats;
  for (auto _ : state) {
    const sim::ScopedKernelStats collect;
    glass::Tensor c = glass::matmul(a, b);
    glass::cuda::synchronize();
    stats = collect.total();
  }
  const double elements = double(n) * double(n);  // per element of C
  state.counters["load_B/elt"] = double(stats.global_load_bytes) / elements;
  state.counters["store_B/elt"] = double(stats.global_store_bytes) / elements;
  state.counters["shared_ld/elt"] = double(stats.shared_loads) / elements;
  state.counters["shared_st/elt"] = double(stats.shared_stores) / elements;
  state.counters["barriers"] = double(stats.barriers);
  state.counters["flops/B"] = stats.arithmetic_intensity();
}
BENCHMARK(BM_gemm_rung)
    ->ArgsProduct({{1, 2, 3, 4, 5}, {128}})
    ->ArgNames({"v", "n"})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
