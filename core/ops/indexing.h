// core/ops/indexing.h — selecting and writing elements by index tensors or masks.
//
// All of these reduce to two kernels of the contract: index (read) and index_put
// (write), over a TensorIterator in which the source is *restrided* — the indexed
// dims are replaced by the index tensors' broadcast shape with stride 0 — so the
// kernel only adds idx * stride per element. The kernels check (and wrap) the index
// values themselves, so no op here reads an index on the host: Note [Index errors are
// found by the kernel] in core/device_kernels.h says when a bad index is reported.
#pragma once

#include <string>

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index(const Tensor& self, TensorList indices);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);

// The error every index kernel gives for a bad index value:
//   "gather(): index 4 is out of bounds for dimension 1 with size 4",
// or the op's own wording when it registered one.
std::string index_error_message(const char* op, int64_t index, int64_t dim, int64_t size);
using IndexErrorFormat = std::string (*)(int64_t index, int64_t dim, int64_t size);
// A composite built on index or gather may word the message in its own terms (embedding
// speaks of its table, nll_loss of classes). Registered once, at start-up.
void register_index_error_format(const char* op, IndexErrorFormat format);

// Inside this scope, the index and gather kernels report bad indices under `op` (and
// index does not wrap negative values unless wrap_negative): how index_select, embedding
// and the class losses name themselves although they run ops::index / ops::gather
// through the dispatcher. The outermost scope wins (embedding calls index_select).
// Per host thread; it affects only the forward kernels run while it lives.
class IndexOpScope {
 public:
  IndexOpScope(const char* op, bool wrap_negative);
  ~IndexOpScope();
  IndexOpScope(const IndexOpScope&) = delete;
  IndexOpScope& operator=(const IndexOpScope&) = delete;
  static const IndexOpScope* current();
  const char* op() const { return op_; }
  bool wrap_negative() const { return wrap_negative_; }

 private:
  const char* op_;
  bool wrap_negative_;
  bool active_;  // false when an outer scope already names the op
};

namespace ops {
extern Op<Tensor(const Tensor&, TensorList)> index;
extern Op<Tensor&(Tensor&, TensorList, const Tensor&, bool)> index_put_;
extern Op<Tensor(const Tensor&, int64_t, const Tensor&)> gather;
extern Op<Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&)> scatter_add_;
extern Op<Tensor(const Tensor&)> nonzero;
}  // namespace ops

}  // namespace glass
