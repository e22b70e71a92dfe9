// core/cpu/cpu_index.cpp — CPU kernels for indexing, and nonzero.
//
// The source (or destination) operand arrives restrided: along the indexed dims it
// has stride 0, so data[1] already points at the right "row" and the kernel only adds
// sum_k idx_k * strides[k] elements. Index values were validated by the caller.
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/ops/factories.h"

namespace glass::cpu {
namespace {

int64_t offset_of(char** data, const int64_t* strides, int64_t i, IntArrayRef elem_strides,
                  int first_idx) {
  int64_t off = 0;
  for (size_t k = 0; k < elem_strides.size(); ++k)
    off += *reinterpret_cast<const int64_t*>(data[first_idx + k] + i * strides[first_idx + k]) *
           elem_strides[k];
  return off;
}

}  // namespace

void index_kernel(TensorIterator& iter, IntArrayRef elem_strides) {
  dispatch_dtype(iter.dtype(0), "index", [&]<class T>() {
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const T* src = reinterpret_cast<const T*>(data[1] + i * strides[1]);
        *reinterpret_cast<T*>(data[0] + i * strides[0]) =
            src[offset_of(data, strides, i, elem_strides, 2)];
      }
    });
  });
}

void index_put_kernel(TensorIterator& iter, IntArrayRef elem_strides, bool accumulate) {
  dispatch_dtype(iter.dtype(0), "index_put_", [&]<class T>() {
    // Serial on purpose: two indices may name one element.
    iter.serial_for_each(
        [&](char** data, const int64_t* strides, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            T* dst = reinterpret_cast<T*>(data[0] + i * strides[0]) +
                     offset_of(data, strides, i, elem_strides, 2);
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
