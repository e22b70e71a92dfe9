// bench/bench_cuda_kernels.cpp — the CUDA kernels against plain references, in one run.
//
//   BM_Copy/ref/n                 a plain grid-stride copy kernel (the bandwidth floor)
//   BM_Add/glass/n                c = a + b, glass's elementwise kernel;
//                                 vs_copy = its bytes/s / the copy's (goal >= 0.9 on a GPU)
//   BM_Sum/cub/n                  CUB's DeviceReduce::Sum (a GPU only: skipped, with the
//                                 reason, on the simulator)
//   BM_Sum/glass/n                x.sum(); vs_cub = its bytes/s / CUB's (goal >= 0.9)
//   BM_Softmax/three_pass/RxC     launch_softmax_three_pass: max, sum, write — three reads
//   BM_Softmax/glass/RxC          glass::softmax(x, 1), the online kernel (max and sum in
//                                 one read); vs_three_pass = its bytes/s / the three-pass's
//
// The references are bench_cuda_reference_kernels.cu; each runs just before the row it is
// the reference of, and the ratio divides figures from the same process (bench_util.h).
// Bytes count what the op must move at least: each input read once, the output written
// once. Times are the device's: CUDA events around kBatch back-to-back launches, so the
// host's launch cost (paid while the device works) is not what is measured.
//
// Sizes: a GPU gets 64M floats (256 MiB per tensor, far past the 50 MiB L2) and a
// (4096, 4096) softmax; the simulated GPU, which runs every thread on the CPU, gets 4M
// floats and (256, 4096) so the whole program takes seconds. The device is the simulator
// unless GLASS_CUDA=gpu (scripts/gpu_check.sh sets it). Results: bench/RESULTS.md.
#include <benchmark/benchmark.h>

#include <glass/glass.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_cuda_reference_kernels.h"
#include "bench/bench_util.h"
#include "cuda/kernels/kernels.h"

namespace {

constexpr int kDeviceKey = 0;  // bench_util.h's reference table is keyed by thread count

void choose_device() {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") glass::cuda::use_simulator();
}

bool simulated() { return glass::cuda::is_simulated(); }

// Why this program cannot run kernels on the device serving kCUDA ("" when it can): the
// references and the three-pass softmax are called directly, in the build that matches
// the runtime, as cuda/backend.cpp picks the library's.
std::string why_no_kernels() {
#ifndef GLASS_BENCH_GPU_KERNELS
  if (!simulated())
    return "this build has no GPU kernels (nvcc was not found when it was built); "
           "use the simulated GPU (GLASS_CUDA=sim)";
#endif
  return "";
}

void reference_copy(const float* in, float* out, int64_t n) {
#ifdef GLASS_BENCH_GPU_KERNELS
  if (!simulated()) return glass_bench::gpu::copy_floats(in, out, n);
#endif
  glass_bench::sim::copy_floats(in, out, n);
}

size_t cub_sum_scratch_bytes(int64_t n) {
#ifdef GLASS_BENCH_GPU_KERNELS
  if (!simulated()) return glass_bench::gpu::cub_sum_scratch_bytes(n);
#endif
  return glass_bench::sim::cub_sum_scratch_bytes(n);
}

std::string cub_sum(const float* in, float* out, int64_t n, void* scratch, size_t bytes) {
#ifdef GLASS_BENCH_GPU_KERNELS
  if (!simulated()) return glass_bench::gpu::cub_sum(in, out, n, scratch, bytes);
#endif
  return glass_bench::sim::cub_sum(in, out, n, scratch, bytes);
}

void softmax_three_pass(const glass::Tensor& x, const glass::Tensor& out) {
  const int64_t rows = x.size(0), cols = x.size(1);
#ifdef GLASS_BENCH_GPU_KERNELS
  if (!simulated())
    return glass::cuda::gpu::launch_softmax_three_pass(x, rows, cols, 1, /*log=*/false, out);
#endif
  glass::cuda::sim::launch_softmax_three_pass(x, rows, cols, 1, /*log=*/false, out);
}

// ---- timing -------------------------------------------------------------------------------

// Launches per timed interval: enough that the first launch's latency, the only one the
// device waits for, is a small part of the interval. The simulator runs one at a time.
int batch() { return simulated() ? 1 : 10; }

// Runs op() batch() times between two timing events per iteration and reports the device
// time per op (UseManualTime) and bytes_per_op bytes per op; returns the bytes/s.
template <class Op>
double time_on_device(benchmark::State& state, int64_t bytes_per_op, Op op) {
  op();  // first-use costs (the caching allocator's blocks, module loading) stay untimed
  glass::cuda::synchronize();
  glass::cuda::CUDAEvent start(glass::cuda::kEventDefault), end(glass::cuda::kEventDefault);
  const int n = batch();
  double seconds = 0;
  for (auto _ : state) {
    start.record();
    for (int i = 0; i < n; ++i) op();
    end.record();
    end.synchronize();
    const double per_op = double(start.elapsed_time(end)) / 1e3 / n;
    state.SetIterationTime(per_op);
    seconds += per_op;
  }
  glass::cuda::synchronize();  // reports a kernel's error, if one ran into any
  state.SetBytesProcessed(state.iterations() * bytes_per_op);
  return seconds > 0 ? double(bytes_per_op) * double(state.iterations()) / seconds : 0;
}

bool skip_without_kernels(benchmark::State& state) {
  const std::string why = why_no_kernels();
  if (why.empty()) return false;
  state.SkipWithError(why.c_str());
  return true;
}

glass::Tensor device_rand(int64_t n) { return glass::rand({n}).cuda(); }

// ---- elementwise: c = a + b against a copy ------------------------------------------------

void BM_CopyRef(benchmark::State& state, int64_t n) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor in = device_rand(n);
  const glass::Tensor out = glass::empty({n}, glass::device(glass::kCUDA));
  const double bw = time_on_device(state, 2 * n * int64_t(sizeof(float)), [&] {
    reference_copy(in.data_ptr<float>(), out.data_ptr<float>(), n);
  });
  glass_bench::store_reference("copy", kDeviceKey, bw);
}

void BM_Add(benchmark::State& state, int64_t n) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor a = device_rand(n), b = device_rand(n);
  glass::Tensor c;
  const double bw = time_on_device(state, 3 * n * int64_t(sizeof(float)), [&] { c = a + b; });
  glass_bench::report_ratio(state, "vs_copy", "copy", kDeviceKey, bw);
}

// ---- sum against CUB -----------------------------------------------------------------------

void BM_SumCub(benchmark::State& state, int64_t n) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor x = device_rand(n);
  const glass::Tensor out = glass::empty({1}, glass::device(glass::kCUDA));
  const size_t bytes = cub_sum_scratch_bytes(n);
  const glass::Tensor scratch =
      glass::empty({int64_t(bytes / sizeof(float)) + 1}, glass::device(glass::kCUDA));
  const auto run = [&] {
    return cub_sum(x.data_ptr<float>(), out.data_ptr<float>(), n, scratch.data_ptr(), bytes);
  };
  if (const std::string error = run(); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  const double bw = time_on_device(state, n * int64_t(sizeof(float)), run);
  glass_bench::store_reference("cub_sum", kDeviceKey, bw);
}

void BM_Sum(benchmark::State& state, int64_t n) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor x = device_rand(n);
  glass::Tensor s;
  const double bw = time_on_device(state, n * int64_t(sizeof(float)), [&] { s = x.sum(); });
  glass_bench::report_ratio(state, "vs_cub", "cub_sum", kDeviceKey, bw);
}

// ---- softmax: online against three passes -------------------------------------------------

void BM_SoftmaxThreePass(benchmark::State& state, int64_t rows, int64_t cols) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor x = glass::randn({rows, cols}).cuda();
  const glass::Tensor y = glass::empty({rows, cols}, glass::device(glass::kCUDA));
  const double bw = time_on_device(state, 2 * rows * cols * int64_t(sizeof(float)),
                                   [&] { softmax_three_pass(x, y); });
  glass_bench::store_reference("softmax_three_pass", kDeviceKey, bw);
}

void BM_Softmax(benchmark::State& state, int64_t rows, int64_t cols) {
  if (skip_without_kernels(state)) return;
  const glass::Tensor x = glass::randn({rows, cols}).cuda();
  glass::Tensor y;
  const double bw = time_on_device(state, 2 * rows * cols * int64_t(sizeof(float)),
                                   [&] { y = glass::softmax(x, 1); });
  glass_bench::report_ratio(state, "vs_three_pass", "softmax_three_pass", kDeviceKey, bw);
}

void add_row(const std::string& name, auto fn, auto... args) {
  benchmark::RegisterBenchmark(name.c_str(), fn, args...)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  bool sim = true;
  try {
    choose_device();
    sim = simulated();  // the first CUDA call: it finds the GPU, or says why there is none
  } catch (const glass::Error& e) {
    std::fprintf(stderr, "bench_cuda_kernels: %s\n", e.what());
    return 1;
  }
  const int64_t n = sim ? int64_t{1} << 22 : int64_t{1} << 26;
  const int64_t rows = sim ? 256 : 4096, cols = 4096;
  const std::string size = "/" + std::to_string(n);
  const std::string shape = "/" + std::to_string(rows) + "x" + std::to_string(cols);
  // Each reference first: the row after it divides by the figure it stores.
  add_row("BM_Copy/ref" + size, BM_CopyRef, n);
  add_row("BM_Add/glass" + size, BM_Add, n);
  add_row("BM_Sum/cub" + size, BM_SumCub, n);
  add_row("BM_Sum/glass" + size, BM_Sum, n);
  add_row("BM_Softmax/three_pass" + shape, BM_SoftmaxThreePass, rows, cols);
  add_row("BM_Softmax/glass" + shape, BM_Softmax, rows, cols);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
