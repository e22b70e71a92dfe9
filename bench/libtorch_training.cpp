// bench/libtorch_training.cpp — the training step and the small graph, glass beside libtorch.
//
// Built only with -DGLASS_BENCH_LIBTORCH=ON (Debian's libtorch-dev; never in CI). Both sides
// run the same step in the same process: MLP 64-128-10 at batch 64 and 256 and the
// Fashion-MNIST MLP 784-512-512-10 at batch 128 (zero_grad, forward, cross-entropy,
// backward, optimizer step — SGD with momentum, and Adam), and the small graph
// (a*b + c).relu().sum().backward() on 4-element tensors. Read the ratio glass / libtorch
// per row; the target is ≤ 1.0 at the same thread count.
//
// Threads: libtorch runs its own OpenMP pool and calls OpenBLAS, which has another; left
// alone they spin on the same cores and the step gets 2-4x slower. Both are pinned to the
// benchmark's thread count (torch::set_num_threads and openblas_set_num_threads).
//
//   cmake -S . -B build-torch -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLASS_BENCH_LIBTORCH=ON
//   cmake --build build-torch --target libtorch_training
//   build-torch/bench/libtorch_training --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (results: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "training_step.h"

// OpenBLAS's own setter; weak, so the program still links if libtorch uses another BLAS.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace {

void set_threads(int n) {
  glass::set_num_threads(n);
  torch::set_num_threads(n);
  if (openblas_set_num_threads) openblas_set_num_threads(n);
}

struct TorchMlpStep {
  torch::nn::Sequential model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  torch::Tensor x, y;

  TorchMlpStep(const std::vector<int64_t>& sizes, int64_t batch, bool adam) {
    torch::manual_seed(0);
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      model->push_back(torch::nn::Linear(sizes[i], sizes[i + 1]));
      if (i + 2 < sizes.size()) model->push_back(torch::nn::ReLU());
    }
    if (adam) {
      optimizer = std::make_unique<torch::optim::Adam>(model->parameters(),
                                                       torch::optim::AdamOptions(1e-3));
    } else {
      optimizer = std::make_unique<torch::optim::SGD>(model->parameters(),
                                                      torch::optim::SGDOptions(0.01).momentum(0.9));
    }
    x = torch::randn({batch, sizes.front()});
    y = torch::randint(0, sizes.back(), {batch});
  }

  float step() {
    optimizer->zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer->step();
    return loss.item<float>();
  }
};

template <class Step>
void BM_step(benchmark::State& state, bool adam) {
  set_threads(static_cast<int>(state.range(1)));
  Step step(bench::mlp_sizes(state.range(2)), state.range(0), adam);
  for (auto _ : state) benchmark::DoNotOptimize(step.step());
}

void BM_glass_step(benchmark::State& state, bool adam) {
  BM_step<bench::GlassMlpStep>(state, adam);
}
void BM_torch_step(benchmark::State& state, bool adam) { BM_step<TorchMlpStep>(state, adam); }

void BM_glass_small_graph(benchmark::State& state) {
  set_threads(1);
  glass::Tensor a = glass::tensor({1.f, -2.f, 3.f, -4.f}).requires_grad_();
  glass::Tensor b = glass::tensor({0.5f, 0.5f, 2.f, 2.f}).requires_grad_();
  glass::Tensor c = glass::tensor({1.f, 1.f, -1.f, 10.f}).requires_grad_();
  for (auto _ : state) {
    (a * b + c).relu().sum().backward();
    benchmark::DoNotOptimize(a.grad().unsafeGetTensorImpl());
  }
}

void BM_torch_small_graph(benchmark::State& state) {
  set_threads(1);
  torch::Tensor a = torch::tensor({1.f, -2.f, 3.f, -4.f}).requires_grad_();
  torch::Tensor b = torch::tensor({0.5f, 0.5f, 2.f, 2.f}).requires_grad_();
  torch::Tensor c = torch::tensor({1.f, 1.f, -1.f, 10.f}).requires_grad_();
  for (auto _ : state) {
    (a * b + c).relu().sum().backward();
    benchmark::DoNotOptimize(a.grad().data_ptr());
  }
}

void model_args(benchmark::internal::Benchmark* b) {
  bench::mlp_step_args(b);
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_glass_step, sgd, false)->Apply(model_args);
BENCHMARK_CAPTURE(BM_torch_step, sgd, false)->Apply(model_args);
BENCHMARK_CAPTURE(BM_glass_step, adam, true)->Apply(model_args);
BENCHMARK_CAPTURE(BM_torch_step, adam, true)->Apply(model_args);
BENCHMARK(BM_glass_small_graph)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_torch_small_graph)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
