// core/tensor_accessor.h — TensorAccessor: fast, typed, bounds-unchecked element access
// from host code (libtorch's t.accessor<float, 2>()[i][j]).
//
// An accessor is a raw pointer plus the tensor's sizes and strides (in elements, Note
// [Strides] in shape.h): a[i][j] reads data[i * stride(0) + j * stride(1)], nothing more.
// It does not own the tensor, so it must not outlive it (Tensor::accessor() is deleted on
// temporaries for that reason), and it reads host memory, so Tensor::accessor() refuses a
// tensor on a device: host code cannot dereference device addresses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/array_ref.h"

namespace glass {

template <class T, size_t N>
class TensorAccessorBase {
 public:
  TensorAccessorBase(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  IntArrayRef sizes() const { return IntArrayRef(sizes_, N); }
  IntArrayRef strides() const { return IntArrayRef(strides_, N); }
  int64_t size(size_t i) const { return sizes_[i]; }
  int64_t stride(size_t i) const { return strides_[i]; }
  T* data() const { return data_; }

 protected:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

// a[i] is an accessor of the remaining N - 1 dims.
template <class T, size_t N>
class TensorAccessor : public TensorAccessorBase<T, N> {
 public:
  using TensorAccessorBase<T, N>::TensorAccessorBase;
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(this->data_ + this->strides_[0] * i, this->sizes_ + 1,
                                    this->strides_ + 1);
  }
};

// The last dim: a[i] is the element itself.
template <class T>
class TensorAccessor<T, 1> : public TensorAccessorBase<T, 1> {
 public:
  using TensorAccessorBase<T, 1>::TensorAccessorBase;
  T& operator[](int64_t i) const { return this->data_[this->strides_[0] * i]; }
};

}  // namespace glass
