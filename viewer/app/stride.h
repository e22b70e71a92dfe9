// viewer/app/stride.h — the stride lab: a tensor, one or two chains of views over it, and
// where each element of a view lives in the storage they share.
//
// The model (seed §II): element (i0, i1, ...) of a view is storage cell
//   storage_offset + i0*stride0 + i1*stride1 + ...      (viewer/stride_map.h)
// StrideLab keeps a base tensor and up to two views built from it with transpose,
// permute, slice (with a step), expand, select or any view recipe (viewer/view_recipe.h).
// Every step is a view, so each view always shares `base`'s storage (the invariant); two
// views side by side show where they alias (the cells both read), and write_through()
// shows what aliasing means: a write through one view is read back through the other.
// The panel draws the grids beside the storage strip; the hover state below is what it
// found under the mouse.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "viewer/view_recipe.h"

namespace glass::viz::app {

struct CellRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

class StrideLab {
 public:
  // Starts over from `base` (any tensor of at most kMaxElements, over a storage of at most
  // as many; its storage is what the strip shows): one view, the base itself, and no
  // second view. A larger tensor is a glass::Error and leaves the lab as it was.
  void reset(Tensor base, std::string name);
  const Tensor& base() const { return base_; }
  const std::string& name() const { return name_; }

  // Which view the ops below apply to (0 = A, 1 = B; B only while comparing).
  int active() const { return active_; }
  void set_active(int view);
  // Shows a second view B (starting as the base itself) beside A, or hides it.
  void compare(bool on);
  bool comparing() const { return comparing_; }

  // The active view, or view i; and the code that made it: "a.transpose(0, 1)".
  const Tensor& view() const { return view(active_); }
  const Tensor& view(int i) const;
  std::string expression() const { return expression(active_); }
  std::string expression(int i) const;

  // Each applies one view to the active view; a bad argument is a glass::Error from the
  // op, naming it (the view is then unchanged).
  void transpose(int64_t dim0, int64_t dim1);
  void permute(const std::vector<int64_t>& dims);
  void slice(int64_t dim, int64_t start, int64_t end, int64_t step);
  void expand(const std::vector<int64_t>& sizes);
  void select(int64_t dim, int64_t index);
  // Any views written as code: "t().slice(0, 0, 3, 2)"; all or nothing.
  void apply(const std::string& recipe);
  // Takes back the active view's last step.
  void undo();

  // The storage index of the active view's element at `index` (one entry per dim), and
  // the formula evaluated for it: "0 + 1*1 + 2*3 = 7".
  int64_t storage_index(const std::vector<int64_t>& index) const;
  std::string formula(const std::vector<int64_t>& index) const;
  // How many storage cells the views can reach (the strip's length).
  int64_t storage_size() const;
  // How many logical elements of view i read each storage cell (expand makes it > 1), and
  // the storage's values: computed when the views change, not per frame (the panel reads
  // them every frame).
  const std::vector<int64_t>& reads_per_cell(int i) const;
  const std::vector<int64_t>& reads_per_cell() const { return reads_per_cell(active_); }
  const std::vector<double>& storage_values() const;
  // The most elements a view in the lab may have: the lab reads every element's address
  // when a view changes, so a stride-0 view of billions is refused, not allocated.
  static constexpr int64_t kMaxElements = int64_t{1} << 22;
  // The storage cells both views read while comparing: where A and B alias.
  std::vector<int64_t> shared_cells() const;
  // "" when contiguous() would return the active view itself, else why it copies.
  std::string contiguous_note() const;

  // Negates every element of view i in place (in the storage A and B share), so the cells
  // the other view shares change in it too. The first write moves the lab onto a private
  // copy of the storage, with the same layout, so a tensor opened from a model is never
  // written.
  void write_through(int i);

  // Hover state, set by the panel each frame: the grid cell under the mouse (its view and
  // logical index) and the storage cell it maps to; -1 / empty when none.
  int hovered_view = -1;
  std::vector<int64_t> hovered;
  int64_t hovered_storage = -1;
  // The grid cells as drawn on the last frame (view A's then B's; each grid row-major over
  // its last two dims, leading indices 0), which view each is of, and the strip's cells.
  std::vector<std::vector<int64_t>> cell_index;
  std::vector<int> cell_view;
  std::vector<CellRect> cell_rects;
  std::vector<CellRect> strip_rects;
  // The grid cells lit on the last frame because they read the hovered storage cell: the
  // hovered one, and in the other view those that alias it (indices into cell_index).
  std::vector<size_t> lit_cells;
  // The last error from an op (shown in the panel), cleared by the next successful one.
  std::string error;

 private:
  struct Chain {
    std::vector<ViewStep> steps;
    Tensor view;
  };
  void push(std::vector<ViewStep> steps);
  void changed();  // drops the caches below
  Tensor base_;
  std::string name_;
  std::array<Chain, 2> chains_;
  int active_ = 0;
  bool comparing_ = false, owns_storage_ = false;
  mutable std::array<std::vector<int64_t>, 2> reads_;
  mutable std::array<bool, 2> reads_ok_ = {false, false};
  mutable std::vector<double> values_;
  mutable bool values_ok_ = false;
};

}  // namespace glass::viz::app
