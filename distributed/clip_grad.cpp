// distributed/clip_grad.cpp — the norm of a gradient spread over ranks.
#include "distributed/clip_grad.h"

#include <cmath>

#include "core/ops/factories.h"
#include "distributed/distributed.h"
#include "nn/utils/clip_grad.h"

namespace glass::distributed {

double total_norm_across_ranks(double share, double norm_type, ProcessGroup& group) {
  Tensor t = full({1}, share, TensorOptions(kFloat64));
  AllreduceOptions combine;
  combine.reduceOp = std::isinf(norm_type) ? ReduceOp::MAX : ReduceOp::SUM;
  group.allreduce(t, combine)->wait();
  return nn::utils::detail::total_norm_from_share(t.data_ptr<double>()[0], norm_type);
}

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite, std::shared_ptr<ProcessGroup> group) {
  if (!group) group = default_group();
  const std::vector<Tensor> grads = nn::utils::detail::defined_grads(parameters);
  // Every rank takes part, with or without gradients of its own (a rank may hold no rows).
  const double total = total_norm_across_ranks(
      nn::utils::detail::local_norm_share(grads, norm_type), norm_type, *group);
  nn::utils::detail::scale_to_max_norm(grads, total, max_norm, error_if_nonfinite);
  return total;
}

}  // namespace glass::distributed
