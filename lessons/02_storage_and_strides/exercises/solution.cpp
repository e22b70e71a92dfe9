// lessons/02_storage_and_strides/exercises/solution.cpp — the reference answers to lesson
// 02's exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <cstring>
#include <string>
#include <vector>

#include "exercises.h"

namespace glass::lesson02 {

int64_t storage_address(IntArrayRef sizes, IntArrayRef strides, int64_t offset, IntArrayRef index) {
  if (index.size() != sizes.size() || strides.size() != sizes.size())
    throw Error("storage_address(): the tensor has " + std::to_string(sizes.size()) +
                " dims but the index has " + std::to_string(index.size()) + " entries");
  int64_t addr = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (index[d] < 0 || index[d] >= sizes[d])
      throw Error("storage_address(): index " + std::to_string(index[d]) + " is outside dim " +
                  std::to_string(d) + " of size " + std::to_string(sizes[d]));
    addr += index[d] * strides[d];
  }
  return addr;
}

Tensor strided_slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim < 0 || dim >= t.dim()) throw Error("strided_slice(): dim out of range");
  if (start < 0 || start > end || end > t.size(dim) || step < 1)
    throw Error("strided_slice(): need 0 <= start <= end <= size and step >= 1");
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  // Index i of the slice is index start + i*step of t: the first kept element moves the
  // offset, and each step along dim now skips `step` of t's elements.
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] = t.stride(dim) * step;
  return t.as_strided(sizes, strides, t.storage_offset() + start * t.stride(dim));
}

Tensor make_contiguous(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options());
  const auto* src = static_cast<const char*>(t.storage().data());
  auto* dst = static_cast<char*>(out.data_ptr());
  const int64_t esize = t.element_size();
  std::vector<int64_t> index(t.dim(), 0);
  // out is contiguous, so the k-th index in row-major order is its k-th element.
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t addr = storage_address(t.sizes(), t.strides(), t.storage_offset(), index);
    std::memcpy(dst + k * esize, src + addr * esize, esize);
    // Advance like an odometer: the last dim turns fastest (row-major order).
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace glass::lesson02
