// core/shape.h — the arithmetic of sizes and strides, independent of any data.
//
// Note [Strides]
// A tensor with sizes (n0, ..., nk), strides (s0, ..., sk) and storage offset o keeps
// element (i0, ..., ik) at storage element
//     addr = o + i0*s0 + i1*s1 + ... + ik*sk            (seed §II, the address formula)
// Strides count elements, not bytes (Note [Why strides are in elements] in
// tensor_impl.h). A row-major ("contiguous") tensor has s_k = 1 and
// s_d = s_{d+1} * n_{d+1}; every view op only rewrites (sizes, strides, offset).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/array_ref.h"
#include "core/small_vector.h"

namespace glass {

using Shape = std::vector<int64_t>;

// The address formula. `index` must have one entry per dim (negative entries wrap).
int64_t storage_index(IntArrayRef sizes, IntArrayRef strides, int64_t offset, IntArrayRef index);

// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);

// Number of elements; throws on a negative size or int64 overflow, naming `op`.
int64_t checked_numel(IntArrayRef sizes, const char* op);

// Maps dim in [-ndim, ndim) to [0, ndim); throws naming the op and the valid range.
// A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// NumPy broadcasting: align trailing dims; each pair must be equal or contain a 1.
// Throws "op(): shapes [..] and [..] cannot be broadcast: dim d is 3 vs 4".
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");

// Can a tensor of `shape` be expanded (broadcast) to exactly `desired`?
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);

// Replaces a single -1 in `shape` so that it has `numel` elements; checks the count.
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op);

// Strides that let a tensor (old_sizes, old_strides) be viewed as new_sizes without a
// copy, or nullopt when no such strides exist (then view() fails, reshape() copies).
std::optional<DimVector> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                  IntArrayRef new_sizes);

// True when the strides describe a row-major layout (size-1 dims may have any stride).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);

// Smallest and largest storage element a layout touches (relative to the offset).
// For numel == 0 returns {0, -1}.
std::pair<int64_t, int64_t> storage_extent(IntArrayRef sizes, IntArrayRef strides);

// True when two different indices can map to the same storage element: some dim of
// size > 1 has stride 0 (an expanded tensor), or strides overlap. Conservative: may say
// true for exotic non-overlapping layouts, never false for overlapping ones.
bool has_internal_overlap(IntArrayRef sizes, IntArrayRef strides);

}  // namespace glass
