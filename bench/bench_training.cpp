// bench/bench_training.cpp — one MLP training step in glass, against its own matmuls.
//
// The three models: MLP 64-128-10 at batch 64 and 256, and the Fashion-MNIST MLP
// 784-512-512-10 at batch 128 (with SGD+momentum, and with Adam). The reference in the same
// run is the step's matrix products alone (forward: one per layer; backward: two per layer
// but the first, which needs no input gradient), on preallocated tensors through glass::mm:
// `step / matmuls` is what the rest (activations, loss, autograd's bookkeeping, the
// optimizer, allocation) costs on top of the arithmetic that cannot be avoided.
// libtorch_training.cpp puts the same step beside libtorch's when libtorch is installed.
//
//   build/bench/bench_training --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>

#include "training_step.h"

namespace {

void BM_glass_step(benchmark::State& state, bool adam) {
  glass::set_num_threads(static_cast<int>(state.range(1)));
  bench::GlassMlpStep step(bench::mlp_sizes(state.range(2)), state.range(0), adam);
  for (auto _ : state) benchmark::DoNotOptimize(step.step());
}

void BM_glass_matmuls_only(benchmark::State& state) {
  glass::set_num_threads(static_cast<int>(state.range(1)));
  std::vector<int64_t> s = bench::mlp_sizes(state.range(2));
  int64_t batch = state.range(0);
  struct Layer {
    glass::Tensor x, w, gy;  // x: (batch, in), w: (out, in), gy: (batch, out)
  };
  std::vector<Layer> layers;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    layers.push_back({glass::randn({batch, s[i]}), glass::randn({s[i + 1], s[i]}),
                      glass::randn({batch, s[i + 1]})});
  }
  for (auto _ : state) {
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      benchmark::DoNotOptimize(glass::mm(l.x, l.w.t()).unsafeGetTensorImpl());          // forward
      benchmark::DoNotOptimize(glass::mm(l.gy.t(), l.x).unsafeGetTensorImpl());         // d weight
      if (i > 0) benchmark::DoNotOptimize(glass::mm(l.gy, l.w).unsafeGetTensorImpl());  // d input
    }
  }
}

void model_args(benchmark::internal::Benchmark* b) {
  bench::mlp_step_args(b);
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_glass_step, sgd, false)->Apply(model_args);
BENCHMARK_CAPTURE(BM_glass_step, adam, true)->Apply(model_args);
BENCHMARK(BM_glass_matmuls_only)->Apply(model_args);
BENCHMARK_MAIN();
