// core/ops/join.h — joining tensors (cat, stack) and splitting them (split, chunk).
//
// cat and stack copy into one new tensor; split and chunk return views (narrow) of
// their input, so writing into a piece writes into the original.
#pragma once

#include <vector>

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);

namespace ops {
extern Op<Tensor(TensorList, int64_t)> cat;
}  // namespace ops

}  // namespace glass
