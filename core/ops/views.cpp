// core/ops/views.cpp — the view ops (see views.h and Note [Strides] in shape.h).
//
// [SECTION] native implementations    [SECTION] dispatched ops
// [SECTION] composite views           [SECTION] Tensor methods
#include "core/ops/views.h"

#include <algorithm>
#include <numeric>

#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/shape.h"

namespace glass {
namespace {

// [SECTION] native implementations ----------------------------------------------------

void check_defined(const Tensor& t, const char* op) {
  GLASS_CHECK(t.defined(), op, "(): expected a defined tensor, got an undefined one");
}

// The one constructor of views: same storage, new metadata.
Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(self.storage(), self.dtype(), sizes, strides, offset);
  return Tensor(std::move(impl));
}

Tensor view_native(const Tensor& self, IntArrayRef size) {
  check_defined(self, "view");
  DimVector shape = infer_size(size, self.numel(), "view");
  auto strides = view_strides(self.sizes(), self.strides(), shape);
  GLASS_CHECK(strides.has_value(), "view(): shape ", IntArrayRef(shape),
              " is not compatible with sizes ", self.sizes(), " and strides ", self.strides(),
              " (the tensor is not contiguous: at least one dimension spans across two "
              "contiguous subspaces). Use .reshape(...) to copy when needed, or "
              ".contiguous().view(...).");
  return make_view(self, shape, *strides, self.storage_offset());
}

Tensor as_strided_native(const Tensor& self, IntArrayRef size, IntArrayRef stride, int64_t offset) {
  check_defined(self, "as_strided");
  GLASS_CHECK(size.size() == stride.size(), "as_strided(): got ", size.size(), " sizes but ",
              stride.size(), " strides; give one stride per dim");
  checked_numel(size, "as_strided");
  GLASS_CHECK(offset >= 0, "as_strided(): negative storage offset ", offset);
  for (size_t d = 0; d < stride.size(); ++d)
    GLASS_CHECK(stride[d] >= 0, "as_strided(): negative stride ", stride[d], " at dim ", d,
                " is not supported");
  auto [lo, hi] = storage_extent(size, stride);
  int64_t storage_elems = static_cast<int64_t>(self.storage().nbytes()) / self.element_size();
  int64_t last = 0;
  GLASS_CHECK(hi < 0 || !__builtin_add_overflow(offset, hi, &last), "as_strided(): offset ", offset,
              " plus the reach ", hi, " of sizes ", size, " and strides ", stride,
              " overflows int64");
  GLASS_CHECK(hi < 0 || last < storage_elems, "as_strided(): sizes ", size, " and strides ", stride,
              " at offset ", offset, " reach storage element ", last,
              ", but the storage holds only ", storage_elems, " elements");
  (void)lo;
  return make_view(self, size.vec(), stride.vec(), offset);
}

Tensor transpose_native(const Tensor& self, int64_t dim0, int64_t dim1) {
  check_defined(self, "transpose");
  int64_t d0 = wrap_dim(dim0, self.dim(), "transpose"),
          d1 = wrap_dim(dim1, self.dim(), "transpose");
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor permute_native(const Tensor& self, IntArrayRef dims) {
  check_defined(self, "permute");
  int64_t nd = self.dim();
  GLASS_CHECK(static_cast<int64_t>(dims.size()) == nd,
              "permute(): number of dims don't match: ", "the tensor has ", nd, " dims but dims ",
              dims, " has ", dims.size(), " entries");
  DimVector sizes(nd), strides(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd, "permute");
    GLASS_CHECK(!seen[d], "permute(): duplicate dims are not allowed: dim ", d,
                " appears twice in ", dims);
    seen[d] = true;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand_native(const Tensor& self, IntArrayRef size) {
  check_defined(self, "expand");
  int64_t nd = static_cast<int64_t>(size.size());
  GLASS_CHECK(nd >= self.dim(), "expand(): the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(),
              ")");
  DimVector sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t sd = i - (nd - self.dim());  // the tensor's dim aligned with i, or < 0
    int64_t want = size[i];
    if (sd < 0) {
      GLASS_CHECK(want >= 0, "expand(): the expanded size ", want, " at new leading dim ", i,
                  " must be non-negative (-1 is only allowed for existing dims)");
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = self.size(sd);
    if (want == -1) want = have;
    GLASS_CHECK(have == want || have == 1, "expand(): the expanded size of the tensor (", want,
                ") must match the existing size (", have, ") at non-singleton dimension ", i,
                ". Target sizes: ", size, ". Tensor sizes: ", self.sizes(),
                " (only dims of size 1 can be expanded)");
    GLASS_CHECK(want >= 0, "expand(): invalid size ", want, " at dim ", i);
    sizes[i] = want;
    strides[i] = have == want ? self.stride(sd) : 0;
  }
  checked_numel(sizes, "expand");
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor slice_native(const Tensor& self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  check_defined(self, "slice");
  GLASS_CHECK(self.dim() > 0, "slice(): cannot slice a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "slice");
  GLASS_CHECK(step > 0, "slice(): step must be positive, got ", step,
              " (negative steps are not supported; use flip)");
  int64_t n = self.size(d);
  // Python slicing rules: negative bounds count from the end, then clamp to [0, n].
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = end > start ? (end - start - 1) / step + 1 : 0;  // ceil, without overflowing
  // stride * step, as PyTorch keeps it. It can overflow only when at most one element is
  // left (a longer result would reach past any storage), whose stride is never used.
  if (__builtin_mul_overflow(self.stride(d), step, &strides[d])) strides[d] = self.stride(d);
  return make_view(self, sizes, strides, self.storage_offset() + start * self.stride(d));
}

Tensor select_native(const Tensor& self, int64_t dim, int64_t index) {
  check_defined(self, "select");
  GLASS_CHECK(self.dim() > 0, "select(): cannot select on a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "select");
  int64_t n = self.size(d);
  GLASS_CHECK(index >= -n && index < n, "select(): index ", index,
              " out of range for tensor of size ", self.sizes(), " at dimension ", d,
              " (valid indices: ", -n, " to ", n - 1, ")");
  if (index < 0) index += n;
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, self.storage_offset() + index * self.stride(d));
}

Tensor squeeze_native(const Tensor& self, std::optional<int64_t> dim) {
  check_defined(self, "squeeze");
  DimVector sizes, strides;
  std::optional<int64_t> d;
  if (dim) d = wrap_dim(*dim, self.dim(), "squeeze");
  for (int64_t i = 0; i < self.dim(); ++i) {
    bool drop = self.size(i) == 1 && (!d || *d == i);
    if (drop) continue;
    sizes.push_back(self.size(i));
    strides.push_back(self.stride(i));
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze_native(const Tensor& self, int64_t dim) {
  check_defined(self, "unsqueeze");
  int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  DimVector sizes(self.sizes()), strides(self.strides());
  // The new dim's stride makes it look contiguous with the next one (any value works).
  int64_t s = d < self.dim() ? self.size(d) * self.stride(d) : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, s);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor diagonal_native(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  check_defined(self, "diagonal");
  GLASS_CHECK(self.dim() >= 2, "diagonal(): expected a tensor with at least 2 dims, got ",
              self.dim());
  int64_t d1 = wrap_dim(dim1, self.dim(), "diagonal"), d2 = wrap_dim(dim2, self.dim(), "diagonal");
  GLASS_CHECK(d1 != d2, "diagonal(): dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t storage_offset = self.storage_offset(), len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.size(d1), self.size(d2) - offset), 0);
    if (len > 0) storage_offset += offset * self.stride(d2);
  } else {
    len = std::max<int64_t>(std::min(self.size(d1) + offset, self.size(d2)), 0);
    if (len > 0) storage_offset -= offset * self.stride(d1);
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == d1 || i == d2) continue;
    sizes.push_back(self.size(i));
    strides.push_back(self.stride(i));
  }
  sizes.push_back(len);
  strides.push_back(self.stride(d1) + self.stride(d2));
  return make_view(self, sizes, strides, storage_offset);
}

Tensor unfold_native(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  check_defined(self, "unfold");
  int64_t d = wrap_dim(dimension, self.dim(), "unfold");
  int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GLASS_CHECK(size >= 0 && size <= n, "unfold(): maximum size for tensor at dimension ", d, " is ",
              n, " but size is ", size);
  GLASS_CHECK(step > 0, "unfold(): step is ", step, " but must be > 0");
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() == 0) return make_view(self, {size}, {1}, self.storage_offset());
  int64_t st = self.stride(d);
  sizes[d] = (n - size) / step + 1;
  strides[d] = st * step;
  sizes.push_back(size);
  strides.push_back(st);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor alias_native(const Tensor& self) {
  check_defined(self, "detach");
  return make_view(self, self.sizes().vec(), self.strides().vec(), self.storage_offset());
}

// t() is its own op, as in PyTorch, so that autograd records TBackward0 for it (a
// transpose(0, 1) records TransposeBackward0); 0-D and 1-D tensors come back as aliases.
Tensor t_native(const Tensor& self) {
  check_defined(self, "t");
  GLASS_CHECK(self.dim() <= 2, "t(): expects a tensor with <= 2 dimensions, but self is ",
              self.dim(), "D (use transpose(dim0, dim1) or mT for batches)");
  return self.dim() < 2 ? alias_native(self) : transpose_native(self, 0, 1);
}

Tensor clone_native(const Tensor& self) {
  check_defined(self, "clone");
  Tensor out = empty(self.sizes(), self.options());
  detail::copy_into(out, self);
  return out;
}

}  // namespace

// [SECTION] dispatched ops ----------------------------------------------------------------

namespace ops {
Op<Tensor(const Tensor&, IntArrayRef)> view("view", &view_native, kViewOp);
Op<Tensor(const Tensor&, IntArrayRef, IntArrayRef, int64_t)> as_strided("as_strided",
                                                                        &as_strided_native,
                                                                        kViewOp);
Op<Tensor(const Tensor&, int64_t, int64_t)> transpose("transpose", &transpose_native, kViewOp);
Op<Tensor(const Tensor&, IntArrayRef)> permute("permute", &permute_native, kViewOp);
Op<Tensor(const Tensor&, IntArrayRef)> expand("expand", &expand_native, kViewOp);
Op<Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t)> slice("slice", &slice_native,
                                                                    kViewOp);
Op<Tensor(const Tensor&, int64_t, int64_t)> select("select", &select_native, kViewOp);
Op<Tensor(const Tensor&, std::optional<int64_t>)> squeeze("squeeze", &squeeze_native, kViewOp);
Op<Tensor(const Tensor&, int64_t)> unsqueeze("unsqueeze", &unsqueeze_native, kViewOp);
Op<Tensor(const Tensor&, int64_t, int64_t, int64_t)> diagonal("diagonal", &diagonal_native,
                                                              kViewOp);
Op<Tensor(const Tensor&, int64_t, int64_t, int64_t)> unfold("unfold", &unfold_native, kViewOp);
Op<Tensor(const Tensor&)> alias("alias", &alias_native, kViewOp);
Op<Tensor(const Tensor&)> t("t", &t_native, kViewOp);
Op<Tensor(const Tensor&)> detach("detach", &alias_native, kViewOp);
Op<Tensor(const Tensor&)> clone("clone", &clone_native);
namespace {
const bool registered =
    dispatch::register_ops({&view, &as_strided, &transpose, &permute, &expand, &slice, &select,
                            &squeeze, &unsqueeze, &diagonal, &unfold, &alias, &t, &detach, &clone});
}  // namespace
}  // namespace ops

// [SECTION] composite views ----------------------------------------------------------------

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  return ops::transpose(self, dim0, dim1);
}

Tensor t(const Tensor& self) { return ops::t(self); }

Tensor permute(const Tensor& self, IntArrayRef dims) { return ops::permute(self, dims); }

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  GLASS_CHECK(self.dim() > 0, "narrow(): cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "narrow");
  int64_t n = self.size(d);
  GLASS_CHECK(start >= -n && start <= n, "narrow(): start (", start, ") is out of range for dim ",
              d, " of size ", n, " (expected ", -n, " <= start <= ", n, ")");
  if (start < 0) start += n;
  GLASS_CHECK(length >= 0 && start + length <= n, "narrow(): start (", start, ") + length (",
              length, ") exceeds dimension size (", n, ") of dim ", d);
  return ops::slice(self, d, start, start + length, 1);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  return ops::select(self, dim, index);
}
Tensor squeeze(const Tensor& self) { return ops::squeeze(self, std::nullopt); }
Tensor squeeze(const Tensor& self, int64_t dim) { return ops::squeeze(self, dim); }
Tensor unsqueeze(const Tensor& self, int64_t dim) { return ops::unsqueeze(self, dim); }

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  GLASS_CHECK(self.defined(), "reshape(): expected a defined tensor");
  DimVector s = infer_size(shape, self.numel(), "reshape");
  if (view_strides(self.sizes(), self.strides(), s)) return ops::view(self, s);
  return ops::view(ops::clone(self), s);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  if (self.dim() == 0) return self.reshape({1});
  int64_t s = wrap_dim(start_dim, self.dim(), "flatten"),
          e = wrap_dim(end_dim, self.dim(), "flatten");
  GLASS_CHECK(s <= e, "flatten(): start_dim (", start_dim, ") cannot come after end_dim (", end_dim,
              ")");
  if (s == e) return self;
  Shape shape;
  for (int64_t i = 0; i < s; ++i) shape.push_back(self.size(i));
  int64_t m = 1;
  for (int64_t i = s; i <= e; ++i) m *= self.size(i);
  shape.push_back(m);
  for (int64_t i = e + 1; i < self.dim(); ++i) shape.push_back(self.size(i));
  return self.reshape(shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  GLASS_CHECK(self.dim() > 0, "unflatten(): cannot unflatten a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "unflatten");
  GLASS_CHECK(!sizes.empty(), "unflatten(): sizes must be non-empty");
  Shape inner = infer_size(sizes, self.size(d), "unflatten");
  Shape shape = self.sizes().vec();
  shape.erase(shape.begin() + d);
  shape.insert(shape.begin() + d, inner.begin(), inner.end());
  return ops::view(self, shape);
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset) {
  return ops::as_strided(self, size, stride, storage_offset.value_or(self.storage_offset()));
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return ops::diagonal(self, offset, dim1, dim2);
}

Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  int64_t s = wrap_dim(source, self.dim(), "movedim"),
          d = wrap_dim(destination, self.dim(), "movedim");
  if (self.dim() == 0) return self;
  Shape order;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != s) order.push_back(i);
  order.insert(order.begin() + d, s);
  return ops::permute(self, order);
}

Tensor clone(const Tensor& self) { return ops::clone(self); }

std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  Shape shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.sizes() == shape ? t : ops::expand(t, shape));
  return out;
}

int64_t storage_index(const Tensor& t, IntArrayRef index) {
  return storage_index(t.sizes(), t.strides(), t.storage_offset(), index);
}

// [SECTION] Tensor methods ------------------------------------------------------------------

Tensor Tensor::view(IntArrayRef size) const { return ops::view(*this, size); }
Tensor Tensor::view_as(const Tensor& other) const { return ops::view(*this, other.sizes()); }
Tensor Tensor::reshape(IntArrayRef shape) const { return glass::reshape(*this, shape); }
Tensor Tensor::reshape_as(const Tensor& other) const {
  return glass::reshape(*this, other.sizes());
}
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ops::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return glass::t(*this); }
Tensor Tensor::permute(IntArrayRef dims) const { return ops::permute(*this, dims); }
Tensor Tensor::expand(IntArrayRef size) const { return ops::expand(*this, size); }
Tensor Tensor::expand_as(const Tensor& other) const { return ops::expand(*this, other.sizes()); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return glass::narrow(*this, dim, start, length);
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  return ops::slice(*this, dim, start.value_or(0), end.value_or(INT64_MAX), step);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ops::select(*this, dim, index); }
Tensor Tensor::squeeze() const { return ops::squeeze(*this, std::nullopt); }
Tensor Tensor::squeeze(int64_t dim) const { return ops::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return ops::unsqueeze(*this, dim); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return glass::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const {
  return glass::unflatten(*this, dim, sizes);
}
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> off) const {
  return glass::as_strided(*this, size, stride, off);
}
Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2) const {
  return ops::diagonal(*this, offset, d1, d2);
}
Tensor Tensor::unfold(int64_t dimension, int64_t size, int64_t step) const {
  return ops::unfold(*this, dimension, size, step);
}
Tensor Tensor::movedim(int64_t s, int64_t d) const { return glass::movedim(*this, s, d); }
Tensor Tensor::detach() const {
  // An op of its own with no Autograd handler: the result has no history and no
  // forward-mode tangent, and a trace (compiler/) sees it like any other view.
  return ops::detach(*this);
}
Tensor Tensor::contiguous() const { return is_contiguous() ? *this : ops::clone(*this); }
Tensor Tensor::clone() const { return ops::clone(*this); }

}  // namespace glass
