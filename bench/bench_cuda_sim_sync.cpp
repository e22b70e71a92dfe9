// bench/bench_cuda_sim_sync.cpp — what a block barrier costs on the simulated GPU.
//
// The block runner (cuda/sim/block_runner.h) runs a block's threads as a plain loop until
// one reaches __syncthreads(), and as fibers from then on; one barrier across n threads
// then costs about n fiber switches. Side by side, 256-thread blocks:
//   fiber_switch_reference   one Boost.Context switch (two fibers ping-ponging)
//   plain_loop_reference     the kernel body called 256 times in a plain loop, no runner
//   barrier_free_block       a block that never syncs, through the runner (the plain loop)
//   syncthreads/K            a block that runs K __syncthreads(); the `per_sync` counter
//                            is the time per barrier (block start-up amortized over K)
// The runner's own counters give switches per barrier (`switches_per_sync`), which the
// time per barrier should track at about one fiber switch each.
//
//   build/bench/bench_cuda_sim_sync --benchmark_min_time=0.5 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <vector>

#include "cuda/sim/address_space.h"
#include "cuda/sim/block_runner.h"
#include "cuda/sim/device.h"

namespace {

using glass::cuda::Dim3;
using glass::cuda::gptr;
namespace sim = glass::cuda::sim;

constexpr unsigned kThreads = 256;

// A device address whose host view is `host`: the runner runs kernels on host memory here,
// with no simulated device behind it.
template <class T>
gptr<T> as_device(T* host) {
  return gptr<T>(reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(host) - sim::g_host_offset));
}

__global__ void scale_index(gptr<int> out) { out[threadIdx.x] = 2 * int(threadIdx.x) + 1; }

__global__ void sync_loop(gptr<int> out, int barriers) {
  int v = threadIdx.x;
  for (int k = 0; k < barriers; ++k) {
    __syncthreads();
    v += k;
  }
  out[threadIdx.x] = v;
}

void BM_fiber_switch_reference(benchmark::State& state) {
  namespace ctx = boost::context;
  bool stop = false;
  ctx::fiber other{[&stop](ctx::fiber&& back) {
    while (!stop) back = std::move(back).resume();
    return std::move(back);
  }};
  for (auto _ : state) other = std::move(other).resume();  // two switches: there and back
  stop = true;
  other = std::move(other).resume();
  state.counters["per_switch"] = benchmark::Counter(
      2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_plain_loop_reference(benchmark::State& state) {
  std::vector<int> out(kThreads);
  const gptr<int> d = as_device(out.data());
  for (auto _ : state) {
    for (unsigned t = 0; t < kThreads; ++t) {
      threadIdx = Dim3(t, 0, 0);
      scale_index(d);
    }
    benchmark::ClobberMemory();
  }
}

void BM_barrier_free_block(benchmark::State& state) {
  std::vector<int> out(kThreads);
  const gptr<int> d = as_device(out.data());
  const sim::BlockSpec spec{"scale_index", Dim3(1), Dim3(kThreads), Dim3(0, 0, 0), 0};
  for (auto _ : state) {
    sim::run_block(spec, [&] { scale_index(d); });
    benchmark::ClobberMemory();
  }
}

void BM_syncthreads(benchmark::State& state) {
  const int barriers = static_cast<int>(state.range(0));
  std::vector<int> out(kThreads);
  const gptr<int> d = as_device(out.data());
  const sim::BlockSpec spec{"sync_loop", Dim3(1), Dim3(kThreads), Dim3(0, 0, 0), 0};
  sim::run_block(spec, [&] { sync_loop(d, barriers); });  // fill this thread's stack pool
  sim::reset_block_runner_stats();
  for (auto _ : state) {
    sim::run_block(spec, [&] { sync_loop(d, barriers); });
    benchmark::ClobberMemory();
  }
  const sim::BlockRunnerStats s = sim::block_runner_stats();
  state.counters["per_sync"] = benchmark::Counter(
      barriers, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["switches_per_sync"] = double(s.switches) / double(s.barriers);
}

BENCHMARK(BM_fiber_switch_reference);
BENCHMARK(BM_plain_loop_reference);
BENCHMARK(BM_barrier_free_block);
BENCHMARK(BM_syncthreads)->Arg(1)->Arg(16)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
