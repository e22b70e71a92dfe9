// bench/bench_compile.cpp — glass::compile against eager mode, and what its machinery costs.
//
//   guards/N            the check every compiled call starts with, for N input tensors
//                       (sizes, dtype, device, requires_grad, storage sharing, grad mode)
//   tiny_eager          a 4-op chain on 16 floats: dispatch and allocation per op dominate
//   tiny_compiled       the same through glass::compile: guards, then one fused kernel
//   chain_eager         the seed's ((a*b + a) * 0.5 - b).relu().sigmoid() on 16M floats
//   chain_compiled      the same through glass::compile (speedup_vs_eager: same run)
//   chain_train_*       the chain on 4M floats that require grad, forward + backward: compiled,
//                       the forward fused under one autograd node, the backward a replay
//   mlp_eager/compiled  lesson 06's MLP (784-512-512-10, batch 64), forward + backward. Its
//                       forward has nothing to fuse (a ReLU alone), so compiled, it replays
//                       op by op through autograd: this measures what the replay costs
//   mlp_silu_*          the same with x * sigmoid(x) for each ReLU: compiled, the forward is
//                       fused under one node and the backward is a joint graph that reads
//                       the matrix products from the forward
//   mlp_infer_*         the same forward under NoGradGuard
//
//   build/bench/bench_compile --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
// Kernels are cached in a folder of its own under /tmp, removed at the end.
#include <benchmark/benchmark.h>
#include <glass/glass.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "bench_kernel_cache.h"
#include "bench_util.h"
#include "compiler/compile.h"
#include "compiler/kernel_cache.h"

namespace {

using glass::Tensor;
using glass_bench::kRows;

std::map<std::string, double>& eager_time() {
  static std::map<std::string, double> t;  // seconds per iteration, by workload
  return t;
}

double seconds_per_iter(benchmark::State& state, glass_bench::Clock::time_point t0) {
  const double s = std::chrono::duration<double>(glass_bench::Clock::now() - t0).count();
  return s / static_cast<double>(state.iterations());
}

void report_speedup(benchmark::State& state, const std::string& workload, double seconds) {
  if (auto it = eager_time().find(workload); it != eager_time().end())
    state.counters["speedup_vs_eager"] = it->second / seconds;
}

bool have_compiler(benchmark::State& state) {
  if (glass::compiler::host_compiler().available()) return true;
  state.SkipWithError("no C++ compiler on this machine");
  return false;
}

void BM_guards(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<Tensor> tensors;
  for (int i = 0; i < n; ++i) tensors.push_back(glass::randn({16, 16}));
  glass::compiler::CompiledFunction engine(glass::CompileOptions{});
  engine.call(tensors, {}, 0, [&] { return std::vector<Tensor>{tensors[0] + 1}; });
  for (auto _ : state) benchmark::DoNotOptimize(engine.accepts(tensors, {}));
}

Tensor tiny_chain(const Tensor& a, const Tensor& b) { return ((a * b + a) * 0.5).relu(); }

void BM_tiny_eager(benchmark::State& state) {
  Tensor a = glass::randn({16}), b = glass::randn({16});
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(tiny_chain(a, b).data_ptr());
  eager_time()["tiny"] = seconds_per_iter(state, t0);
}

void BM_tiny_compiled(benchmark::State& state) {
  if (!have_compiler(state)) return;
  Tensor a = glass::randn({16}), b = glass::randn({16});
  auto f = glass::compile(tiny_chain);
  f(a, b);
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(f(a, b).data_ptr());
  report_speedup(state, "tiny", seconds_per_iter(state, t0));
}

Tensor seed_chain(const Tensor& a, const Tensor& b) {
  return ((a * b + a) * 0.5 - b).relu().sigmoid();
}

struct Big {
  Tensor a = glass::empty({kRows, kRows}).uniform_(-1, 1);
  Tensor b = glass::empty({kRows, kRows}).uniform_(-1, 1);
};
const Big& big() {
  static const Big in;
  return in;
}

void BM_chain_eager(benchmark::State& state) {
  const Big& in = big();
  benchmark::DoNotOptimize(seed_chain(in.a, in.b).data_ptr());
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(seed_chain(in.a, in.b).data_ptr());
  eager_time()["chain"] = seconds_per_iter(state, t0);
}

void BM_chain_compiled(benchmark::State& state) {
  if (!have_compiler(state)) return;
  const Big& in = big();
  auto f = glass::compile(seed_chain);
  f(in.a, in.b);
  benchmark::DoNotOptimize(f(in.a, in.b).data_ptr());
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(f(in.a, in.b).data_ptr());
  report_speedup(state, "chain", seconds_per_iter(state, t0));
}

// The seed chain with gradients, on 4M floats. Compiled, its forward runs fused under one
// autograd node (autograd_node.h), whose backward is either the joint graph, traced and
// fused (joint_graph.h), or a replay of the chain op by op.
enum class Train { kEager, kReplayed, kJoint };
template <Train kMode>
void BM_chain_train(benchmark::State& state) {
  if (kMode != Train::kEager && !have_compiler(state)) return;
  Tensor a = glass::randn({2048, 2048}).requires_grad_(true);
  Tensor b = glass::randn({2048, 2048}).requires_grad_(true);
  auto f = glass::compile(seed_chain,
                          glass::CompileOptions().set_joint_backward(kMode == Train::kJoint));
  auto step = [&] {
    Tensor y = kMode == Train::kEager ? seed_chain(a, b) : f(a, b);
    y.sum().backward();
  };
  step();  // the forward's trace
  step();  // the backward's
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) step();
  const double s = seconds_per_iter(state, t0);
  if (kMode == Train::kEager)
    eager_time()["chain_train"] = s;
  else
    report_speedup(state, "chain_train", s);
}

// Lesson 06's MLP; with `silu`, x * sigmoid(x) in place of each ReLU (a forward with
// something to fuse, so it runs as one node with a joint-graph backward).
struct MLPImpl : glass::nn::Module {
  explicit MLPImpl(bool silu) : Module("MLP"), silu(silu) {
    fc1 = register_module("fc1", glass::nn::Linear(784, 512));
    fc2 = register_module("fc2", glass::nn::Linear(512, 512));
    fc3 = register_module("fc3", glass::nn::Linear(512, 10));
  }
  Tensor act(const Tensor& x) const { return silu ? x * x.sigmoid() : x.relu(); }
  Tensor forward(const Tensor& x) { return fc3(act(fc2(act(fc1(x))))); }
  bool silu;
  glass::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

template <bool kCompiled, bool kTrain, bool kSilu = false>
void BM_mlp(benchmark::State& state) {
  if (kCompiled && !have_compiler(state)) return;
  glass::manual_seed(0);
  auto model = std::make_shared<MLPImpl>(kSilu);
  Tensor x = glass::randn({64, 784});
  auto compiled = glass::compile(model);
  auto step = [&] {
    if constexpr (kTrain) {
      model->zero_grad();
      Tensor y = kCompiled ? compiled(x) : model->forward(x);
      y.sum().backward();
    } else {
      glass::NoGradGuard no_grad;
      benchmark::DoNotOptimize((kCompiled ? compiled(x) : model->forward(x)).data_ptr());
    }
  };
  step();
  const auto t0 = glass_bench::Clock::now();
  for (auto _ : state) step();
  const double s = seconds_per_iter(state, t0);
  const std::string workload = std::string(kSilu ? "mlp_silu" : "mlp") + (kTrain ? "" : "_infer");
  if (kCompiled)
    report_speedup(state, workload, s);
  else
    eager_time()[workload] = s;
}

BENCHMARK(BM_guards)->Arg(2)->Arg(8);
BENCHMARK(BM_tiny_eager);
BENCHMARK(BM_tiny_compiled);
BENCHMARK(BM_chain_eager)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chain_compiled)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chain_train<Train::kEager>)->Name("chain_train_eager")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chain_train<Train::kReplayed>)
    ->Name("chain_train_compiled_replayed")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chain_train<Train::kJoint>)
    ->Name("chain_train_compiled_joint")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mlp<false, true>)->Name("mlp_eager")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<true, true>)->Name("mlp_compiled")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<false, true, true>)->Name("mlp_silu_eager")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<true, true, true>)->Name("mlp_silu_compiled")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<false, false>)->Name("mlp_infer_eager")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<true, false>)->Name("mlp_infer_compiled")->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  glass_bench::ScopedKernelCache cache;  // "cold" is cold, and nothing is left behind
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
