// viewer/app/stride.h — the stride lab: a tensor, a chain of views over it, and where each
// element of the view lives in the storage they share.
//
// The model (seed §II): element (i0, i1, ...) of a view is storage cell
//   storage_offset + i0*stride0 + i1*stride1 + ...      (core/shape.h: storage_index)
// StrideLab keeps a base tensor and the view the user built from it with transpose,
// permute, slice (with a step), expand and select — each a view, so `view` always shares
// `base`'s storage (the invariant). The panel draws the view's logical grid beside the
// storage strip; the hover state below is what it found under the mouse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::viz::app {

struct CellRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

class StrideLab {
 public:
  // Starts over from `base` (any tensor; its storage is what the strip shows).
  void reset(Tensor base, std::string name);
  const Tensor& base() const { return base_; }
  const Tensor& view() const { return view_; }
  const std::string& name() const { return name_; }
  // The chain applied so far, as code: "a.transpose(0, 1).slice(1, 0, 4, 2)".
  std::string expression() const;

  // Each applies one view to the current view; a bad argument is a glass::Error from the
  // op, naming it (the view is then unchanged).
  void transpose(int64_t dim0, int64_t dim1);
  void permute(const std::vector<int64_t>& dims);
  void slice(int64_t dim, int64_t start, int64_t end, int64_t step);
  void expand(const std::vector<int64_t>& sizes);
  void select(int64_t dim, int64_t index);
  void undo();

  // The storage index of the view's element at `index` (one entry per dim), and the
  // formula evaluated for it: "0 + 1*1 + 2*3 = 7".
  int64_t storage_index(const std::vector<int64_t>& index) const;
  std::string formula(const std::vector<int64_t>& index) const;
  // How many storage cells the view can reach (the strip's length): the base storage's
  // element count.
  int64_t storage_size() const;
  // How many logical elements of the view read each storage cell (expand makes it > 1).
  std::vector<int64_t> reads_per_cell() const;
  // "" when contiguous() would return the view itself, else why it copies.
  std::string contiguous_note() const;

  // Hover state, set by the panel each frame: the grid cell under the mouse (its logical
  // index) and the storage cell it maps to; -1 / empty when none.
  std::vector<int64_t> hovered;
  int64_t hovered_storage = -1;
  // The grid's cells as drawn on the last frame, row-major over the drawn grid (a 1-D view
  // is one row; an N-D view shows its last two dims with leading indices 0), and the strip.
  std::vector<std::vector<int64_t>> cell_index;
  std::vector<CellRect> cell_rects;
  std::vector<CellRect> strip_rects;
  // The last error from an op (shown in the panel), cleared by the next successful one.
  std::string error;

 private:
  void apply(Tensor v, std::string step);
  Tensor base_, view_;
  std::string name_;
  std::vector<std::string> steps_;
  std::vector<Tensor> history_;
};

}  // namespace glass::viz::app
