// viewer/app/stride.cpp — the stride lab's views and address arithmetic (stride.h).
//
// Every number shown comes from the views' own metadata through viewer/stride_map.h (and
// so core's storage_index, the one implementation of the address formula); each view is
// recomputed from the base and its steps, so undo is "drop a step" and a view can never
// drift from the code shown for it.
#include "viewer/app/stride.h"

#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/shape.h"
#include "viewer/stride_map.h"

namespace glass::viz::app {

namespace {

ViewStep step(std::string op, std::vector<int64_t> args) {
  ViewStep s{std::move(op), {}, {}};
  for (int64_t a : args) s.args.push_back({a}), s.braced.push_back(false);
  return s;
}

ViewStep list_step(std::string op, std::vector<int64_t> list) {
  return ViewStep{std::move(op), {std::move(list)}, {true}};
}

}  // namespace

void StrideLab::reset(Tensor base, std::string name) {
  GLASS_CHECK(base.defined(), "StrideLab::reset(): the tensor '", name, "' is undefined");
  GLASS_CHECK(base.numel() <= kMaxElements && storage_elements(base) <= kMaxElements,
              "stride lab: '", name, "' has ", base.numel(), " elements over a storage of ",
              storage_elements(base), "; the lab shows tensors of at most ", kMaxElements);
  base_ = base;
  name_ = std::move(name);
  for (Chain& c : chains_) c = {{}, base_};
  active_ = 0;
  comparing_ = owns_storage_ = false;
  hovered_view = -1;
  hovered.clear();
  hovered_storage = -1;
  lit_cells.clear();
  error.clear();
  changed();
}

void StrideLab::changed() {
  reads_ok_ = {false, false};
  values_ok_ = false;
}

void StrideLab::set_active(int view) {
  GLASS_CHECK(view == 0 || (view == 1 && comparing_), "StrideLab::set_active(", view,
              "): the views are 0 (A)", comparing_ ? " and 1 (B)" : " (turn compare on for B)");
  active_ = view;
}

void StrideLab::compare(bool on) {
  if (on && !comparing_) chains_[1] = {{}, base_}, changed();
  comparing_ = on;
  if (!on) active_ = 0;
}

const Tensor& StrideLab::view(int i) const {
  GLASS_CHECK(i == 0 || (i == 1 && comparing_), "StrideLab::view(", i, "): no such view");
  return chains_[static_cast<size_t>(i)].view;
}

std::string StrideLab::expression(int i) const {
  GLASS_CHECK(i == 0 || (i == 1 && comparing_), "StrideLab::expression(", i, "): no such view");
  return name_ + recipe_code(chains_[static_cast<size_t>(i)].steps);
}

void StrideLab::push(std::vector<ViewStep> steps) {
  Chain& c = chains_[static_cast<size_t>(active_)];
  Tensor v = apply_views(c.view, steps);  // throws before anything changes
  GLASS_CHECK(v.numel() <= kMaxElements, "stride lab: ", expression(active_), recipe_code(steps),
              " has ", v.numel(), " elements; the lab shows views of at most ", kMaxElements);
  c.view = std::move(v);
  changed();
  c.steps.insert(c.steps.end(), steps.begin(), steps.end());
  error.clear();
}

void StrideLab::transpose(int64_t dim0, int64_t dim1) { push({step("transpose", {dim0, dim1})}); }
void StrideLab::permute(const std::vector<int64_t>& dims) { push({list_step("permute", dims)}); }
void StrideLab::slice(int64_t dim, int64_t start, int64_t end, int64_t step_) {
  push({step("slice", {dim, start, end, step_})});
}
void StrideLab::expand(const std::vector<int64_t>& sizes) { push({list_step("expand", sizes)}); }
void StrideLab::select(int64_t dim, int64_t index) { push({step("select", {dim, index})}); }
void StrideLab::apply(const std::string& recipe) { push(parse_view_recipe(recipe)); }

void StrideLab::undo() {
  Chain& c = chains_[static_cast<size_t>(active_)];
  if (c.steps.empty()) return;
  c.steps.pop_back();
  c.view = apply_views(base_, c.steps);
  changed();
}

int64_t StrideLab::storage_index(const std::vector<int64_t>& index) const {
  const Tensor& v = view();
  GLASS_CHECK(static_cast<int64_t>(index.size()) == v.dim(), "StrideLab::storage_index(): index ",
              "has ", index.size(), " entries but the view has ", v.dim(), " dims");
  return glass::storage_index(v.sizes(), v.strides(), v.storage_offset(), index);
}

std::string StrideLab::formula(const std::vector<int64_t>& index) const {
  return address_formula(view(), index);
}

int64_t StrideLab::storage_size() const { return base_.defined() ? storage_elements(base_) : 0; }

const std::vector<int64_t>& StrideLab::reads_per_cell(int i) const {
  const Tensor& v = view(i);  // checks i
  if (!reads_ok_[static_cast<size_t>(i)]) {
    reads_[static_cast<size_t>(i)] = viz::reads_per_cell(v);
    reads_ok_[static_cast<size_t>(i)] = true;
  }
  return reads_[static_cast<size_t>(i)];
}

const std::vector<double>& StrideLab::storage_values() const {
  if (!values_ok_) {
    values_ = base_.defined() ? values_of(storage_view(base_)) : std::vector<double>();
    values_ok_ = true;
  }
  return values_;
}

std::vector<int64_t> StrideLab::shared_cells() const {
  if (!comparing_) return {};
  return viz::shared_cells(reads_per_cell(0),
                           reads_per_cell(1));  // cached: the panel asks per frame
}

std::string StrideLab::contiguous_note() const {
  const Tensor& v = view();
  if (v.is_contiguous()) return "";
  std::ostringstream os;
  os << "contiguous() would copy " << v.numel() << " elements into a new storage: strides "
     << v.strides() << " are not the row-major strides of sizes " << v.sizes();
  return os.str();
}

void StrideLab::write_through(int i) {
  NoGradGuard no_grad;
  (void)view(i);  // checks i
  if (!owns_storage_) {
    // Copy the whole storage, then rebuild the base and both views over the copy.
    Tensor copy = storage_view(base_.detach()).clone();
    base_ = copy.as_strided(base_.sizes(), base_.strides(), base_.storage_offset());
    for (Chain& c : chains_) c.view = apply_views(base_, c.steps);
    owns_storage_ = true;
  }
  changed();  // before the write: a failed write may still have touched the copy
  chains_[static_cast<size_t>(i)].view.mul_(-1);
}

}  // namespace glass::viz::app
