// lessons/02_storage_and_strides/exercises/solution.cpp — the reference answers to lesson
// 02's exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <cstring>
#include <optional>
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

std::optional<Shape> find_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape) {
  if (sizes.size() != strides.size())
    throw Error("find_view_strides(): " + std::to_string(sizes.size()) + " sizes but " +
                std::to_string(strides.size()) + " strides");
  int64_t numel = 1, new_numel = 1;
  for (int64_t s : sizes) numel *= s;
  for (int64_t s : shape) {
    if (s < 0) throw Error("find_view_strides(): negative size " + std::to_string(s));
    new_numel *= s;
  }
  if (new_numel != numel)
    throw Error("find_view_strides(): " + std::to_string(new_numel) +
                " elements cannot view a tensor of " + std::to_string(numel));
  Shape out(shape.size(), 1);
  if (numel == 0) return out;  // nothing is ever read: any strides will do
  // Dims of size 1 never move an address: leave them out.
  std::vector<int64_t> old_sizes, old_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    old_sizes.push_back(sizes[d]);
    old_strides.push_back(strides[d]);
  }
  // Walk both shapes from the back, one chunk of old dims at a time: dims [first, last]
  // that form one arithmetic sequence of step strides[last] (each stride is the next one
  // times the next size). Inside a chunk the new dims are laid out as in a contiguous
  // tensor whose element is that step; a new dim that would cross a chunk's edge has no
  // stride, and then there is no view.
  int64_t new_d = static_cast<int64_t>(shape.size()) - 1;
  for (int64_t last = static_cast<int64_t>(old_sizes.size()) - 1; last >= 0;) {
    int64_t first = last, chunk_numel = old_sizes[last];
    while (first > 0 && old_strides[first - 1] == old_strides[first] * old_sizes[first]) {
      --first;
      chunk_numel *= old_sizes[first];
    }
    int64_t view_numel = 1;
    while (new_d >= 0 && view_numel < chunk_numel) {
      out[new_d] = view_numel * old_strides[last];
      view_numel *= shape[new_d];
      --new_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    last = first - 1;
  }
  // What is left of `shape` holds one element: dims of size 1, whose stride is free.
  return out;
}

}  // namespace glass::lesson02
