// viewer/distributed_shard.cpp — record_sharding: memory per rank over a step, DDP against
// FSDP, and FSDP's ownership map (distributed_shard.h); its summary and SVG.
//
// Each rung runs on its own rank-threads with its own RankMemoryLedger, made before the
// threads so that everything the ranks allocate — model, wrapper, optimizer, inputs — is
// counted. The ranks meet at a barrier after the warm-up, where rank 0 notes every rank's
// bytes (at rest) and starts the ledger's samples; each rank then notes the ledger's sample
// count at its own phase boundaries, which puts its phases on the samples' order. The ranks
// meet again after the recorded steps, where rank 0 stops the samples.
//
// [SECTION] recording   [SECTION] peaks   [SECTION] summary
// (shard_to_svg is in distributed_shard_svg.cpp.)
#include "viewer/distributed_shard.h"

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/generator.h"
#include "core/ops/random.h"
#include "core/parallel.h"
#include "distributed/backends/threads.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "distributed/rank_memory.h"
#include "nn/functional/loss.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"

namespace glass::viz {

const char* phase_name(ShardPhase p) {
  switch (p) {
    case ShardPhase::ZeroGrad: return "zero_grad";
    case ShardPhase::Forward: return "forward";
    case ShardPhase::Backward: return "backward";
    case ShardPhase::Step: return "step";
  }
  return "?";
}

int64_t RungRecording::peak() const {
  int64_t m = 0;
  for (const RankMemoryCurve& c : ranks) m = std::max(m, c.peak);
  return m;
}

int64_t RungRecording::at_rest() const {
  int64_t m = 0;
  for (const RankMemoryCurve& c : ranks) m = std::max(m, c.at_rest);
  return m;
}

// [SECTION] recording -------------------------------------------------------------------------

namespace {

enum class Rung { Ddp, Fsdp };

// What one rank-thread leaves behind for the assembly after run_threads.
struct RankResult {
  std::vector<PhaseSpan> phases;
  std::vector<std::pair<std::string, distributed::RowShard>> shards;  // FSDP: each parameter
  std::vector<ShardUnit> units;                                       // FSDP: with parameters
};

// The MLP of record_ddp, with its Linear layers at hand (each becomes an FSDP unit).
nn::Sequential make_mlp(const std::vector<int64_t>& layers, std::vector<nn::Linear>& linears) {
  nn::Sequential model;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    if (i > 0) model->push_back("relu" + std::to_string(i), nn::ReLU());
    nn::Linear fc(layers[i], layers[i + 1]);
    model->push_back("fc" + std::to_string(i + 1), fc);
    linears.push_back(fc);
  }
  return model;
}

RungRecording record_rung(Rung rung, const ShardRecordingOptions& o,
                          std::vector<RankResult>& results) {
  const int n = o.world_size;
  results.assign(static_cast<size_t>(n), {});
  std::vector<int64_t> at_rest(static_cast<size_t>(n)), end(static_cast<size_t>(n));
  std::optional<distributed::RankMemoryLedger> counting;
  std::barrier sync(n);
  distributed::run_threads(n, [&](int rank) {
    RankResult& mine = results[static_cast<size_t>(rank)];
    // Matmul keeps grow-only packing buffers per thread, sized by the largest product so far.
    // A pool worker's would be charged to whichever rank first asked it for a larger one —
    // a different rank each run — so the ranks keep their matmuls to themselves (they are
    // threads enough), and size their own buffers before the ledger is made, which then
    // counts the rung alone.
    ThreadSerialGuard serial;
    distributed::init_process_group("threads");
    {
      std::vector<nn::Linear> scratch;
      make_mlp(o.layers, scratch)(randn({o.batch, o.layers.front()})).sum().backward();
    }
    sync.arrive_and_wait();
    if (rank == 0) counting.emplace(n);
    sync.arrive_and_wait();
    distributed::RankMemoryLedger& ledger = *counting;
    {
      std::vector<nn::Linear> linears;
      nn::Sequential model = make_mlp(o.layers, linears);
      // DDP's gradients are views into its buckets (gradient_as_bucket_view), so they cost
      // 4Ψ once, not twice: its model state is then the 16Ψ of the arithmetic.
      std::optional<nn::parallel::DistributedDataParallel<nn::Sequential>> ddp;
      std::vector<std::shared_ptr<distributed::FSDPUnit>> units;
      std::shared_ptr<distributed::FSDPUnit> root;
      if (rung == Rung::Ddp) {
        ddp.emplace(model, nullptr,
                    nn::parallel::DistributedDataParallelOptions().gradient_as_bucket_view(true));
      } else {
        distributed::FullyShardOptions fo;
        fo.forward_prefetch = fo.backward_prefetch = o.prefetch;
        for (const nn::Linear& fc : linears) units.push_back(distributed::fully_shard(fc, fo));
        root = distributed::fully_shard(model, fo);  // owns nothing here: ReLU has no weights
      }
      optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));
      Generator gen = make_generator(Device(kCPU), 1000 + static_cast<uint64_t>(rank));
      const Tensor x = randn({o.batch, o.layers.front()}, gen);
      const Tensor y = randint(0, o.layers.back(), {o.batch}, gen);
      // The ledger's next sample: where a phase begins on the shared axis.
      auto order = [&] { return ledger.sample_count(); };
      auto train_step = [&](int step, bool recorded) {
        const int64_t t0 = recorded ? order() : 0;
        // DDP zeroes its bucket views in place (set to none, the buckets would keep the bytes
        // anyway); FSDP drops the rows' gradients, as its users do.
        adam.zero_grad(/*set_to_none=*/rung == Rung::Fsdp);
        const int64_t tf = recorded ? order() : 0;
        Tensor loss = nn::functional::cross_entropy(ddp ? (*ddp)(x) : model(x), y);
        const int64_t t1 = recorded ? order() : 0;
        loss.backward();
        loss = Tensor();
        const int64_t t2 = recorded ? order() : 0;
        adam.step();
        if (!recorded) return;
        const int64_t t3 = order();
        mine.phases.push_back({ShardPhase::ZeroGrad, step, t0, tf});
        mine.phases.push_back({ShardPhase::Forward, step, tf, t1});
        mine.phases.push_back({ShardPhase::Backward, step, t1, t2});
        mine.phases.push_back({ShardPhase::Step, step, t2, t3});
      };
      for (int s = 0; s < o.warmup_steps; ++s) train_step(s, false);
      sync.arrive_and_wait();  // every rank at rest
      if (rank == 0) {
        for (int r = 0; r < n; ++r) at_rest[static_cast<size_t>(r)] = ledger.current(r);
        ledger.clear_samples();
        ledger.set_recording(true);
      }
      sync.arrive_and_wait();
      for (int s = 0; s < o.steps; ++s) train_step(s, true);
      sync.arrive_and_wait();  // every rank done
      if (rank == 0) {
        ledger.set_recording(false);
        for (int r = 0; r < n; ++r) end[static_cast<size_t>(r)] = ledger.current(r);
      }
      sync.arrive_and_wait();
      if (rung == Rung::Fsdp) {
        for (const auto& [name, t] : model->named_parameters())
          if (auto cut = distributed::fsdp_row_shard(t)) mine.shards.emplace_back(name, *cut);
        for (size_t i = 0; i < units.size(); ++i) {
          ShardUnit su{"fc" + std::to_string(i + 1), 0};
          for (const distributed::FSDPUnit::Param& p : units[i]->params())
            su.gathered_bytes += p.padded_full.nbytes();
          mine.units.push_back(std::move(su));
        }
      }
    }
    distributed::destroy_process_group();
  });

  RungRecording rec;
  rec.name = rung == Rung::Ddp ? "DDP" : "FSDP";
  const std::vector<distributed::RankMemoryLedger::Sample> samples = counting->samples();
  rec.orders = static_cast<int64_t>(samples.size());
  for (int r = 0; r < n; ++r) {
    RankMemoryCurve c;
    c.rank = r;
    c.at_rest = c.peak = c.low = at_rest[static_cast<size_t>(r)];
    c.end = end[static_cast<size_t>(r)];
    for (const auto& s : samples) {
      if (s.rank != r) continue;
      c.samples.push_back({s.order, s.bytes});
      c.peak = std::max(c.peak, s.bytes);
      c.low = std::min(c.low, s.bytes);
    }
    c.phases = std::move(results[static_cast<size_t>(r)].phases);
    for (PhaseSpan& p : c.phases) p.end = std::min(p.end, rec.orders);
    rec.ranks.push_back(std::move(c));
  }
  return rec;
}

}  // namespace

ShardRecording record_sharding(const ShardRecordingOptions& options) {
  const int n = options.world_size;
  GLASS_CHECK(n >= 1 && n <= 16, "record_sharding: world_size must be 1..16, got ", n);
  GLASS_CHECK(options.layers.size() >= 2,
              "record_sharding: layers needs at least an input and an output width, got ",
              options.layers.size(), " numbers");
  for (int64_t w : options.layers)
    GLASS_CHECK(w >= 1, "record_sharding: every layer width must be positive, got ", w);
  GLASS_CHECK(options.batch >= 1 && options.steps >= 1 && options.warmup_steps >= 1,
              "record_sharding: batch (", options.batch, "), steps (", options.steps,
              ") and warmup_steps (", options.warmup_steps,
              ") must be positive (the first step creates Adam's state)");
  ShardRecording rec;
  rec.options = options;
  for (size_t i = 0; i + 1 < options.layers.size(); ++i)
    rec.parameters += options.layers[i] * options.layers[i + 1] + options.layers[i + 1];

  std::vector<RankResult> results;
  rec.ddp = record_rung(Rung::Ddp, options, results);
  rec.fsdp = record_rung(Rung::Fsdp, options, results);

  // The ownership map, from every rank's own cut (not recomputed: what FSDP really did).
  rec.units = results[0].units;
  for (size_t i = 0; i < results[0].shards.size(); ++i) {
    const auto& [name, cut0] = results[0].shards[i];
    ParamOwnership p;
    p.name = name;
    p.shape.assign(cut0.full_sizes.begin(), cut0.full_sizes.end());
    p.rows_per_rank = cut0.rows_per_rank;
    for (int r = 0; r < n; ++r) {
      const auto& shards = results[static_cast<size_t>(r)].shards;
      GLASS_CHECK(i < shards.size() && shards[i].first == name, "record_sharding: rank ", r,
                  " sharded other parameters than rank 0");
      const distributed::RowShard& cut = shards[i].second;
      p.ranks.push_back({cut.row_begin, cut.row_begin + cut.rows, cut.rows_per_rank - cut.rows});
    }
    rec.ownership.push_back(std::move(p));
  }
  return rec;
}

// [SECTION] peaks -----------------------------------------------------------------------------

int count_peaks(const RankMemoryCurve& curve, int64_t threshold, int64_t begin, int64_t end) {
  // The bytes entering the window: the last sample before it, or the state at rest.
  int64_t bytes = curve.at_rest;
  for (const MemorySample& s : curve.samples)
    if (s.order < begin) bytes = s.bytes;
  int64_t trough = bytes, top = bytes;
  bool rising = false;  // risen `threshold` above the trough, waiting to fall from the top
  int peaks = 0;
  for (const MemorySample& s : curve.samples) {
    if (s.order < begin || s.order >= end) continue;
    if (rising) {
      top = std::max(top, s.bytes);
      if (s.bytes <= top - threshold) {
        ++peaks;
        rising = false;
        trough = s.bytes;
      }
    } else {
      trough = std::min(trough, s.bytes);
      if (s.bytes >= trough + threshold) {
        rising = true;
        top = s.bytes;
      }
    }
  }
  return peaks;
}

namespace {

const PhaseSpan* find_phase(const RankMemoryCurve& curve, ShardPhase phase, int step) {
  for (const PhaseSpan& p : curve.phases)
    if (p.phase == phase && p.step == step) return &p;
  return nullptr;
}

}  // namespace

int count_peaks(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step) {
  const PhaseSpan* p = find_phase(curve, phase, step);
  return p ? count_peaks(curve, threshold, p->begin, p->end) : 0;
}

std::vector<MemoryJump> find_jumps(const RankMemoryCurve& curve, int64_t threshold) {
  std::vector<MemoryJump> jumps;
  int64_t bytes = curve.at_rest;
  for (const MemorySample& s : curve.samples) {
    if (s.bytes >= bytes + threshold || s.bytes <= bytes - threshold)
      jumps.push_back({s.order, s.bytes - bytes});
    bytes = s.bytes;
  }
  return jumps;
}

namespace {

int count_jumps(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, bool up,
                int step) {
  const PhaseSpan* p = find_phase(curve, phase, step);
  if (p == nullptr) return 0;
  int n = 0;
  for (const MemoryJump& j : find_jumps(curve, threshold))
    if (j.order >= p->begin && j.order < p->end && (j.delta > 0) == up) ++n;
  return n;
}

}  // namespace

int count_drops(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step) {
  return count_jumps(curve, threshold, phase, /*up=*/false, step);
}

int count_rises(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step) {
  return count_jumps(curve, threshold, phase, /*up=*/true, step);
}

int64_t gather_threshold(const ShardRecording& rec) {
  int64_t smallest = 0;
  for (const ShardUnit& u : rec.units)
    if (smallest == 0 || u.gathered_bytes < smallest) smallest = u.gathered_bytes;
  return std::max<int64_t>(smallest / 2, 1);
}

// [SECTION] summary ---------------------------------------------------------------------------

namespace {

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string widths(const std::vector<int64_t>& layers) {
  std::string s;
  for (size_t i = 0; i < layers.size(); ++i) s += (i ? "-" : "") + std::to_string(layers[i]);
  return s;
}

}  // namespace

std::string ShardRecording::summary() const {
  std::ostringstream out;
  const int n = options.world_size;
  out << "sharding: MLP " << widths(options.layers) << ", Ψ = " << parameters << " parameters, "
      << n << " ranks, batch " << options.batch << " per rank, Adam; FSDP prefetch "
      << (options.prefetch ? "on" : "off") << "\n";
  out << "model state by the arithmetic: DDP 16Ψ = " << mib(ddp_model_state())
      << " per rank, FSDP 16Ψ/N = " << mib(fsdp_model_state())
      << "; measured: the allocator's blocks, sizes rounded up as cpu_memory_stats counts them\n";
  const int64_t threshold = gather_threshold(*this);
  for (const RungRecording* rung : {&ddp, &fsdp}) {
    const double arithmetic = rung == &ddp ? ddp_model_state() : fsdp_model_state();
    for (const RankMemoryCurve& c : rung->ranks) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "%-4s rank %d: at rest %s (%.2f x %s), peak %s, lowest %s; in forward "
                    "%d peaks, %d gathers and %d frees of a unit's size\n",
                    rung->name.c_str(), c.rank, mib(static_cast<double>(c.at_rest)).c_str(),
                    static_cast<double>(c.at_rest) / arithmetic, rung == &ddp ? "16Ψ" : "16Ψ/N",
                    mib(static_cast<double>(c.peak)).c_str(),
                    mib(static_cast<double>(c.low)).c_str(),
                    count_peaks(c, threshold, ShardPhase::Forward),
                    count_rises(c, threshold, ShardPhase::Forward),
                    count_drops(c, threshold, ShardPhase::Forward));
      out << line;
    }
  }
  out << "FSDP units gathered:";
  for (const ShardUnit& u : units)
    out << " " << u.module << " " << mib(static_cast<double>(u.gathered_bytes)) << ";";
  out << " peaks, gathers and frees count from " << mib(static_cast<double>(threshold))
      << " in one piece\n";
  out << "ownership (dim 0's rows per rank; + padding rows):\n";
  for (const ParamOwnership& p : ownership) {
    out << "  " << p.name << " " << shape_text(p.shape) << ", " << p.rows_per_rank
        << " rows per rank:";
    for (size_t r = 0; r < p.ranks.size(); ++r) {
      const ParamOwnership::Slice& s = p.ranks[r];
      out << " rank " << r << " [" << s.begin << ", " << s.end << ")";
      if (s.padding > 0) out << " + " << s.padding;
      if (r + 1 < p.ranks.size()) out << ",";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace glass::viz
