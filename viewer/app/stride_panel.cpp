// viewer/app/stride_panel.cpp — the Stride layout panel: one or two views' logical grids
// beside the storage strip they read.
//
// Every address shown comes from StrideLab (stride.h), i.e. from core's storage_index; the
// panel only lays out cells and records, each frame, which cell the mouse is over, the
// storage cell it maps to, and which cells of either view read that storage cell
// (StrideLab::hovered, hovered_storage, lit_cells) for tests.
#include "viewer/app/app.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/ops/factories.h"
#include "viewer/app/draw.h"
#include "viewer/stride_map.h"

namespace glass::viz::app {

namespace {

// View A blue, view B orange, cells both read purple (aliasing), the hovered cell yellow.
constexpr ImU32 kViewFill[2] = {IM_COL32(70, 90, 130, 255), IM_COL32(170, 100, 40, 255)};
constexpr ImU32 kViewText[2] = {IM_COL32(130, 170, 240, 255), IM_COL32(240, 160, 80, 255)};
constexpr ImU32 kShared = IM_COL32(140, 80, 170, 255);
constexpr ImU32 kHot = IM_COL32(255, 200, 60, 255);
constexpr ImU32 kUnread = IM_COL32(50, 50, 50, 255);
constexpr float kCell = 34, kStripCell = 26;
constexpr int64_t kMaxSide = 16;  // grids show at most 16x16 cells

// The view ops, as buttons; each applies to the active view.
void op_buttons(StrideLab& s) {
  static int dims[2] = {0, 1}, slice_args[4] = {0, 0, 4, 2}, sel[2] = {0, 0};
  static char recipe[128] = "t().slice(0, 0, 3, 2)";
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
    if (!any) sizes.insert(sizes.begin(), 2);  // no size-1 dim: a new leading one, twice
    s.expand(sizes);
  }
  ImGui::SetNextItemWidth(240);
  ImGui::InputText("##recipe", recipe, sizeof recipe);
  ImGui::SameLine();
  if (ImGui::Button("apply views")) s.apply(recipe);
  ImGui::SameLine();
  ImGui::TextDisabled("(code: t(), transpose(0, 1), slice(1, 0, 4, 2), diagonal(), ...)");
}

// The panel's contents. Anything that throws (an op's bad argument, a view the lab
// refuses) is caught by the caller and shown, and the window is still ended.
void draw_stride_lab(StrideLab& s) {
  if (!s.base().defined()) s.reset(arange(12).view({4, 3}), "a");
  if (ImGui::Button("a = arange(12).view({4, 3})")) s.reset(arange(12).view({4, 3}), "a");
  ImGui::SameLine();
  if (ImGui::Button("undo")) s.undo();
  ImGui::SameLine();
  bool comparing = s.comparing();
  if (ImGui::Checkbox("two views (A and B)", &comparing)) s.compare(comparing);
  if (s.comparing()) {
    int active = s.active();
    ImGui::SameLine();
    ImGui::RadioButton("build A", &active, 0);
    ImGui::SameLine();
    ImGui::RadioButton("build B", &active, 1);
    s.set_active(active);
  }
  try {
    op_buttons(s);
    if (s.comparing()) {
      if (ImGui::Button("A.mul_(-1)")) s.write_through(0);
      ImGui::SameLine();
      if (ImGui::Button("B.mul_(-1)")) s.write_through(1);
      ImGui::SameLine();
      ImGui::TextDisabled("(a write through one view, read back through the other)");
    }
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  const int views = s.comparing() ? 2 : 1;
  for (int i = 0; i < views; ++i) {
    const Tensor& v = s.view(i);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kViewText[i]), "%s%s%s",
                       views > 1 ? (i ? "B = " : "A = ") : "", s.expression(i).c_str(),
                       i == s.active() && views > 1 ? "   (building)" : "");
    ImGui::Text("   sizes %s  strides %s  offset %lld%s",
                sizes_str({v.sizes().begin(), v.sizes().end()}).c_str(),
                sizes_str({v.strides().begin(), v.strides().end()}).c_str(),
                static_cast<long long>(v.storage_offset()),
                v.is_contiguous() ? "  contiguous" : "");
  }
  std::vector<int64_t> shared = s.shared_cells();
  if (s.comparing())
    ImGui::TextWrapped(
        "%s", shared.empty()
                  ? "A and B read disjoint storage cells: no aliasing, a write to one never "
                    "shows in the other"
                  : ("A and B share storage cells " + sizes_str(shared) +
                     ": they alias, a write through one is read back through the other")
                        .c_str());
  else
    ImGui::Text("shares storage with %s: %s", s.name().c_str(),
                s.view().is_alias_of(s.base()) ? "yes (a view, nothing copied)" : "no");
  std::string note = s.contiguous_note();
  ImGui::TextWrapped("%s", note.empty()
                               ? "contiguous: contiguous() returns this view itself, no copy"
                               : note.c_str());
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", s.error.c_str());

  // Lay the grids out side by side (the last two dims of each, leading indices 0), and
  // find the cell under the mouse.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiIO& io = ImGui::GetIO();
  const bool window_hovered = ImGui::IsWindowHovered();
  s.cell_index.clear();
  s.cell_view.clear();
  s.cell_rects.clear();
  s.lit_cells.clear();
  s.hovered_view = -1;
  s.hovered.clear();
  s.hovered_storage = -1;
  ImVec2 p = ImGui::GetCursorScreenPos();
  float x = p.x, height = 0;
  std::vector<int64_t> cell_storage;
  for (int i = 0; i < views; ++i) {
    const Tensor& v = s.view(i);
    const int64_t nd = v.dim();
    const int64_t rows = nd >= 2 ? std::min(v.size(-2), kMaxSide) : 1;
    const int64_t cols = nd >= 1 ? std::min(v.size(-1), kMaxSide) : 1;
    if (v.numel() == 0) continue;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        std::vector<int64_t> index(static_cast<size_t>(nd), 0);
        if (nd >= 2) index[static_cast<size_t>(nd - 2)] = r;
        if (nd >= 1) index[static_cast<size_t>(nd - 1)] = c;
        CellRect rect{x + static_cast<float>(c) * kCell, p.y + static_cast<float>(r) * kCell, 0, 0};
        rect.x1 = rect.x0 + kCell - 2;
        rect.y1 = rect.y0 + kCell - 2;
        s.cell_index.push_back(index);
        s.cell_view.push_back(i);
        s.cell_rects.push_back(rect);
        cell_storage.push_back(
            glass::storage_index(v.sizes(), v.strides(), v.storage_offset(), index));
        if (window_hovered && io.MousePos.x >= rect.x0 && io.MousePos.x < rect.x1 &&
            io.MousePos.y >= rect.y0 && io.MousePos.y < rect.y1) {
          s.hovered_view = i;
          s.hovered = index;
          s.hovered_storage = cell_storage.back();
        }
      }
    x += static_cast<float>(cols) * kCell + 24;
    height = std::max(height, static_cast<float>(rows) * kCell);
  }
  // Draw them: every cell that reads the hovered storage cell is lit, in both views. A
  // cell's value is its storage cell's, read once for all of them.
  const std::vector<double>& stored = s.storage_values();
  for (size_t k = 0; k < s.cell_rects.size(); ++k) {
    const CellRect& r = s.cell_rects[k];
    const bool lit = s.hovered_storage >= 0 && cell_storage[k] == s.hovered_storage;
    if (lit) s.lit_cells.push_back(k);
    dl->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1),
                      lit ? kHot : kViewFill[s.cell_view[k]]);
    char buf[32];
    const int64_t cell = cell_storage[k];
    if (cell >= 0 && cell < static_cast<int64_t>(stored.size()))
      std::snprintf(buf, sizeof buf, "%.3g", stored[static_cast<size_t>(cell)]);
    else
      std::snprintf(buf, sizeof buf, "?");
    dl->AddText(ImVec2(r.x0 + 3, r.y0 + 9), IM_COL32(255, 255, 255, 255), buf);
  }
  ImGui::Dummy(ImVec2(x - p.x, height));

  // The storage strip: every cell of the shared storage, tinted by which views read it;
  // a cell one view reads more than once (expand) gets a white frame.
  ImGui::Text("storage (%lld elements)", static_cast<long long>(s.storage_size()));
  const std::vector<int64_t>& reads_a = s.reads_per_cell(0);
  const std::vector<int64_t>& reads_b = s.reads_per_cell(views > 1 ? 1 : 0);
  ImVec2 q = ImGui::GetCursorScreenPos();
  const int64_t shown = std::min<int64_t>(static_cast<int64_t>(reads_a.size()), 64);
  const int64_t per_row =
      std::max<int64_t>(1, static_cast<int64_t>(ImGui::GetContentRegionAvail().x / kStripCell));
  s.strip_rects.clear();
  for (int64_t k = 0; k < shown; ++k) {
    const float cx = q.x + static_cast<float>(k % per_row) * kStripCell,
                cy = q.y + static_cast<float>(k / per_row) * kStripCell;
    s.strip_rects.push_back({cx, cy, cx + kStripCell - 2, cy + kStripCell - 2});
    const int64_t a = reads_a[static_cast<size_t>(k)],
                  b = views > 1 ? reads_b[static_cast<size_t>(k)] : 0;
    const ImU32 col = k == s.hovered_storage ? kHot
                      : a && b               ? kShared
                      : a                    ? kViewFill[0]
                      : b                    ? kViewFill[1]
                                             : kUnread;
    dl->AddRectFilled(ImVec2(cx, cy), ImVec2(cx + kStripCell - 2, cy + kStripCell - 2), col);
    if (a > 1 || b > 1)
      dl->AddRect(ImVec2(cx, cy), ImVec2(cx + kStripCell - 2, cy + kStripCell - 2),
                  IM_COL32(255, 255, 255, 255), 0, 0, 2);
    dl->AddText(ImVec2(cx + 3, cy + 5), IM_COL32(255, 255, 255, 255), std::to_string(k).c_str());
  }
  ImGui::Dummy(ImVec2(static_cast<float>(per_row) * kStripCell,
                      static_cast<float>((shown + per_row - 1) / per_row) * kStripCell));
  if (s.hovered_view >= 0) {
    const Tensor& v = s.view(s.hovered_view);
    ImGui::Text("%s%s -> storage[%s]", s.expression(s.hovered_view).c_str(),
                sizes_str(s.hovered).c_str(), address_formula(v, s.hovered).c_str());
  } else {
    ImGui::TextDisabled("hover a cell: storage_offset + sum(index * stride)");
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "blue: read by A  orange: read by B  purple: read by both (aliasing)  white frame: read "
      "more than once (stride 0)  grey: not read");
  ImGui::PopStyleColor();
}

}  // namespace

void App::stride_panel() {
  ImGui::Begin("Stride layout");
  try {
    draw_stride_lab(stride);
  } catch (const std::exception& e) {
    stride.error = e.what();
  }
  ImGui::End();
}

}  // namespace glass::viz::app
