// nn/functional/embedding.h — looking rows up in a table.
//
// out[i..., :] = weight[indices[i...], :]. The lookup is one index_select of the
// flattened indices, so its gradient is a scatter-add: an index that appears twice sends
// two gradients into the same row. padding_idx names a row whose gradient is always zero
// (its value is still returned), as PyTorch does for padding tokens.
#pragma once

#include <cstdint>
#include <optional>

#include "core/tensor.h"

namespace glass::nn::functional {

// indices: (*) Long or Int, each in [0, num_embeddings) · weight: (num_embeddings, dim)
// → (*, dim). A negative padding_idx counts from the end, as in PyTorch.
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt);

}  // namespace glass::nn::functional
