// lessons/11_sharding/main.cpp — lesson 11 as a program: the seed's sentence "FSDP shards
// parameters, gradients, and optimizer states across GPUs, gathering them only when needed"
// as a ladder of four rungs that each train the same model on 4 rank-threads (the threads
// backend, distributed/backends/threads.h), measured per rank with RankMemoryLedger.
//
// Sections: 1. the 16 bytes per parameter, and the seed's 70B example per GPU; 2. the ladder
// — DDP, ZeRO-1, ZeRO-2, FSDP — each checked against one process on the global batch, its
// memory per rank at rest and at its peak against the formula; 3. FSDP's prefetch: two units
// gathered at once; 4. the bytes each rung moves per step: FSDP's 1.5 × DDP's; 5. a sharded
// checkpoint saved by 2 ranks and loaded into 4.
//
// stdout is deterministic (the threads backend adds in rank order 0..n−1, every model and
// batch comes from a fixed seed, and the ledger charges each rank the blocks its own threads
// allocate, which they allocate and free in an order fixed by the program) and
// lesson_11_output compares it with README.md. Timings go to stderr on "[time]" lines; the
// exact differences that stdout rounds to a power of ten, and ZeRO-2's peak (it frees a
// bucket early when it sees its reduce-scatter done: a matter of timing), on "[value]" lines.
//
// [SECTION] helpers   [SECTION] the model   [SECTION] 1-5   [SECTION] main
#include <glass/glass.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../common/counting_group.h"
#include "distributed/backends/threads.h"
#include "distributed/checkpoint.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "distributed/rank_memory.h"
#include "distributed/zero.h"

namespace {

using glass::Tensor;
namespace dist = glass::distributed;
namespace nn = glass::nn;
namespace optim = glass::optim;
using glass::lessons::CountingGroup;
using Clock = std::chrono::steady_clock;

// [SECTION] helpers ----------------------------------------------------------------------

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

std::string pad(const std::string& s, size_t width) {  // left-aligned, counting Ψ as one
  size_t shown = 0;
  for (unsigned char c : s) shown += (c & 0xC0) != 0x80;
  return s + std::string(width > shown ? width - shown : 0, ' ');
}

std::string right(const std::string& s, int width) {
  std::ostringstream os;
  os << std::setw(width) << s;
  return os.str();
}

std::string kib(int64_t bytes) { return fixed(static_cast<double>(bytes) / 1024, 1) + " KiB"; }

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "about 1e-08": the power of ten nearest to a small relative difference, 0 or one above
// 1e-4 said as it is (lesson 10's rule: its digits depend on how the machine's matmul splits
// its sums, so the exact value goes to stderr).
std::string magnitude(double diff) {
  if (diff == 0) return "0 (bitwise equal)";
  if (diff > 1e-4) return fixed(diff, 6) + " (too large: more than float32 rounding)";
  std::ostringstream os;
  os << "about 1e" << std::lround(std::log10(diff)) << " (float32 rounding)";
  return os.str();
}

// A threads group for the rank-thread that calls it (inside run_threads, whose link model it
// takes), wrapped so that the bytes of every collective are counted.
std::shared_ptr<CountingGroup> counted_group(const char* name) {
  const dist::ThreadsRendezvous* rv = dist::current_threads_rendezvous();
  dist::ProcessGroup::Options options;
  options.group_name = name;
  return std::make_shared<CountingGroup>(
      dist::make_threads_group(rv->store, rv->rank, rv->world_size, options));
}

// [SECTION] the model --------------------------------------------------------------------

constexpr int kWorld = 4;
constexpr int64_t kLayers = 8, kWidth = 64;
constexpr int64_t kLocalBatch = 4;  // a global batch of 16
constexpr int kSteps = 4;
constexpr double kLr = 1e-3;

// kLayers × Linear(kWidth, kWidth) without bias, ReLU between: Ψ = 8 · 64 · 64 = 32,768.
// Every parameter is 16 KiB and every shard a power of two, sizes the CPU allocator hands out
// as asked (it rounds other sizes up to a size class, up to 25% more; the ledger counts what
// it hands out).
struct StackImpl : nn::Module {
  StackImpl() : Module("Stack") {
    for (int64_t i = 0; i < kLayers; ++i)
      layers.push_back(register_module("fc" + std::to_string(i),
                                       nn::Linear(nn::LinearOptions(kWidth, kWidth).bias(false))));
  }
  // x: (B, 64) -> (B, 64)
  Tensor forward(const Tensor& x) const {
    Tensor h = x;
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i](h);
      if (i + 1 < layers.size()) h = h.relu();
    }
    return h;
  }
  std::vector<nn::Linear> layers;
};
GLASS_MODULE(Stack);

constexpr int64_t kPsi = kLayers * kWidth * kWidth;

// The same weights on every rank. Each rank builds its own model (so the ledger charges the
// bytes to it), all at once: run_threads gives each rank default generators of its own, as a
// process has, so seeding here seeds this rank's only and no rank draws another's numbers.
Stack build_model(uint64_t seed = 0) {
  glass::manual_seed(seed);
  return Stack();
}

// kSteps global batches (of 16 unless asked): inputs and regression targets. Rank r of 4 has
// rows [4r, 4r + 4) of a batch of 16.
struct Data {
  std::vector<Tensor> x, y;  // each (global batch, 64)
};
Data make_data(int64_t local_batch = kLocalBatch) {
  glass::Generator gen = glass::make_generator(glass::Device(glass::kCPU), 1234);
  Data d;
  for (int s = 0; s < kSteps; ++s) {
    d.x.push_back(glass::randn({kWorld * local_batch, kWidth}, gen));
    d.y.push_back(glass::randn({kWorld * local_batch, kWidth}, gen));
  }
  return d;
}

Tensor mse(const Tensor& out, const Tensor& target) { return (out - target).pow(2).mean(); }

optim::AdamOptions adam_options() { return optim::AdamOptions(kLr); }

// One process on the global batch: the oracle every rung is checked against.
std::vector<Tensor> train_one_process(const Data& data) {
  Stack model = build_model();
  optim::Adam adam(model->parameters(), adam_options());
  for (int s = 0; s < kSteps; ++s) {
    adam.zero_grad();
    mse(model(data.x[s]), data.y[s]).backward();
    adam.step();
  }
  return model->parameters();
}

// [SECTION] 1. sixteen bytes per parameter -----------------------------------------------

void model_state_arithmetic() {
  section("1. model state: 16 bytes per parameter");
  std::cout << "float32 training with Adam keeps, for each of the model's Ψ parameters:\n"
            << "   the parameter 4 B + its gradient 4 B + Adam's exp_avg 4 B and exp_avg_sq 4 B "
               "= 16 B\n";
  const double psi = 70e9;
  std::cout << "the seed's example, 70B parameters: 70e9 x 16 B = " << fixed(16 * psi / 1e12, 2)
            << " TB of model state, before one activation\n";
  struct Row {
    const char* name;
    const char* formula;
    std::function<double(double)> bytes;  // per GPU, of N
  };
  const std::vector<Row> rows{
      {"DDP", "16Ψ", [&](double) { return 16 * psi; }},
      {"ZeRO-1", "8Ψ + 8Ψ/N", [&](double n) { return 8 * psi + 8 * psi / n; }},
      {"ZeRO-2", "4Ψ + 12Ψ/N", [&](double n) { return 4 * psi + 12 * psi / n; }},
      {"FSDP (ZeRO-3)", "16Ψ/N", [&](double n) { return 16 * psi / n; }},
  };
  std::cout << "model state per GPU on N GPUs, in GB (10^9 B):\n";
  std::cout << "   " << pad("", 14) << pad("formula", 12) << right("N = 8", 10)
            << right("N = 64", 10) << right("N = 512", 10) << "\n";
  std::string fits;
  for (const Row& r : rows) {
    std::cout << "   " << pad(r.name, 14) << pad(r.formula, 12);
    for (double n : {8.0, 64.0, 512.0}) {
      const double gb = r.bytes(n) / 1e9;
      std::cout << right(fixed(gb, 2), 10);
      if (gb <= 80)
        fits += std::string(fits.empty() ? "" : ", ") + r.name +
                " at N = " + std::to_string(static_cast<int>(n));
    }
    std::cout << "\n";
  }
  std::cout << "under 80 GB, the memory of one large GPU: " << fits << "\n";
}

// [SECTION] 2. the ladder ------------------------------------------------------------------

enum class Rung { kDDP, kZeRO1, kZeRO2, kFSDP };

const char* rung_name(Rung r) {
  switch (r) {
    case Rung::kDDP: return "DDP";
    case Rung::kZeRO1: return "ZeRO-1";
    case Rung::kZeRO2: return "ZeRO-2";
    case Rung::kFSDP: return "FSDP";
  }
  return "";
}

// Model state per rank, by the formula, for this model (Ψ = kPsi) and N = kWorld.
int64_t formula_bytes(Rung r) {
  const int64_t psi = kPsi, n = kWorld;
  switch (r) {
    case Rung::kDDP: return 16 * psi;
    case Rung::kZeRO1: return 8 * psi + 8 * psi / n;
    case Rung::kZeRO2: return 4 * psi + 12 * psi / n;
    case Rung::kFSDP: return 16 * psi / n;
  }
  return 0;
}

const char* formula_text(Rung r) {
  switch (r) {
    case Rung::kDDP: return "16Ψ";
    case Rung::kZeRO1: return "8Ψ + 8Ψ/N";
    case Rung::kZeRO2: return "4Ψ + 12Ψ/N";
    case Rung::kFSDP: return "16Ψ/N";
  }
  return "";
}

struct RankRecord {
  int64_t at_rest = 0, peak = 0;        // bytes this rank holds after the last step / at most
                                        // during it, above what it held before the rung
  std::map<std::string, int64_t> sent;  // the last step's collectives: bytes by kind
  std::vector<Tensor> params;           // this rank's parameters (FSDP: its rows)
  double step_ms = 0;                   // the last step
  int max_gathered = 0;                 // FSDP: most units holding gathered bytes at once
};

struct RungOptions {
  bool prefetch = false;  // FSDP: forward_prefetch and backward_prefetch
  dist::ThreadsLinkModel link;
};

// Trains `rung` for kSteps on kWorld rank-threads and measures the last step. Before the
// rung, each rank runs one throwaway step on a model of the same shapes: the matmul's packing
// buffers (kept by each thread, grow-only) reach their size there, not inside the rung.
std::vector<RankRecord> run_rung(Rung rung, const Data& data,
                                 const RungOptions& o = RungOptions()) {
  std::vector<RankRecord> records(kWorld);
  dist::RankMemoryLedger ledger(kWorld);
  dist::run_threads(
      kWorld,
      [&](int rank) {
        RankRecord& rec = records[rank];
        auto group = counted_group("ladder");
        auto local = [&](const std::vector<Tensor>& v, int s) {
          const int64_t per_rank = v[s].size(0) / kWorld;
          return v[s].narrow(0, rank * per_rank, per_rank);
        };
        {
          Stack warm = build_model();
          mse(warm(local(data.x, 0)), local(data.y, 0)).backward();
        }
        group->barrier()->wait();
        const int64_t base = ledger.current(rank);

        Stack model = build_model();
        std::function<Tensor(const Tensor&)> forward = [&](const Tensor& x) { return model(x); };
        std::function<void()> zero_grad, step;
        std::unique_ptr<nn::parallel::DistributedDataParallel<Stack>> ddp;
        std::unique_ptr<dist::ZeroRedundancyOptimizer> zero;
        std::unique_ptr<optim::Adam> adam;
        std::vector<std::shared_ptr<dist::FSDPUnit>> units;
        auto make_adam = [](std::vector<Tensor> params) {
          return std::make_unique<optim::Adam>(std::move(params), adam_options());
        };
        switch (rung) {
          case Rung::kDDP:
            // Gradients as views of the all-reduce buckets: no second copy of them (4Ψ).
            ddp = std::make_unique<nn::parallel::DistributedDataParallel<Stack>>(
                model, group,
                nn::parallel::DistributedDataParallelOptions().gradient_as_bucket_view(true));
            forward = [&](const Tensor& x) { return (*ddp)(x); };
            adam = make_adam(model->parameters());
            break;
          case Rung::kZeRO1:
          case Rung::kZeRO2:
            zero = std::make_unique<dist::ZeroRedundancyOptimizer>(
                model->parameters(), make_adam,
                dist::ZeroOptions().stage(rung == Rung::kZeRO1 ? 1 : 2).bucket_cap_mb(0.0625),
                group);
            break;
          case Rung::kFSDP: {
            dist::FullyShardOptions fsdp;
            fsdp.forward_prefetch = o.prefetch;
            fsdp.backward_prefetch = o.prefetch;
            for (nn::Linear& layer : model->layers)
              units.push_back(dist::fully_shard(layer, fsdp, group));
            dist::fully_shard(model, fsdp, group);  // the root: owns nothing left here
            adam = make_adam(model->parameters());  // the rows: state for 1/N
            // After FSDP's own pre-hook (registered first): count the units that hold
            // gathered bytes while each layer runs.
            for (nn::Linear& layer : model->layers)
              layer->register_forward_pre_hook([&units, &rec](nn::Module&, std::vector<Tensor>&) {
                int gathered = 0;
                for (const auto& u : units)
                  gathered += u->params()[0].padded_full.storage().has_bytes();
                rec.max_gathered = std::max(rec.max_gathered, gathered);
              });
            break;
          }
        }
        if (zero) {
          zero_grad = [&] { zero->zero_grad(); };
          step = [&] { zero->step(); };
        } else {
          zero_grad = [&] { adam->zero_grad(); };
          step = [&] { adam->step(); };
        }

        for (int s = 0; s < kSteps; ++s) {
          const bool last = s == kSteps - 1;
          std::map<std::string, int64_t> before;
          if (last) {
            // Measure the last step only: the first creates Adam's state, the second lets
            // DDP rebuild its buckets. Every rank quiet, then the peaks start again.
            group->barrier()->wait();
            if (rank == 0) ledger.reset_peak();
            group->barrier()->wait();
            rec.max_gathered = 0;
            before = group->collective_bytes();
          }
          const auto t0 = Clock::now();
          zero_grad();
          mse(forward(local(data.x, s)), local(data.y, s)).backward();
          step();
          if (last) {
            rec.step_ms = ms_since(t0);
            for (const auto& [kind, bytes] : group->collective_bytes())
              if (bytes != before[kind]) rec.sent[kind] = bytes - before[kind];
          }
        }
        group->barrier()->wait();
        rec.at_rest = ledger.current(rank) - base;
        rec.peak = ledger.peak(rank) - base;
        for (const Tensor& p : model->parameters()) rec.params.push_back(p.detach().clone());
      },
      o.link);
  return records;
}

// The whole parameters a rung ended with: rank 0's, or for FSDP every rank's rows in order.
std::vector<Tensor> whole_parameters(Rung rung, const std::vector<RankRecord>& records) {
  if (rung != Rung::kFSDP) return records[0].params;
  std::vector<Tensor> whole;
  for (size_t i = 0; i < records[0].params.size(); ++i) {
    std::vector<Tensor> rows;
    for (const RankRecord& r : records) rows.push_back(r.params[i]);
    whole.push_back(glass::cat(rows, 0));
  }
  return whole;
}

// max |rung − one process| / max |one process|, over all parameters.
double relative_difference(const std::vector<Tensor>& mine, const std::vector<Tensor>& oracle) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < oracle.size(); ++i) {
    diff = std::max(diff, (mine[i] - oracle[i].detach()).abs().max().item<double>());
    scale = std::max(scale, oracle[i].detach().abs().max().item<double>());
  }
  return diff / scale;
}

struct LadderResult {
  std::vector<std::vector<RankRecord>> records;  // [rung][rank]
};

LadderResult the_ladder(const Data& data) {
  section("2. the ladder, on 4 rank-threads");
  std::cout << "the model: " << kLayers << " x Linear(" << kWidth << ", " << kWidth
            << "), Ψ = " << kPsi << " parameters, 16Ψ = " << kib(16 * kPsi) << "; Adam(lr 1e-3), "
            << kSteps << " steps, " << kLocalBatch << " examples per rank (a global batch of "
            << kWorld * kLocalBatch << ")\n";
  const std::vector<Tensor> oracle = train_one_process(data);
  const std::vector<Rung> rungs{Rung::kDDP, Rung::kZeRO1, Rung::kZeRO2, Rung::kFSDP};
  LadderResult result;
  std::cout << "each rung against one process on the global batch, max |rung - one process| / "
               "max |one process|:\n";
  for (Rung rung : rungs) {
    result.records.push_back(run_rung(rung, data));
    const double rel = relative_difference(whole_parameters(rung, result.records.back()), oracle);
    std::cout << "   " << pad(rung_name(rung), 8) << magnitude(rel) << "\n";
    std::cerr << "[value] " << rung_name(rung)
              << ": max relative difference to one process = " << rel << "\n";
  }
  std::cout << "model state per rank (RankMemoryLedger: the bytes each rank-thread allocated and "
               "still holds, above what it held before the rung), at rest after the last step "
               "and at its peak during it:\n";
  std::cout << "   " << pad("rung", 8) << pad("formula", 12) << right("= KiB", 9)
            << right("at rest", 11) << right("/ formula", 11) << right("peak", 11)
            << right("/ formula", 11) << "   every rank the same\n";
  for (size_t i = 0; i < rungs.size(); ++i) {
    const RankRecord& r0 = result.records[i][0];
    const double f = static_cast<double>(formula_bytes(rungs[i]));
    // ZeRO-2 frees a bucket's buffer as soon as its reduce-scatter is seen to be complete,
    // which depends on timing: its peak goes to stderr.
    const bool timed_peak = rungs[i] == Rung::kZeRO2;
    bool same = true;
    for (const RankRecord& r : result.records[i])
      same &= r.at_rest == r0.at_rest && (timed_peak || r.peak == r0.peak);
    std::cout << "   " << pad(rung_name(rungs[i]), 8) << pad(formula_text(rungs[i]), 12)
              << right(fixed(f / 1024, 1), 9) << right(fixed(r0.at_rest / 1024.0, 1), 11)
              << right(fixed(r0.at_rest / f, 3), 11)
              << right(timed_peak ? "(timing)" : fixed(r0.peak / 1024.0, 1), 11)
              << right(timed_peak ? "" : fixed(r0.peak / f, 3), 11) << "   " << yes_no(same)
              << "\n";
    if (timed_peak)
      std::cerr << "[value] ZeRO-2 peak on rank 0: " << fixed(r0.peak / 1024.0, 1) << " KiB ("
                << fixed(r0.peak / f, 3) << " x the formula)\n";
  }
  for (size_t i = 0; i < rungs.size(); ++i)
    std::cerr << "[time] " << rung_name(rungs[i]) << ": step "
              << fixed(result.records[i][0].step_ms, 2) << " ms on rank 0 (no link model)\n";
  return result;
}

// [SECTION] 3. prefetch ----------------------------------------------------------------------

void prefetch(const Data& data, const std::vector<RankRecord>& off) {
  section("3. FSDP's prefetch");
  RungOptions with_prefetch;
  with_prefetch.prefetch = true;
  const std::vector<RankRecord> on = run_rung(Rung::kFSDP, data, with_prefetch);
  const int64_t unit = 4 * kWidth * kWidth;  // one layer's weight, gathered
  std::cout << "FSDP again, forward_prefetch and backward_prefetch on; one unit (a layer) "
               "gathered is "
            << kib(unit) << ":\n";
  std::cout << "   " << pad("prefetch", 10) << pad("units gathered at once", 24)
            << right("peak", 11) << right("above at rest", 15) << "   every rank the same\n";
  for (const auto* rec : {&off, &on}) {
    const RankRecord& r0 = (*rec)[0];
    bool same = true;
    for (const RankRecord& r : *rec) same &= r.peak == r0.peak && r.at_rest == r0.at_rest;
    std::cout << "   " << pad(rec == &off ? "off" : "on", 10)
              << pad("at most " + std::to_string(r0.max_gathered), 24)
              << right(fixed(r0.peak / 1024.0, 1) + " KiB", 11)
              << right(fixed(static_cast<double>(r0.peak - r0.at_rest) / unit, 2) + " units", 15)
              << "   " << yes_no(same) << "\n";
  }
  bool same = true;
  for (int r = 0; r < kWorld; ++r)
    for (size_t i = 0; i < off[r].params.size(); ++i)
      same &= on[r].params[i].equal(off[r].params[i]);
  std::cout << "   the trained parameters, prefetch on against off, bitwise equal: " << yes_no(same)
            << "\n";
  // Time: on a link that makes each collective take wire time, prefetch lets a unit's
  // all-gather run while the unit before it computes. Compute for it to hide behind: a batch
  // of 1024 per rank (in the memory runs above, 4 examples compute in microseconds).
  dist::ThreadsLinkModel link;
  link.latency = std::chrono::microseconds(200);
  link.bytes_per_second = 50e6;
  const Data big = make_data(1024);
  double ms[2];
  for (bool p : {false, true}) {
    RungOptions timed;
    timed.prefetch = p;
    timed.link = link;
    ms[p] = run_rung(Rung::kFSDP, big, timed)[0].step_ms;
  }
  std::cerr << "[time] FSDP step, 1024 examples per rank, on a link of 200 us and 50 MB/s: "
               "prefetch off "
            << fixed(ms[0], 2) << " ms, on " << fixed(ms[1], 2) << " ms\n";
}

// [SECTION] 4. communication -------------------------------------------------------------------

void communication(const LadderResult& ladder) {
  section("4. bytes per step");
  const std::vector<Rung> rungs{Rung::kDDP, Rung::kZeRO1, Rung::kZeRO2, Rung::kFSDP};
  const double psi_bytes = 4.0 * kPsi;
  std::cout << "the collectives of section 2's last step, counted on rank 0 by a CountingGroup "
               "round the threads group;\n"
            << "B = the buffer each moved (allreduce: the tensor, allgather: the output, "
               "reduce_scatter: the input), in units of 4Ψ, the parameters' bytes:\n";
  std::cout << "   " << pad("rung", 8) << pad("collectives, B / 4Ψ", 40)
            << right("ring, per rank", 15) << right("/ DDP", 8) << "\n";
  double ddp_ring = 0;
  for (size_t i = 0; i < rungs.size(); ++i) {
    std::string kinds;
    double ring = 0;  // bytes a ring makes each rank send
    for (const auto& [kind, bytes] : ladder.records[i][0].sent) {
      kinds += (kinds.empty() ? "" : " + ") + kind + " " + fixed(bytes / psi_bytes, 2);
      ring +=
          (kind == "allreduce" ? 2.0 : 1.0) * static_cast<double>(bytes) * (kWorld - 1) / kWorld;
    }
    if (i == 0) ddp_ring = ring;
    std::cout << "   " << pad(rung_name(rungs[i]), 8) << pad(kinds, 40)
              << right(fixed(ring / 1024, 1) + " KiB", 15) << right(fixed(ring / ddp_ring, 2), 8)
              << "\n";
  }
  std::cout << "a ring sends (n-1)/n x B per rank for an allgather or a reduce_scatter, twice that "
               "for an allreduce (n = "
            << kWorld << ")\n";
}

// [SECTION] 5. sharded checkpoints -------------------------------------------------------------

// What an FSDP rank of a checkpoint run kept: its rows of every parameter.
struct ShardRun {
  std::vector<std::vector<Tensor>> rows;  // [rank][parameter]
  std::vector<std::string> cuts;          // [rank]: fc0.weight's rows, "[begin, end)"
};

// FSDP on `world` ranks, a model from `seed`; `before(model, adam, rank)` runs after sharding
// (to load a checkpoint), then steps [first, last) train on the global batches, each rank on
// its 16 / world examples, and `after(model, adam)` runs at the end (to save one).
ShardRun run_fsdp(int world, uint64_t seed, const Data& data, int first, int last,
                  const std::function<void(Stack&, optim::Adam&)>& before,
                  const std::function<void(Stack&, optim::Adam&)>& after) {
  ShardRun run{std::vector<std::vector<Tensor>>(world), std::vector<std::string>(world)};
  const int64_t local = kWorld * kLocalBatch / world;
  dist::run_threads(world, [&](int rank) {
    dist::init_process_group("threads");
    Stack model = build_model(seed);
    for (nn::Linear& layer : model->layers) dist::fully_shard(layer);
    dist::fully_shard(model);
    optim::Adam adam(model->parameters(), adam_options());
    if (before) before(model, adam);
    for (int s = first; s < last; ++s) {
      adam.zero_grad();
      mse(model(data.x[s].narrow(0, rank * local, local)), data.y[s].narrow(0, rank * local, local))
          .backward();
      adam.step();
    }
    if (after) after(model, adam);
    for (const Tensor& p : model->parameters()) run.rows[rank].push_back(p.detach().clone());
    const auto cut = dist::fsdp_row_shard(model->layers[0]->weight);
    run.cuts[rank] = "[" + std::to_string(cut->row_begin) + ", " +
                     std::to_string(cut->row_begin + cut->rows) + ")";
    dist::destroy_process_group();
  });
  return run;
}

std::vector<Tensor> put_together(const ShardRun& run) {
  std::vector<Tensor> whole;
  for (size_t i = 0; i < run.rows[0].size(); ++i) {
    std::vector<Tensor> rows;
    for (const auto& r : run.rows) rows.push_back(r[i]);
    whole.push_back(glass::cat(rows, 0));
  }
  return whole;
}

void checkpoints(const Data& data) {
  section("5. a sharded checkpoint: saved by 2 ranks, loaded into 4");
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("glass_lesson11_checkpoint_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // Removed on the way out, also when a step throws.
  struct RemoveAtExit {
    fs::path path;
    ~RemoveAtExit() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_at_exit{dir};
  auto save = [&](Stack& model, optim::Adam& adam) {
    dist::save_sharded_checkpoint(dir.string(), *model, &adam);
  };
  // 2 ranks: steps 1-3, then save. And 2 ranks that train all 4 steps without stopping: where
  // a run resumed from the checkpoint must arrive.
  const ShardRun saved = run_fsdp(2, 0, data, 0, kSteps - 1, nullptr, save);
  const ShardRun two = run_fsdp(2, 0, data, 0, kSteps, nullptr, nullptr);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().filename());
  std::sort(files.begin(), files.end());
  std::cout << "FSDP on 2 ranks, " << kSteps - 1
            << " steps, then save_sharded_checkpoint(dir, *model, &adam) on every rank; dir "
               "holds:\n";
  for (const std::string& f : files) std::cout << "   " << f << "\n";
  std::cout << "fc0.weight (64 x 64): rank 0 saved rows " << saved.cuts[0] << ", rank 1 rows "
            << saved.cuts[1] << ", with their rows of Adam's moments\n";

  // 4 ranks, a model from another seed: the checkpoint replaces its parameters and state.
  const ShardRun four = run_fsdp(
      4, 1, data, 0, 0,
      [&](Stack& model, optim::Adam& adam) {
        dist::load_sharded_checkpoint(dir.string(), *model, &adam);
      },
      nullptr);
  std::cout << "FSDP on 4 ranks, a model from seed 1, then load_sharded_checkpoint(dir, *model, "
               "&adam) on every rank:\n   fc0.weight's rows:";
  for (int r = 0; r < 4; ++r) std::cout << (r ? ", " : " ") << "rank " << r << " " << four.cuts[r];
  const std::vector<Tensor> a = put_together(saved), b = put_together(four);
  bool equal = true;
  for (size_t i = 0; i < a.size(); ++i) equal &= a[i].equal(b[i]);
  std::cout << "\n   the parameters, put back together, equal the saved ones bitwise: "
            << yes_no(equal) << "\n";
  // Step 4 from the checkpoint on 4 ranks; and again with the parameters alone, Adam starting
  // again from no state (moments zero, step count 0).
  const std::vector<Tensor> two_after = put_together(two);
  for (bool with_state : {true, false}) {
    const ShardRun next = run_fsdp(
        4, 1, data, kSteps - 1, kSteps,
        [&](Stack& model, optim::Adam& adam) {
          dist::load_sharded_checkpoint(dir.string(), *model, with_state ? &adam : nullptr);
        },
        nullptr);
    const double rel = relative_difference(put_together(next), two_after);
    std::cout << "   then step " << kSteps << " on the 4 ranks, against 2 ranks that trained "
              << kSteps << " steps without stopping: ";
    if (with_state)
      std::cout << magnitude(rel) << "\n";
    else
      std::cout << fixed(rel, 4) << " with the parameters loaded and not Adam's state\n";
    std::cerr << "[value] checkpoint, step " << kSteps << (with_state ? " with" : " without")
              << " Adam's state: max relative difference to 2 ranks = " << rel << "\n";
  }
}

}  // namespace

int main() {
  try {
    model_state_arithmetic();
    const Data data = make_data();
    const LadderResult ladder = the_ladder(data);
    prefetch(data, ladder.records[3]);
    communication(ladder);
    checkpoints(data);
  } catch (const std::exception& e) {
    std::cerr << "lesson_11_sharding: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
