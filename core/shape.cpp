// core/shape.cpp — shape and stride arithmetic (see Note [Strides] in shape.h).
#include "core/shape.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace glass {

int64_t storage_index(IntArrayRef sizes, IntArrayRef strides, int64_t offset, IntArrayRef index) {
  GLASS_CHECK(index.size() == sizes.size(), "storage_index(): expected an index with ",
              sizes.size(), " entries (one per dim), got ", index.size());
  int64_t addr = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t i = index[d] < 0 ? index[d] + sizes[d] : index[d];
    GLASS_CHECK(i >= 0 && i < sizes[d], "storage_index(): index ", index[d],
                " is out of bounds for dim ", d, " with size ", sizes[d]);
    addr += i * strides[d];
  }
  return addr;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, const char* op) {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    GLASS_CHECK(sizes[d] >= 0, op, "(): negative size ", sizes[d], " at dim ", d, " in shape ",
                sizes);
    GLASS_CHECK(!__builtin_mul_overflow(n, sizes[d], &n), op, "(): shape ", sizes,
                " has more elements than fit in int64 (size overflow)");
  }
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts -1 and 0
  GLASS_CHECK(dim >= -n && dim < n, op, "(): dimension out of range (expected to be in range of [",
              -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    // Align from the right: i counts dims from the end.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    GLASS_CHECK(da == db || da == 1 || db == 1, op, "(): shapes ", a, " and ", b,
                " cannot be broadcast: the size of dim ", static_cast<int64_t>(n - 1 - i),
                " of the result would have to be both ", da, " and ", db,
                " (sizes must match or one of them must be 1)");
    out[n - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == -1) {
      GLASS_CHECK(!infer, op, "(): only one dimension can be inferred (-1), got shape ", shape);
      infer = d;
    } else {
      GLASS_CHECK(out[d] >= 0, op, "(): invalid shape dimension ", out[d], " in shape ", shape);
      GLASS_CHECK(!__builtin_mul_overflow(known, out[d], &known), op, "(): shape ", shape,
                  " overflows int64");
    }
  }
  if (infer) {
    GLASS_CHECK(known != 0, op, "(): cannot infer the -1 in shape ", shape,
                " because the other dims contain a 0 (ambiguous)");
    GLASS_CHECK(numel % known == 0, op, "(): shape ", shape, " is invalid for input of size ",
                numel);
    out[*infer] = numel / known;
  } else {
    GLASS_CHECK(known == numel, op, "(): shape ", shape, " is invalid for input of size ", numel,
                " (it has ", known, " elements)");
  }
  return out;
}

// PyTorch's computeStride: walk the old dims from the back in "chunks" of dims that are
// contiguous with each other; each chunk can be split into new dims freely.
std::optional<DimVector> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                      IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size());
  if (old_sizes.empty()) {  // a 0-dim tensor: every new dim has size 1
    std::fill(new_strides.begin(), new_strides.end(), 1);
    return new_strides;
  }
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0) {
    if (old_sizes.equals(new_sizes)) return DimVector(old_strides);
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; d--) {
    tensor_numel *= old_sizes[d];
    bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

std::pair<int64_t, int64_t> storage_extent(IntArrayRef sizes, IntArrayRef strides) {
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 0) return {0, -1};
  for (size_t d = 0; d < sizes.size(); ++d) {
    // A layout whose reach does not fit int64 reaches no real storage: an error, not a
    // wrapped (negative, "in bounds") extent.
    int64_t reach = 0;
    bool overflow = __builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
                    (reach < 0 ? __builtin_add_overflow(lo, reach, &lo)
                               : __builtin_add_overflow(hi, reach, &hi));
    GLASS_CHECK(!overflow, "sizes ", sizes, " with strides ", strides,
                " reach further than int64 can count (stride overflow)");
  }
  return {lo, hi};
}

bool has_internal_overlap(IntArrayRef sizes, IntArrayRef strides) {
  // Sort the dims of size > 1 by stride; the layout is overlap-free when every stride is
  // at least the extent of all smaller-stride dims combined.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, size)
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return false;
    if (sizes[d] > 1) dims.emplace_back(strides[d] < 0 ? -strides[d] : strides[d], sizes[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t extent = 1;  // elements spanned by the dims seen so far
  for (auto [stride, size] : dims) {
    if (stride < extent) return true;
    extent = stride * (size - 1) + extent;
  }
  return false;
}

}  // namespace glass
