// distributed/replicate.h — making every rank's model the same before training starts.
//
// DDP's first step (the seed's "replica"): check that all ranks built the same model, then
// copy rank 0's parameters and buffers to everyone. Invariant: after broadcast_coalesced,
// every rank's tensors hold rank 0's bits; when ranks' models differ, every rank throws
// the same error, naming the first parameter that differs, its shapes and the ranks.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace glass::distributed {

// Compares (number, names' order aside: shapes and dtypes) of `params` across the group.
void verify_params_across_ranks(ProcessGroup& group,
                                const std::vector<std::pair<std::string, Tensor>>& params);

// Broadcasts `tensors` from `root` in as few collectives as possible: tensors of one dtype
// and device are packed into one flat buffer (up to buffer_bytes each), sent, and unpacked.
void broadcast_coalesced(ProcessGroup& group, const std::vector<Tensor>& tensors, int root = 0,
                         size_t buffer_bytes = 250u << 20);

}  // namespace glass::distributed
