// bench/bench_matmul.cpp — the gemm ladder (core/cpu/gemm.h) against OpenBLAS, in one run.
//
// float32, square n×n·n×n, row-major, alpha = 1, beta = 0. Every benchmark reports
// GFLOP/s (2·n³ per call over wall time) so the rungs and OpenBLAS read off one column.
// "nthreads" is glass::set_num_threads for v5 and openblas_set_num_threads for OpenBLAS,
// set to the same value; v1–v4 are single-threaded by design, so they run once, at 1.
// v1 and v2 stop at 512: at 1024 they would take seconds per call and teach nothing new.
//
//   bench_matmul --benchmark_min_time=0.2   (results and the exact command: bench/RESULTS.md)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu/gemm.h"
#include "core/parallel.h"

namespace {

using GemmF32 = void (*)(int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t,
                         const float*, int64_t, int64_t, float, float*, int64_t, int64_t);

struct Contender {
  const char* name;
  GemmF32 fn;  // nullptr: OpenBLAS
  int64_t max_n;
  bool threaded;
};

void openblas_sgemm(int64_t n, const float* A, const float* B, float* C) {
  const int ni = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.f, A, ni, B, ni, 0.f, C, ni);
}

void bm_matmul(benchmark::State& state, Contender who, int64_t n, int nthreads) {
  glass::set_num_threads(nthreads);
  openblas_set_num_threads(nthreads);

  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> A(n * n), B(n * n), C(n * n);
  for (float& x : A) x = dist(rng);
  for (float& x : B) x = dist(rng);

  auto run = [&] {
    if (who.fn == nullptr) {
      openblas_sgemm(n, A.data(), B.data(), C.data());
    } else {
      who.fn(n, n, n, 1.f, A.data(), n, 1, B.data(), n, 1, 0.f, C.data(), n, 1);
    }
  };
  run();  // untimed: first-touch of C and of the packing buffers
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] =
      benchmark::Counter(2e-9 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);

  if (who.fn == nullptr) {
    // OpenBLAS workers spin for a while after a call; let them go to sleep so they do not
    // steal a core from the next benchmark.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace glass::cpu;
  const Contender contenders[] = {
      {"v1_naive", gemm_v1_naive<float>, 512, false},
      {"v2_loop_order", gemm_v2_loop_order<float>, 512, false},
      {"v3_blocked", gemm_v3_blocked<float>, 2048, false},
      {"v4_microkernel", gemm_v4_microkernel<float>, 2048, false},
      {"v5_threaded", gemm_v5_threaded<float>, 2048, true},
      {"openblas", nullptr, 2048, true},
  };
  for (int64_t n : {256, 512, 1024, 2048}) {
    for (int nthreads : {1, 2}) {
      for (const Contender& who : contenders) {
        if (n > who.max_n || (nthreads > 1 && !who.threaded)) continue;
        const std::string name = std::string("matmul_f32/") + who.name + "/" + std::to_string(n) +
                                 "/nthreads:" + std::to_string(nthreads);
        benchmark::RegisterBenchmark(name.c_str(), bm_matmul, who, n, nthreads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
