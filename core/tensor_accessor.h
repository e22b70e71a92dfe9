// core/tensor_accessor.h — typed, bounds-unchecked element access through the strides
// (libtorch's t.accessor<float, 2>()[i][j] and t.packed_accessor32<float, 2>()).
//
// An accessor is a pointer plus the tensor's sizes and strides (in elements, Note
// [Strides] in shape.h): a[i][j] reads data[i * stride(0) + j * stride(1)], nothing more.
//
//   TensorAccessor<T, N>            host code: points at the tensor's own sizes and strides,
//                                   so it must not outlive the tensor (Tensor::accessor()
//                                   is deleted on temporaries), and reads host memory only.
//   PackedTensorAccessor32<T, N,    a kernel argument: sizes and strides copied in by value
//     PtrTraits>                    (a kernel cannot follow a pointer into host memory) and
//                                   narrowed to int32, whose arithmetic is the GPU's fast
//                                   one; Tensor::packed_accessor32() checks that every
//                                   index fits.
//
// PtrTraits<T>::PtrType is the pointer type the accessor reads through: T* by default, T*
// __restrict__ with RestrictPtrTraits (the kernel promises no aliasing), and, for device
// tensors, glass::cuda::DevicePtrTraits (cuda/kernel.h) — gptr<T> in the simulator, so
// that every access of a kernel is seen, and T* __restrict__ under nvcc. A PtrTraits that
// reads device memory says so with `static constexpr bool reads_device_memory = true`.
//
// Invariant: a[i0]...[iN-1] is data + sum(ik * stride(k)), computed in index_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/array_ref.h"
#include "core/scalar_ops.h"  // GLASS_HOST_DEVICE

namespace glass {

template <class T>
struct DefaultPtrTraits {
  using PtrType = T*;
};

template <class T>
struct RestrictPtrTraits {
  using PtrType = T* __restrict__;
};

// Whether PtrTraits names device memory (see above); Tensor::packed_accessor32 pairs such
// traits with device tensors only, and the others with CPU tensors only.
template <template <class> class PtrTraits>
inline constexpr bool reads_device_memory = requires {
  requires PtrTraits<char>::reads_device_memory;
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits,
          class index_t = int64_t>
class TensorAccessorBase {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;

  GLASS_HOST_DEVICE TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  // As IntArrayRefs: host code, 64-bit accessors.
  IntArrayRef sizes() const requires std::is_same_v<index_t, int64_t> {
    return IntArrayRef(sizes_, N);
  }
  IntArrayRef strides() const requires std::is_same_v<index_t, int64_t> {
    return IntArrayRef(strides_, N);
  }
  GLASS_HOST_DEVICE index_t size(size_t i) const { return sizes_[i]; }
  GLASS_HOST_DEVICE index_t stride(size_t i) const { return strides_[i]; }
  GLASS_HOST_DEVICE PtrType data() const { return data_; }

 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

// a[i] is an accessor of the remaining N - 1 dims; on the last dim, the element itself.
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits,
          class index_t = int64_t>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  using TensorAccessorBase<T, N, PtrTraits, index_t>::TensorAccessorBase;
  GLASS_HOST_DEVICE decltype(auto) operator[](index_t i) const {
    if constexpr (N == 1) {
      return this->data_[this->strides_[0] * i];  // T&
    } else {
      return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i,
                                                          this->sizes_ + 1, this->strides_ + 1);
    }
  }
};

// A kernel's view of a tensor: what TensorAccessor is, with its sizes and strides inside
// it. a[i] returns a TensorAccessor that points into this one's arrays, so it lives no
// longer than the packed accessor does (in a kernel: the thread's copy of the argument).
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
class PackedTensorAccessor32 {
 public:
  static_assert(N > 0, "a packed accessor indexes at least one dim");
  using PtrType = typename PtrTraits<T>::PtrType;
  using index_t = int32_t;
  using value_type = T;
  static constexpr size_t kDims = N;

  // Tensor::packed_accessor32() builds it, having checked that every value fits in int32.
  GLASS_HOST_DEVICE PackedTensorAccessor32(PtrType data, const index_t* sizes,
                                           const index_t* strides)
      : data_(data) {
    for (size_t d = 0; d < N; ++d) {
      sizes_[d] = sizes[d];
      strides_[d] = strides[d];
    }
  }

  GLASS_HOST_DEVICE index_t size(size_t d) const { return sizes_[d]; }
  GLASS_HOST_DEVICE index_t stride(size_t d) const { return strides_[d]; }
  GLASS_HOST_DEVICE PtrType data() const { return data_; }

  GLASS_HOST_DEVICE decltype(auto) operator[](index_t i) const {
    if constexpr (N == 1) {
      return data_[strides_[0] * i];  // T&
    } else {
      return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1,
                                                          strides_ + 1);
    }
  }

 private:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

}  // namespace glass
