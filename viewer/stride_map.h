// viewer/stride_map.h — where each element of a view lives in the storage it shares.
//
// The seed's address formula (§II), evaluated for every element of a view:
//   element (i0, i1, ...) is storage cell  storage_offset + i0*stride0 + i1*stride1 + ...
// through core's storage_index, the library's one implementation of it. The stride
// pictures (stride_dot.h) and the app's stride lab draw what these functions return, so a
// picture and a hover always agree with the arithmetic the kernels use. Nothing here
// reads or writes a tensor's elements except values_of, which copies them out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::viz {

// How many elements of t's dtype its storage holds: the length of the strip.
int64_t storage_elements(const Tensor& t);

// The whole storage under t, as a 1-D tensor of its dtype: element k is storage cell k.
Tensor storage_view(const Tensor& t);

// The storage cell of every element of `view`, in row-major order of its logical index.
std::vector<int64_t> storage_cells(const Tensor& view);

// For each storage cell (storage_elements(view) of them), how many logical elements of
// `view` read it: 0 (not part of the view), 1, or more (expand's stride 0 and other
// overlapping views read one cell from several indices).
std::vector<int64_t> reads_per_cell(const Tensor& view);

// The storage cells that both views read, ascending; empty when they read disjoint cells
// or different storages. Non-empty means aliasing: a write through one is seen by the other.
std::vector<int64_t> shared_cells(const Tensor& a, const Tensor& b);
// The same from two views' reads_per_cell (for callers that keep those).
std::vector<int64_t> shared_cells(const std::vector<int64_t>& reads_a,
                                  const std::vector<int64_t>& reads_b);

// The formula with the numbers in: "0 + 1*1 + 2*4 = 9" for index {1, 2} of a view with
// strides [1, 4] and offset 0. `index` has one entry per dim; a negative entry counts
// from the end and is shown as the index it stands for. Out of range: a glass::Error.
std::string address_formula(const Tensor& view, const std::vector<int64_t>& index);

// The logical index of the element at row-major position `flat` of a tensor of `sizes`.
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& sizes);

// The values, as float64 in row-major order (any dtype, layout or device; copied out).
std::vector<double> values_of(const Tensor& t);

}  // namespace glass::viz
