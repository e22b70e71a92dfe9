// distributed/clip_grad.h — clip_grad_norm_ for gradients sharded across ranks.
//
// With FSDP each rank holds the gradient of its own rows (ZeRO's chunks are clipped by
// ZeroRedundancyOptimizer::clip_grad_norm_: its parameters' .grad()s are whole in stage 1,
// absent in stage 2, so this function would miscount them). Every element of the whole
// gradient is then on exactly one rank, so the total norm is
// each rank's share (the sum of its gradients' norms to the power p, or for p = ∞ the
// largest) all-reduced — summed, or maxed — and every rank scales its own gradients by the
// same coefficient (nn/utils/clip_grad.h does the rest, as for one process).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace glass::distributed {

// Collective. `parameters`: this rank's FSDP parameters, model->parameters() after
// fully_shard. Returns the total norm, the same on every rank. `group`: the default if null.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false,
                       std::shared_ptr<ProcessGroup> group = nullptr);

// The total norm from every rank's share of it (nn::utils::detail::local_norm_share).
double total_norm_across_ranks(double share, double norm_type, ProcessGroup& group);

}  // namespace glass::distributed
