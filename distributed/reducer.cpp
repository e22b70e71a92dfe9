// distributed/reducer.cpp — buckets, the ready hooks, and the end-of-backward wait.
#include "distributed/reducer.h"

#include <algorithm>
#include <unordered_map>

#include "autograd/engine.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"

namespace glass::distributed {

std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& params, const std::vector<size_t>& limits,
    const std::vector<size_t>& order) {
  GLASS_CHECK(!limits.empty(), "compute_bucket_assignment_by_size: no bucket size limits");
  GLASS_CHECK(order.size() == params.size(), "compute_bucket_assignment_by_size: the order has ",
              order.size(), " indices for ", params.size(), " parameters");
  // One open bucket per (dtype, device): a bucket is one flat tensor, so its parameters must
  // agree on both. A bucket closes when it reaches its cap.
  struct Open {
    std::vector<size_t> params;
    size_t bytes = 0;
  };
  std::vector<std::pair<std::string, Open>> open;  // keyed by dtype and device, in first-use order
  std::vector<std::vector<size_t>> result;
  auto cap = [&] { return limits[std::min(result.size(), limits.size() - 1)]; };
  for (size_t index : order) {
    GLASS_CHECK(index < params.size(), "compute_bucket_assignment_by_size: index ", index,
                " is out of range for ", params.size(), " parameters");
    const Tensor& p = params[index];
    std::string key = std::string(to_string(p.scalar_type())) + "@" + p.device().str();
    auto it = std::find_if(open.begin(), open.end(), [&](auto& kv) { return kv.first == key; });
    if (it == open.end()) it = open.insert(open.end(), {key, Open{}});
    it->second.params.push_back(index);
    it->second.bytes += static_cast<size_t>(p.numel()) * p.element_size();
    if (it->second.bytes >= cap()) {
      result.push_back(std::move(it->second.params));
      open.erase(it);
    }
  }
  for (auto& kv : open) result.push_back(std::move(kv.second.params));
  return result;
}

Reducer::Reducer(std::vector<std::pair<std::string, Tensor>> params,
                 std::shared_ptr<ProcessGroup> group, Options options)
    : params_(std::move(params)), group_(std::move(group)), options_(options) {
  GLASS_CHECK(group_ != nullptr, "DistributedDataParallel: no process group (call ",
              "init_process_group first, or pass a group)");
  GLASS_CHECK(!params_.empty(), "DistributedDataParallel: the module has no parameter that ",
              "requires grad");
  std::vector<Tensor> tensors;
  std::vector<size_t> reverse;
  for (size_t i = 0; i < params_.size(); ++i) {
    tensors.push_back(params_[i].second);
    reverse.push_back(params_.size() - 1 - i);
  }
  build_buckets(compute_bucket_assignment_by_size(
      tensors, {options_.first_bucket_cap_bytes, options_.bucket_cap_bytes}, reverse));
  if (options_.find_unused_parameters)
    local_used_ = zeros({static_cast<int64_t>(params_.size())}, TensorOptions().dtype(kInt32));
  for (size_t i = 0; i < params_.size(); ++i)
    hook_ids_.push_back(autograd::register_post_accumulate_grad_hook(
        params_[i].second, [this, i](const Tensor&) { mark_ready(i); }));
}

Reducer::~Reducer() {
  for (size_t i = 0; i < hook_ids_.size(); ++i)
    autograd::remove_post_accumulate_grad_hook(params_[i].second, hook_ids_[i]);
  // A bucket still in flight (backward threw) must finish before its buffer goes away.
  for (Bucket& b : buckets_) {
    if (b.work == nullptr) continue;
    try {
      b.work->wait();
    } catch (...) {
    }
  }
}

void Reducer::build_buckets(const std::vector<std::vector<size_t>>& assignment) {
  bucket_indices_ = assignment;
  buckets_.clear();
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (size_t b = 0; b < assignment.size(); ++b) {
    Bucket bucket;
    bucket.params = assignment[b];
    int64_t numel = 0;
    for (size_t slot = 0; slot < bucket.params.size(); ++slot) {
      const size_t i = bucket.params[slot];
      bucket_of_[i] = b;
      slot_of_[i] = slot;
      bucket.offsets.push_back(numel);
      numel += params_[i].second.numel();
    }
    const Tensor& first = params_[bucket.params.at(0)].second;
    bucket.flat = zeros({numel}, first.options().requires_grad(false));
    bucket.divisor = full({}, group_->size(), bucket.flat.options());
    buckets_.push_back(std::move(bucket));
  }
}

void Reducer::prepare_for_forward() {
  // Rebuild once, after the first synced iteration: by then the order in which gradients
  // became ready is known. Ranks may have seen slightly different orders, so rank 0's wins.
  if (rebuilt_ || iterations_ == 0) return;
  rebuilt_ = true;
  Tensor order = empty({static_cast<int64_t>(params_.size())}, TensorOptions().dtype(kLong));
  for (size_t k = 0; k < params_.size(); ++k)
    order.data_ptr<int64_t>()[k] =
        k < ready_order_.size() ? static_cast<int64_t>(ready_order_[k]) : int64_t{-1};
  group_->broadcast(order, BroadcastOptions{.rootRank = 0})->wait();
  std::vector<size_t> agreed;
  for (size_t k = 0; k < params_.size(); ++k) {
    const int64_t i = order.data_ptr<int64_t>()[k];
    if (i >= 0) agreed.push_back(static_cast<size_t>(i));
  }
  // Parameters that never became ready (unused ones) go last, in reverse registration order.
  std::vector<bool> seen(params_.size(), false);
  for (size_t i : agreed) seen[i] = true;
  for (size_t i = params_.size(); i-- > 0;)
    if (!seen[i]) agreed.push_back(i);
  std::vector<Tensor> tensors;
  for (auto& p : params_) tensors.push_back(p.second);
  build_buckets(compute_bucket_assignment_by_size(
      tensors, {options_.first_bucket_cap_bytes, options_.bucket_cap_bytes}, agreed));
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  // A backward that threw may have left all-reduces in flight: they must finish before this
  // one writes their buffers (their errors belong to that failed backward).
  for (Bucket& b : buckets_) {
    if (b.work == nullptr) continue;
    try {
      b.work->wait();
    } catch (...) {
    }
  }
  // Until a synced backward has finished, the recorded order starts again with each try.
  if (iterations_ == 0) ready_order_.clear();
  armed_ = true;
  callback_queued_ = false;
  next_bucket_ = 0;
  ready_.assign(params_.size(), false);
  unused_.clear();
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(timeline_mutex_);
    timeline_ = ReducerTimeline{};
    timeline_.buckets.resize(buckets_.size());
    for (size_t b = 0; b < buckets_.size(); ++b)
      timeline_.buckets[b].bytes =
          static_cast<size_t>(buckets_[b].flat.numel()) * buckets_[b].flat.element_size();
  }
  if (!options_.find_unused_parameters) return;

  // Walk the graph from the outputs; a parameter whose AccumulateGrad is never reached gets
  // no gradient in this backward. It is marked ready at backward's first gradient (see
  // mark_ready), not now: a zero_grad() between forward and backward must count.
  std::unordered_map<const TensorImpl*, size_t> index_of;
  for (size_t i = 0; i < params_.size(); ++i) index_of[params_[i].second.unsafeGetTensorImpl()] = i;
  std::vector<bool> reached(params_.size(), false);
  std::vector<autograd::Node*> stack;
  std::unordered_map<autograd::Node*, bool> visited;
  for (const Tensor& out : outputs) {
    const autograd::Edge edge = autograd::gradient_edge(out);
    if (edge.is_valid()) stack.push_back(edge.function.get());
  }
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (visited[node]) continue;
    visited[node] = true;
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node)) {
      auto it = index_of.find(acc->variable().unsafeGetTensorImpl());
      if (it != index_of.end()) reached[it->second] = true;
    }
    for (const autograd::Edge& e : node->next_edges())
      if (e.is_valid()) stack.push_back(e.function.get());
  }
  for (size_t i = 0; i < params_.size(); ++i)
    if (!reached[i]) unused_.push_back(i);
}

void Reducer::mark_ready(size_t index) {
  // Used since the last synced backward — under no_sync too, where the gradient accumulates
  // locally and is reduced with the next synced one.
  if (local_used_.defined()) local_used_.data_ptr<int32_t>()[index] = 1;
  if (!armed_) return;  // eval, no_sync, or a backward DDP's forward did not prepare
  if (!callback_queued_) {
    // The first gradient of this backward: start the clock and make sure backward() does not
    // return before every bucket is reduced.
    callback_queued_ = true;
    start_ = std::chrono::steady_clock::now();
    autograd::queue_callback([this] { finalize_backward(); });
    // The parameters forward did not use count now with what their .grad() holds — zero
    // after zero_grad(), a sum accumulated under no_sync() — as PyTorch marks them at its
    // first autograd hook. (If no parameter gets a gradient at all, nothing is reduced.)
    for (size_t i : unused_) {
      fill_slot(i, /*rebind=*/false);  // its .grad() is settled in finalize_backward
      ready_[i] = true;
      --buckets_[bucket_of_[i]].pending;
    }
    unused_.clear();
  }
  const std::string& name = params_[index].first;
  GLASS_CHECK(!ready_[index], "DistributedDataParallel: parameter '", name,
              "' received a gradient twice in one backward pass; with find_unused_parameters ",
              "a parameter found unused after forward must not get one (is part of the graph ",
              "built outside DDP's forward?)");
  if (iterations_ == 0) ready_order_.push_back(index);
  ready_[index] = true;
  fill_slot(index);
  --buckets_[bucket_of_[index]].pending;
  launch_ready_buckets();
}

Tensor Reducer::slot_of(size_t index) const {
  const Bucket& b = buckets_[bucket_of_[index]];
  return b.flat.narrow(0, b.offsets[slot_of_[index]], params_[index].second.numel());
}

void Reducer::fill_slot(size_t index, bool rebind) {
  Tensor& param = params_[index].second;
  const Bucket& b = buckets_[bucket_of_[index]];
  Tensor slot = slot_of(index);
  NoGradGuard no_grad;
  const Tensor& grad = param.grad();
  // Averaging: each rank divides before the sum (as PyTorch does), so a half-precision sum
  // cannot overflow; dividing while copying costs no extra pass over the bucket.
  const bool is_slot = grad.defined() && grad.is_alias_of(slot) &&
                       grad.storage_offset() == slot.storage_offset() && grad.is_contiguous();
  if (is_slot) {
    slot.div_(b.divisor);  // backward accumulated into the bucket itself
    return;
  }
  if (grad.defined())
    div_out(slot, grad.reshape({-1}), b.divisor);
  else
    slot.zero_();
  if (options_.gradient_as_bucket_view && rebind) param.mutable_grad() = slot.view(param.sizes());
}

void Reducer::launch_ready_buckets() {
  // In bucket order only: every rank must issue its all-reduces in the same order.
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    const size_t index = next_bucket_++;
    Bucket& b = buckets_[index];
    if (events::enabled())
      events::publish({.kind = events::Kind::BucketReady,
                       .name = "ddp_bucket",
                       .device = b.flat.device(),
                       .bytes = b.flat.numel() * static_cast<int64_t>(b.flat.element_size()),
                       .value = static_cast<int64_t>(index)});
    {
      std::lock_guard<std::mutex> lock(timeline_mutex_);
      timeline_.buckets[index].ready = seconds_since_start();
    }
    b.work = group_->allreduce(b.flat);
    b.work->then([this, index](Work&) {
      std::lock_guard<std::mutex> lock(timeline_mutex_);
      if (index < timeline_.buckets.size())
        timeline_.buckets[index].finished = seconds_since_start();
    });
  }
}

void Reducer::finalize_backward() {
  {
    std::lock_guard<std::mutex> lock(timeline_mutex_);
    timeline_.backward_done = seconds_since_start();
  }
  armed_ = false;
  if (next_bucket_ < buckets_.size()) {
    // Some parameter never got a gradient: name it, as PyTorch's message does.
    std::string unused;
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) unused += (unused.empty() ? "" : ", ") + params_[i].first;
    // The buckets already started must still finish before anything else uses the group.
    for (Bucket& b : buckets_)
      if (b.work) b.work->wait();
    GLASS_CHECK(false, "DistributedDataParallel: on rank ", group_->rank(),
                ", these parameters received no gradient in this backward pass: ", unused,
                ". If your model has parameters that are not used in producing the loss, ",
                "construct DDP with find_unused_parameters = true");
  }
  // With find_unused_parameters: which parameters any rank used since the last synced
  // backward. One that no rank used keeps its .grad() as it was (undefined stays undefined,
  // as in PyTorch): a zero written there would still move it under momentum or weight decay.
  // Every rank issues this after all its buckets, so the order of collectives agrees.
  Tensor used_anywhere;
  if (local_used_.defined()) {
    used_anywhere = local_used_.clone();
    group_->allreduce(used_anywhere)->wait();
    local_used_.zero_();
  }
  NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    b.work->wait();
    for (size_t slot = 0; slot < b.params.size(); ++slot) {
      if (used_anywhere.defined() && used_anywhere.data_ptr<int32_t>()[b.params[slot]] == 0)
        continue;
      Tensor& param = params_[b.params[slot]].second;
      Tensor averaged = b.flat.narrow(0, b.offsets[slot], param.numel()).view(param.sizes());
      if (options_.gradient_as_bucket_view)
        param.mutable_grad() = averaged;  // already so, unless an unused one had none
      else if (param.grad().defined())
        param.mutable_grad().copy_(averaged);
      else
        param.mutable_grad() = averaged.clone();
    }
    b.work = nullptr;
  }
  ++iterations_;
  std::lock_guard<std::mutex> lock(timeline_mutex_);
  timeline_.all_done = seconds_since_start();
}

double Reducer::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

ReducerTimeline Reducer::last_timeline() const {
  std::lock_guard<std::mutex> lock(timeline_mutex_);
  return timeline_;
}

}  // namespace glass::distributed
