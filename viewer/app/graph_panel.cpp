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

#include "core/error.h"
#include "viewer/app/draw.h"
#include "viewer/dot.h"

namespace glass::viz::app {

void App::ensure_layout() {
  std::string key = structure_key(graph.drawn);
  if (key == graph.layout_key) return;
  DotOptions opts;
  opts.color_by_gradient = false;  // colours are drawn here, from the live statistics
  graph.layout = layout(to_dot(graph.drawn, opts));
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
    if (graph.zoom > 0.35f) {
      std::string text = n.label.empty() ? n.name : n.label + "\n" + n.name;
      if (n.output.known()) text += "\n" + to_string(n.output);
      // Graphviz sized the box for its 14-point proportional font; ImGui's monospaced
      // one fits at about 10 points. Scaled with the zoom, clipped to the box.
      ImVec4 clip(a.x, a.y, z.x, z.y);
      dl->AddText(ImGui::GetFont(), std::min(10.f * graph.zoom, 20.f),
                  ImVec2(a.x + 3 * graph.zoom, a.y + 2 * graph.zoom), kText, text.c_str(), nullptr,
                  0, &clip);
    }
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
        graph.node_rects.back().second.contains(io.MousePos.x, io.MousePos.y))
      clicked = b.id;
  }
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) graph.selected = clicked;
  dl->PopClipRect();
  ImGui::End();
}

}  // namespace glass::viz::app
