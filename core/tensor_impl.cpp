// core/tensor_impl.cpp — metadata bookkeeping for TensorImpl.
#include "core/tensor_impl.h"

namespace glass {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), dtype_(dtype) {
  set_sizes_and_strides(sizes, strides, storage_offset);
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides,
                                       int64_t storage_offset) {
  GLASS_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  storage_offset_ = storage_offset;
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  is_contiguous_ = is_contiguous_layout(sizes_, strides_);
}

void TensorImpl::fail_without_bytes() const {
  detail::throw_error(detail::str_cat(
      "a ", dtype_name(dtype_), " tensor of shape ", sizes(), " on ", device(),
      " has no bytes: its storage dropped them (Storage::drop_bytes; FSDP does so with a "
      "unit's gathered parameters outside its forward and backward); restore_bytes() and "
      "refill them before use"));
}

void TensorImpl::shallow_copy_from(const TensorImpl& src) {
  if (&src == this) return;
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  set_sizes_and_strides(src.sizes_, src.strides_, src.storage_offset_);
}

int64_t TensorImpl::size(int64_t d) const {
  GLASS_CHECK(dim() > 0, "size(): dimension specified as ", d, " but tensor has no dimensions");
  return sizes_[wrap_dim(d, dim(), "size")];
}

int64_t TensorImpl::stride(int64_t d) const {
  GLASS_CHECK(dim() > 0, "stride(): dimension specified as ", d, " but tensor has no dimensions");
  return strides_[wrap_dim(d, dim(), "stride")];
}

}  // namespace glass
