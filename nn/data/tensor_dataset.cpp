// nn/data/tensor_dataset.cpp — TensorDataset: checks at construction, views per example,
// one index_select per tensor per batch.
#include "nn/data/tensor_dataset.h"

#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"

namespace glass::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  GLASS_CHECK(data_.defined() && targets_.defined(), "TensorDataset: the ",
              data_.defined() ? "targets" : "data",
              " tensor is undefined; pass two tensors whose first dimension counts the examples");
  GLASS_CHECK(data_.dim() >= 1 && targets_.dim() >= 1, "TensorDataset: data (sizes ", data_.sizes(),
              ") and targets (sizes ", targets_.sizes(),
              ") need at least one dimension, the example index; use .unsqueeze(0) or "
              ".view({-1}) to add one");
  GLASS_CHECK(data_.size(0) == targets_.size(0), "TensorDataset: data has ", data_.size(0),
              " examples (sizes ", data_.sizes(), ") but targets has ", targets_.size(0),
              " (sizes ", targets_.sizes(),
              "); the first dimension counts the examples, so it must match");
}

Example TensorDataset::get(size_t index) {
  GLASS_CHECK(index < size(), "TensorDataset::get(): index ", index,
              " is out of range for a dataset of ", size(), " examples");
  const auto i = static_cast<int64_t>(index);
  return {data_.select(0, i), targets_.select(0, i)};
}

Example TensorDataset::get_batch(ArrayRef<size_t> indices) {
  GLASS_CHECK(!indices.empty(),
              "TensorDataset::get_batch(): got no indices; a batch needs at least one");
  Tensor index = empty({static_cast<int64_t>(indices.size())}, TensorOptions(kInt64));
  int64_t* out = index.data_ptr<int64_t>();
  for (size_t i = 0; i < indices.size(); ++i) {
    GLASS_CHECK(indices[i] < size(), "TensorDataset::get_batch(): index ", indices[i],
                " is out of range for a dataset of ", size(), " examples");
    out[i] = static_cast<int64_t>(indices[i]);
  }
  return {data_.index_select(0, index), targets_.index_select(0, index)};
}

}  // namespace glass::data
