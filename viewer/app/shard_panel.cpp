// viewer/app/shard_panel.cpp — the Shard panel: memory per rank over one training step, DDP
// against FSDP, and which rows of each parameter each FSDP rank owns (lesson 11).
//
// Curves: one plot per rung, DDP above FSDP, on one bytes scale, so FSDP's line sits about
// N times lower. x is the ledger's order of allocations and frees (all ranks of a rung in
// one order), the phases (zero_grad, forward, backward, step) are shaded behind, and the
// arithmetic's model state (16Ψ, 16Ψ/N, written "psi": ImGui's font has no Greek) is
// dashed. DDP's line is flat: its state stays through the step. FSDP's is a sawtooth: each
// unit's parameters are gathered (up by the unit's whole size) while it runs and freed
// after. Hovering a plot reads every rank's bytes at that point. Under each plot, a
// triangle per change of half a unit or more in one piece: FSDP's gathers (up) and frees
// (down), three of each in forward for three units.
//
// Ownership: one bar per FSDP parameter, its dim 0 padded to N × ceil(d0 / N) rows, cut in
// rank order; a rank's real rows are in its colour, its padding rows grey and hatched.
//
// Invariant: the panel draws ShardView::rec as it is and records what it drew (plots,
// curves, jumps, slice_rects, padding_rects, hover_text) for tests; recording happens only in
// open_shard(): on opening, on "record again", and when the ranks or prefetch change.
//
// [SECTION] state   [SECTION] curves   [SECTION] ownership   [SECTION] panel
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "viewer/app/app.h"

namespace glass::viz::app {

namespace {

constexpr float kLabelW = 150, kPlotH = 170, kBarH = 20;
constexpr ImU32 kTextLight = IM_COL32(235, 235, 235, 255);
constexpr ImU32 kTextDim = IM_COL32(170, 170, 170, 255);
constexpr ImU32 kPadding = IM_COL32(110, 110, 110, 255);

// A rank's colour, the SVG's palette (distributed_shard.cpp).
ImU32 rank_color(int rank, int alpha = 255) {
  static constexpr int kPalette[][3] = {{76, 120, 168}, {228, 87, 86},   {84, 162, 75},
                                        {245, 133, 24}, {178, 121, 162}, {114, 183, 178},
                                        {238, 202, 59}, {157, 117, 93}};
  const auto& c = kPalette[static_cast<size_t>(rank) % std::size(kPalette)];
  return IM_COL32(c[0], c[1], c[2], alpha);
}

ImU32 phase_color(ShardPhase p) {
  switch (p) {
    case ShardPhase::ZeroGrad: return IM_COL32(255, 255, 255, 12);
    case ShardPhase::Forward: return IM_COL32(90, 140, 220, 40);
    case ShardPhase::Backward: return IM_COL32(230, 140, 60, 40);
    case ShardPhase::Step: return IM_COL32(90, 190, 90, 40);
  }
  return IM_COL32(255, 255, 255, 10);
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

// A rank's bytes just after the change at `order` (its state at rest before its first).
int64_t bytes_at(const RankMemoryCurve& c, int64_t order) {
  int64_t bytes = c.at_rest;
  for (const MemorySample& s : c.samples) {
    if (s.order > order) break;
    bytes = s.bytes;
  }
  return bytes;
}

const char* phase_at(const RankMemoryCurve& c, int64_t order) {
  for (const PhaseSpan& p : c.phases)
    if (order >= p.begin && order < p.end) return phase_name(p.phase);
  return "between phases";
}

}  // namespace

// [SECTION] state ---------------------------------------------------------------------------

void App::open_shard() {
  ShardView& v = shard;
  v.status.clear();
  try {
    v.rec = record_sharding({.world_size = v.world_size, .prefetch = v.prefetch});
    ++v.recordings;
  } catch (const std::exception& e) {  // glass errors, and a thread the system refused
    v.status = e.what();
    throw;
  }
}

// [SECTION] curves --------------------------------------------------------------------------

namespace {

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color) {
  const float len = b.x - a.x;
  for (float x = 0; x < len; x += 9)
    dl->AddLine(ImVec2(a.x + x, a.y), ImVec2(a.x + std::min(x + 5, len), b.y), color, 1.2f);
}

void rung_plot(ShardView& v, const RungRecording& rung, double arithmetic, const char* formula,
               double ymax, int64_t threshold, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float x0 = o.x + kLabelW, top = o.y, bottom = o.y + kPlotH;
  const double orders = static_cast<double>(std::max<int64_t>(rung.orders, 1));
  auto x_of = [&](int64_t order) {
    return x0 + static_cast<float>(static_cast<double>(order) / orders) * width;
  };
  auto y_of = [&](double bytes) { return bottom - static_cast<float>(bytes / ymax) * kPlotH; };
  // The labels: the rung, its peak and state at rest (the largest over ranks).
  dl->AddText(ImVec2(o.x, top), kTextLight, rung.name.c_str());
  dl->AddText(ImVec2(o.x, top + 16), kTextDim,
              ("peak " + mib(static_cast<double>(rung.peak()))).c_str());
  dl->AddText(ImVec2(o.x, top + 30), kTextDim,
              ("at rest " + mib(static_cast<double>(rung.at_rest()))).c_str());
  // The phases, from rank 0 (the others run the same ones at about the same places).
  if (!rung.ranks.empty())
    for (const PhaseSpan& p : rung.ranks[0].phases) {
      const float a = x_of(p.begin), b = std::max(x_of(p.end), a + 1);
      dl->AddRectFilled(ImVec2(a, top), ImVec2(b, bottom), phase_color(p.phase));
      if (ImGui::CalcTextSize(phase_name(p.phase)).x < b - a - 4)
        dl->AddText(ImVec2(a + 3, top + 2), kTextDim, phase_name(p.phase));
    }
  dl->AddRect(ImVec2(x0, top), ImVec2(x0 + width, bottom), IM_COL32(140, 140, 140, 255));
  // The arithmetic, dashed.
  const float ya = y_of(arithmetic);
  dashed_line(dl, ImVec2(x0, ya), ImVec2(x0 + width, ya), IM_COL32(230, 230, 230, 200));
  const std::string label = std::string(formula) + " = " + mib(arithmetic);
  dl->AddText(ImVec2(x0 + width - ImGui::CalcTextSize(label.c_str()).x - 4, ya - 15), kTextLight,
              label.c_str());
  // Each rank's bytes as a step line: flat until its next change.
  for (const RankMemoryCurve& c : rung.ranks) {
    std::vector<ImVec2> points;
    points.reserve(2 * c.samples.size() + 2);
    float y = y_of(static_cast<double>(c.at_rest));
    points.emplace_back(x0, y);
    for (const MemorySample& s : c.samples) {
      const float x = x_of(s.order);
      points.emplace_back(x, y);
      y = y_of(static_cast<double>(s.bytes));
      points.emplace_back(x, y);
    }
    points.emplace_back(x0 + width, y);
    dl->AddPolyline(points.data(), static_cast<int>(points.size()), rank_color(c.rank), 0, 1.5f);
    v.curves.emplace_back(rung.name, c.rank);
  }
  // A unit's gather (up) and free (down) — any change that large in one piece — marked
  // under the plot, so the sawtooth's teeth can be counted.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const RankMemoryCurve& c : rung.ranks)
    for (const MemoryJump& j : find_jumps(c, threshold)) {
      const float x = x_of(j.order), y = bottom + 4 + 7 * static_cast<float>(c.rank);
      if (j.delta > 0)
        dl->AddTriangleFilled(ImVec2(x, y), ImVec2(x - 3.5f, y + 6), ImVec2(x + 3.5f, y + 6),
                              rank_color(c.rank));
      else
        dl->AddTriangleFilled(ImVec2(x - 3.5f, y), ImVec2(x + 3.5f, y), ImVec2(x, y + 6),
                              rank_color(c.rank));
      v.jumps.emplace_back(rung.name, c.rank);
      if (mouse.x >= x - 4 && mouse.x <= x + 4 && mouse.y >= y && mouse.y <= y + 6)
        v.hover_text = rung.name + " rank " + std::to_string(c.rank) + ": " +
                       (j.delta > 0 ? "+" : "-") + mib(static_cast<double>(std::abs(j.delta))) +
                       (j.delta > 0 ? " allocated" : " freed") + " in one piece, in " +
                       phase_at(c, j.order);
    }
  const float marks = 4 + 7 * static_cast<float>(rung.ranks.size());
  const Rect plot{x0, top, x0 + width, bottom};
  v.plots.emplace_back(rung.name, plot);
  if (plot.contains(mouse.x, mouse.y) && !rung.ranks.empty()) {
    const auto order = static_cast<int64_t>((mouse.x - x0) / width * orders);
    dl->AddLine(ImVec2(mouse.x, top), ImVec2(mouse.x, bottom), IM_COL32(255, 255, 255, 120));
    std::string text = rung.name + ", change " + std::to_string(order) + " of " +
                       std::to_string(rung.orders) + " (rank 0 in " +
                       phase_at(rung.ranks[0], order) + ")";
    for (const RankMemoryCurve& c : rung.ranks)
      text += "\nrank " + std::to_string(c.rank) + ": " +
              mib(static_cast<double>(bytes_at(c, order))) + "  (at rest " +
              mib(static_cast<double>(c.at_rest)) + ", peak " + mib(static_cast<double>(c.peak)) +
              ")";
    v.hover_text = text;
  }
  ImGui::Dummy(ImVec2(kLabelW + width, kPlotH + marks + 4));
}

// [SECTION] ownership -----------------------------------------------------------------------

void ownership_bars(ShardView& v, float width) {
  const ShardRecording& rec = *v.rec;
  const int n = rec.options.world_size;
  ImGui::Text("FSDP: which rows of dim 0 each rank owns (ceil(d0 / %d) rows each; grey: padding)",
              n);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t i = 0; i < rec.ownership.size(); ++i) {
    const ParamOwnership& p = rec.ownership[i];
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float x0 = o.x + kLabelW;
    std::string shape;
    for (int64_t d : p.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    dl->AddText(ImVec2(o.x, o.y + 3), kTextLight, (p.name + " [" + shape + "]").c_str());
    const double total = static_cast<double>(std::max<int64_t>(p.rows_per_rank * n, 1));
    auto x_of = [&](double row) { return x0 + static_cast<float>(row / total) * width; };
    for (size_t r = 0; r < p.ranks.size(); ++r) {
      const ParamOwnership::Slice& s = p.ranks[r];
      const int rank = static_cast<int>(r);
      const double start = static_cast<double>(r) * static_cast<double>(p.rows_per_rank);
      const double real = static_cast<double>(s.end - s.begin);
      const Rect own{x_of(start), o.y, x_of(start + real), o.y + kBarH};
      const Rect pad{own.x1, o.y, x_of(start + real + static_cast<double>(s.padding)), o.y + kBarH};
      if (s.end > s.begin) {
        dl->AddRectFilled(ImVec2(own.x0, own.y0), ImVec2(own.x1, own.y1), rank_color(rank));
        v.slice_rects.push_back({{i, rank}, own});
      }
      if (s.padding > 0) {
        dl->AddRectFilled(ImVec2(pad.x0, pad.y0), ImVec2(pad.x1, pad.y1), kPadding);
        dl->PushClipRect(ImVec2(pad.x0, pad.y0), ImVec2(pad.x1, pad.y1), true);
        for (float x = pad.x0 - kBarH; x < pad.x1; x += 6)  // the hatching
          dl->AddLine(ImVec2(x, pad.y1), ImVec2(x + kBarH, pad.y0), IM_COL32(60, 60, 60, 255));
        dl->PopClipRect();
        v.padding_rects.push_back({{i, rank}, pad});
      }
      dl->AddRect(ImVec2(own.x0, own.y0), ImVec2(std::max(pad.x1, own.x1), own.y1),
                  IM_COL32(30, 30, 30, 255));
      char label[64];
      std::snprintf(label, sizeof label, "rank %d [%lld, %lld)", rank,
                    static_cast<long long>(s.begin), static_cast<long long>(s.end));
      if (ImGui::CalcTextSize(label).x < own.x1 - own.x0 - 6)
        dl->AddText(ImVec2(own.x0 + 4, own.y0 + 3), IM_COL32(20, 20, 20, 255), label);
      if (own.contains(mouse.x, mouse.y) || pad.contains(mouse.x, mouse.y)) {
        v.hover_text = p.name + ": rank " + std::to_string(rank) + " owns rows [" +
                       std::to_string(s.begin) + ", " + std::to_string(s.end) + ") of " +
                       std::to_string(p.shape.at(0));
        if (s.padding > 0)
          v.hover_text +=
              ", and " + std::to_string(s.padding) + (s.padding == 1 ? " zero row" : " zero rows") +
              " of padding (its block is ceil(d0 / N) = " + std::to_string(p.rows_per_rank) +
              " rows)";
      }
    }
    ImGui::Dummy(ImVec2(kLabelW + width, kBarH + 4));
  }
}

}  // namespace

// [SECTION] panel ---------------------------------------------------------------------------

void App::shard_panel() {
  ImGui::SetNextWindowBgAlpha(1);  // opaque: it opens over other panels
  ImGui::Begin("Shards");
  ShardView& v = shard;
  v.plots.clear();
  v.curves.clear();
  v.jumps.clear();
  v.slice_rects.clear();
  v.padding_rects.clear();
  v.hover_text.clear();
  bool record = false;
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("ranks", &v.world_size, 1, 8);
  if (ImGui::IsItemDeactivatedAfterEdit()) record = v.open();  // once, when let go
  ImGui::SameLine();
  if (ImGui::Checkbox("FSDP prefetch", &v.prefetch)) record = v.open();
  const ImVec2 box_min = ImGui::GetItemRectMin(), box_max = ImGui::GetItemRectMax();
  v.prefetch_box = Rect{box_min.x, box_min.y, box_max.x, box_max.y};
  ImGui::SameLine();
  if (ImGui::Button(v.open() ? "record again" : "record")) record = true;
  if (record) {
    try {
      open_shard();
    } catch (const std::exception&) {  // open_shard said why in v.status
    }
  }
  if (!v.status.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", v.status.c_str());
  if (!v.open()) {
    ImGui::TextWrapped(
        "Trains a small MLP for one step with Adam under DDP and under FSDP on the threads "
        "backend (ranks as threads of this process) and counts each rank's memory: press "
        "record, or the lesson tour's lesson 11 entry.");
    ImGui::End();
    return;
  }
  const ShardRecording& rec = *v.rec;
  ImGui::Text(
      "MLP of %zu Linear layers, psi = %lld parameters, %d ranks; model state in float32 "
      "(parameters, gradients, Adam's two moments): DDP 16 psi, FSDP 16 psi / N",
      rec.options.layers.size() - 1, static_cast<long long>(rec.parameters),
      rec.options.world_size);
  const float width = std::max(ImGui::GetContentRegionAvail().x - kLabelW - 10, 100.f);
  const double ymax =
      static_cast<double>(std::max<int64_t>(std::max(rec.ddp.peak(), rec.fsdp.peak()), 1)) * 1.05;
  const int64_t threshold = gather_threshold(rec);
  rung_plot(v, rec.ddp, rec.ddp_model_state(), "16 psi", ymax, threshold, width);
  rung_plot(v, rec.fsdp, rec.fsdp_model_state(), "16 psi / N", ymax, threshold, width);
  // The legend: one colour per rank, then what x is.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 l = ImGui::GetCursorScreenPos();
  for (int r = 0; r < rec.options.world_size; ++r) {
    const float x = l.x + kLabelW + static_cast<float>(r) * 70;
    dl->AddRectFilled(ImVec2(x, l.y + 2), ImVec2(x + 12, l.y + 12), rank_color(r));
    dl->AddText(ImVec2(x + 16, l.y), kTextLight, ("rank " + std::to_string(r)).c_str());
  }
  ImGui::Dummy(ImVec2(kLabelW + 70.f * static_cast<float>(rec.options.world_size), 14));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "x: every allocation and free of the step, all ranks in one order; dashed: the "
      "arithmetic; triangles: %s or more allocated (up) or freed (down) at once. DDP keeps its "
      "whole state; FSDP gathers a unit while it runs, then frees it.",
      mib(static_cast<double>(threshold)).c_str());
  ImGui::PopStyleColor();
  ImGui::Separator();
  ownership_bars(v, width);
  if (!v.hover_text.empty()) ImGui::SetTooltip("%s", v.hover_text.c_str());
  ImGui::End();
}

}  // namespace glass::viz::app
