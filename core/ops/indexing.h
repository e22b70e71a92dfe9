// core/ops/indexing.h — selecting and writing elements by index tensors or masks.
//
// All of these reduce to two kernels of the contract: index (read) and index_put
// (write), over a TensorIterator in which the source is *restrided* — the indexed
// dims are replaced by the index tensors' broadcast shape with stride 0 — so the
// kernel only adds idx * stride per element. Index values are checked (and negative
// ones wrapped) before any kernel runs, so a bad index never writes anything.
#pragma once

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index(const Tensor& self, TensorList indices);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);

namespace ops {
extern Op<Tensor(const Tensor&, TensorList)> index;
extern Op<Tensor&(Tensor&, TensorList, const Tensor&, bool)> index_put_;
extern Op<Tensor(const Tensor&, int64_t, const Tensor&)> gather;
extern Op<Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&)> scatter_add_;
extern Op<Tensor(const Tensor&)> nonzero;
}  // namespace ops

}  // namespace glass
