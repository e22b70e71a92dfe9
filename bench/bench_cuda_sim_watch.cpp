// bench/bench_cuda_sim_watch.cpp — what watching a kernel costs on the simulated GPU.
//
// The simulator can count a kernel's memory traffic and check it (global bounds, shared-
// memory races: cuda/sim/kernel_watch.h). Off, each hook is a thread-local flag test;
// these benchmarks run the same block three ways, /0 off, /1 counting (a
// ScopedKernelStats), /2 checking (GLASS_SIM_CHECK=1's kernel checks), on two kernels:
//   global_copy/M    256 threads, each copying 16 floats through gptr (no barrier)
//   shared_reduce/M  256 threads summing through a shared array: 9 barriers, 8 steps
// Compare /0 with the same kernels in a build before the hooks (or bench_cuda's
// elementwise rows) for the cost when off.
//
//   build/bench/bench_cuda_sim_watch --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cuda/sim/address_space.h"
#include "cuda/sim/block_runner.h"
#include "cuda/sim/device.h"
#include "cuda/sim/kernel_stats.h"

namespace {

using glass::cuda::Dim3;
using glass::cuda::gptr;
namespace sim = glass::cuda::sim;

constexpr unsigned kThreads = 256;
constexpr int kPerThread = 16;

template <class T>
gptr<T> as_device(T* host) {
  return gptr<T>(reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(host) - sim::g_host_offset));
}

__global__ void copy16(gptr<const float> in, gptr<float> out) {
  for (int k = 0; k < kPerThread; ++k) {
    const int i = k * kThreads + threadIdx.x;
    out[i] = in[i];
  }
}

__global__ void shared_reduce(gptr<const float> in, gptr<float> out) {
  GLASS_SHARED(float, partial, kThreads);
  const int t = threadIdx.x;
  partial[t] = in[t];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[0] = partial[0];
}

// Mode 0 off, 1 counting, 2 checking, for the lifetime of the object.
class Mode {
 public:
  explicit Mode(int64_t mode) : was_checking_(sim::kernel_checks()) {
    sim::set_kernel_checks(mode == 2);
    if (mode == 1) stats_.emplace();
  }
  ~Mode() { sim::set_kernel_checks(was_checking_); }

 private:
  bool was_checking_;
  std::optional<sim::ScopedKernelStats> stats_;
};

void BM_global_copy(benchmark::State& state) {
  const Mode mode(state.range(0));
  std::vector<float> in(kThreads * kPerThread, 1.0f), out(in.size());
  const auto body = [&] { copy16(as_device<const float>(in.data()), as_device(out.data())); };
  for (auto _ : state) sim::run_block({"copy16", Dim3(1), Dim3(kThreads), Dim3(0, 0, 0), 0}, body);
  state.SetItemsProcessed(state.iterations() * int64_t(in.size()));
}
BENCHMARK(BM_global_copy)->Arg(0)->Arg(1)->Arg(2);

void BM_shared_reduce(benchmark::State& state) {
  const Mode mode(state.range(0));
  std::vector<float> in(kThreads, 1.0f), out(1);
  const auto body = [&] {
    shared_reduce(as_device<const float>(in.data()), as_device(out.data()));
  };
  for (auto _ : state)
    sim::run_block({"shared_reduce", Dim3(1), Dim3(kThreads), Dim3(0, 0, 0), 0}, body);
  if (out[0] != float(kThreads)) state.SkipWithError("wrong sum");
}
BENCHMARK(BM_shared_reduce)->Arg(0)->Arg(1)->Arg(2);

}  // namespace

BENCHMARK_MAIN();
