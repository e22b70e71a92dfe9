// bench/bench_dispatch.cpp — the fixed cost of one op call, on 1-element tensors.
//
// With one element the arithmetic is free, so ns per call is all overhead: the dispatcher
// (dispatcher.h), argument checks, TensorIterator's build(), the kernel's dtype switch,
// and for `a + b` allocating the result (a Storage through the caching allocator and a
// TensorImpl). Reference: libtorch's C++ `a + b` on this machine, under 1 us — the target.
//   add          c = a + b, a new 1-element result each call
//   add_out      glass::add_out(out, a, b) into a preallocated out: no allocation
//   view         a.view({1}): a view op, metadata only, through the dispatcher
//   empty        glass::empty({1}): the allocation part of `add` on its own
// Each runs at 1 and 2 threads (glass::set_num_threads); one element is far below every
// parallel grain, so the two should agree.
//
//   build-bench/bench/bench_dispatch --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <glass/glass.h>

namespace {

struct Inputs {
  glass::Tensor a = glass::ones({1}, glass::kFloat);
  glass::Tensor b = glass::ones({1}, glass::kFloat);
  glass::Tensor out = glass::zeros({1}, glass::kFloat);
};

void BM_add(benchmark::State& state) {
  glass::set_num_threads(static_cast<int>(state.range(0)));
  Inputs in;
  for (auto _ : state) {
    glass::Tensor c = in.a + in.b;
    benchmark::DoNotOptimize(c.unsafeGetTensorImpl());
  }
}

void BM_add_out(benchmark::State& state) {
  glass::set_num_threads(static_cast<int>(state.range(0)));
  Inputs in;
  for (auto _ : state) {
    glass::add_out(in.out, in.a, in.b);
    benchmark::ClobberMemory();
  }
}

void BM_view(benchmark::State& state) {
  glass::set_num_threads(static_cast<int>(state.range(0)));
  Inputs in;
  for (auto _ : state) {
    glass::Tensor v = in.a.view({1});
    benchmark::DoNotOptimize(v.unsafeGetTensorImpl());
  }
}

void BM_empty(benchmark::State& state) {
  glass::set_num_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    glass::Tensor e = glass::empty({1});
    benchmark::DoNotOptimize(e.unsafeGetTensorImpl());
  }
}

void config(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kNanosecond);
}

BENCHMARK(BM_add)->Apply(config);
BENCHMARK(BM_add_out)->Apply(config);
BENCHMARK(BM_view)->Apply(config);
BENCHMARK(BM_empty)->Apply(config);

}  // namespace

BENCHMARK_MAIN();
