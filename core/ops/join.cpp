// core/ops/join.cpp — cat, stack, split, chunk (see join.h).
#include "core/ops/join.h"

#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/views.h"
#include "core/shape.h"
#include "core/type_promotion.h"

namespace glass {
namespace {

// PyTorch still accepts 1-D empty tensors in cat next to tensors of any rank.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

Tensor cat_native(TensorList tensors, int64_t dim) {
  GLASS_CHECK(!tensors.empty(), "cat(): expected a non-empty list of Tensors");
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    GLASS_CHECK(t.defined(), "cat(): expected defined tensors");
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  if (!ref) ref = &tensors[0];
  GLASS_CHECK(ref->dim() > 0,
              "cat(): zero-dimensional tensor (at position 0) cannot be concatenated "
              "(use stack, or unsqueeze it first)");
  int64_t d = wrap_dim(dim, ref->dim(), "cat");
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t) && &t != ref) continue;
    GLASS_CHECK(t.dim() == ref->dim(),
                "cat(): tensors must have the same number of dimensions: got ", ref->dim(), " and ",
                t.dim(), " (tensor number ", i, " in the list)");
    GLASS_CHECK(t.device() == ref->device(), "cat(): expected all tensors on the same device, got ",
                ref->device(), " and ", t.device(), " (tensor number ", i, ")");
    for (int64_t k = 0; k < t.dim(); ++k)
      GLASS_CHECK(k == d || t.size(k) == ref->size(k),
                  "cat(): sizes of tensors must match except in "
                  "dimension ",
                  d, ". Expected size ", ref->size(k), " but got size ", t.size(k),
                  " for tensor number ", i, " in the list (shapes ", ref->sizes(), " and ",
                  t.sizes(), ")");
    total += t.size(d);
  }
  Shape shape = ref->sizes().vec();
  shape[d] = total;
  Tensor out = empty(shape, TensorOptions(result_type(tensors)).device(ref->device()));
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t) && &t != ref) continue;
    int64_t n = t.size(d);
    detail::copy_into(out.narrow(d, offset, n), t);
    offset += n;
  }
  return out;
}

}  // namespace

namespace ops {
Op<Tensor(TensorList, int64_t)> cat("cat", &cat_native);
namespace {
const bool registered = dispatch::register_ops({&cat});
}  // namespace
}  // namespace ops

Tensor cat(TensorList tensors, int64_t dim) { return ops::cat(tensors, dim); }

Tensor stack(TensorList tensors, int64_t dim) {
  GLASS_CHECK(!tensors.empty(), "stack(): expected a non-empty list of Tensors");
  for (size_t i = 1; i < tensors.size(); ++i)
    GLASS_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                "stack(): stack expects each tensor to be "
                "equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return ops::cat(parts, d);
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  GLASS_CHECK(self.dim() > 0, "split(): expected at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t n = self.size(d);
  GLASS_CHECK(split_size > 0 || (split_size == 0 && n == 0),
              "split(): split_size can only be 0 if "
              "dimension size is 0, but got split_size ",
              split_size, " for dimension ", d, " of size ", n);
  std::vector<Tensor> out;
  if (n == 0) return {self};
  for (int64_t start = 0; start < n; start += split_size)
    out.push_back(self.narrow(d, start, std::min(split_size, n - start)));
  return out;
}

std::vector<Tensor> split(const Tensor& self, IntArrayRef sizes, int64_t dim) {
  GLASS_CHECK(self.dim() > 0, "split(): expected at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    GLASS_CHECK(s >= 0, "split(): split sizes must be non-negative, got ", sizes);
    total += s;
  }
  GLASS_CHECK(total == self.size(d), "split(): split sizes ", sizes, " sum to ", total,
              " but dimension ", d, " has size ", self.size(d));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(self.narrow(d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  GLASS_CHECK(self.dim() > 0, "chunk(): expected at least a 1-dimensional tensor");
  GLASS_CHECK(chunks > 0, "chunk(): chunks must be greater than 0, got ", chunks);
  int64_t d = wrap_dim(dim, self.dim(), "chunk");
  int64_t n = self.size(d);
  int64_t size = (n + chunks - 1) / chunks;
  return split(self, std::max<int64_t>(size, n == 0 ? 0 : 1), d);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return glass::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split(IntArrayRef sizes, int64_t dim) const {
  return glass::split(*this, sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return glass::chunk(*this, chunks, dim);
}

}  // namespace glass
