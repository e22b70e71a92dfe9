// nn/utils/clip_grad.h — clipping gradients before the optimizer step (libtorch's
// torch::nn::utils::clip_grad_norm_ and clip_grad_value_).
//
//   loss.backward();
//   double norm = nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//   optimizer.step();
//
// The total norm is the p-norm of all gradients taken as one vector (computed as PyTorch
// does: each gradient's norm, then the norm of those). If it exceeds max_norm every gradient
// is scaled by max_norm / (total + 1e-6). Parameters without a gradient are skipped.
// Sharded gradients need the norm summed across ranks: for FSDP, distributed::
// clip_grad_norm_(model->parameters(), ...); for ZeRO, ZeroRedundancyOptimizer::clip_grad_norm_
// (its .grad()s are whole in stage 1, absent in stage 2). Both build on the pieces below.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace glass::nn::utils {

// Returns the total norm before clipping. norm_type: any p > 0, or INFINITY (the largest
// absolute value). error_if_nonfinite: throw if the norm is NaN or infinite (the gradients
// are then left as they were) instead of scaling them by a NaN.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

namespace detail {
// The pieces, for callers whose gradients live on several ranks: this process's share of the
// total — the sum of each gradient's norm to the power p, or (p = ∞) the largest norm — and
// the scaling once the total is known (it checks finiteness, and scales only when needed).
double local_norm_share(const std::vector<Tensor>& grads, double norm_type);
double total_norm_from_share(double share, double norm_type);
void scale_to_max_norm(const std::vector<Tensor>& grads, double total_norm, double max_norm,
                       bool error_if_nonfinite);
std::vector<Tensor> defined_grads(const std::vector<Tensor>& parameters);
}  // namespace detail

}  // namespace glass::nn::utils
