// viewer/app/graph_panel.cpp — the Graph panel: the snapshot drawn from Graphviz's layout.
//
// Invariant: the layouts are recomputed only when structure_key() of the drawn snapshot
// changes (a new graph), never because gradients changed; each frame redraws boxes and
// Bezier edges from the cached Layout with the current pan and zoom, and records every
// box's screen rectangle (GraphView::node_rects) for clicks and tests.
//
// Note [The first screen]
// A graph is readable when its labels are: at least GraphView::legible_px() pixels high
// (13 px, ImGui's own text size, times the monitor's content scale). So a fit
//   1. lays the graph out top-down and left-right and draws the direction in which the
//      whole graph comes out larger in the panel (a tall graph in a wide panel runs left
//      to right), unless the user picked one;
//   2. zooms to show the whole graph, but never below legible_px() / kLabelPoints: a graph
//      too big for the panel at that size overflows and scrolls (wheel, Shift+wheel
//      sideways, drag) rather than shrinking to boxes whose text cannot be read;
//   3. where the graph overflows, shows the selected node (the root, on a new graph) with
//      the graph's edge at the panel's edge; where it fits, centres it.
// Ctrl+wheel still zooms to any size: an overview is the user's choice, not the fit's.
//
// [SECTION] fit, zoom and scroll   [SECTION] header and labels   [SECTION] panel
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

// [SECTION] fit, zoom and scroll -------------------------------------------------------------

constexpr float kMargin = 10;      // pixels between a fitted graph and the panel's edge
constexpr float kMaxFitZoom = 2;   // a small graph is not blown up further (× content scale)
constexpr float kScrollStep = 60;  // pixels per wheel notch

// ImGui 1.86 indexes io.KeysDown by the platform backend's key codes. GLFW's codes for
// these keys are their ASCII characters (GLFW_KEY_EQUAL is '='), and 333 / 334 for the
// keypad's - and +; '=' is the unshifted '+' key.
constexpr int kKeyPlus = '=', kKeyMinus = '-', kKeyZero = '0', kKeypadMinus = 333,
              kKeypadPlus = 334;

// The zoom at which the whole of `l` fits in `room` with a margin.
float whole_graph_zoom(const Layout& l, ImVec2 room) {
  if (l.width <= 0 || l.height <= 0) return 1;
  return std::min((room.x - 2 * kMargin) / static_cast<float>(l.width),
                  (room.y - 2 * kMargin) / static_cast<float>(l.height));
}

// The pan along one axis: centred when `size` (layout units) fits in `room` at `zoom`;
// otherwise `focus` (a layout coordinate, if any) in the middle, clamped so that no empty
// space opens beyond the graph's edges.
float pan_for(double size, float room, float zoom, std::optional<double> focus) {
  const float content = static_cast<float>(size) * zoom;
  if (content + 2 * kMargin <= room) return (room - content) / 2;
  const float pan = focus ? room / 2 - static_cast<float>(*focus) * zoom : kMargin;
  return std::clamp(pan, room - content - kMargin, kMargin);
}

// Note [The first screen]: direction, zoom with a legible floor, and where to start.
void fit(GraphView& g, ImVec2 room) {
  if (g.auto_direction)
    g.direction = whole_graph_zoom(g.left_right, room) > whole_graph_zoom(g.top_down, room)
                      ? RankDir::LeftRight
                      : RankDir::TopDown;
  g.layout = g.direction == RankDir::LeftRight ? g.left_right : g.top_down;
  g.zoom = std::max(std::min(whole_graph_zoom(g.layout, room), kMaxFitZoom * g.content_scale),
                    g.legible_px() / kLabelPoints);
  const NodeBox* focus = g.layout.node(g.selected);
  g.pan_x = pan_for(g.layout.width, room.x, g.zoom,
                    focus ? std::optional(focus->center.x) : std::nullopt);
  g.pan_y = pan_for(g.layout.height, room.y, g.zoom,
                    focus ? std::optional(focus->center.y) : std::nullopt);
  g.fit_pending = false;
}

// Zooms to `z` keeping the layout point under (mx, my) (panel coordinates) where it is.
void zoom_about(GraphView& g, float z, float mx, float my) {
  g.pan_x = mx - (mx - g.pan_x) * z / g.zoom;
  g.pan_y = my - (my - g.pan_y) * z / g.zoom;
  g.zoom = z;
}

// Ctrl + / Ctrl -: one pixel larger or smaller labels, now (zooming about the panel's
// centre) and at every later fit; Ctrl 0: the default size, fitted again.
void label_size_keys(GraphView& g, ImVec2 room) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl || io.WantTextInput) return;
  float px = g.label_px;
  if (ImGui::IsKeyPressed(kKeyPlus) || ImGui::IsKeyPressed(kKeypadPlus)) px += 1;
  if (ImGui::IsKeyPressed(kKeyMinus) || ImGui::IsKeyPressed(kKeypadMinus)) px -= 1;
  if (ImGui::IsKeyPressed(kKeyZero)) {
    px = kDefaultLabelPx;
    g.fit_pending = true;
  }
  px = std::clamp(px, kMinLabelPx, kMaxLabelPx);
  if (px == g.label_px) return;
  zoom_about(g, g.zoom * px / g.label_px, room.x / 2, room.y / 2);
  g.label_px = px;
}

// Where the graph overflows the panel, keeps its edges from scrolling past the panel's.
void clamp_scroll(GraphView& g, ImVec2 room) {
  auto clamp = [&](float& pan, double size, float extent) {
    const float content = static_cast<float>(size) * g.zoom;
    if (content + 2 * kMargin > extent) pan = std::clamp(pan, extent - content - kMargin, kMargin);
  };
  clamp(g.pan_x, g.layout.width, room.x);
  clamp(g.pan_y, g.layout.height, room.y);
}

// Thin bars along the bottom and right edges showing which part of an overflowing graph
// is in view (the graph scrolls with the wheel; these only say so).
void scroll_bars(ImDrawList* dl, const GraphView& g, ImVec2 origin, ImVec2 room) {
  const ImU32 col = IM_COL32(200, 200, 200, 110);
  const float content_x = static_cast<float>(g.layout.width) * g.zoom + 2 * kMargin;
  const float content_y = static_cast<float>(g.layout.height) * g.zoom + 2 * kMargin;
  if (content_x > room.x) {
    const float a = std::clamp((kMargin - g.pan_x) / content_x, 0.f, 1.f);
    const float z = std::clamp(a + room.x / content_x, 0.f, 1.f);
    dl->AddRectFilled(ImVec2(origin.x + a * room.x, origin.y + room.y - 5),
                      ImVec2(origin.x + z * room.x, origin.y + room.y - 1), col, 2);
  }
  if (content_y > room.y) {
    const float a = std::clamp((kMargin - g.pan_y) / content_y, 0.f, 1.f);
    const float z = std::clamp(a + room.y / content_y, 0.f, 1.f);
    dl->AddRectFilled(ImVec2(origin.x + room.x - 5, origin.y + a * room.y),
                      ImVec2(origin.x + room.x - 1, origin.y + z * room.y), col, 2);
  }
}

// [SECTION] header and labels ---------------------------------------------------------------

// The panel's first line: collapse, fit, direction, what is shown, and the controls.
void graph_header(App& app) {
  GraphView& g = app.graph;
  if (ImGui::Checkbox("collapse modules", &g.collapse)) {
    // Ids differ between the two drawings: the root stays selected, anything else is dropped.
    const bool root = app.selected_node() != nullptr && app.selected_node()->is_root;
    app.set_graph(g.snapshot);
    if (root)
      app.select_root();
    else
      g.selected = -1;
  }
  ImGui::SameLine();
  if (ImGui::Button("fit")) g.fit_pending = true;
  ImGui::SameLine();
  const char* directions[] = {"auto", "top-down", "left-right"};
  int current = g.auto_direction ? 0 : g.direction == RankDir::TopDown ? 1 : 2;
  ImGui::SetNextItemWidth(100);
  if (ImGui::Combo("##direction", &current, directions, 3)) {
    g.auto_direction = current == 0;
    if (current != 0) g.direction = current == 1 ? RankDir::TopDown : RankDir::LeftRight;
    g.fit_pending = true;
  }
  ImGui::SameLine();
  ImGui::Text("%zu nodes  zoom %.0f%%  labels %.0f px", g.drawn.nodes.size(),
              static_cast<double>(g.zoom) * 100, static_cast<double>(kLabelPoints * g.zoom));
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "drag or wheel: scroll (Shift+wheel: sideways)\nCtrl+wheel: zoom\n"
        "Ctrl + / Ctrl -: larger / smaller labels (Ctrl 0: default size, fit)\n"
        "click: select a node for the inspector");
}

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

// [SECTION] panel ---------------------------------------------------------------------------

void App::ensure_layout() {
  std::string key = structure_key(graph.drawn);
  if (key == graph.layout_key) return;
  DotOptions options = layout_options();
  graph.top_down = layout(to_dot(graph.drawn, options));
  options.rankdir = RankDir::LeftRight;
  graph.left_right = layout(to_dot(graph.drawn, options));
  graph.layout = graph.direction == RankDir::LeftRight ? graph.left_right : graph.top_down;
  graph.layout_key = std::move(key);
  ++graph.layouts_computed;
  graph.fit_pending = true;
}

void App::graph_panel() {
  ImGui::Begin("Graph");
  graph_header(*this);
  ensure_layout();
  const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const ImVec2 room(std::max(avail.x, 1.f), std::max(avail.y, 1.f));
  graph.canvas = Rect{origin.x, origin.y, origin.x + room.x, origin.y + room.y};
  ImGui::InvisibleButton("canvas", room, ImGuiButtonFlags_MouseButtonLeft);
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (graph.fit_pending && graph.top_down.width > 0 && avail.x > 1 && avail.y > 1) fit(graph, room);
  label_size_keys(graph, room);
  if (hovered && io.KeyCtrl && io.MouseWheel != 0) {  // zoom about the mouse
    zoom_about(graph, std::clamp(graph.zoom * std::pow(1.15f, io.MouseWheel), 0.05f, 8.f),
               io.MousePos.x - origin.x, io.MousePos.y - origin.y);
  } else if (hovered && (io.MouseWheel != 0 || io.MouseWheelH != 0)) {  // scroll
    const bool sideways = io.KeyShift && io.MouseWheelH == 0;
    graph.pan_x += kScrollStep * (sideways ? io.MouseWheel : io.MouseWheelH);
    graph.pan_y += kScrollStep * (sideways ? 0 : io.MouseWheel);
    clamp_scroll(graph, room);
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
  dl->PushClipRect(origin, ImVec2(origin.x + room.x, origin.y + room.y), true);
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
  graph.smallest_label_px = 0;
  const float label_px = kLabelPoints * graph.zoom;  // one point is one pixel at zoom 1
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
    if (label_px >= 3.5f) {  // below that a label is a grey smear: boxes only
      graph.labels_shortened += draw_label(dl, label_font(), label_px, a, z,
                                           node_label(graph.drawn, n, layout_options()));
      graph.smallest_label_px =
          graph.smallest_label_px > 0 ? std::min(graph.smallest_label_px, label_px) : label_px;
    }
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
        graph.node_rects.back().second.contains(io.MousePos.x, io.MousePos.y))
      clicked = b.id;
  }
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) graph.selected = clicked;
  scroll_bars(dl, graph, origin, room);
  dl->PopClipRect();
  ImGui::End();
}

}  // namespace glass::viz::app
