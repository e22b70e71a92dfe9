// core/ops/indexing.cpp — advanced indexing, gather and scatter (see indexing.h).
//
// [SECTION] checks and restriding    [SECTION] native implementations
// [SECTION] public functions          [SECTION] Tensor methods
#include "core/ops/indexing.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"
#include "core/shape.h"
#include "core/tensor_iterator.h"

namespace glass {
namespace {

// [SECTION] checks and restriding -------------------------------------------------------

// The scope's op name and wrapping rule, or the op's own.
IndexArgs index_args(const char* op, bool wrap_negative) {
  IndexArgs args;
  const IndexOpScope* scope = IndexOpScope::current();
  args.op = scope ? scope->op() : op;
  args.wrap_negative = scope ? scope->wrap_negative() : wrap_negative;
  return args;
}

Tensor as_long_index(const Tensor& idx, const char* op) {
  GLASS_CHECK(idx.dtype() == kInt64 || idx.dtype() == kInt32, op,
              "(): tensors used as indices must be Long, Int or Bool tensors, got ",
              to_string(idx.dtype()));
  return idx.to(kInt64);
}

// The indexing plan: the tensor to read/write (permuted when the indexed dims are not
// adjacent), the block [begin, end) of its dims that are indexed, the wrapped index
// tensors, and their broadcast shape.
struct IndexPlan {
  Tensor self;
  int64_t begin = 0, end = 0;
  std::vector<Tensor> indices;  // one per indexed dim, Long, values unchecked
  Shape index_shape;
  Shape result_shape;
  SmallVector<IndexedDim, 4> dims;  // stride, size and number of each indexed dim
};

IndexPlan make_plan(const Tensor& self, TensorList raw, const char* op) {
  GLASS_CHECK(self.defined(), op, "(): expected a defined tensor");
  // Expand Bool masks into one Long index tensor per masked dim.
  std::vector<Tensor> per_dim;
  for (const Tensor& t : raw) {
    if (t.defined() && t.dtype() == kBool) {
      int64_t at = static_cast<int64_t>(per_dim.size());
      GLASS_CHECK(at + t.dim() <= self.dim(), op, "(): too many indices for tensor of dimension ",
                  self.dim());
      for (int64_t d = 0; d < t.dim(); ++d)
        GLASS_CHECK(t.size(d) == self.size(at + d), op, "(): the shape of the mask ", t.sizes(),
                    " at index ", d, " does not match the shape of the indexed tensor ",
                    self.sizes(), " at index ", at + d);
      Tensor nz = nonzero(t);  // (n, mask.dim())
      for (int64_t d = 0; d < t.dim(); ++d) per_dim.push_back(nz.select(1, d));
      if (t.dim() == 0) per_dim.push_back(Tensor());  // a 0-dim mask indexes nothing here
    } else {
      per_dim.push_back(t);
    }
  }
  GLASS_CHECK(static_cast<int64_t>(per_dim.size()) <= self.dim(), op,
              "(): too many indices for tensor "
              "of dimension ",
              self.dim(), " (got ", per_dim.size(), ")");
  std::vector<int64_t> dims;
  for (size_t d = 0; d < per_dim.size(); ++d)
    if (per_dim[d].defined()) dims.push_back(static_cast<int64_t>(d));
  GLASS_CHECK(!dims.empty(), op, "(): expected at least one defined index tensor");

  IndexPlan p;
  p.self = self;
  const std::vector<int64_t> original_dims = dims;  // what an error message names
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  if (!adjacent) {
    // NumPy's rule: separated advanced indices move the result dims to the front.
    Shape order(dims.begin(), dims.end());
    for (int64_t d = 0; d < self.dim(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) order.push_back(d);
    p.self = self.permute(order);
    std::vector<Tensor> moved;
    for (int64_t d : dims) moved.push_back(per_dim[d]);
    per_dim = moved;
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
  }
  p.begin = dims.front();
  p.end = dims.back() + 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    Tensor idx = as_long_index(per_dim[d], op);
    // CPU indices of a device tensor are copied over, as in PyTorch (x_cuda[cpu_idx]);
    // indices on another device are an error.
    GLASS_CHECK(idx.device() == self.device() || idx.is_cpu(), op, "(): the indices are on ",
                idx.device(), " but the indexed tensor is on ", self.device(),
                "; move them with .to(", self.device(), ")");
    if (idx.device() != self.device()) idx = idx.to(self.device());
    p.index_shape = broadcast_shapes(p.index_shape, idx.sizes(), op);
    p.indices.push_back(idx);
    p.dims.push_back(IndexedDim{p.self.stride(d), p.self.size(d), original_dims[i]});
  }
  for (int64_t d = 0; d < p.begin; ++d) p.result_shape.push_back(p.self.size(d));
  p.result_shape.insert(p.result_shape.end(), p.index_shape.begin(), p.index_shape.end());
  for (int64_t d = p.end; d < p.self.dim(); ++d) p.result_shape.push_back(p.self.size(d));
  return p;
}

// self with the indexed block replaced by index_shape at stride 0.
Tensor restride(const IndexPlan& p) {
  Shape strides;
  for (int64_t d = 0; d < p.begin; ++d) strides.push_back(p.self.stride(d));
  strides.insert(strides.end(), p.index_shape.size(), 0);
  for (int64_t d = p.end; d < p.self.dim(); ++d) strides.push_back(p.self.stride(d));
  return p.self.as_strided(p.result_shape, strides, p.self.storage_offset());
}

// An index tensor lined up with the result dims: leading and trailing size-1 dims.
Tensor aligned(const IndexPlan& p, const Tensor& idx) {
  Tensor t = idx.expand(p.index_shape);
  for (int64_t d = 0; d < p.begin; ++d) t = t.unsqueeze(0);
  while (t.dim() < static_cast<int64_t>(p.result_shape.size())) t = t.unsqueeze(-1);
  return t;
}

// [SECTION] native implementations -------------------------------------------------------

Tensor index_native(const Tensor& self, TensorList indices) {
  IndexPlan p = make_plan(self, indices, "index");
  TensorIteratorConfig cfg("index");
  cfg.add_output(Tensor()).add_const_input(restride(p)).declare_static_common_dtype(self.dtype());
  for (const Tensor& idx : p.indices) cfg.add_const_input(aligned(p, idx));
  TensorIterator iter = cfg.build();
  IndexArgs args = index_args("index", true);
  args.dims = p.dims;
  kernels_for(iter.device()).index(iter, args);
  return iter.output();
}

Tensor& index_put_native(Tensor& self, TensorList indices, const Tensor& values, bool accumulate) {
  GLASS_CHECK(values.defined(), "index_put_(): expected a defined values tensor");
  IndexPlan p = make_plan(self, indices, "index_put_");
  GLASS_CHECK(is_expandable_to(values.sizes(), p.result_shape),
              "index_put_(): shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", IntArrayRef(p.result_shape));
  GLASS_CHECK(
      can_cast(values.dtype(), self.dtype()) || values.unsafeGetTensorImpl()->is_wrapped_number(),
      "index_put_(): values of dtype ", to_string(values.dtype()),
      " can't be cast to the tensor's dtype ", to_string(self.dtype()));
  // A 0-dim CPU value (x_cuda[mask] = 1.0) becomes a fill on the device: copying it over
  // would make the host wait for the copy. Reading it is a host read, not a sync.
  Tensor v = values.is_cpu() && !self.is_cpu() && values.dim() == 0
                 ? full({}, values.item(), self.options())
                 : values.to(self.dtype());
  v = v.expand(p.result_shape);
  TensorIteratorConfig cfg("index_put_");
  cfg.add_output(restride(p))
      .add_const_input(v)
      .check_mem_overlap(false)
      .declare_static_common_dtype(self.dtype());
  for (const Tensor& idx : p.indices) cfg.add_const_input(aligned(p, idx));
  TensorIterator iter = cfg.build();
  IndexArgs args;
  args.op = "index_put_";
  args.dims = p.dims;
  kernels_for(iter.device()).index_put(iter, args, accumulate);
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

void check_gather_shapes(const Tensor& self, int64_t d, const Tensor& index, const char* op,
                         const Tensor* src = nullptr) {
  GLASS_CHECK(index.device() == self.device(), op,
              "(): expected the index on the tensor's device, ", self.device(), ", but it is on ",
              index.device(), "; move it with .to(", self.device(), ")");
  GLASS_CHECK(!src || src->device() == self.device(), op,
              "(): expected src on the tensor's device, ", self.device(), ", but it is on ",
              src->device());
  GLASS_CHECK(index.dtype() == kInt64, op, "(): expected dtype Long for index, got ",
              to_string(index.dtype()));
  GLASS_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), op,
              "(): index tensor must have the same number of dimensions as the input tensor (",
              index.dim(), " vs ", self.dim(), ")");
  for (int64_t i = 0; i < index.dim(); ++i) {
    if (i != d)
      GLASS_CHECK(index.size(i) <= self.size(i), op, "(): size of index ", index.sizes(),
                  " does not fit the input ", self.sizes(), " at dim ", i);
    if (src)
      GLASS_CHECK(index.size(i) <= src->size(i), op, "(): size of index ", index.sizes(),
                  " does not fit src ", src->sizes(), " at dim ", i);
  }
}

// self viewed with index's sizes and stride 0 along dim (the kernel adds idx * stride).
Tensor restride_along(const Tensor& self, int64_t d, const Tensor& index) {
  Shape strides = self.strides().vec();
  if (!strides.empty()) strides[d] = 0;
  return self.as_strided(index.sizes(), strides, self.storage_offset());
}

// The one indexed dim of gather / scatter_add (a 0-dim self is indexed as size 1).
IndexedDim along(const Tensor& self, int64_t d) {
  if (self.dim() == 0) return IndexedDim{0, 1, d};
  return IndexedDim{self.stride(d), self.size(d), d};
}

Tensor gather_native(const Tensor& self, int64_t dim, const Tensor& index) {
  GLASS_CHECK(self.defined() && index.defined(), "gather(): expected defined tensors");
  int64_t d = wrap_dim(dim, self.dim(), "gather");
  check_gather_shapes(self, d, index, "gather");
  TensorIteratorConfig cfg("gather");
  cfg.add_output(Tensor())
      .add_const_input(restride_along(self, d, index))
      .add_const_input(index)
      .declare_static_common_dtype(self.dtype());
  TensorIterator iter = cfg.build();
  IndexArgs args = index_args("gather", false);
  args.wrap_negative = false;  // gather never wraps, whoever names the op
  args.dims.push_back(along(self, d));
  kernels_for(iter.device()).index(iter, args);
  return iter.output();
}

Tensor& scatter_add_native(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  GLASS_CHECK(self.defined() && index.defined() && src.defined(),
              "scatter_add_(): expected defined tensors");
  int64_t d = wrap_dim(dim, self.dim(), "scatter_add_");
  check_gather_shapes(self, d, index, "scatter_add_", &src);
  GLASS_CHECK(src.dtype() == self.dtype(),
              "scatter_add_(): expected self and src to have the same "
              "dtype, got ",
              to_string(self.dtype()), " and ", to_string(src.dtype()));
  Tensor values = src.as_strided(index.sizes(), src.strides(), src.storage_offset());
  TensorIteratorConfig cfg("scatter_add_");
  cfg.add_output(restride_along(self, d, index))
      .add_const_input(values)
      .add_const_input(index)
      .check_mem_overlap(false)
      .declare_static_common_dtype(self.dtype());
  TensorIterator iter = cfg.build();
  IndexArgs args;
  args.op = "scatter_add_";
  args.wrap_negative = false;
  args.dims.push_back(along(self, d));
  kernels_for(iter.device()).index_put(iter, args, true);
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

Tensor nonzero_native(const Tensor& self) {
  GLASS_CHECK(self.defined(), "nonzero(): expected a defined tensor");
  return kernels_for(self.device()).nonzero(self.contiguous());
}

}  // namespace

// [SECTION] index errors and the op-name scope --------------------------------------------

namespace {
std::mutex g_formats_mutex;
std::map<std::string, IndexErrorFormat, std::less<>>& formats() {
  static std::map<std::string, IndexErrorFormat, std::less<>> m;
  return m;
}
thread_local const IndexOpScope* t_index_scope = nullptr;
}  // namespace

std::string index_error_message(const char* op, int64_t index, int64_t dim, int64_t size) {
  {
    std::lock_guard<std::mutex> lock(g_formats_mutex);
    auto it = formats().find(std::string_view(op));
    if (it != formats().end()) return it->second(index, dim, size);
  }
  return detail::str_cat(op, "(): index ", index, " is out of bounds for dimension ", dim,
                         " with size ", size);
}

void register_index_error_format(const char* op, IndexErrorFormat format) {
  std::lock_guard<std::mutex> lock(g_formats_mutex);
  formats()[op] = format;
}

IndexOpScope::IndexOpScope(const char* op, bool wrap_negative)
    : op_(op), wrap_negative_(wrap_negative), active_(t_index_scope == nullptr) {
  if (active_) t_index_scope = this;
}
IndexOpScope::~IndexOpScope() {
  if (active_) t_index_scope = nullptr;
}
const IndexOpScope* IndexOpScope::current() { return t_index_scope; }

namespace ops {
Op<Tensor(const Tensor&, TensorList)> index("index", &index_native);
Op<Tensor&(Tensor&, TensorList, const Tensor&, bool)> index_put_("index_put_", &index_put_native);
Op<Tensor(const Tensor&, int64_t, const Tensor&)> gather("gather", &gather_native);
Op<Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&)> scatter_add_("scatter_add_",
                                                                         &scatter_add_native);
Op<Tensor(const Tensor&)> nonzero("nonzero", &nonzero_native);
namespace {
const bool registered =
    dispatch::register_ops({&index, &index_put_, &gather, &scatter_add_, &nonzero});
}  // namespace
}  // namespace ops

// [SECTION] public functions ----------------------------------------------------------------

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  GLASS_CHECK(self.defined() && index.defined(), "index_select(): expected defined tensors");
  GLASS_CHECK(index.dim() <= 1, "index_select(): index should have 1 dimension, got ", index.dim(),
              " (shape ", index.sizes(), ")");
  GLASS_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32,
              "index_select(): expected dtype Long or Int for index, got ",
              to_string(index.dtype()));
  // PyTorch's index_select does not wrap negative indices; the kernel rejects them.
  IndexOpScope scope("index_select", false);
  if (self.dim() == 0)
    return ops::index(self.reshape({1}), {index.reshape({-1})}).reshape(index.sizes());
  int64_t d = wrap_dim(dim, self.dim(), "index_select");
  Tensor idx = index.reshape({-1});
  std::vector<Tensor> indices(d + 1);
  indices[d] = idx;
  Tensor out = ops::index(self, indices);
  return index.dim() == 0 ? out.squeeze(d) : out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  return ops::gather(self, dim, index);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = ops::clone(self);
  ops::scatter_add_(out, dim, index, src);
  return out;
}
Tensor index(const Tensor& self, TensorList indices) { return ops::index(self, indices); }
Tensor masked_select(const Tensor& self, const Tensor& mask) {
  GLASS_CHECK(mask.defined() && mask.dtype() == kBool, "masked_select(): expected a Bool mask");
  auto b = broadcast_tensors({self, mask});
  return ops::index(b[0], {b[1]});
}
Tensor nonzero(const Tensor& self) { return ops::nonzero(self); }

// [SECTION] Tensor methods ------------------------------------------------------------------

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return glass::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ops::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return glass::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return ops::scatter_add_(*this, dim, index, src);
}
Tensor Tensor::index(TensorList indices) const { return ops::index(*this, indices); }
Tensor& Tensor::index_put_(TensorList indices, const Tensor& values, bool accumulate) {
  return ops::index_put_(*this, indices, values, accumulate);
}
Tensor& Tensor::index_put_(TensorList indices, const Scalar& value) {
  return ops::index_put_(*this, indices, wrapped_scalar_tensor(value), false);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return glass::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return ops::nonzero(*this); }

}  // namespace glass
