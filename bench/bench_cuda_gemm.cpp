// bench/bench_cuda_gemm.cpp — the CUDA gemm ladder, rung by rung, with its references in one run.
//
//   BM_Gemm/cpu/n          the CPU backend's matmul (core/cpu/gemm.h, its default rung)
//   BM_Gemm/cuda_vK/n      rung K of the CUDA ladder (cuda/kernels/gemm.h), through mm()
//   BM_Gemm/cublas/n       cublasSgemm in pedantic fp32 on the same buffers (GPU builds, where
//                          libcublas loads at run time: tests/cuda/gpu/cublas_loader.h)
//
// C = A·B on square float matrices; the FLOP/s counter is 2n³ per iteration. On the
// simulated GPU n = 128: every simulated thread runs on the CPU and a __syncthreads costs
// microseconds, so there the cost is threads and barriers per FLOP, not memory traffic,
// and the ranking differs from a GPU's (v3's 64 small blocks, 16 barriers each, come
// last). On a GPU (GLASS_CUDA=gpu, scripts/gpu_check.sh) n = 4096.
#include <benchmark/benchmark.h>

#include <glass/glass.h>

#include <cstdlib>
#include <string>

#include "cuda/kernels/gemm.h"
#ifdef GLASS_BENCH_CUBLAS
#include "tests/cuda/gpu/cublas_loader.h"
#endif

namespace {

void choose_device() {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") glass::cuda::use_simulator();
}

void set_flops(benchmark::State& state, int64_t n) {
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void BM_GemmCpu(benchmark::State& state, int64_t n) {
  const glass::Tensor a = glass::randn({n, n}), b = glass::randn({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(glass::mm(a, b).data_ptr());
  set_flops(state, n);
}

void BM_GemmCuda(benchmark::State& state, int64_t n, glass::cuda::GemmVersion v) {
  glass::cuda::GemmVersionGuard guard(v);
  const glass::Tensor a = glass::randn({n, n}).cuda(), b = glass::randn({n, n}).cuda();
  glass::Tensor c = glass::mm(a, b);  // warm the allocator and the kernel
  glass::cuda::synchronize();
  for (auto _ : state) {
    c = glass::mm(a, b);
    glass::cuda::synchronize();
  }
  set_flops(state, n);
}

#ifdef GLASS_BENCH_CUBLAS
void BM_GemmCublas(benchmark::State& state, int64_t n) {
  std::string why_not;
  const glass::cuda::testing::Cublas* blas = glass::cuda::testing::load_cublas(&why_not);
  if (blas == nullptr) {
    state.SkipWithError(("no cuBLAS: " + why_not).c_str());
    return;
  }
  const glass::Tensor a = glass::randn({n, n}).cuda(), b = glass::randn({n, n}).cuda();
  glass::Tensor c = glass::empty({n, n}, glass::kCUDA);
  glass::cuda::testing::CublasGemm gemm(
      *blas, static_cast<cudaStream_t>(
                 static_cast<glass::cuda::StreamHandle>(glass::cuda::getCurrentCUDAStream())));
  const auto run = [&] {
    return gemm.sgemm_row_major(int(n), int(n), int(n), a.data_ptr<float>(), int(n),
                                b.data_ptr<float>(), int(n), c.data_ptr<float>(), int(n));
  };
  if (const std::string error = run(); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  glass::cuda::synchronize();
  for (auto _ : state) {
    run();
    glass::cuda::synchronize();
  }
  set_flops(state, n);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  choose_device();
  const int64_t n = glass::cuda::is_simulated() ? 128 : 4096;
  const std::string size = "/" + std::to_string(n);
  benchmark::RegisterBenchmark(("BM_Gemm/cpu" + size).c_str(), BM_GemmCpu, n)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (int v = 1; v <= 5; ++v) {
    benchmark::RegisterBenchmark(("BM_Gemm/cuda_v" + std::to_string(v) + size).c_str(), BM_GemmCuda,
                                 n, static_cast<glass::cuda::GemmVersion>(v))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
#ifdef GLASS_BENCH_CUBLAS
  if (!glass::cuda::is_simulated()) {
    benchmark::RegisterBenchmark(("BM_Gemm/cublas" + size).c_str(), BM_GemmCublas, n)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
#endif
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
