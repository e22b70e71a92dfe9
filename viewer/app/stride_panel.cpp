// viewer/app/stride_panel.cpp — the Stride layout panel: a view's logical grid beside the
// storage strip it reads.
//
// Every address shown comes from StrideLab (stride.h), i.e. from core's storage_index; the
// panel only lays out cells and records, each frame, which cell the mouse is over and the
// storage cell it maps to (StrideLab::hovered, hovered_storage) for tests.
#include "viewer/app/app.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/ops/factories.h"
#include "viewer/app/draw.h"

namespace glass::viz::app {

void App::stride_panel() {
  ImGui::Begin("Stride layout");
  StrideLab& s = stride;
  if (!s.base().defined()) s.reset(arange(12).view({4, 3}), "a");
  if (ImGui::Button("a = arange(12).view({4, 3})")) s.reset(arange(12).view({4, 3}), "a");
  ImGui::SameLine();
  if (ImGui::Button("undo")) s.undo();
  static int dims[4] = {0, 1, 0, 2}, slice_args[4] = {0, 0, 4, 2}, sel[2] = {0, 0};
  try {
    ImGui::SetNextItemWidth(80);
    ImGui::InputInt2("##tdims", dims);
    ImGui::SameLine();
    if (ImGui::Button("transpose")) s.transpose(dims[0], dims[1]);
    ImGui::SameLine();
    if (ImGui::Button("permute (reverse)")) {
      std::vector<int64_t> p;
      for (int64_t d = s.view().dim() - 1; d >= 0; --d) p.push_back(d);
      s.permute(p);
    }
    ImGui::SetNextItemWidth(160);
    ImGui::InputInt4("dim/start/end/step", slice_args);
    ImGui::SameLine();
    if (ImGui::Button("slice")) s.slice(slice_args[0], slice_args[1], slice_args[2], slice_args[3]);
    ImGui::SetNextItemWidth(80);
    ImGui::InputInt2("dim/index", sel);
    ImGui::SameLine();
    if (ImGui::Button("select")) s.select(sel[0], sel[1]);
    ImGui::SameLine();
    if (ImGui::Button("expand (size-1 dims -> 3)")) {
      std::vector<int64_t> sizes(s.view().sizes().begin(), s.view().sizes().end());
      bool any = false;
      for (int64_t& x : sizes)
        if (x == 1) x = 3, any = true;
      if (!any) {  // no size-1 dim: a new leading one, repeated 2 times
        sizes.insert(sizes.begin(), 2);
      }
      s.expand(sizes);
    }
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  const Tensor& v = s.view();
  ImGui::Text("%s", s.expression().c_str());
  ImGui::Text("sizes %s  strides %s  offset %lld",
              sizes_str({v.sizes().begin(), v.sizes().end()}).c_str(),
              sizes_str({v.strides().begin(), v.strides().end()}).c_str(),
              static_cast<long long>(v.storage_offset()));
  ImGui::Text("shares storage with %s: %s", s.name().c_str(),
              v.is_alias_of(s.base()) ? "yes (a view, nothing copied)" : "no");
  std::string note = s.contiguous_note();
  ImGui::TextWrapped("%s", note.empty()
                               ? "contiguous: contiguous() returns this view itself, no copy"
                               : note.c_str());
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", s.error.c_str());

  // The logical grid: the last two dims (leading indices 0), row-major.
  const int64_t nd = v.dim();
  const int64_t rows = nd >= 2 ? std::min<int64_t>(v.size(-2), 16) : 1;
  const int64_t cols = nd >= 1 ? std::min<int64_t>(v.size(-1), 16) : 1;
  std::vector<double> vals = values_of(v.numel() ? v : v.reshape({0}));
  const float cell = 34;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiIO& io = ImGui::GetIO();
  const bool window_hovered = ImGui::IsWindowHovered();
  s.cell_index.clear();
  s.cell_rects.clear();
  s.hovered.clear();
  s.hovered_storage = -1;
  ImGui::Text("view (logical grid)");
  ImVec2 p = ImGui::GetCursorScreenPos();
  std::vector<int64_t> strides_row(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      std::vector<int64_t> index(static_cast<size_t>(nd), 0);
      if (nd >= 2) index[static_cast<size_t>(nd - 2)] = i;
      if (nd >= 1) index[static_cast<size_t>(nd - 1)] = j;
      CellRect r{p.x + static_cast<float>(j) * cell, p.y + static_cast<float>(i) * cell, 0, 0};
      r.x1 = r.x0 + cell - 2;
      r.y1 = r.y0 + cell - 2;
      s.cell_index.push_back(index);
      s.cell_rects.push_back(r);
      if (window_hovered && io.MousePos.x >= r.x0 && io.MousePos.x < r.x1 &&
          io.MousePos.y >= r.y0 && io.MousePos.y < r.y1) {
        s.hovered = index;
        s.hovered_storage = s.storage_index(index);
      }
    }
  for (size_t k = 0; k < s.cell_rects.size(); ++k) {
    const CellRect& r = s.cell_rects[k];
    bool hot = s.cell_index[k] == s.hovered;
    dl->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1),
                      hot ? IM_COL32(255, 200, 60, 255) : IM_COL32(70, 90, 130, 255));
    int64_t flat = 0;  // the element's position in row-major order, to read its value
    for (int64_t d = 0; d < nd; ++d)
      flat = flat * v.size(d) + s.cell_index[k][static_cast<size_t>(d)];
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g",
                  flat < static_cast<int64_t>(vals.size()) ? vals[static_cast<size_t>(flat)] : 0.0);
    dl->AddText(ImVec2(r.x0 + 3, r.y0 + 9), IM_COL32(255, 255, 255, 255), buf);
  }
  ImGui::Dummy(ImVec2(static_cast<float>(cols) * cell, static_cast<float>(rows) * cell));

  // The storage strip: every cell of the shared storage; the view's cells tinted, the
  // hovered element's cell lit, cells read more than once (expand) marked.
  ImGui::Text("storage (%lld elements)", static_cast<long long>(s.storage_size()));
  std::vector<int64_t> reads = s.reads_per_cell();
  ImVec2 q = ImGui::GetCursorScreenPos();
  const float sc = 26;
  const int64_t shown = std::min<int64_t>(static_cast<int64_t>(reads.size()), 64);
  const int64_t per_row =
      std::max<int64_t>(1, static_cast<int64_t>(ImGui::GetContentRegionAvail().x / sc));
  s.strip_rects.clear();
  for (int64_t k = 0; k < shown; ++k) {
    float x = q.x + static_cast<float>(k % per_row) * sc,
          y = q.y + static_cast<float>(k / per_row) * sc;
    s.strip_rects.push_back({x, y, x + sc - 2, y + sc - 2});
    ImU32 col = k == s.hovered_storage               ? IM_COL32(255, 200, 60, 255)
                : reads[static_cast<size_t>(k)] > 1  ? IM_COL32(200, 90, 200, 255)
                : reads[static_cast<size_t>(k)] == 1 ? IM_COL32(70, 90, 130, 255)
                                                     : IM_COL32(50, 50, 50, 255);
    dl->AddRectFilled(ImVec2(x, y), ImVec2(x + sc - 2, y + sc - 2), col);
    dl->AddText(ImVec2(x + 3, y + 5), IM_COL32(255, 255, 255, 255), std::to_string(k).c_str());
  }
  ImGui::Dummy(ImVec2(static_cast<float>(per_row) * sc,
                      static_cast<float>((shown + per_row - 1) / per_row) * sc));
  if (!s.hovered.empty())
    ImGui::Text("%s%s -> storage[%s]", s.expression().c_str(), sizes_str(s.hovered).c_str(),
                s.formula(s.hovered).c_str());
  else
    ImGui::TextDisabled("hover a cell: storage_offset + sum(index * stride)");
  ImGui::TextDisabled(
      "blue: read by the view once  purple: read more than once (aliasing)  grey: not read");
  ImGui::End();
}

}  // namespace glass::viz::app
