// viewer/stride_dot.h — the stride picture: views' logical grids above the storage strip.
//
// Seed §II's picture as DOT, for Graphviz to lay out and render (graphviz.h): each view
// is a grid of its elements (an N-D view as a row of 2-D blocks, one per leading index),
// the storage is one strip of cells numbered from 0, and an arrow runs from every element
// to the storage cell the address formula gives it (stride_map.h). Storage cells are
// tinted by which views read them; a cell read by two views is where they alias, and a
// cell read twice by one view (expand's stride 0) is marked. One element may be
// highlighted: its arrow is drawn bold and the caption evaluates the formula for it.
//
//   Tensor x = arange(12).view({3, 4});
//   std::string dot = viz::stride_to_dot({{"x.t()", x.t()}}, {.highlight = Index{1, 2}});
//   viz::render(dot, viz::Format::Svg, "transpose.svg");
//
// glass-dot --tensor 3,4 --view 't()' draws the same (lesson 02's figures come from it).
// Invariant: all views share one storage, so one strip serves them all; a view of a
// different storage, or one too large to read as a picture, is an error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::viz {

using Index = std::vector<int64_t>;

struct StrideView {
  std::string name;  // the caption: the code that made it, "x.t()"
  Tensor tensor;
};

struct StrideDotOptions {
  // A logical index into the first view (one entry per dim, negative counts from the
  // end; {} for a 0-dim view), or none.
  std::optional<std::vector<int64_t>> highlight = std::nullopt;
  // Draw an arrow from every element to its storage cell (else only the highlighted one).
  bool arrows = true;
  // Write each storage cell's value below its index (else only the index).
  bool storage_values = false;
};

// The most elements a view, and cells a storage, may have to be drawn (a picture with
// more is not legible; the stride lab in the app shows bigger tensors).
inline constexpr int64_t kMaxStridePictureCells = 64;

std::string stride_to_dot(const std::vector<StrideView>& views,
                          const StrideDotOptions& options = {});

}  // namespace glass::viz
