// viewer/app/draw.h — drawing helpers the panels share (internal to viewer/app/).
//
// Colours, heatmaps and number formatting for ImGui's draw list. kNodeFill is the one
// fill of graph node boxes: the screenshot test counts boxes by it, so nothing else may
// use it.
#pragma once

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/grad_mode.h"
#include "core/tensor.h"
#include "viewer/snapshot.h"
#include "viewer/stride_map.h"   // values_of
#include "viewer/view_recipe.h"  // join_ints

namespace glass::viz::app {

// The one fill of node boxes: tests count boxes in screenshots by this colour.
inline constexpr ImU32 kNodeFill = IM_COL32(250, 214, 110, 255);
inline constexpr ImU32 kNodeSelected = IM_COL32(120, 220, 140, 255);
inline constexpr ImU32 kText = IM_COL32(20, 20, 20, 255);

// Blue (cold, 0) to red (hot, 1).
inline ImU32 heat(double t) {
  t = std::clamp(std::isfinite(t) ? t : 1.0, 0.0, 1.0);
  return IM_COL32(static_cast<int>(40 + 215 * t), 60, static_cast<int>(40 + 215 * (1 - t)), 255);
}

// Edge colour from a gradient norm, on a log scale from 1e-6 to 1e2.
inline ImU32 grad_color(const std::optional<GradStats>& g) {
  if (!g) return IM_COL32(160, 160, 160, 255);
  double t = (std::log10(std::max(g->norm, 1e-12)) + 6) / 8;
  return heat(t);
}

// A 1-D or 2-D tensor as a heatmap of `cell`-pixel squares (longer tensors are cut).
inline void heatmap(const char* id, const Tensor& t, float cell = 8) {
  if (!t.defined() || t.dim() < 1 || t.dim() > 2) {
    ImGui::TextDisabled("(%s: heatmaps are for 1-D and 2-D tensors)", id);
    return;
  }
  const int64_t rows = t.dim() == 2 ? std::min<int64_t>(t.size(0), 64) : 1;
  const int64_t cols = std::min<int64_t>(t.size(-1), 64);
  Tensor shown = t.dim() == 2 ? t.narrow(0, 0, rows).narrow(1, 0, cols) : t.narrow(0, 0, cols);
  std::vector<double> v = values_of(shown);
  double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  ImGui::Text("%s  min %.4g  max %.4g%s", id, lo, hi,
              rows * cols < t.numel() ? "  (first 64x64)" : "");
  ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double x = v[static_cast<size_t>(i * cols + j)];
      ImVec2 a(p.x + static_cast<float>(j) * cell, p.y + static_cast<float>(i) * cell);
      dl->AddRectFilled(a, ImVec2(a.x + cell - 1, a.y + cell - 1),
                        heat(hi > lo ? (x - lo) / (hi - lo) : 0.5));
    }
  ImGui::Dummy(ImVec2(static_cast<float>(cols) * cell, static_cast<float>(rows) * cell));
}

inline std::string sizes_str(const std::vector<int64_t>& v) { return "[" + join_ints(v) + "]"; }

}  // namespace glass::viz::app
