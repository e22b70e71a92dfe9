// viewer/stride_map.cpp — the address formula over whole views (stride_map.h).
#include "viewer/stride_map.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/shape.h"

namespace glass::viz {

int64_t storage_elements(const Tensor& t) {
  GLASS_CHECK(t.defined(), "storage_elements(): the tensor is undefined");
  return static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
}

Tensor storage_view(const Tensor& t) { return t.as_strided({storage_elements(t)}, {1}, 0); }

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 0) continue;
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return index;
}

std::vector<int64_t> storage_cells(const Tensor& view) {
  GLASS_CHECK(view.defined(), "storage_cells(): the tensor is undefined");
  std::vector<int64_t> cells;
  cells.reserve(static_cast<size_t>(view.numel()));
  const int64_t dims = view.dim();
  std::vector<int64_t> index(static_cast<size_t>(dims), 0);
  for (int64_t k = 0; k < view.numel(); ++k) {
    cells.push_back(storage_index(view.sizes(), view.strides(), view.storage_offset(), index));
    for (int64_t d = dims - 1; d >= 0; --d) {  // odometer, last dim fastest
      if (++index[static_cast<size_t>(d)] < view.sizes()[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return cells;
}

std::vector<int64_t> reads_per_cell(const Tensor& view) {
  std::vector<int64_t> reads(static_cast<size_t>(storage_elements(view)), 0);
  for (int64_t s : storage_cells(view))
    if (s >= 0 && s < static_cast<int64_t>(reads.size())) ++reads[static_cast<size_t>(s)];
  return reads;
}

std::vector<int64_t> shared_cells(const Tensor& a, const Tensor& b) {
  if (!a.is_alias_of(b)) return {};
  return shared_cells(reads_per_cell(a), reads_per_cell(b));
}

std::vector<int64_t> shared_cells(const std::vector<int64_t>& reads_a,
                                  const std::vector<int64_t>& reads_b) {
  std::vector<int64_t> both;
  for (size_t k = 0; k < std::min(reads_a.size(), reads_b.size()); ++k)
    if (reads_a[k] > 0 && reads_b[k] > 0) both.push_back(static_cast<int64_t>(k));
  return both;
}

std::string address_formula(const Tensor& view, const std::vector<int64_t>& index) {
  GLASS_CHECK(static_cast<int64_t>(index.size()) == view.dim(), "address_formula(): index has ",
              index.size(), " entries but the view has ", view.dim(), " dims");
  // Negative entries count from the end (as core's storage_index takes them); the text
  // shows the index actually used, so its sum is the result.
  std::vector<int64_t> at = index;
  for (size_t d = 0; d < at.size(); ++d) {
    const int64_t n = view.sizes()[d];
    if (at[d] < 0) at[d] += n;
    GLASS_CHECK(at[d] >= 0 && at[d] < n, "address_formula(): index ", index[d], " is out of ",
                "range for dim ", d, " of size ", n);
  }
  std::ostringstream os;
  os << view.storage_offset();
  for (size_t d = 0; d < at.size(); ++d) os << " + " << at[d] << "*" << view.strides()[d];
  os << " = " << storage_index(view.sizes(), view.strides(), view.storage_offset(), at);
  return os.str();
}

std::vector<double> values_of(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor c = t.detach().to(Device(kCPU)).to(ScalarType::Float64).contiguous();
  const double* p = c.data_ptr<double>();
  return {p, p + c.numel()};
}

}  // namespace glass::viz
