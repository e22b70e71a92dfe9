// core/ops/views.h — view ops: new metadata over the same Storage, no copy.
//
// Invariant: every function here returns a tensor that shares its input's Storage
// (t.is_alias_of(result)) and bumps no version counter; only the (sizes, strides,
// offset) triple changes — see the stride table in lessons/02_storage_and_strides.
// contiguous() and reshape() are listed here because they are views *when they can be*:
// contiguous() returns the tensor itself if it is already contiguous, reshape() returns
// a view when view_strides() finds one and copies otherwise.
#pragma once

#include <optional>

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor clone(const Tensor& self);
// Expands each tensor to their common broadcast shape (views; stride 0 where expanded).
std::vector<Tensor> broadcast_tensors(TensorList tensors);

// The seed's address formula, evaluated for one element of `t`: the storage element
// index (offset + sum_d index[d] * stride[d]) where t[index] lives.
int64_t storage_index(const Tensor& t, IntArrayRef index);

// The dispatched primitives behind the functions above (autograd and the tracer hook
// into these; composite functions such as reshape or narrow are built from them).
namespace ops {
extern Op<Tensor(const Tensor&, IntArrayRef)> view;
extern Op<Tensor(const Tensor&, IntArrayRef, IntArrayRef, int64_t)> as_strided;
extern Op<Tensor(const Tensor&, int64_t, int64_t)> transpose;
extern Op<Tensor(const Tensor&, IntArrayRef)> permute;
extern Op<Tensor(const Tensor&, IntArrayRef)> expand;
extern Op<Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t)> slice;
extern Op<Tensor(const Tensor&, int64_t, int64_t)> select;
extern Op<Tensor(const Tensor&, std::optional<int64_t>)> squeeze;
extern Op<Tensor(const Tensor&, int64_t)> unsqueeze;
extern Op<Tensor(const Tensor&, int64_t, int64_t, int64_t)> diagonal;
extern Op<Tensor(const Tensor&, int64_t, int64_t, int64_t)> unfold;
extern Op<Tensor(const Tensor&)> alias;   // detach(): same data, no history
extern Op<Tensor(const Tensor&)> t;       // transpose(0, 1), or an alias below 2 dims
extern Op<Tensor(const Tensor&)> detach;  // an alias autograd never sees: no history
extern Op<Tensor(const Tensor&)> clone;   // a contiguous copy
}  // namespace ops

}  // namespace glass
