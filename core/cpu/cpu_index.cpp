// core/cpu/cpu_index.cpp — CPU kernels for indexing, and nonzero.
//
// The source (or destination) operand arrives restrided: along the indexed dims it
// has stride 0, so data[1] already points at the right "row" and the kernel only adds
// sum_k idx_k * strides[k] elements. The kernels check every index value themselves
// (Note [Index errors are found by the kernel], device_kernels.h); a bad one throws
// before anything is written.
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"

namespace glass::cpu {
namespace {

constexpr int kFirstIndex = 2;  // operands: (out or dst, src or values, idx_0, ...)

// Index value v for indexed dim k, wrapped if negative (where allowed); throws if bad.
int64_t checked(const IndexArgs& args, size_t k, int64_t v) {
  const IndexedDim& d = args.dims[k];
  const int64_t w = v < 0 && args.wrap_negative ? v + d.size : v;
  if (w < 0 || w >= d.size) [[unlikely]]
    detail::throw_error(index_error_message(args.op, v, d.dim, d.size));
  return w;
}

// Element i's offset from the restrided operand, in elements.
int64_t offset_of(char** data, const int64_t* strides, int64_t i, const IndexArgs& args) {
  int64_t off = 0;
  for (size_t k = 0; k < args.dims.size(); ++k) {
    const int64_t v =
        *reinterpret_cast<const int64_t*>(data[kFirstIndex + k] + i * strides[kFirstIndex + k]);
    off += checked(args, k, v) * args.dims[k].stride;
  }
  return off;
}

}  // namespace

void index_kernel(TensorIterator& iter, const IndexArgs& args) {
  // A bad index may throw midway; out is a fresh tensor nobody else sees, so nothing
  // visible has been written.
  dispatch_dtype(iter.dtype(0), "index", [&]<class T>() {
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const T* src = reinterpret_cast<const T*>(data[1] + i * strides[1]);
        *reinterpret_cast<T*>(data[0] + i * strides[0]) = src[offset_of(data, strides, i, args)];
      }
    });
  });
}

void index_put_kernel(TensorIterator& iter, const IndexArgs& args, bool accumulate) {
  // First pass: every index is checked before the destination is touched, so an error
  // leaves it as it was.
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    for (int64_t i = 0; i < n; ++i) offset_of(data, strides, i, args);
  });
  dispatch_dtype(iter.dtype(0), "index_put_", [&]<class T>() {
    // Serial on purpose: two indices may name one element.
    iter.serial_for_each(
        [&](char** data, const int64_t* strides, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            T* dst =
                reinterpret_cast<T*>(data[0] + i * strides[0]) + offset_of(data, strides, i, args);
            T v = *reinterpret_cast<const T*>(data[1] + i * strides[1]);
            if (accumulate) {
              if constexpr (std::is_same_v<T, bool>)
                *dst = *dst || v;
              else
                *dst = static_cast<T>(*dst + v);
            } else {
              *dst = v;
            }
          }
        },
        0, iter.numel());
  });
}

Tensor nonzero_kernel(const Tensor& self) {
  int64_t nd = self.dim();
  std::vector<int64_t> coords;
  dispatch_dtype(self.dtype(), "nonzero", [&]<class T>() {
    const T* p = self.data_ptr<T>();
    std::vector<int64_t> idx(nd, 0);
    for (int64_t i = 0; i < self.numel(); ++i) {
      if (p[i] != T(0)) coords.insert(coords.end(), idx.begin(), idx.end());
      for (int64_t d = nd - 1; d >= 0; --d) {  // advance the row-major multi-index
        if (++idx[d] < self.size(d)) break;
        idx[d] = 0;
      }
    }
  });
  int64_t count = nd == 0 ? (coords.empty() ? 0 : 1) : static_cast<int64_t>(coords.size()) / nd;
  if (nd == 0) {  // a 0-dim tensor: (1, 0) or (0, 0)
    dispatch_dtype(self.dtype(), "nonzero",
                   [&]<class T>() { count = *self.data_ptr<T>() != T(0); });
  }
  Tensor out = empty({count, nd}, TensorOptions(kInt64));
  if (!coords.empty()) std::copy(coords.begin(), coords.end(), out.data_ptr<int64_t>());
  return out;
}

}  // namespace glass::cpu
