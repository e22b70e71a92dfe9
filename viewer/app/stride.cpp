// viewer/app/stride.cpp — the stride lab's views and address arithmetic (stride.h).
//
// Every number shown comes from the view's own metadata through core's storage_index, the
// one implementation of the address formula; nothing here re-derives strides.
#include "viewer/app/stride.h"

#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/shape.h"

namespace glass::viz::app {

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

void StrideLab::reset(Tensor base, std::string name) {
  GLASS_CHECK(base.defined(), "StrideLab::reset(): the tensor '", name, "' is undefined");
  base_ = base;
  view_ = base;
  name_ = std::move(name);
  steps_.clear();
  history_.clear();
  hovered.clear();
  hovered_storage = -1;
  error.clear();
}

std::string StrideLab::expression() const {
  std::string s = name_;
  for (const std::string& step : steps_) s += step;
  return s;
}

void StrideLab::apply(Tensor v, std::string step) {
  history_.push_back(view_);
  view_ = std::move(v);
  steps_.push_back(std::move(step));
  error.clear();
}

void StrideLab::transpose(int64_t dim0, int64_t dim1) {
  apply(view_.transpose(dim0, dim1),
        ".transpose(" + std::to_string(dim0) + ", " + std::to_string(dim1) + ")");
}

void StrideLab::permute(const std::vector<int64_t>& dims) {
  apply(view_.permute(dims), ".permute({" + join(dims) + "})");
}

void StrideLab::slice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  apply(view_.slice(dim, start, end, step), ".slice(" + join({dim, start, end, step}) + ")");
}

void StrideLab::expand(const std::vector<int64_t>& sizes) {
  apply(view_.expand(sizes), ".expand({" + join(sizes) + "})");
}

void StrideLab::select(int64_t dim, int64_t index) {
  apply(view_.select(dim, index), ".select(" + join({dim, index}) + ")");
}

void StrideLab::undo() {
  if (history_.empty()) return;
  view_ = history_.back();
  history_.pop_back();
  steps_.pop_back();
}

int64_t StrideLab::storage_index(const std::vector<int64_t>& index) const {
  GLASS_CHECK(static_cast<int64_t>(index.size()) == view_.dim(),
              "StrideLab::storage_index(): index [", join(index), "] has ", index.size(),
              " entries but the view has ", view_.dim(), " dims");
  return glass::storage_index(view_.sizes(), view_.strides(), view_.storage_offset(), index);
}

std::string StrideLab::formula(const std::vector<int64_t>& index) const {
  std::ostringstream os;
  os << view_.storage_offset();
  for (size_t d = 0; d < index.size(); ++d) os << " + " << index[d] << "*" << view_.strides()[d];
  os << " = " << storage_index(index);
  return os.str();
}

int64_t StrideLab::storage_size() const {
  if (!base_.defined()) return 0;
  return static_cast<int64_t>(base_.storage().nbytes()) / base_.element_size();
}

std::vector<int64_t> StrideLab::reads_per_cell() const {
  std::vector<int64_t> reads(static_cast<size_t>(storage_size()), 0);
  const int64_t n = view_.numel(), dims = view_.dim();
  std::vector<int64_t> index(static_cast<size_t>(dims), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t s = storage_index(index);
    if (s >= 0 && s < static_cast<int64_t>(reads.size())) ++reads[static_cast<size_t>(s)];
    for (int64_t d = dims - 1; d >= 0; --d) {  // odometer, last dim fastest
      if (++index[static_cast<size_t>(d)] < view_.sizes()[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return reads;
}

std::string StrideLab::contiguous_note() const {
  if (view_.is_contiguous()) return "";
  std::ostringstream os;
  os << "contiguous() would copy " << view_.numel() << " elements into a new storage: strides "
     << view_.strides() << " are not the row-major strides of sizes " << view_.sizes();
  return os.str();
}

}  // namespace glass::viz::app
