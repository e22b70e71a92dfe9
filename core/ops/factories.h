// core/ops/factories.h — functions that make new tensors.
//
// Every factory allocates one fresh, contiguous Storage through the device's Allocator
// (empty() leaves the bytes uninitialised), or through the pinned-host allocator for
// TensorOptions().pinned_memory(true). TensorOptions::requires_grad is honoured by
// marking the result; an integer dtype with requires_grad is rejected. The *_like forms
// take the dtype and device the options leave unset from their tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace glass {

Tensor empty(IntArrayRef size, const TensorOptions& options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& options = {});
Tensor zeros(IntArrayRef size, const TensorOptions& options = {});
Tensor ones(IntArrayRef size, const TensorOptions& options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t, const TensorOptions& options);
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t, const TensorOptions& options);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t, const TensorOptions& options);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& fill_value);
Tensor full_like(const Tensor& t, const Scalar& fill_value, const TensorOptions& options);

// arange infers Long when start, end and step are all integers, else the default dtype.
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});

// A 0-dim tensor holding `s` (dtype: Bool, Long or the default float dtype).
Tensor scalar_tensor(const Scalar& s, const TensorOptions& options = {});
// The 0-dim "wrapped number" form used for x * 2 (see TensorImpl::is_wrapped_number).
Tensor wrapped_scalar_tensor(const Scalar& s);

// Wraps memory the caller owns; no copy. The caller keeps it alive (or passes a
// deleter that frees it when the last tensor viewing it goes away).
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter,
                 const TensorOptions& options = {});

namespace detail {
void copy_into(const Tensor& dst, const Tensor& src,
               bool non_blocking);  // pointwise.h: no version bump
// n values of dtype `src` at `data`, copied into a tensor the library owns (tensor(vector)).
Tensor tensor_from_host(const void* data, int64_t n, ScalarType src, const TensorOptions& options);
}  // namespace detail

template <class Sig>
class Op;
namespace ops {
// The factory op under every function above but from_blob and tensor() (which wrap or copy
// the caller's data): uninitialised memory of a shape, strides, dtype and device, pinned or
// not. Dispatched, so a trace sees a tensor made inside it (dispatcher.h).
extern Op<Tensor(IntArrayRef, IntArrayRef, ScalarType, Device, bool)> empty_strided;
}  // namespace ops

// ---- glass::tensor({...}) from nested braced lists -------------------------------------
//
// glass::tensor({{1., 2.}, {3., 4.}}) is a 2x2 tensor. As in PyTorch, floating literals
// give the *default* dtype (Float), integers Long and bools Bool; mixed lists promote.
// Ragged lists ({{1, 2}, {3}}) are an error naming the offending position.
class NestedList {
 public:
  NestedList(double v) : value_(v), is_leaf_(true) {}                      // NOLINT
  NestedList(float v) : value_(static_cast<double>(v)), is_leaf_(true) {}  // NOLINT
  NestedList(int v) : value_(static_cast<int64_t>(v)), is_leaf_(true) {}   // NOLINT
  NestedList(int64_t v) : value_(v), is_leaf_(true) {}                     // NOLINT
  NestedList(bool v) : value_(v), is_leaf_(true) {}                        // NOLINT
  NestedList(std::initializer_list<NestedList> l) : children_(l) {}        // NOLINT

  bool is_leaf() const { return is_leaf_; }
  const Scalar& value() const { return value_; }
  const std::vector<NestedList>& children() const { return children_; }

 private:
  Scalar value_;
  bool is_leaf_ = false;
  std::vector<NestedList> children_;
};

Tensor tensor(const NestedList& data, const TensorOptions& options = {});
// 1-D tensors from a vector of values.
template <class T>
requires(!std::is_same_v<T, bool>) Tensor
    tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  return detail::tensor_from_host(values.data(), static_cast<int64_t>(values.size()),
                                  scalar_type_of<T>, options);
}

}  // namespace glass
