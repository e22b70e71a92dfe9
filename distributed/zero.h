// distributed/zero.h — ZeRO stages 1 and 2: each rank keeps the optimizer state, and then
// also the gradients, of 1/N of the parameters only (the first two rungs of issue 12's
// ladder; FSDP, the third, shards the parameters too).
//
//   auto model = Net();                                   // the same on every rank
//   ZeroRedundancyOptimizer zero(model->parameters(),    // rank 0's values everywhere
//       [](std::vector<Tensor> owned) {
//         return std::make_unique<optim::Adam>(owned, optim::AdamOptions(1e-3));
//       },
//       ZeroOptions().stage(2));
//   for (...) {
//     zero.zero_grad();
//     loss_fn(model(x_local), y_local).backward();        // gradients reduced as they arrive
//     zero.step();                                        // step what I own, all-gather
//   }
//
// The layout. The parameters are copied, in order, into one flat buffer, padded with zeros
// to a multiple of the world size N, and become views of it (Tensor::set_data: the model,
// the user's handles and autograd keep the same tensors). The buffer is cut into buckets
// whose sizes are multiples of N, and each bucket into N equal chunks: rank r owns chunk r
// of every bucket, 1/N of all elements. (With a single bucket that is the r-th contiguous
// slice; with several, a bucket's reduce-scatter delivers each rank exactly what it owns.)
// The wrapped optimizer is made over the owned chunks — views into the flat buffer — so it
// steps the parameters in place and keeps state for them alone.
//
// Stage 1 (optimizer state sharded): every gradient is a view into a flat gradient buffer;
// a bucket is all-reduced (averaged) as soon as backward has produced its gradients, as DDP
// does; step() steps the owned chunks and all-gathers every bucket from its owners.
// Stage 2 (+ gradients): a bucket's gradients are copied into a bucket buffer and freed; the
// bucket is reduce-scattered, and each rank adds its chunk to a gradient shard of 1/N.
// Model state in float32, Ψ parameters: stage 1 keeps 4Ψ (parameters) + 4Ψ (gradients) +
// 8Ψ/N (Adam's moments); stage 2 keeps 4Ψ + 4Ψ/N + 8Ψ/N, plus at most two buckets in
// flight (backward waits for the oldest when a third is ready).
//
// Invariants: after construction and after every step() every rank holds the same
// parameters (the owners' values); the owned chunks' gradients are the average over ranks
// of what backward produced since the last step; collectives are issued in the same order on
// every rank (bucket readiness follows the backward graph, which is the same on every rank).
// Every parameter must get a gradient in every backward, or the same ones on every rank.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"
#include "nn/optim/optimizer.h"

namespace glass::distributed {

class ZeroOptions {
 public:
  // 1: optimizer state sharded; 2: gradients too.
  ZeroOptions& stage(int s) {
    stage_ = s;
    return *this;
  }
  // The size of a bucket (all N chunks) in MiB; rounded down to a multiple of N elements.
  ZeroOptions& bucket_cap_mb(double mb) {
    bucket_cap_mb_ = mb;
    return *this;
  }
  int stage() const { return stage_; }
  double bucket_cap_mb() const { return bucket_cap_mb_; }

 private:
  int stage_ = 1;
  double bucket_cap_mb_ = 25;
};

// Makes the wrapped optimizer over the chunks this rank owns (leaf tensors that require grad).
using ShardOptimizerFactory =
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor> owned)>;

class ZeroRedundancyOptimizer {
 public:
  // `group`: the default group when null. Collective: every rank constructs it with the same
  // parameter shapes and options; the parameters take rank 0's values.
  ZeroRedundancyOptimizer(std::vector<Tensor> params, const ShardOptimizerFactory& make_optimizer,
                          ZeroOptions options = {}, std::shared_ptr<ProcessGroup> group = nullptr);
  ~ZeroRedundancyOptimizer();  // waits for collectives in flight, removes its hooks
  ZeroRedundancyOptimizer(const ZeroRedundancyOptimizer&) = delete;
  ZeroRedundancyOptimizer& operator=(const ZeroRedundancyOptimizer&) = delete;

  // Finishes the gradient reduction, steps the owned chunks, all-gathers the parameters.
  void step();
  // Zeroes the gradients (stage 1: the flat buffer the .grad()s view; stage 2: the shard).
  // A model's own zero_grad() does not reach stage 2's shard: call this one.
  void zero_grad();
  // clip_grad_norm_ over the whole (averaged) gradient, computed from the owned chunks and
  // all-reduced; scales every gradient this rank keeps. Call between backward and step().
  double clip_grad_norm_(double max_norm, double norm_type = 2.0, bool error_if_nonfinite = false);

  optim::Optimizer& local_optimizer() { return *optimizer_; }
  int stage() const { return options_.stage(); }
  int64_t numel() const { return numel_; }                // Ψ: the parameters' elements
  int64_t padded_numel() const { return padded_numel_; }  // Ψ rounded up to a multiple of N
  int64_t shard_numel() const { return padded_numel_ / world_; }  // what this rank owns
  int64_t num_buckets() const { return static_cast<int64_t>(buckets_.size()); }
  // This rank's gradient shard (stage 2; undefined in stage 1, where gradients are whole).
  const Tensor& gradient_shard() const { return grad_shard_; }

 private:
  struct Bucket {
    int64_t start = 0, length = 0;  // in the flat buffer; length is a multiple of N
    int64_t chunk = 0;              // length / N: what each rank owns of it
    int64_t shard_offset = 0;       // where this rank's chunk sits in the gradient shard
    std::vector<size_t> params;     // indices of the parameters that overlap it
    int remaining = 0;              // gradients still to come in this backward
    bool launched = false;
    Tensor buffer;   // stage 2: the bucket's gradients, until reduced
    Tensor reduced;  // stage 2: the owned chunk, from reduce_scatter
    std::shared_ptr<Work> work;
  };

  void on_gradient(size_t index);  // a parameter's post-accumulate-grad hook
  void launch(Bucket& b);
  void harvest(Bucket& b);  // stage 2: adds a reduced chunk into the shard, frees the bucket
  // At the end of every backward that produced a gradient (an engine callback): launches
  // the buckets still waiting (an unused parameter), waits for all, harvests.
  void finish_round();

  std::vector<Tensor> params_;
  std::vector<int64_t> offsets_;  // each parameter's first element in the flat buffer
  std::vector<std::vector<size_t>> buckets_of_;  // per parameter, the buckets it overlaps
  std::vector<unsigned> hooks_;
  ZeroOptions options_;
  std::shared_ptr<ProcessGroup> group_;
  int world_ = 1, rank_ = 0;
  int64_t numel_ = 0, padded_numel_ = 0;
  Tensor flat_;        // the parameters, flattened and padded
  Tensor flat_grad_;   // stage 1: their gradients (each .grad() is a view)
  Tensor grad_shard_;  // stage 2: the owned chunks' gradients, bucket after bucket
  std::vector<Bucket> buckets_;
  // Stage 2: buckets launched and not yet harvested, oldest first; at most kBucketsInFlight.
  std::deque<Bucket*> in_flight_;
  static constexpr size_t kBucketsInFlight = 2;
  std::vector<Tensor> owned_;  // one leaf per bucket: the chunk this rank owns
  std::unique_ptr<optim::Optimizer> optimizer_;
  bool round_open_ = false;  // a backward has delivered gradients; finish_round not yet run
};

}  // namespace glass::distributed
