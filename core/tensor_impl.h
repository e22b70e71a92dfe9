// core/tensor_impl.h — what a tensor *is*: metadata over a Storage.
//
// Invariant: a TensorImpl never owns bytes; it describes where its elements live in its
// Storage through (sizes, strides, storage_offset) — Note [Strides] in shape.h gives the
// address formula — plus a dtype that says how to read those bytes. Every element it
// can address lies inside the storage (checked when a view is made, never on access).
// is_contiguous is cached and recomputed whenever the metadata changes.
//
// Note [Why strides are in elements]
// PyTorch, NumPy's C API and glasstorch disagree here: NumPy counts strides in bytes,
// PyTorch and glasstorch in elements. Elements make view arithmetic dtype-independent —
// x.to(kDouble).transpose(0, 1) has the same strides as x.transpose(0, 1) — and the
// byte address is just element_size * addr, computed once in data_ptr().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/array_ref.h"
#include "core/scalar_type.h"
#include "core/shape.h"
#include "core/small_vector.h"
#include "core/storage.h"

namespace glass {

// Autograd attaches its per-tensor state (grad, grad_fn, hooks, ...) here. core only
// knows the base class, so it never depends on autograd (see ARCHITECTURE.md).
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t size(int64_t dim) const;    // negative dims wrap
  int64_t stride(int64_t dim) const;  // negative dims wrap
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_.device(); }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }

  // Address of element 0 (storage start + offset * element size). An error while the
  // storage's bytes are dropped (Storage::drop_bytes), instead of a pointer near null.
  void* data() const {
    if (storage_.data() == nullptr && !storage_.has_bytes()) [[unlikely]]
      fail_without_bytes();
    return static_cast<char*>(storage_.data()) +
           storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // Re-points this impl at new metadata over the same storage (used by in-place view
  // ops such as squeeze_ / transpose_ and by as_strided_). Checks nothing: callers do.
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // Takes over src's storage, dtype and geometry while keeping this impl's identity, its
  // autograd state (grad, grad_fn, hooks) and requires_grad: every handle to this tensor
  // sees the new data (Tensor::set_data; Module::to moves parameters this way).
  void shallow_copy_from(const TensorImpl& src);

  uint32_t version() const { return storage_.version(); }
  void bump_version() const { storage_.bump_version(); }

  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool r) { requires_grad_ = r; }
  // Set by autograd/forward_ad.h while the tensor carries a forward-mode tangent: ops on
  // it then go through the Autograd key even under NoGradGuard (forward mode does not
  // depend on grad mode, as in PyTorch).
  bool has_forward_grad() const { return has_forward_grad_; }
  void set_has_forward_grad(bool f) { has_forward_grad_ = f; }

  // A 0-dim tensor made from a C++ number (x * 2): it takes part in type promotion
  // with the low priority PyTorch gives Python numbers.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool w) { wrapped_number_ = w; }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) {
    autograd_meta_ = std::move(m);
  }

 private:
  [[noreturn]] void fail_without_bytes() const;  // data()'s error, out of line
  Storage storage_;
  DimVector sizes_;  // inline for up to 6 dims: no heap allocation per view
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_;
  ScalarType dtype_;
  bool is_contiguous_;
  bool requires_grad_ = false;
  bool has_forward_grad_ = false;
  bool wrapped_number_ = false;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
};

}  // namespace glass
