// distributed/fsdp.cpp — fully_shard: cutting a unit's parameters into rows, the gathers
// around its forward and backward, and the reduce-scatter of its gradients.
//
// [SECTION] which tensors belong to a unit  [SECTION] fully_shard  [SECTION] a unit at work
#include "distributed/fsdp.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autograd/engine.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "distributed/distributed.h"

namespace glass::distributed {

// [SECTION] which tensors belong to a unit -------------------------------------------------
//
// fully_shard is called on the inner units first; a unit higher up takes only what no unit
// below it has. The registry remembers which modules are units and which parameters are
// owned, for as long as their unit lives (ranks as threads share it: keys are their own
// modules' and tensors' addresses, never another rank's).
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<const nn::Module*> units;
  std::unordered_map<const TensorImpl*, RowShard> owned;  // each owned tensor's cut
};

Registry& registry() {
  static Registry r;
  return r;
}

// Every rank must cut the same shapes: compare them (count, then each parameter's sizes) and
// name the first parameter that differs and the ranks it differs on.
void check_same_shapes(const std::string& unit, const std::vector<FSDPUnit::Param>& params,
                       ProcessGroup& group) {
  constexpr int64_t kMaxDims = 8;
  const int world = group.size();
  Tensor count = full({1}, static_cast<int64_t>(params.size()), TensorOptions(kInt64));
  Tensor counts = empty({world}, TensorOptions(kInt64));
  group.allgather(counts, count)->wait();
  for (int r = 0; r < world; ++r) {
    GLASS_CHECK(counts.data_ptr<int64_t>()[r] == static_cast<int64_t>(params.size()),
                "fully_shard(", unit, "): rank ", group.rank(), " has ", params.size(),
                " parameters to shard but rank ", r, " has ", counts.data_ptr<int64_t>()[r]);
  }
  const auto n = static_cast<int64_t>(params.size());
  Tensor mine = full({n * (kMaxDims + 1)}, -1, TensorOptions(kInt64));
  int64_t* m = mine.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& p = params[static_cast<size_t>(i)].param;
    GLASS_CHECK(p.dim() <= kMaxDims, "fully_shard(", unit, "): parameter '",
                params[static_cast<size_t>(i)].name, "' has ", p.dim(), " dimensions; at most ",
                kMaxDims, " are supported");
    m[i * (kMaxDims + 1)] = p.dim();
    for (int64_t d = 0; d < p.dim(); ++d) m[i * (kMaxDims + 1) + 1 + d] = p.size(d);
  }
  Tensor all = empty({world * n * (kMaxDims + 1)}, TensorOptions(kInt64));
  group.allgather(all, mine)->wait();
  const int64_t* a = all.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* here = m + i * (kMaxDims + 1);
    for (int r = 0; r < world; ++r) {
      const int64_t* there = a + (r * n + i) * (kMaxDims + 1);
      if (std::equal(here, here + kMaxDims + 1, there)) continue;
      detail::throw_error(detail::str_cat(
          "fully_shard(", unit, "): parameter '", params[static_cast<size_t>(i)].name, "' is ",
          IntArrayRef(here + 1, static_cast<size_t>(here[0])), " on rank ", group.rank(), " but ",
          IntArrayRef(there + 1, static_cast<size_t>(there[0])), " on rank ", r,
          "; every rank must shard the same model"));
    }
  }
}

DimVector with_rows(const DimVector& sizes, int64_t rows) {
  DimVector out = sizes;
  out[0] = rows;
  return out;
}

}  // namespace

std::optional<RowShard> fsdp_row_shard(const Tensor& param) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.owned.find(param.unsafeGetTensorImpl());
  if (it == reg.owned.end()) return std::nullopt;
  return it->second;
}

// [SECTION] fully_shard ----------------------------------------------------------------------

std::shared_ptr<FSDPUnit> fully_shard(const std::shared_ptr<nn::Module>& module,
                                      FullyShardOptions options,
                                      std::shared_ptr<ProcessGroup> group) {
  GLASS_CHECK(module != nullptr, "fully_shard: the module is null");
  if (!group) group = default_group();
  const std::string unit = module->name();
  Registry& reg = registry();
  std::vector<FSDPUnit::Param> params;
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    GLASS_CHECK(reg.units.count(module.get()) == 0, "fully_shard(", unit,
                "): this module is a unit already");
    for (const auto& [name, t] : module->named_parameters()) {
      if (reg.owned.count(t.unsafeGetTensorImpl())) continue;  // a unit below has it
      GLASS_CHECK(t.dim() >= 1, "fully_shard(", unit, "): parameter '", name,
                  "' is 0-dimensional: there is no dim 0 to cut into rows");
      FSDPUnit::Param p;
      p.name = name;
      p.param = t;
      params.push_back(std::move(p));
    }
  }
  check_same_shapes(unit, params, *group);

  NoGradGuard no_grad;
  const int world = group->size(), rank = group->rank();
  for (FSDPUnit::Param& p : params) {
    if (options.sync_module_states) {
      Tensor whole = p.param.detach();
      group->broadcast(whole, BroadcastOptions{})->wait();
    }
    p.full_sizes = DimVector(p.param.sizes());
    const int64_t d0 = p.full_sizes[0];
    p.rows = (d0 + world - 1) / world;
    p.local_rows = std::clamp<int64_t>(d0 - rank * p.rows, 0, p.rows);
    const TensorOptions opts = p.param.options();
    p.shard = zeros(with_rows(p.full_sizes, p.rows), opts);
    if (p.local_rows > 0)
      p.shard.narrow(0, 0, p.local_rows).copy_(p.param.narrow(0, rank * p.rows, p.local_rows));
    p.padded_full = empty(with_rows(p.full_sizes, world * p.rows), opts);
    p.padded_full.storage().drop_bytes();  // bytes only while the unit runs
    p.full = p.padded_full.narrow(0, 0, d0);
    p.param.mutable_grad() = Tensor();
    p.param.set_data(p.shard.narrow(0, 0, p.local_rows));
  }
  // One order per thread: with the threads backend each rank is a thread with its units.
  thread_local std::shared_ptr<FSDPUnit::Order> order = std::make_shared<FSDPUnit::Order>();
  auto state = std::make_shared<FSDPUnit>(*module, std::move(params), group, options, order);
  if (state->params().empty()) return state;  // a root whose parameters the units below own
  module->register_forward_pre_hook(
      [state](nn::Module&, std::vector<Tensor>&) { state->before_forward(); });
  module->register_forward_hook(
      [state](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>&) { state->release(); });
  module->register_full_backward_pre_hook(
      [state](nn::Module&, std::vector<Tensor>&) { state->before_backward(); });
  return state;
}

FSDPUnit::FSDPUnit(nn::Module& module, std::vector<Param> params,
                   std::shared_ptr<ProcessGroup> group, FullyShardOptions options,
                   std::shared_ptr<Order> order)
    : module_(&module),
      module_name_(module.name()),
      params_(std::move(params)),
      group_(std::move(group)),
      options_(options),
      order_(std::move(order)) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.units.insert(&module);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param& p = params_[i];
    reg.owned[p.param.unsafeGetTensorImpl()] =
        RowShard{p.full_sizes, group_->rank() * p.rows, p.local_rows, p.rows};
    if (!p.param.requires_grad()) continue;  // frozen: sharded, never reduced
    hooks_of_.push_back(i);
    grad_hooks_.push_back(autograd::register_post_accumulate_grad_hook(
        params_[i].param, [this, i](const Tensor&) { on_gradient(i); }));
  }
}

FSDPUnit::~FSDPUnit() {
  for (auto& w : inflight_) {
    try {
      w->wait();  // the transport writes into our storage until then
    } catch (const std::exception&) {
      // Reported to whoever waits on the group's next collective; nothing to add here.
    }
  }
  auto& units = order_->units;
  units.erase(std::remove(units.begin(), units.end(), this), units.end());
  for (size_t k = 0; k < grad_hooks_.size(); ++k)
    autograd::remove_post_accumulate_grad_hook(params_[hooks_of_[k]].param, grad_hooks_[k]);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  for (const Param& p : params_) reg.owned.erase(p.param.unsafeGetTensorImpl());
  reg.units.erase(module_);  // the module is going (its hooks held this unit)
}

// [SECTION] a unit at work -------------------------------------------------------------------

FSDPUnit* FSDPUnit::neighbour(int step) const {
  const auto& units = order_->units;
  const auto it = std::find(units.begin(), units.end(), this);
  if (it == units.end()) return nullptr;
  const auto index = (it - units.begin()) + step;
  if (index < 0 || index >= static_cast<std::ptrdiff_t>(units.size())) return nullptr;
  return units[static_cast<size_t>(index)];
}

void FSDPUnit::before_forward() {
  // The first forward teaches the order; later ones follow it.
  auto& units = order_->units;
  if (std::find(units.begin(), units.end(), this) == units.end()) units.push_back(this);
  backward_done_ = false;
  gather();
  if (options_.forward_prefetch) {
    if (FSDPUnit* next = neighbour(+1); next && !next->gathered_ && next->inflight_.empty())
      next->start_gather();
  }
}

void FSDPUnit::start_gather() {
  NoGradGuard no_grad;
  for (Param& p : params_) {
    p.padded_full.storage().restore_bytes();
    inflight_.push_back(group_->allgather(p.padded_full, p.shard));
  }
}

void FSDPUnit::gather() {
  if (gathered_) return;
  if (inflight_.empty()) start_gather();  // not prefetched: gather now
  std::vector<std::shared_ptr<Work>> works;
  works.swap(inflight_);
  for (auto& w : works) w->wait();
  // The gather writes raw bytes, so the storage's version is where forward left it: what
  // forward saved for backward is usable again (core/storage.h).
  for (Param& p : params_) p.param.set_data(p.full);
  gathered_ = true;
}

void FSDPUnit::release() {
  if (!gathered_ || in_backward_) return;
  for (Param& p : params_) {
    p.param.set_data(p.shard.narrow(0, 0, p.local_rows));
    p.padded_full.storage().drop_bytes();
  }
  gathered_ = false;
}

void FSDPUnit::before_backward() {
  if (in_backward_) return;  // another output of the same call
  in_backward_ = true;
  autograd::queue_callback([this] { after_backward(); });
  // The gradient of the rows accumulated so far waits aside: backward now produces whole ones.
  for (Param& p : params_) {
    p.stashed_grad = p.param.grad();
    p.param.mutable_grad() = Tensor();
    p.got_grad = false;
  }
  pending_ = hooks_of_.size();
  gather();
  // Not a unit whose backward has run already (the root, whose outputs come first): its
  // next use is the next forward, after the optimizer has changed its rows.
  if (options_.backward_prefetch) {
    if (FSDPUnit* prev = neighbour(-1);
        prev && !prev->gathered_ && prev->inflight_.empty() && !prev->backward_done_)
      prev->start_gather();
  }
}

void FSDPUnit::on_gradient(size_t index) {
  Param& p = params_[index];
  if (!in_backward_ || p.got_grad) return;
  p.got_grad = true;
  if (--pending_ == 0) reduce_gradients();
}

void FSDPUnit::after_backward() {
  if (in_backward_) reduce_gradients();  // some parameter got no gradient: zeros for it
  // A gather prefetched for a backward that did not come (a unit this pass skipped) would be
  // stale by the next forward: wait for it and drop it.
  for (FSDPUnit* unit : order_->units) {
    if (unit->gathered_ || unit->inflight_.empty()) continue;
    for (auto& w : unit->inflight_) w->wait();
    unit->inflight_.clear();
    for (Param& p : unit->params_) p.padded_full.storage().drop_bytes();
  }
}

void FSDPUnit::reduce_gradients() {
  NoGradGuard no_grad;
  const int world = group_->size();
  for (Param& p : params_) {
    if (!p.param.requires_grad()) {  // frozen: back to its rows, no gradient
      p.param.set_data(p.shard.narrow(0, 0, p.local_rows));
      p.param.mutable_grad() = p.stashed_grad;
      p.stashed_grad = Tensor();
      p.padded_full.storage().drop_bytes();
      continue;
    }
    const Tensor& whole = p.param.grad();
    Tensor input;
    if (whole.defined() && p.full_sizes[0] == world * p.rows && whole.is_contiguous()) {
      input = whole;
    } else {
      input = zeros(p.padded_full.sizes(), p.shard.options());
      if (whole.defined()) input.narrow(0, 0, p.full_sizes[0]).copy_(whole);
    }
    Tensor reduced = empty(p.shard.sizes(), p.shard.options());
    ReduceScatterOptions average;
    average.reduceOp = ReduceOp::AVG;
    group_->reduce_scatter(reduced, input, average)->wait();
    Tensor mine = reduced.narrow(0, 0, p.local_rows);
    p.param.mutable_grad() = Tensor();  // the whole gradient goes
    p.param.set_data(p.shard.narrow(0, 0, p.local_rows));
    p.param.mutable_grad() = p.stashed_grad.defined() ? p.stashed_grad.add_(mine) : mine;
    p.stashed_grad = Tensor();
    p.padded_full.storage().drop_bytes();
  }
  gathered_ = false;
  in_backward_ = false;
  backward_done_ = true;
}

}  // namespace glass::distributed
