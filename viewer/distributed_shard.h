// viewer/distributed_shard.h — memory per rank over one training step, DDP against FSDP, and
// which rows of each parameter each FSDP rank owns: the viewer's shard panel
// (app/shard_panel.cpp) and `glass-dot --shard` (lesson 11).
//
// record_sharding trains the same small MLP (a Sequential of Linear and ReLU) with Adam on
// world_size rank-threads (the threads backend) twice: once under DistributedDataParallel,
// once with every Linear made an FSDP unit (fully_shard) and then the root. After the
// warm-up steps it records the next steps with a RankMemoryLedger: one sample per change of
// a rank's bytes, all ranks in the ledger's single order, so the x axis ("order") is shared
// by the ranks of one rung. DDP's line is flat — its whole model state (parameters, their
// gradients as bucket views, Adam's two moments: 16Ψ bytes in float32) stays for the whole
// step; FSDP's is a sawtooth an N-th as high — each unit's parameters are gathered (the line
// rises by the unit's whole size) only while it runs, and freed after.
//
//   viz::ShardRecording rec = viz::record_sharding({.world_size = 2});
//   rec.ddp.ranks[0].at_rest;    // ≈ 16Ψ bytes
//   rec.fsdp.ranks[0].at_rest;   // ≈ 16Ψ/N bytes
//   rec.fsdp.ranks[0].peak;      // at rest + about a unit gathered (and its gradients)
//   viz::write_text_file("shard.svg", viz::shard_to_svg(rec));
//
// Bytes are what the CPU allocator handed out — each block rounded up to one of four sizes
// per power of two (core/allocator.cpp), as cpu_memory_stats() counts them — so a rung whose
// buffers are not powers of two sits a few percent above the arithmetic (DDP's buckets here).
//
// Invariants: per rank, samples are in increasing order and in [0, orders); phases are in
// the order they ran, each [begin, end) within [0, orders); DDP's bytes during the recorded
// steps never fall below its at_rest (nothing of its model state is freed); every
// ParamOwnership's slices tile [0, d0) in rank order, each holding rows_per_rank rows of
// which the last ones — only on the last ranks — may be padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glass::viz {

struct ShardRecordingOptions {
  int world_size = 2;
  // A Linear per pair of widths, ReLU between. The smallest Linear must stay well above an
  // activation (batch × width floats) for its gather to stand out of the line.
  std::vector<int64_t> layers = {256, 512, 512, 128};
  int64_t batch = 8;  // per rank
  // Steps before recording: the first creates Adam's moments and DDP's buckets, the second
  // rebuilds DDP's buckets in the order backward readied them (both alive for a moment).
  int warmup_steps = 2;
  int steps = 1;  // recorded
  // FSDP's forward and backward prefetch (FullyShardOptions): the next unit's gather starts
  // while this one computes, so two units are gathered at once, at most.
  bool prefetch = true;
};

enum class ShardPhase : uint8_t { ZeroGrad, Forward, Backward, Step };
const char* phase_name(ShardPhase p);  // "zero_grad", "forward", "backward", "step"

// A phase of one rank, in its rung's sample order: the samples with begin <= order < end
// changed its bytes during it. zero_grad frees FSDP's gradients (set to none) and keeps
// DDP's (zeroed in place: they are views into its buckets).
struct PhaseSpan {
  ShardPhase phase = ShardPhase::Forward;
  int step = 0;  // which recorded step, from 0
  int64_t begin = 0, end = 0;
};

struct MemorySample {
  int64_t order = 0;  // the ledger's order: shared by the ranks of one rung
  int64_t bytes = 0;  // the rank's bytes after this change
};

struct RankMemoryCurve {
  int rank = 0;
  int64_t at_rest = 0;  // bytes when the recorded steps began: the state the warm-up left
  int64_t end = 0;      // bytes when they ended
  int64_t peak = 0;     // the highest during them (at least at_rest)
  int64_t low = 0;      // the lowest during them (at most at_rest)
  std::vector<MemorySample> samples;
  std::vector<PhaseSpan> phases;
};

struct RungRecording {
  std::string name;  // "DDP" or "FSDP"
  std::vector<RankMemoryCurve> ranks;
  int64_t orders = 0;       // samples of all ranks: the x axis is [0, orders)
  int64_t peak() const;     // the largest rank peak
  int64_t at_rest() const;  // the largest rank at_rest
};

// An FSDP unit and what its gather costs: the whole (padded) parameters, N × rows each.
struct ShardUnit {
  std::string module;  // "fc1", ...; "" for the root
  int64_t gathered_bytes = 0;
};

// How one FSDP parameter is cut along dim 0: rank r holds rows [begin, end) of the whole
// and `padding` zero rows after them, rows_per_rank = ceil(d0 / N) in all.
struct ParamOwnership {
  std::string name;  // "fc1.weight"
  std::vector<int64_t> shape;
  int64_t rows_per_rank = 0;
  struct Slice {
    int64_t begin = 0, end = 0, padding = 0;
  };
  std::vector<Slice> ranks;  // one per rank, in rank order
};

struct ShardRecording {
  ShardRecordingOptions options;
  int64_t parameters = 0;  // Ψ: the model's parameter count
  RungRecording ddp, fsdp;
  std::vector<ShardUnit> units;  // FSDP's units with parameters, in forward order
  std::vector<ParamOwnership> ownership;

  // Model state in float32 by the arithmetic (parameters, gradients, two Adam moments).
  double ddp_model_state() const { return 16.0 * static_cast<double>(parameters); }
  double fsdp_model_state() const { return ddp_model_state() / options.world_size; }
  // A few lines: Ψ, each rung's at rest and peak per rank against the arithmetic, FSDP's
  // gather peaks in forward, and the ownership table.
  std::string summary() const;
};

// Runs both rungs (tens to hundreds of milliseconds) and records them. Throws glass::Error
// naming a bad option or a rank's failure.
ShardRecording record_sharding(const ShardRecordingOptions& options = {});

// The gather/free peaks in a curve between orders [begin, end): a peak is counted when the
// bytes have risen at least `threshold` above the last trough and then fallen at least
// `threshold` below that peak (hysteresis, so an activation's wiggle is not a peak).
int count_peaks(const RankMemoryCurve& curve, int64_t threshold, int64_t begin, int64_t end);
// The same over one phase of the curve's recorded step `step` (all of it when absent).
int count_peaks(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step = 0);
// A change of at least a threshold in one allocation or free: with the threshold at half the
// smallest unit, FSDP's gathers (up: a unit's whole weight, allocated in one piece) and frees
// (down); in DDP, only backward's gradient temporaries of its largest parameters.
struct MemoryJump {
  int64_t order = 0;
  int64_t delta = 0;  // bytes: positive for an allocation, negative for a free
};
std::vector<MemoryJump> find_jumps(const RankMemoryCurve& curve, int64_t threshold);
// The frees (drops) or allocations (rises) of at least `threshold` bytes in one piece during
// a phase. FSDP gathers and frees each unit's weight once per unit in forward, prefetch or
// not — where prefetch can merge two peaks into one, since the next unit's gather starts
// before this one's is freed.
int count_drops(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step = 0);
int count_rises(const RankMemoryCurve& curve, int64_t threshold, ShardPhase phase, int step = 0);
// Half the smallest unit's gathered bytes: the threshold the summary and panel count with.
int64_t gather_threshold(const ShardRecording& rec);

// The picture as plain SVG: per rung a plot of every rank's bytes over the recorded step
// (one colour per rank, the phases shaded, the arithmetic's at-rest dashed), both on one
// bytes scale; then one bar per FSDP parameter cut into its ranks' slices (padding hatched).
// The same recording always gives the same bytes.
std::string shard_to_svg(const ShardRecording& rec, int width = 1000);

}  // namespace glass::viz
