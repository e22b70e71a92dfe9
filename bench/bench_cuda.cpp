// bench/bench_cuda.cpp — the CUDA backend side by side with its references, in one run.
//
//   BM_LaunchHostTime/op      host time to queue one elementwise op on a CUDA tensor
//                             (TensorIterator + launch); the goal is cudart's ~5 us
//   BM_Add16M/cpu, /cuda      c = a + b on 16M floats: the CPU backend against the device
//                             (simulated here: goal >= 0.3x the CPU; a GPU: HBM bandwidth)
//   BM_CopyHtoD/pageable, /pinned
//                             64 MiB host -> device, bytes/s (pinned skips the staging copy)
//
// The device is the simulated GPU unless GLASS_CUDA=gpu (scripts/gpu_check.sh). Results
// and the commands that produced them are in bench/RESULTS.md.
#include <benchmark/benchmark.h>

#include <glass/glass.h>

#include <cstdlib>
#include <string>

namespace {

void choose_device() {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") glass::cuda::use_simulator();
}

void BM_LaunchHostTime(benchmark::State& state) {
  choose_device();
  glass::Tensor x = glass::zeros({1}, glass::kCUDA);
  int64_t queued = 0;
  for (auto _ : state) {
    x.add_(1);
    if (++queued == 4096) {  // keep the queue short; the wait is not timed
      state.PauseTiming();
      glass::cuda::synchronize();
      queued = 0;
      state.ResumeTiming();
    }
  }
  glass::cuda::synchronize();
}
BENCHMARK(BM_LaunchHostTime)->Name("BM_LaunchHostTime/op")->UseRealTime();

constexpr int64_t kAddElements = int64_t{1} << 24;

void BM_Add16M(benchmark::State& state, glass::DeviceType type) {
  if (type == glass::kCUDA) choose_device();
  glass::Tensor a = glass::rand({kAddElements}).to(type);
  glass::Tensor b = glass::rand({kAddElements}).to(type);
  glass::Tensor c = a + b;  // warm the allocators
  for (auto _ : state) {
    c = a + b;
    if (type == glass::kCUDA) glass::cuda::synchronize();
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kAddElements * int64_t(sizeof(float)));
}
BENCHMARK_CAPTURE(BM_Add16M, cpu, glass::kCPU)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Add16M, cuda, glass::kCUDA)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int64_t kCopyFloats = int64_t{16} << 20;  // 64 MiB

void BM_CopyHtoD(benchmark::State& state, bool pinned) {
  choose_device();
  glass::Tensor host = glass::rand({kCopyFloats});
  if (pinned) host = host.pin_memory();
  glass::Tensor dev = glass::empty({kCopyFloats}, glass::kCUDA);
  for (auto _ : state) {
    dev.copy_(host, /*non_blocking=*/pinned);
    glass::cuda::synchronize();
  }
  state.SetBytesProcessed(state.iterations() * kCopyFloats * int64_t(sizeof(float)));
}
BENCHMARK_CAPTURE(BM_CopyHtoD, pageable, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CopyHtoD, pinned, true)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
