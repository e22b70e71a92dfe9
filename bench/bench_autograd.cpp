// bench/bench_autograd.cpp — the fixed cost of recording a graph and running backward.
//
// The small graph, (a*b + c).relu().sum().backward() on 4-element tensors: with 4
// elements the arithmetic is free, so the time is autograd's bookkeeping (nodes, edges,
// saved tensors, the engine's queue, gradient accumulation into .grad()). References in the
// same run: the same forward with grad mode off (no graph at all), and the forward with
// the graph recorded but no backward. libtorch's figure for the whole step is 43 µs on this
// machine (bench/libtorch_training.cpp puts them side by side when libtorch is installed).
//
//   build/bench/bench_autograd --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <glass/glass.h>

namespace {

struct Leaves {
  glass::Tensor a = glass::tensor({1.f, -2.f, 3.f, -4.f}).requires_grad_();
  glass::Tensor b = glass::tensor({0.5f, 0.5f, 2.f, 2.f}).requires_grad_();
  glass::Tensor c = glass::tensor({1.f, 1.f, -1.f, 10.f}).requires_grad_();
};

void BM_small_graph_forward_no_grad(benchmark::State& state) {
  Leaves in;
  glass::NoGradGuard no_grad;
  for (auto _ : state) {
    glass::Tensor loss = (in.a * in.b + in.c).relu().sum();
    benchmark::DoNotOptimize(loss.unsafeGetTensorImpl());
  }
}

void BM_small_graph_forward_recorded(benchmark::State& state) {
  Leaves in;
  for (auto _ : state) {
    glass::Tensor loss = (in.a * in.b + in.c).relu().sum();
    benchmark::DoNotOptimize(loss.unsafeGetTensorImpl());
  }
}

void BM_small_graph_forward_backward(benchmark::State& state) {
  Leaves in;
  for (auto _ : state) {
    glass::Tensor loss = (in.a * in.b + in.c).relu().sum();
    loss.backward();
    benchmark::DoNotOptimize(in.a.grad().unsafeGetTensorImpl());
  }
}

}  // namespace

BENCHMARK(BM_small_graph_forward_no_grad);
BENCHMARK(BM_small_graph_forward_recorded);
BENCHMARK(BM_small_graph_forward_backward);
BENCHMARK_MAIN();
