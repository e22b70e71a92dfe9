// viewer/app/compile_panel.cpp — the Compiler panel: a function compiled with glass::compile,
// its graph as traced beside the graph after the passes, and the C++ of a fused group
// (lesson 12).
//
// Left: viz::compile_dot's drawing, laid out by Graphviz and drawn here — the traced graph
// in one dashed box, the optimised graph in another, each fused group a blue box around its
// nodes (click one to show its loop), a graph break a red octagon fed by the value it read.
// Right: the selected group's generated loop, as the code generator wrote it. Above: the
// demos, and what the passes did.
//
// Invariant: the panel draws CompilePanel::view as it is and records what it drew
// (node_rects, group_rects, hover_text) for tests; compiling happens only in open_compile().
#include <imgui.h>

#include <algorithm>
#include <string>

#include "core/error.h"
#include "viewer/app/app.h"

namespace glass::viz::app {

namespace {

constexpr ImU32 kOpFill = IM_COL32(206, 222, 245, 255);
constexpr ImU32 kInputFill = IM_COL32(235, 235, 235, 255);
constexpr ImU32 kBreakFill = IM_COL32(214, 39, 40, 255);
constexpr ImU32 kGroupBox = IM_COL32(31, 119, 180, 255);
constexpr ImU32 kGroupSelected = IM_COL32(255, 170, 40, 255);
constexpr ImU32 kDark = IM_COL32(30, 30, 30, 255);
constexpr ImU32 kEdge = IM_COL32(150, 150, 150, 255);

// "fused group 3" -> 3; anything else -> -1.
int group_of(const ClusterBox& c) {
  const std::string prefix = "fused group ";
  if (c.label.rfind(prefix, 0) != 0) return -1;
  return std::atoi(c.label.c_str() + prefix.size());
}

const std::string* label_of(const CompilePanel& p, const std::string& name) {
  for (const auto& [n, text] : p.labels)
    if (n == name) return &text;
  return nullptr;
}

}  // namespace

void App::open_compile(const std::string& name) {
  CompileView v = record_compile(name);  // throws before anything changes
  compile.layout = layout(compile_dot(v));
  compile.labels = compile_dot_labels(compile_dot(v));
  compile.view = std::move(v);
  compile.selected_group = 0;
  compile.status.clear();
}

void App::compile_panel() {
  ImGui::Begin("Compiler");
  for (const std::string& name : compile_demos()) {
    ImGui::SameLine();
    if (ImGui::Button(name.c_str())) {
      try {
        open_compile(name);
      } catch (const std::exception& e) {
        compile.status = e.what();
      }
    }
  }
  if (!compile.status.empty())
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", compile.status.c_str());
  if (!compile.view) {
    ImGui::TextDisabled("(pick a demo)");
    ImGui::End();
    return;
  }
  const CompileView& v = *compile.view;
  const compiler::VariantInfo& info = v.info;
  ImGui::Text("%s: %s", v.demo.c_str(), v.description.c_str());
  if (info.graph_break)
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "graph break at %s(): this variant runs eagerly",
                       info.graph_break->op.c_str());
  else
    ImGui::Text(
        "passes: %d dead, %d merged, %d folded; %d fused group(s); compiled equals "
        "eager: %s",
        info.dead, info.merged, info.folded, info.fused_groups, v.matches_eager ? "yes" : "no");

  // The drawing, scaled to the left three fifths of the window.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float graph_w = std::max(100.f, avail.x * 0.6f), graph_h = std::max(100.f, avail.y);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("compile_graph", ImVec2(graph_w, graph_h));
  const bool hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const Layout& l = compile.layout;
  const float zoom = static_cast<float>(
      std::min({1.0, graph_w / std::max(1.0, l.width), graph_h / std::max(1.0, l.height)}));
  auto to_screen = [&](Point p) {
    return ImVec2(origin.x + static_cast<float>(p.x) * zoom,
                  origin.y + static_cast<float>(p.y) * zoom);
  };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + graph_w, origin.y + graph_h), true);
  compile.group_rects.clear();
  compile.node_rects.clear();
  compile.hover_text.clear();
  for (const ClusterBox& c : l.clusters) {
    ImVec2 a = to_screen(c.min), z = to_screen(c.max);
    const int g = group_of(c);
    if (g >= 0) {
      compile.group_rects.push_back({g, Rect{a.x, a.y, z.x, z.y}});
      const bool selected = g == compile.selected_group;
      dl->AddRect(a, z, selected ? kGroupSelected : kGroupBox, 6, 0, selected ? 3.f : 1.5f);
      if (hovered && Rect{a.x, a.y, z.x, z.y}.contains(mouse.x, mouse.y)) {
        compile.hover_text = c.label + ": click to show its loop";
        if (clicked) compile.selected_group = g;
      }
    } else {
      dl->AddRect(a, z, IM_COL32(130, 130, 130, 255), 2);
    }
    dl->AddText(ImVec2(a.x + 6, a.y + 3), IM_COL32(220, 220, 220, 255), c.label.c_str());
  }
  for (const EdgePath& e : l.edges) {
    const bool to_break = e.head == "t_break";
    const ImU32 col = to_break ? kBreakFill : kEdge;
    for (size_t i = 0; i + 3 < e.points.size(); i += 3)
      dl->AddBezierCubic(to_screen(e.points[i]), to_screen(e.points[i + 1]),
                         to_screen(e.points[i + 2]), to_screen(e.points[i + 3]), col, 1.5f);
    if (e.end_arrow && !e.points.empty())
      dl->AddLine(to_screen(e.points.back()), to_screen(*e.end_arrow), col, 3.f);
  }
  for (const NodeBox& b : l.nodes) {
    ImVec2 a = to_screen({b.center.x - b.width / 2, b.center.y - b.height / 2});
    ImVec2 z = to_screen({b.center.x + b.width / 2, b.center.y + b.height / 2});
    compile.node_rects.push_back({b.name, Rect{a.x, a.y, z.x, z.y}});
    const bool is_break = b.name == "t_break";
    const bool is_op = b.name.find("_n") != std::string::npos;
    const bool is_output = b.name.find("_out") != std::string::npos;
    if (!is_output)
      dl->AddRectFilled(a, z, is_break ? kBreakFill : is_op ? kOpFill : kInputFill, 6 * zoom);
    const std::string* text = label_of(compile, b.name);
    if (text != nullptr) {
      const ImVec2 size = ImGui::CalcTextSize(text->c_str());
      const ImVec2 at((a.x + z.x - size.x) / 2, (a.y + z.y - size.y) / 2);
      dl->AddText(at,
                  is_break    ? IM_COL32(255, 255, 255, 255)
                  : is_output ? IM_COL32(220, 220, 220, 255)
                              : kDark,
                  text->c_str());
      if (hovered && Rect{a.x, a.y, z.x, z.y}.contains(mouse.x, mouse.y))
        compile.hover_text = *text;
    }
  }
  dl->PopClipRect();
  if (hovered && !compile.hover_text.empty()) ImGui::SetTooltip("%s", compile.hover_text.c_str());

  // The selected group's loop.
  ImGui::SameLine();
  ImGui::BeginChild("compile_source", ImVec2(0, graph_h), true,
                    ImGuiWindowFlags_HorizontalScrollbar);
  if (info.sources.empty()) {
    ImGui::TextDisabled(info.graph_break ? "(no code: the variant runs eagerly)"
                                         : "(nothing fused: every op runs as recorded)");
  } else {
    compile.selected_group =
        std::clamp(compile.selected_group, 0, static_cast<int>(info.sources.size()) - 1);
    ImGui::Text("fused group %d, as generated:", compile.selected_group);
    ImGui::TextUnformatted(kernel_body(v, compile.selected_group).c_str());
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace glass::viz::app
