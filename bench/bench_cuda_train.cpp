// bench/bench_cuda_train.cpp — one training step of lesson 06's MLP on kCUDA against the CPU.
//
//   BM_TrainStep/cpu, /cuda   zero_grad -> forward -> cross_entropy -> backward -> Adam step
//                             of a 784-128-10 MLP on a batch of 128, wall time per step.
//                             /cuda queues every kernel asynchronously; the step ends with
//                             a synchronize so the time covers the work, not just the
//                             launches. The ratio cpu/cuda is the number to read.
//
// The device is the simulated GPU unless GLASS_CUDA=gpu (scripts/gpu_check.sh): there it
// measures how far the simulator is from the CPU backend it runs on, the price of modelling
// a device (blocks on SM threads, barriers as fiber switches) — no GPU speed is implied.
#include <benchmark/benchmark.h>

#include <glass/glass.h>

#include <cstdlib>
#include <string>

namespace {

void choose_device() {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") glass::cuda::use_simulator();
}

void BM_TrainStep(benchmark::State& state, glass::DeviceType type) {
  if (type == glass::kCUDA) choose_device();
  const glass::Device device(type);
  glass::manual_seed(0);
  glass::nn::Sequential model;
  model->push_back(glass::nn::Linear(784, 128));
  model->push_back(glass::nn::ReLU());
  model->push_back(glass::nn::Linear(128, 10));
  model->to(device);
  glass::optim::Adam adam(model->parameters(), glass::optim::AdamOptions(1e-3));
  const glass::Tensor x = glass::randn({128, 784}).to(device);
  const glass::Tensor y = glass::randint(10, {128}).to(device);
  auto step = [&] {
    adam.zero_grad();
    glass::Tensor loss = glass::nn::functional::cross_entropy(model(x), y);
    loss.backward();
    adam.step();
    if (type == glass::kCUDA) glass::cuda::synchronize();
  };
  step();  // warm the allocators and Adam's state
  for (auto _ : state) step();
}
BENCHMARK_CAPTURE(BM_TrainStep, cpu, glass::kCPU)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep, cuda, glass::kCUDA)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
