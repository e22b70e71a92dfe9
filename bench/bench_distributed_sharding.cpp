// bench/bench_distributed_sharding.cpp — memory per rank and step time of the sharding ladder
// (issue 12): DDP, ZeRO-1, ZeRO-2 and FSDP (prefetch off and on), each training the same
// model with Adam, measured with the CPU allocator's statistics against the model-state
// arithmetic in float32 (Ψ parameters, N ranks):
//
//   DDP     16Ψ           parameters 4Ψ, gradients 4Ψ, Adam's two moments 8Ψ
//   ZeRO-1  8Ψ + 8Ψ/N     the moments sharded
//   ZeRO-2  4Ψ + 12Ψ/N    and the gradients
//   FSDP    16Ψ/N + U     and the parameters; U: the largest unit, gathered (4 bytes each)
//
// Memory needs a process per rank (the allocator counts a whole process), so this is not a
// Google Benchmark table but a program to start under glassrun, one rank per process over
// gloo; rank 0 prints one markdown table:
//
//   glassrun --nproc-per-node 2 build/bench/bench_distributed_sharding [--layers 8]
//       [--width 1024] [--batch 8] [--steps 4] [--bucket-mb 2]
//
// Columns: "at rest" is what a rung holds after a step (model state), "peak" the high-water
// mark during the steps after the first (which creates the optimizer state) — both the
// largest over ranks, minus what the process held before the rung — and each over its
// formula; step time is the median over the steps after the
// first (which creates Adam's state), the slowest rank's, and its ratio to DDP's in the same
// run. The model: `layers` Linear(width, width) layers with ReLU between them, a batch so
// small that activations are a rounding error next to Ψ; every rank has the same packing
// buffers (a warm-up matmul sizes them before any rung is measured).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/generator.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "distributed/zero.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"

namespace {

using namespace glass;
using Clock = std::chrono::steady_clock;

struct Config {
  int64_t layers = 8, width = 1024, batch = 8;
  int steps = 4;
  double bucket_mb = 2;
};

struct StackImpl : nn::Module {
  StackImpl(int64_t layers, int64_t width) : Module("Stack") {
    for (int64_t i = 0; i < layers; ++i)
      blocks.push_back(register_module("fc" + std::to_string(i), nn::Linear(width, width)));
  }
  Tensor forward(const Tensor& x) const {
    Tensor h = x;
    for (size_t i = 0; i < blocks.size(); ++i) {
      h = blocks[i](h);
      if (i + 1 < blocks.size()) h = h.relu();
    }
    return h;
  }
  std::vector<nn::Linear> blocks;
};
GLASS_MODULE(Stack);

struct Measured {
  double at_rest = 0, peak = 0, step_ms = 0;  // bytes, bytes, milliseconds
};

std::unique_ptr<optim::Optimizer> adam(std::vector<Tensor> params) {
  return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(1e-4));
}

// Runs `steps` training steps of `step` and measures them; `setup` builds the rung inside
// the measured scope (its model, wrappers and optimizer die with it).
template <class Setup>
Measured measure(const Config& c, Setup&& setup) {
  distributed::barrier();
  const int64_t base = cpu_memory_stats().allocated_bytes;
  cpu_reset_peak_memory_stats();
  Measured m;
  {
    manual_seed(0);
    std::function<void(const Tensor&)> step = setup();
    std::vector<double> times;
    Generator gen = make_generator(Device(kCPU), 7 + distributed::get_rank());
    for (int s = 0; s < c.steps; ++s) {
      const Tensor x = randn({c.batch, c.width}, gen);
      distributed::barrier();
      const auto start = Clock::now();
      step(x);
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      // The first step creates Adam's state (and DDP's bucket views), the second rebuilds
      // DDP's buckets in the order backward readied them (both buckets alive for a moment):
      // the formulas are about the steps after those.
      if (s == 1) cpu_reset_peak_memory_stats();
    }
    m.at_rest = static_cast<double>(cpu_memory_stats().allocated_bytes - base);
    std::sort(times.begin() + 1, times.end());
    m.step_ms = times[1 + (times.size() - 1) / 2];
  }
  m.peak = static_cast<double>(cpu_memory_stats().peak_allocated_bytes - base);
  return m;
}

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (flag == "--layers")
      c.layers = static_cast<int64_t>(v);
    else if (flag == "--width")
      c.width = static_cast<int64_t>(v);
    else if (flag == "--batch")
      c.batch = static_cast<int64_t>(v);
    else if (flag == "--steps")
      c.steps = static_cast<int>(v);
    else if (flag == "--bucket-mb")
      c.bucket_mb = v;
    else {
      std::fprintf(stderr, "bench_distributed_sharding: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (c.steps < 3) c.steps = 3;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const Config c = parse(argc, argv);
  distributed::init_process_group("gloo");
  const int world = distributed::get_world_size();
  const double psi = static_cast<double>(c.layers * (c.width * c.width + c.width));
  const double unit = 4.0 * static_cast<double>(c.width * c.width + c.width);
  {
    // Warm-up: size this thread's and the pool's matmul packing buffers before any rung.
    Stack warm(1, c.width);
    warm(randn({c.batch, c.width})).sum().backward();
  }

  struct Rung {
    const char* name;
    double formula;
    std::function<std::function<void(const Tensor&)>()> setup;
  };
  const double n = world;
  std::vector<Rung> rungs;
  rungs.push_back(
      {"DDP", 16 * psi, [&] {
         auto model = std::make_shared<Stack>(c.layers, c.width);
         auto ddp = std::make_shared<nn::parallel::DistributedDataParallel<Stack>>(
             *model, nullptr,
             nn::parallel::DistributedDataParallelOptions().gradient_as_bucket_view(true));
         auto opt = std::shared_ptr<optim::Optimizer>(adam((*model)->parameters()));
         return std::function<void(const Tensor&)>([model, ddp, opt](const Tensor& x) {
           opt->zero_grad(false);
           (*ddp)(x).pow(2).mean().backward();
           opt->step();
         });
       }});
  for (int stage : {1, 2}) {
    rungs.push_back({stage == 1 ? "ZeRO-1" : "ZeRO-2",
                     stage == 1 ? 8 * psi + 8 * psi / n : 4 * psi + 12 * psi / n, [&, stage] {
                       auto model = std::make_shared<Stack>(c.layers, c.width);
                       auto zero = std::make_shared<distributed::ZeroRedundancyOptimizer>(
                           (*model)->parameters(), adam,
                           distributed::ZeroOptions().stage(stage).bucket_cap_mb(c.bucket_mb));
                       return std::function<void(const Tensor&)>([model, zero](const Tensor& x) {
                         zero->zero_grad();
                         (*model)(x).pow(2).mean().backward();
                         zero->step();
                       });
                     }});
  }
  for (bool prefetch : {false, true}) {
    rungs.push_back({prefetch ? "FSDP, prefetch" : "FSDP", 16 * psi / n + unit, [&, prefetch] {
                       auto model = std::make_shared<Stack>(c.layers, c.width);
                       distributed::FullyShardOptions o;
                       o.forward_prefetch = prefetch;
                       o.backward_prefetch = prefetch;
                       for (auto& b : (*model)->blocks) distributed::fully_shard(b, o);
                       distributed::fully_shard(*model, o);
                       auto opt = std::shared_ptr<optim::Optimizer>(adam((*model)->parameters()));
                       return std::function<void(const Tensor&)>([model, opt](const Tensor& x) {
                         opt->zero_grad();
                         (*model)(x).pow(2).mean().backward();
                         opt->step();
                       });
                     }});
  }

  std::vector<Measured> mine;
  for (const Rung& r : rungs) mine.push_back(measure(c, r.setup));
  // Every rank's numbers to every rank; rank 0 prints the largest (the slowest, for time).
  Tensor local = empty({static_cast<int64_t>(mine.size()) * 3}, TensorOptions(kFloat64));
  for (size_t i = 0; i < mine.size(); ++i) {
    local.data_ptr<double>()[3 * i] = mine[i].at_rest;
    local.data_ptr<double>()[3 * i + 1] = mine[i].peak;
    local.data_ptr<double>()[3 * i + 2] = mine[i].step_ms;
  }
  distributed::all_reduce(local, distributed::ReduceOp::MAX);
  if (distributed::get_rank() == 0) {
    const double* v = local.data_ptr<double>();
    const double mb = 1024.0 * 1024.0;
    std::printf(
        "Ψ = %.0f parameters (%lld × Linear(%lld, %lld)), N = %d ranks, batch %lld "
        "per rank, ZeRO buckets %.1f MB, U = %.1f MB\n\n",
        psi, static_cast<long long>(c.layers), static_cast<long long>(c.width),
        static_cast<long long>(c.width), world, static_cast<long long>(c.batch), c.bucket_mb,
        unit / mb);
    std::printf(
        "| rung | formula MB | at rest MB | at rest / formula | peak MB | "
        "peak / formula | step ms | step / DDP |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < rungs.size(); ++i) {
      const double rest = v[3 * i], peak = v[3 * i + 1], ms = v[3 * i + 2];
      std::printf("| %s | %.1f | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |\n", rungs[i].name,
                  rungs[i].formula / mb, rest / mb, rest / rungs[i].formula, peak / mb,
                  peak / rungs[i].formula, ms, ms / v[2]);
    }
    std::fflush(stdout);
  }
  distributed::destroy_process_group();
  return 0;
}
