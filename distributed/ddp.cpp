// distributed/ddp.cpp — DistributedDataParallel's steps that do not depend on the module type.
#include "distributed/ddp.h"

#include "core/error.h"
#include "distributed/replicate.h"

namespace glass::nn::parallel {

DistributedDataParallelBase::DistributedDataParallelBase(
    std::shared_ptr<Module> module, std::shared_ptr<distributed::ProcessGroup> group,
    const DistributedDataParallelOptions& options)
    : module_(std::move(module)), group_(std::move(group)), options_(options) {
  GLASS_CHECK(module_ != nullptr, "DistributedDataParallel: the module is empty");
  if (group_ == nullptr) group_ = distributed::default_group();
  GLASS_CHECK(options.bucket_cap_mb() > 0 && options.first_bucket_cap_mb() > 0,
              "DistributedDataParallel: bucket sizes must be positive, got bucket_cap_mb = ",
              options.bucket_cap_mb(), ", first_bucket_cap_mb = ", options.first_bucket_cap_mb());
  std::vector<std::pair<std::string, Tensor>> params;
  for (auto& [name, p] : module_->named_parameters())
    if (p.requires_grad()) params.emplace_back(name, p);

  // 1. The replica: the same model everywhere, with rank 0's values.
  distributed::verify_params_across_ranks(*group_, params);
  std::vector<Tensor> state;
  for (auto& p : params) state.push_back(p.second);
  for (auto& b : module_->buffers()) state.push_back(b);
  distributed::broadcast_coalesced(*group_, state, 0);

  distributed::Reducer::Options r;
  r.bucket_cap_bytes = static_cast<size_t>(options.bucket_cap_mb() * (1 << 20));
  r.first_bucket_cap_bytes = static_cast<size_t>(options.first_bucket_cap_mb() * (1 << 20));
  r.find_unused_parameters = options.find_unused_parameters();
  r.gradient_as_bucket_view = options.gradient_as_bucket_view();
  reducer_ = std::make_unique<distributed::Reducer>(std::move(params), group_, r);
}

DistributedDataParallelBase::~DistributedDataParallelBase() = default;

void DistributedDataParallelBase::pre_forward() {
  if (!GradMode::is_enabled()) return;
  if (module_->is_training()) reducer_->prepare_for_forward();
  // PyTorch decides this by grad mode alone, not by train/eval: buffers are rank 0's at
  // every forward that autograd records.
  if (options_.broadcast_buffers()) {
    std::vector<Tensor> buffers = module_->buffers();
    if (!buffers.empty()) distributed::broadcast_coalesced(*group_, buffers, 0);
  }
}

void DistributedDataParallelBase::post_forward(const std::vector<Tensor>& outputs) {
  if (!module_->is_training() || !GradMode::is_enabled() || !sync_) {
    reducer_->disarm();
    return;
  }
  reducer_->prepare_for_backward(outputs);
}

}  // namespace glass::nn::parallel
