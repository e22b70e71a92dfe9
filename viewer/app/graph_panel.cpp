// viewer/app/graph_panel.cpp — the Graph panel: the snapshot drawn from Graphviz's layout.
//
// Invariant: the layout is recomputed only when structure_key() of the drawn snapshot
// changes (a new graph), never because gradients changed; each frame redraws boxes and
// Bezier edges from the cached Layout with the current pan and zoom, and records every
// box's screen rectangle (GraphView::node_rects) for clicks and tests.
#include "viewer/app/app.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "viewer/app/draw.h"
#include "viewer/app/fonts.h"
#include "viewer/dot.h"

namespace glass::viz::app {

namespace {

// What the layout is computed from; node labels are drawn with the same options, so each
// box holds the text Graphviz sized it for. Colours are drawn here, from live statistics.
DotOptions layout_options() {
  DotOptions opts;
  opts.color_by_gradient = false;
  return opts;
}

// Draws `text` (lines separated by '\n') centred in the box [a, z] at `size` pixels, as
// Graphviz places a label; a line wider than the box is cut and ends in "...". Returns
// how many lines were cut.
int draw_label(ImDrawList* dl, ImFont* font, float size, ImVec2 a, ImVec2 z,
               const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const float room = z.x - a.x - 2, line_height = size * 1.15f;
  float y = (a.y + z.y) / 2 - line_height * static_cast<float>(lines.size()) / 2;
  int cut = 0;
  const ImVec4 clip(a.x, a.y, z.x, z.y);
  for (std::string& line : lines) {
    float w = font->CalcTextSizeA(size, FLT_MAX, 0, line.c_str()).x;
    if (w > room) {
      ++cut;
      while (!line.empty() && w > room) {
        // Drop one whole UTF-8 character: its continuation bytes (10xxxxxx), then its lead.
        while (line.size() > 1 && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80)
          line.pop_back();
        line.pop_back();
        w = font->CalcTextSizeA(size, FLT_MAX, 0, (line + "...").c_str()).x;
      }
      line += "...";
    }
    dl->AddText(font, size, ImVec2((a.x + z.x - w) / 2, y + (line_height - size) / 2), kText,
                line.c_str(), nullptr, 0, &clip);
    y += line_height;
  }
  return cut;
}

}  // namespace

void App::ensure_layout() {
  std::string key = structure_key(graph.drawn);
  if (key == graph.layout_key) return;
  graph.layout = layout(to_dot(graph.drawn, layout_options()));
  graph.layout_key = std::move(key);
  ++graph.layouts_computed;
  graph.fit_pending = true;
}

void App::graph_panel() {
  ImGui::Begin("Graph");
  if (ImGui::Checkbox("collapse modules", &graph.collapse)) set_graph(graph.snapshot);
  ImGui::SameLine();
  if (ImGui::Button("fit")) graph.fit_pending = true;
  ImGui::SameLine();
  ImGui::Text("%zu nodes  zoom %.0f%%  (drag: pan, wheel: zoom, click: select)",
              graph.drawn.nodes.size(), static_cast<double>(graph.zoom) * 100);
  ensure_layout();
  const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  ImGui::InvisibleButton("canvas", ImVec2(std::max(avail.x, 1.f), std::max(avail.y, 1.f)),
                         ImGuiButtonFlags_MouseButtonLeft);
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (graph.fit_pending && graph.layout.width > 0 && avail.x > 1 && avail.y > 1) {
    graph.zoom = std::min({avail.x / static_cast<float>(graph.layout.width + 20),
                           avail.y / static_cast<float>(graph.layout.height + 20), 2.f});
    graph.pan_x = (avail.x - static_cast<float>(graph.layout.width) * graph.zoom) / 2;
    graph.pan_y = (avail.y - static_cast<float>(graph.layout.height) * graph.zoom) / 2;
    graph.fit_pending = false;
  }
  if (hovered && io.MouseWheel != 0) {  // zoom about the mouse
    float z = std::clamp(graph.zoom * std::pow(1.15f, io.MouseWheel), 0.05f, 8.f);
    float mx = io.MousePos.x - origin.x, my = io.MousePos.y - origin.y;
    graph.pan_x = mx - (mx - graph.pan_x) * z / graph.zoom;
    graph.pan_y = my - (my - graph.pan_y) * z / graph.zoom;
    graph.zoom = z;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    graph.pan_x += io.MouseDelta.x;
    graph.pan_y += io.MouseDelta.y;
  }
  auto to_screen = [&](Point p) {
    return ImVec2(origin.x + graph.pan_x + static_cast<float>(p.x) * graph.zoom,
                  origin.y + graph.pan_y + static_cast<float>(p.y) * graph.zoom);
  };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + avail.x, origin.y + avail.y), true);
  for (const ClusterBox& c : graph.layout.clusters)
    dl->AddRect(to_screen(c.min), to_screen(c.max), IM_COL32(120, 120, 160, 255), 4);
  const float thick = std::max(1.f, 1.5f * graph.zoom);
  for (const EdgePath& e : graph.layout.edges) {  // coloured by the gradient the producer got
    std::optional<GradStats> g;
    if (e.from >= 0 && e.from < static_cast<int>(graph.drawn.nodes.size()))
      g = graph.drawn.nodes[static_cast<size_t>(e.from)].grad;
    ImU32 col = grad_color(g);
    for (size_t i = 0; i + 3 < e.points.size(); i += 3)
      dl->AddBezierCubic(to_screen(e.points[i]), to_screen(e.points[i + 1]),
                         to_screen(e.points[i + 2]), to_screen(e.points[i + 3]), col, thick);
    if (e.end_arrow && !e.points.empty())
      dl->AddLine(to_screen(e.points.back()), to_screen(*e.end_arrow), col, thick * 2);
    if (e.start_arrow && !e.points.empty())
      dl->AddLine(to_screen(e.points.front()), to_screen(*e.start_arrow), col, thick * 2);
  }
  graph.node_rects.clear();
  graph.labels_shortened = 0;
  int clicked = -1;
  for (const NodeBox& b : graph.layout.nodes) {
    if (b.id < 0 || b.id >= static_cast<int>(graph.drawn.nodes.size())) continue;
    const GraphNode& n = graph.drawn.nodes[static_cast<size_t>(b.id)];
    ImVec2 a = to_screen({b.center.x - b.width / 2, b.center.y - b.height / 2});
    ImVec2 z = to_screen({b.center.x + b.width / 2, b.center.y + b.height / 2});
    graph.node_rects.push_back({b.id, Rect{a.x, a.y, z.x, z.y}});
    dl->AddRectFilled(a, z, b.id == graph.selected ? kNodeSelected : kNodeFill, 4 * graph.zoom);
    ImU32 border = IM_COL32(60, 60, 60, 255);
    float width = 1;
    if (n.grad && (n.grad->norm < thresholds.vanishing || n.grad->norm > thresholds.exploding ||
                   n.grad->nan_count + n.grad->inf_count > 0)) {
      border = n.grad->norm < thresholds.vanishing ? IM_COL32(60, 120, 255, 255)
                                                   : IM_COL32(255, 40, 40, 255);
      width = 4;
    }
    dl->AddRect(a, z, border, 4 * graph.zoom, 0, width);
    if (graph.zoom > 0.35f)  // to_dot's labels are 10-point text; one point is one pixel at zoom 1
      graph.labels_shortened += draw_label(dl, label_font(), 10.f * graph.zoom, a, z,
                                           node_label(graph.drawn, n, layout_options()));
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
        graph.node_rects.back().second.contains(io.MousePos.x, io.MousePos.y))
      clicked = b.id;
  }
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) graph.selected = clicked;
  dl->PopClipRect();
  ImGui::End();
}

}  // namespace glass::viz::app
