// distributed/ddp.h — DistributedDataParallel: the seed's five steps around any module.
//
//   auto model = Net();                                   // the same on every rank
//   nn::parallel::DistributedDataParallel ddp(model);     // 1. replica: rank 0's weights
//   for (auto& batch : loader)                            // 2. scatter: DistributedSampler
//     auto loss = loss_fn(ddp(batch.data), batch.target);  // 3. forward on the local batch
//     loss.backward();                                    // 4. backward; buckets all-reduce
//     optimizer.step();                                   // 5. update: identical everywhere
//
// Invariants: after construction every rank holds rank 0's parameters and buffers; after
// each synced backward every rank's gradients are the average over ranks (so the same
// optimizer step keeps the replicas bitwise equal); inside no_sync() gradients only
// accumulate locally, and the next synced backward reduces the accumulated sum.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/grad_mode.h"
#include "core/tensor.h"
#include "distributed/distributed.h"
#include "distributed/reducer.h"
#include "nn/module.h"

namespace glass::nn::parallel {

class DistributedDataParallelOptions {
 public:
  // Bucket sizes in MiB: the first bucket is small so the first all-reduce starts early.
  DistributedDataParallelOptions& bucket_cap_mb(double mb) {
    bucket_cap_mb_ = mb;
    return *this;
  }
  DistributedDataParallelOptions& first_bucket_cap_mb(double mb) {
    first_bucket_cap_mb_ = mb;
    return *this;
  }
  // Search the graph after each forward for parameters the loss does not use (this rank's
  // part for them is what their .grad() holds when backward starts: zero after zero_grad();
  // one that no rank used since the last sync keeps its .grad() untouched, as in PyTorch).
  // Costs one small all-reduce per synced backward. Off: such a parameter is an error that
  // names it.
  DistributedDataParallelOptions& find_unused_parameters(bool on) {
    find_unused_parameters_ = on;
    return *this;
  }
  // Copy rank 0's buffers (running statistics) to every rank at the start of each forward
  // run with grad mode on, in training and in eval alike, as PyTorch's DDP does: then every
  // rank also evaluates with the same statistics. A forward under NoGradGuard skips it (an
  // evaluation on rank 0 alone must run under no_grad, or call the module itself).
  DistributedDataParallelOptions& broadcast_buffers(bool on) {
    broadcast_buffers_ = on;
    return *this;
  }
  // Make each parameter's .grad() a view of its slot in the communication bucket: backward
  // then accumulates into the bucket itself, and no copy back follows the all-reduce (less
  // memory and one pass less over the gradients). As in PyTorch, a .grad() replaced by the
  // user (or set to none by zero_grad) is copied in once and becomes the view again.
  DistributedDataParallelOptions& gradient_as_bucket_view(bool on) {
    gradient_as_bucket_view_ = on;
    return *this;
  }
  double bucket_cap_mb() const { return bucket_cap_mb_; }
  double first_bucket_cap_mb() const { return first_bucket_cap_mb_; }
  bool find_unused_parameters() const { return find_unused_parameters_; }
  bool broadcast_buffers() const { return broadcast_buffers_; }
  bool gradient_as_bucket_view() const { return gradient_as_bucket_view_; }

 private:
  double bucket_cap_mb_ = 25;
  double first_bucket_cap_mb_ = 1;
  bool find_unused_parameters_ = false;
  bool broadcast_buffers_ = true;
  bool gradient_as_bucket_view_ = false;
};

// What does not depend on the module's type: the replica, the reducer, no_sync.
class DistributedDataParallelBase {
 public:
  DistributedDataParallelBase(std::shared_ptr<Module> module,
                              std::shared_ptr<distributed::ProcessGroup> group,
                              const DistributedDataParallelOptions& options);
  virtual ~DistributedDataParallelBase();

  // While the guard lives, backward passes accumulate gradients locally without
  // communicating (gradient accumulation); the first backward after it synchronises.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelBase& ddp) : ddp_(ddp), was_(ddp.sync_) {
      ddp_.sync_ = false;
    }
    ~NoSyncGuard() { ddp_.sync_ = was_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelBase& ddp_;
    bool was_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  distributed::Reducer& reducer() { return *reducer_; }
  const std::shared_ptr<distributed::ProcessGroup>& process_group() const { return group_; }
  const DistributedDataParallelOptions& options() const { return options_; }

 protected:
  void pre_forward();
  void post_forward(const std::vector<Tensor>& outputs);

 private:
  std::shared_ptr<Module> module_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<distributed::Reducer> reducer_;
  bool sync_ = true;
};

// ModuleT: a module holder (Linear, Sequential, a GLASS_MODULE of yours) or a
// std::shared_ptr to a module with a forward().
template <typename ModuleT>
class DistributedDataParallel : public DistributedDataParallelBase {
 public:
  explicit DistributedDataParallel(ModuleT module,
                                   std::shared_ptr<distributed::ProcessGroup> group = nullptr,
                                   const DistributedDataParallelOptions& options = {})
      : DistributedDataParallelBase(as_module(module), std::move(group), options),
        module_(std::move(module)) {}

  // Runs the module's forward with DDP's steps around it.
  template <typename... Args>
  decltype(auto) forward(Args&&... args) {
    pre_forward();
    decltype(auto) out = call(std::forward<Args>(args)...);
    post_forward(tensors_of(out));
    return out;
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  ModuleT& module() { return module_; }

 private:
  static std::shared_ptr<Module> as_module(const ModuleT& m) {
    if constexpr (requires { m.ptr(); })
      return m.ptr();
    else
      return m;
  }
  template <typename... Args>
  decltype(auto) call(Args&&... args) {
    if constexpr (requires { module_.ptr(); })
      return module_(std::forward<Args>(args)...);
    else
      return module_->forward(std::forward<Args>(args)...);
  }
  static std::vector<Tensor> tensors_of(const Tensor& t) { return {t}; }
  static std::vector<Tensor> tensors_of(const std::vector<Tensor>& ts) { return ts; }
  template <typename T>
  static std::vector<Tensor> tensors_of(const T&) {
    return {};  // outputs DDP cannot search: find_unused_parameters then finds nothing used
  }

  ModuleT module_;
};

}  // namespace glass::nn::parallel
