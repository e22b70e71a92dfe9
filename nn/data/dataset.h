// nn/data/dataset.h — Example and Dataset, the indexable source a DataLoader draws from.
//
// A Dataset maps an index in [0, size()) to one Example {data, target}. A batch is the
// examples at a list of indices stacked along a new first dimension: data (B, ...),
// target (B, ...). get_batch() does that by calling get() per index; a dataset that holds
// whole tensors overrides it with one gather per tensor (tensor_dataset.h), which is what
// makes a training loop's input pipeline cheap.
//
//   struct Squares : glass::data::Dataset {
//     Example get(size_t i) override {
//       double x = static_cast<double>(i);
//       return {glass::tensor({x}), glass::tensor({x * x})};
//     }
//     size_t size() const override { return 100; }
//   };
#pragma once

#include <cstddef>

#include "core/array_ref.h"
#include "core/tensor.h"

namespace glass::data {

// One example, or (from get_batch) a batch of them. `target` may be undefined for data
// without labels.
struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  Dataset() = default;
  Dataset(const Dataset&) = default;
  Dataset& operator=(const Dataset&) = default;
  virtual ~Dataset() = default;

  // The example at `index`, 0 <= index < size().
  virtual Example get(size_t index) = 0;
  virtual size_t size() const = 0;

  // The examples at `indices` (at least one), stacked: data (B, ...), target (B, ...) with
  // B = indices.size(); target stays undefined if every example's target is. Every
  // example's data (and target) must have one shape.
  virtual Example get_batch(ArrayRef<size_t> indices);
};

}  // namespace glass::data
