// distributed/zero.cpp — ZeRO stages 1 and 2: the flat layout, the gradient buckets
// reduced during backward, the sharded step and the all-gather after it.
//
// [SECTION] construction  [SECTION] backward: buckets  [SECTION] step
#include "distributed/zero.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_set>
#include <utility>

#include "autograd/engine.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "distributed/clip_grad.h"
#include "distributed/distributed.h"
#include "nn/utils/clip_grad.h"

namespace glass::distributed {

// [SECTION] construction ------------------------------------------------------------------

namespace {

void check_parameters(const std::vector<Tensor>& params) {
  GLASS_CHECK(!params.empty(), "ZeroRedundancyOptimizer: got no parameters");
  std::unordered_set<const TensorImpl*> seen;
  const Tensor& first = params[0];
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    GLASS_CHECK(p.defined(), "ZeroRedundancyOptimizer: parameter ", i, " is undefined");
    GLASS_CHECK(p.requires_grad() && p.grad_fn() == nullptr, "ZeroRedundancyOptimizer: parameter ",
                i, " is not a leaf that requires grad");
    GLASS_CHECK(p.is_floating_point(), "ZeroRedundancyOptimizer: parameter ", i, " has dtype ",
                dtype_name(p.dtype()), "; only floating-point parameters can be trained");
    GLASS_CHECK(p.dtype() == first.dtype() && p.device() == first.device(),
                "ZeroRedundancyOptimizer: parameter ", i, " is ", dtype_name(p.dtype()), " on ",
                p.device(), " but parameter 0 is ", dtype_name(first.dtype()), " on ",
                first.device(), "; one flat buffer holds them all, so they must agree");
    GLASS_CHECK(seen.insert(p.unsafeGetTensorImpl()).second, "ZeroRedundancyOptimizer: parameter ",
                i, " appears twice");
  }
}

}  // namespace

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Tensor> params,
                                                 const ShardOptimizerFactory& make_optimizer,
                                                 ZeroOptions options,
                                                 std::shared_ptr<ProcessGroup> group)
    : params_(std::move(params)),
      options_(options),
      group_(group ? std::move(group) : default_group()) {
  GLASS_CHECK(options_.stage() == 1 || options_.stage() == 2,
              "ZeroRedundancyOptimizer: stage must be 1 (optimizer state) or 2 (and gradients), "
              "got ",
              options_.stage(), " (sharding the parameters too is FSDP: fully_shard)");
  GLASS_CHECK(options_.bucket_cap_mb() > 0,
              "ZeroRedundancyOptimizer: bucket_cap_mb must be positive, got ",
              options_.bucket_cap_mb());
  GLASS_CHECK(make_optimizer != nullptr, "ZeroRedundancyOptimizer: no optimizer factory");
  check_parameters(params_);
  world_ = group_->size();
  rank_ = group_->rank();

  NoGradGuard no_grad;
  for (const Tensor& p : params_) {
    offsets_.push_back(numel_);
    numel_ += p.numel();
  }
  padded_numel_ = (numel_ + world_ - 1) / world_ * world_;
  const TensorOptions opts = params_[0].options();
  flat_ = zeros({padded_numel_}, opts);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    flat_.narrow(0, offsets_[i], p.numel()).copy_(p.detach().reshape({p.numel()}));
  }
  BroadcastOptions from_rank0;
  group_->broadcast(flat_, from_rank0)->wait();  // every replica starts from rank 0's values
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    p.set_data(flat_.narrow(0, offsets_[i], p.numel()).view(p.sizes()));
  }

  // Buckets: multiples of N elements, the last one shorter.
  const auto element = static_cast<int64_t>(element_size(flat_.dtype()));
  int64_t cap = static_cast<int64_t>(options_.bucket_cap_mb() * 1024 * 1024) / element;
  cap = std::max<int64_t>(cap / world_ * world_, world_);
  int64_t shard_offset = 0;
  for (int64_t start = 0; start < padded_numel_; start += cap) {
    Bucket b;
    b.start = start;
    b.length = std::min(cap, padded_numel_ - start);
    b.chunk = b.length / world_;
    b.shard_offset = shard_offset;
    shard_offset += b.chunk;
    buckets_.push_back(std::move(b));
  }
  buckets_of_.resize(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t n = params_[i].numel();
    if (n == 0) continue;  // no gradient to wait for
    for (int64_t b = offsets_[i] / cap; b <= (offsets_[i] + n - 1) / cap; ++b) {
      buckets_of_[i].push_back(static_cast<size_t>(b));
      buckets_[static_cast<size_t>(b)].params.push_back(i);
    }
  }
  for (Bucket& b : buckets_) b.remaining = static_cast<int>(b.params.size());

  // Gradients: stage 1 keeps them whole, as views of one flat buffer; stage 2 keeps only
  // the owned chunks, in a shard.
  if (options_.stage() == 1) {
    flat_grad_ = zeros({padded_numel_}, opts);
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor& p = params_[i];
      Tensor view = flat_grad_.narrow(0, offsets_[i], p.numel()).view(p.sizes());
      if (p.grad().defined()) view.copy_(p.grad());
      p.mutable_grad() = view;
    }
  } else {
    grad_shard_ = zeros({padded_numel_ / world_}, opts);
    for (Tensor& p : params_) p.mutable_grad() = Tensor();
  }
  for (const Bucket& b : buckets_) {
    Tensor owned = flat_.narrow(0, b.start + rank_ * b.chunk, b.chunk).detach();
    owned.requires_grad_(true);
    owned.mutable_grad() = options_.stage() == 1
                               ? flat_grad_.narrow(0, b.start + rank_ * b.chunk, b.chunk)
                               : grad_shard_.narrow(0, b.shard_offset, b.chunk);
    owned_.push_back(owned);
  }
  optimizer_ = make_optimizer(owned_);
  GLASS_CHECK(optimizer_ != nullptr, "ZeroRedundancyOptimizer: the factory returned no optimizer");

  for (size_t i = 0; i < params_.size(); ++i) {
    hooks_.push_back(autograd::register_post_accumulate_grad_hook(
        params_[i], [this, i](const Tensor&) { on_gradient(i); }));
  }
}

ZeroRedundancyOptimizer::~ZeroRedundancyOptimizer() {
  for (size_t i = 0; i < hooks_.size(); ++i)
    autograd::remove_post_accumulate_grad_hook(params_[i], hooks_[i]);
  for (Bucket& b : buckets_) {
    if (!b.work) continue;
    try {
      b.work->wait();  // the transport still writes into our buffers until then
    } catch (const std::exception&) {
      // The failure was (or will be) reported by whoever waited first; nothing to add here.
    }
  }
}

// [SECTION] backward: buckets ------------------------------------------------------------

void ZeroRedundancyOptimizer::on_gradient(size_t i) {
  NoGradGuard no_grad;
  // A gradient for a bucket already reduced means a new backward (gradients accumulate
  // until step): finish the last one's reductions first.
  if (!round_open_) {
    // The first gradient of this backward: when backward ends, the reductions are finished
    // and (stage 2) harvested, so the next backward never accumulates into a bucket that is
    // still being reduced, and step() finds its gradients ready (as DDP's backward does).
    round_open_ = true;
    autograd::queue_callback([this] { finish_round(); });
  }
  Tensor& p = params_[i];
  Tensor& grad = p.mutable_grad();
  const int64_t n = p.numel();
  if (options_.stage() == 1) {
    Tensor view = flat_grad_.narrow(0, offsets_[i], n).view(p.sizes());
    // Backward accumulates into the view in place; a .grad() the user set to none (or
    // replaced) is a new tensor, holding the whole sum: copy it in, and view again.
    if (!(grad.defined() && grad.data_ptr() == view.data_ptr() &&
          grad.strides() == view.strides())) {
      if (grad.defined()) view.copy_(grad);
      grad = view;
    }
  } else {
    const Tensor flat = grad.reshape({n});
    for (size_t bi : buckets_of_[i]) {
      Bucket& b = buckets_[bi];
      if (!b.buffer.defined()) b.buffer = zeros({b.length}, flat_.options());
      const int64_t lo = std::max(offsets_[i], b.start);
      const int64_t hi = std::min(offsets_[i] + n, b.start + b.length);
      b.buffer.narrow(0, lo - b.start, hi - lo).add_(flat.narrow(0, lo - offsets_[i], hi - lo));
    }
    grad = Tensor();  // stage 2 keeps no whole gradient
  }
  for (size_t bi : buckets_of_[i]) {
    Bucket& b = buckets_[bi];
    if (--b.remaining == 0) launch(b);
  }
}

void ZeroRedundancyOptimizer::launch(Bucket& b) {
  b.launched = true;
  if (options_.stage() == 1) {
    Tensor slice = flat_grad_.narrow(0, b.start, b.length);
    AllreduceOptions average;
    average.reduceOp = ReduceOp::AVG;
    b.work = group_->allreduce(slice, average);
    return;
  }
  if (!b.buffer.defined()) b.buffer = zeros({b.length}, flat_.options());
  b.reduced = empty({b.chunk}, flat_.options());
  ReduceScatterOptions average;
  average.reduceOp = ReduceOp::AVG;
  b.work = group_->reduce_scatter(b.reduced, b.buffer, average);
  in_flight_.push_back(&b);
  // Free what earlier buckets no longer need. When the transport is slower than backward,
  // whole buckets would pile up until the gradient was all there again: past
  // kBucketsInFlight, backward waits for the oldest.
  while (!in_flight_.empty() &&
         (in_flight_.front()->work->is_completed() || in_flight_.size() > kBucketsInFlight)) {
    harvest(*in_flight_.front());
    in_flight_.pop_front();
  }
}

void ZeroRedundancyOptimizer::harvest(Bucket& b) {
  b.work->wait();  // rethrows a failure
  b.work = nullptr;
  if (options_.stage() == 2) {
    grad_shard_.narrow(0, b.shard_offset, b.chunk).add_(b.reduced);
    b.buffer = Tensor();
    b.reduced = Tensor();
  }
}

void ZeroRedundancyOptimizer::finish_round() {
  NoGradGuard no_grad;
  // Buckets whose gradients did not all come (an unused parameter) go now, with what they
  // hold: every rank reaches this point with the same buckets left, in the same order.
  for (Bucket& b : buckets_)
    if (!b.launched) launch(b);
  in_flight_.clear();
  for (Bucket& b : buckets_) {
    if (b.work) harvest(b);
    b.launched = false;
    b.remaining = static_cast<int>(b.params.size());
  }
  round_open_ = false;
}

// [SECTION] step ---------------------------------------------------------------------------

void ZeroRedundancyOptimizer::step() {
  // The gradients were reduced when backward ended (finish_round); without a backward since
  // the last step they are what they were, the same on every rank.
  if (round_open_) finish_round();
  optimizer_->step();
  NoGradGuard no_grad;
  // Every bucket from its owners. An owned chunk lies inside the bucket it is gathered into,
  // so a copy is sent; two buckets in flight at most bounds those copies.
  std::deque<std::pair<std::shared_ptr<Work>, Tensor>> in_flight;
  for (size_t bi = 0; bi < buckets_.size(); ++bi) {
    const Bucket& b = buckets_[bi];
    Tensor mine = owned_[bi].detach().clone();
    Tensor whole = flat_.narrow(0, b.start, b.length);
    in_flight.emplace_back(group_->allgather(whole, mine), mine);
    if (in_flight.size() > 2) {
      in_flight.front().first->wait();
      in_flight.pop_front();
    }
  }
  for (auto& [work, sent] : in_flight) work->wait();
}

double ZeroRedundancyOptimizer::clip_grad_norm_(double max_norm, double norm_type,
                                                bool error_if_nonfinite) {
  if (round_open_) finish_round();
  std::vector<Tensor> owned_grads;
  for (const Tensor& o : owned_) owned_grads.push_back(o.grad());
  const double total = total_norm_across_ranks(
      nn::utils::detail::local_norm_share(owned_grads, norm_type), norm_type, *group_);
  // Stage 1 scales the whole flat gradient, so every .grad() the user reads agrees.
  nn::utils::detail::scale_to_max_norm({options_.stage() == 1 ? flat_grad_ : grad_shard_}, total,
                                       max_norm, error_if_nonfinite);
  return total;
}

void ZeroRedundancyOptimizer::zero_grad() {
  if (round_open_) finish_round();  // collectives in flight write into what is zeroed
  NoGradGuard no_grad;
  if (options_.stage() == 1) {
    flat_grad_.zero_();
  } else {
    grad_shard_.zero_();
  }
}

}  // namespace glass::distributed
