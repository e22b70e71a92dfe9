// nn/data/tensor_dataset.h — a Dataset over two tensors whose first dimension counts the
// examples, as torch.utils.data.TensorDataset(data, targets).
//
// Invariant: data.size(0) == targets.size(0) == size(). The dataset shares the tensors
// (no copy); get(i) returns views data[i], targets[i]; get_batch gathers a whole batch with
// one index_select per tensor, which copies B rows once instead of making B views and
// stacking them. To train on a slice, pass narrowed views:
//   TensorDataset(images.narrow(0, 0, 1000), labels.narrow(0, 0, 1000))
#pragma once

#include "nn/data/dataset.h"

namespace glass::data {

class TensorDataset : public Dataset {
 public:
  // data: (N, ...), targets: (N, ...).
  TensorDataset(Tensor data, Tensor targets);

  Example get(size_t index) override;
  size_t size() const override { return static_cast<size_t>(data_.size(0)); }
  Example get_batch(ArrayRef<size_t> indices) override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

}  // namespace glass::data
