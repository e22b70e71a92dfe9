// viewer/app/timeline_panel.cpp — the Timeline panel: what the simulated GPU ran, one lane
// per stream and per engine under the host's lane of enqueue marks, across a time axis in
// ms; hover a span for its op, its bytes or grid and its times; zoom and pan in time.
//
// Invariant: the panel draws TimelineView::timeline as it is and never changes the model.
// Each frame maps [view_t0, view_t1] onto the plot's width, draws only the spans that
// reach into it, and records every drawn span's box (span_rects) and the span under the
// mouse with its span_details (hovered, hover_text), so tests read what was drawn. Live,
// the records are re-read at most every refresh_s seconds, never per frame: building a
// Timeline sorts every record. Colours, hatching and outlines are span_style()'s, as in
// glass-dot --timeline's SVG, so the two pictures read the same.
//
// Controls, as the graph panel's: Ctrl+wheel zooms in time about the mouse, drag or
// Shift+wheel pans in time, the wheel alone scrolls the lanes when they overflow.
//
// [SECTION] view   [SECTION] live   [SECTION] panel
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "cuda/sim/sim_runtime.h"
#include "viewer/app/app.h"

namespace glass::viz::app {

namespace {

// [SECTION] view ----------------------------------------------------------------------------

constexpr float kRowHeight = 20, kLanePad = 3, kAxisHeight = 22, kScrollStep = 40;
constexpr double kMinWindowNs = 200;      // the deepest zoom: 200 ns across the plot
constexpr double kLiveWindowNs = 40e6;    // live: the last 40 ms
constexpr int kLiveStepsPerFrame = 4;     // live: chunks the pipeline enqueues per frame
constexpr size_t kLiveMaxRecords = 6000;  // live pipeline: the simulator's timeline is
                                          // cleared beyond this, to keep refreshes cheap
constexpr float kMarkHalfWidth = 3;       // pixels either side of a mark that hover it
constexpr ImU32 kHoverOutline = IM_COL32(255, 214, 0, 255);
constexpr ImU32 kWaitedOutline = IM_COL32(192, 20, 30, 255);

ImU32 color(TimelineColor c) { return IM_COL32(c.r, c.g, c.b, 255); }

float lane_height(const TimelineLane& l) {
  return static_cast<float>(l.rows) * kRowHeight + 2 * kLanePad;
}

double window(const TimelineView& v) { return v.view_t1 - v.view_t0; }

// The window becomes `factor` times as long (below 1: zoom in), keeping `pivot` where it is.
void zoom_about(TimelineView& v, double factor, double pivot) {
  const double len = std::max(window(v) * factor, kMinWindowNs);
  const double frac = (pivot - v.view_t0) / window(v);
  v.view_t0 = pivot - frac * len;
  v.view_t1 = v.view_t0 + len;
}

void pan(TimelineView& v, double ns) {
  v.view_t0 += ns;
  v.view_t1 += ns;
}

// The whole timeline, with 2% to spare either side.
void fit_whole(TimelineView& v) {
  const Timeline& t = v.timeline;
  const double len = std::max(static_cast<double>(t.t1_ns - t.t0_ns), kMinWindowNs);
  v.view_t0 = static_cast<double>(t.t0_ns) - 0.02 * len;
  v.view_t1 = static_cast<double>(t.t0_ns) + 1.02 * len;
  v.fit_pending = false;
}

// Keeps the window's length and puts the timeline's end near its right edge, or, while
// the whole timeline is shorter than the window, its start at the left edge.
void follow_end(TimelineView& v) {
  const double len = window(v);
  v.view_t0 = std::max(static_cast<double>(v.timeline.t1_ns) - 0.98 * len,
                       static_cast<double>(v.timeline.t0_ns) - 0.02 * len);
  v.view_t1 = v.view_t0 + len;
}

// Light diagonal stripes over a box: pageable host memory (the SVG's hatch).
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 z) {
  const float h = z.y - a.y;
  dl->PushClipRect(a, z, true);
  for (float x = a.x - h; x < z.x; x += 6)
    dl->AddLine(ImVec2(x, z.y), ImVec2(x + h, a.y), IM_COL32(255, 255, 255, 140), 2);
  dl->PopClipRect();
}

// `text` cut to `room` pixels with "...", or empty when not even a few characters fit.
std::string fit_text(const std::string& text, float room) {
  if (ImGui::CalcTextSize(text.c_str()).x <= room) return text;
  std::string cut = text;
  while (!cut.empty() && ImGui::CalcTextSize((cut + "...").c_str()).x > room) cut.pop_back();
  return cut.size() >= 3 ? cut + "..." : "";
}

// One line of swatches: what the colours, the hatch, the outline and the marks mean (the
// SVG's legend, in the panel's colours).
void legend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto swatch = [&](TimelineColor c, bool hatched, bool waited, const char* text) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetFontSize();
    const ImVec2 a(p.x, p.y + 1), z(p.x + 1.4f * s, p.y + s - 1);
    dl->AddRectFilled(a, z, color(c), 2);
    if (hatched) hatch(dl, a, z);
    if (waited) dl->AddRect(a, z, kWaitedOutline, 2, 0, 2);
    ImGui::Dummy(ImVec2(1.4f * s, s));
    ImGui::SameLine();
    ImGui::TextUnformatted(text);
    ImGui::SameLine(0, 14);
  };
  swatch({76, 120, 168}, false, false, "kernel");
  swatch({157, 125, 189}, false, false, "memset");
  swatch({84, 162, 75}, false, false, "copy HtoD (pinned)");
  swatch({84, 162, 75}, true, false, "pageable");
  swatch({47, 158, 143}, false, false, "copy DtoH");
  swatch({232, 163, 61}, true, false, "host staging");
  swatch({228, 87, 86}, false, true, "host waited");
  ImGui::TextDisabled("|  host ticks: enqueued  <>: event");
}

// The first line: where the timeline came from, the window shown, and the controls.
void timeline_header(TimelineView& v) {
  const Timeline& t = v.timeline;
  ImGui::Text("%s: %zu ops, %s", t.source.c_str(), t.ops.size(),
              format_duration(t.t1_ns - t.t0_ns).c_str());
  ImGui::SameLine();
  if (ImGui::Button("fit")) {
    v.fit_pending = true;
    v.follow = false;
  }
  ImGui::SameLine();
  const double mid = (v.view_t0 + v.view_t1) / 2;
  if (ImGui::Button("+")) zoom_about(v, 0.5, mid);  // following (live) goes on, closer in
  ImGui::SameLine();
  if (ImGui::Button("-")) zoom_about(v, 2, mid);
  if (v.live) {
    ImGui::SameLine();
    ImGui::Checkbox("follow", &v.follow);
    if (v.pipeline) {
      ImGui::SameLine();
      ImGui::Checkbox("run lesson 08's pipeline", &v.running);
    }
  }
  ImGui::SameLine();
  ImGui::Text("%s to %s", format_time_ms(static_cast<int64_t>(v.view_t0) - t.t0_ns).c_str(),
              format_time_ms(static_cast<int64_t>(v.view_t1) - t.t0_ns).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "hover a span: its op, bytes or grid, and times\nCtrl+wheel: zoom in time\n"
        "drag or Shift+wheel: pan in time\nwheel: scroll the lanes\n"
        "hatched: pageable host memory; red outline: the host waited\n"
        "ticks in the host lane: where the host enqueued an op and went on");
}

}  // namespace

// [SECTION] live ----------------------------------------------------------------------------

double TimelineView::time_at(float x) const {
  const float w = std::max(plot.x1 - plot.x0, 1.f);
  return view_t0 + static_cast<double>(x - plot.x0) / w * (view_t1 - view_t0);
}

float TimelineView::x_of(double t_ns) const {
  return plot.x0 + static_cast<float>((t_ns - view_t0) / (view_t1 - view_t0)) * (plot.x1 - plot.x0);
}

void App::set_timeline(Timeline t) {
  timeline.pipeline.reset();
  timeline.live = false;
  timeline.timeline = std::move(t);
  timeline.fit_pending = true;
  timeline.follow = false;
  timeline.scroll_y = 0;
  timeline.hovered = -1;
  timeline.hover_text.clear();
}

void App::open_timeline(const std::string& trace_path) {
  set_timeline(load_timeline(trace_path));
  title = "glass-viewer: timeline of " + trace_path;
}

void App::open_live_timeline(bool run_pipeline) {
  cuda::use_simulator();  // throws, naming the reason, when a real GPU already serves kCUDA
  set_timeline(timeline_from_simulator());
  if (run_pipeline) timeline.pipeline = std::make_unique<CudaPipeline>();
  timeline.live = true;
  timeline.running = true;
  timeline.fit_pending = false;
  timeline.follow = true;
  timeline.view_t1 = static_cast<double>(timeline.timeline.t1_ns);
  timeline.view_t0 = timeline.view_t1 - kLiveWindowNs;
  title = "glass-viewer: the simulated GPU, live";
}

void App::timeline_step() {
  TimelineView& v = timeline;
  if (v.pipeline && v.running) {
    for (int i = 0; i < kLiveStepsPerFrame; ++i) v.pipeline->step();
    if (cuda::sim::simulator().timeline().size() > kLiveMaxRecords) {
      v.pipeline->synchronize();  // so that no op enqueued before the clear lands after it
      cuda::sim::simulator().clear_timeline();
    }
  }
  v.since_refresh += ImGui::GetIO().DeltaTime;
  if (v.since_refresh < v.refresh_s && !v.timeline.empty()) return;
  v.since_refresh = 0;
  const double t0 = v.view_t0, t1 = v.view_t1;
  v.timeline = timeline_from_simulator();
  v.view_t0 = t0, v.view_t1 = t1;  // the user's window survives a refresh
  v.hovered = -1;
}

// [SECTION] panel ---------------------------------------------------------------------------

void App::timeline_panel() {
  ImGui::SetNextWindowBgAlpha(1);  // opaque: it opens over the bottom row of panels
  ImGui::Begin("Timeline");
  TimelineView& v = timeline;
  v.span_rects.clear();
  v.lane_rects.clear();
  v.hovered = -1;
  v.hover_text.clear();
  if (!v.open()) {
    ImGui::TextWrapped(
        "No timeline. Open a trace with `glass-viewer --timeline trace.json` (write one with "
        "glass::cuda::sim::simulator().write_chrome_trace(path)), or watch the simulated GPU "
        "live with `glass-viewer --timeline-live` or the lesson tour's lesson 08 entry.");
    ImGui::End();
    return;
  }
  timeline_header(v);
  legend();
  if (!error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", error.c_str());
  const Timeline& t = v.timeline;
  const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const ImVec2 room(std::max(avail.x, 1.f), std::max(avail.y, 1.f));
  ImGui::InvisibleButton("timeline canvas", room, ImGuiButtonFlags_MouseButtonLeft);
  const bool hovered = ImGui::IsItemHovered();
  float label_w = 0;
  for (const TimelineLane& l : t.lanes)
    label_w = std::max(label_w, ImGui::CalcTextSize(l.name.c_str()).x);
  label_w = std::clamp(label_w + 16, 80.f, std::max(80.f, room.x * 0.4f));
  v.plot =
      Rect{origin.x + label_w, origin.y + kAxisHeight, origin.x + room.x - 8, origin.y + room.y};
  if (v.plot.x1 - v.plot.x0 < 20 || v.plot.y1 <= v.plot.y0) {  // too small to draw into
    ImGui::End();
    return;
  }
  if (v.fit_pending) fit_whole(v);
  if (v.live && v.follow) follow_end(v);

  // Input: zoom and pan in time, scroll the lanes.
  ImGuiIO& io = ImGui::GetIO();
  const double ns_per_px = window(v) / static_cast<double>(v.plot.x1 - v.plot.x0);
  float lanes_h = 0;
  for (const TimelineLane& l : t.lanes) lanes_h += lane_height(l);
  const float max_scroll = std::max(0.f, lanes_h - (v.plot.y1 - v.plot.y0));
  if (hovered && io.KeyCtrl && io.MouseWheel != 0) {
    const double pivot = std::clamp(v.time_at(io.MousePos.x), v.view_t0, v.view_t1);
    zoom_about(v, std::pow(0.8, static_cast<double>(io.MouseWheel)), pivot);
    v.follow = false;
  } else if (hovered && (io.MouseWheelH != 0 || (io.KeyShift && io.MouseWheel != 0))) {
    const float notches = io.MouseWheelH != 0 ? io.MouseWheelH : io.MouseWheel;
    pan(v, -0.1 * window(v) * static_cast<double>(notches));
    v.follow = false;
  } else if (hovered && io.MouseWheel != 0) {
    v.scroll_y -= io.MouseWheel * kScrollStep;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    pan(v, -static_cast<double>(io.MouseDelta.x) * ns_per_px);
    v.scroll_y -= io.MouseDelta.y;
    if (io.MouseDelta.x != 0) v.follow = false;
  }
  v.scroll_y = std::clamp(v.scroll_y, 0.f, max_scroll);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 canvas_max(origin.x + room.x, origin.y + room.y);
  dl->PushClipRect(origin, canvas_max, true);

  // The axis: ticks every 1, 2 or 5 × 10^k ns, labelled in ms from t0, with grid lines.
  const double t0 = static_cast<double>(t.t0_ns);
  const auto step =
      static_cast<double>(tick_step_ns(static_cast<int64_t>(window(v)), v.plot.x1 - v.plot.x0, 90));
  for (double tick = t0 + std::ceil((v.view_t0 - t0) / step) * step; tick <= v.view_t1;
       tick += step) {
    const float x = v.x_of(tick);
    char label[48];
    std::snprintf(label, sizeof label, "%.6g ms", (tick - t0) / 1e6);
    dl->AddLine(ImVec2(x, v.plot.y0 - 4), ImVec2(x, v.plot.y1), IM_COL32(90, 90, 90, 120));
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(label).x / 2, origin.y + 2),
                IM_COL32(220, 220, 220, 255), label);
  }

  // Lanes: bands, their names in the left column, then their spans clipped to the plot.
  const bool mouse_in_plot = hovered && v.plot.contains(io.MousePos.x, io.MousePos.y);
  float y = v.plot.y0 - v.scroll_y;
  std::vector<float> lane_top(t.lanes.size());
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    lane_top[i] = y;
    const float h = lane_height(t.lanes[i]);
    const Rect band{origin.x, y, canvas_max.x, y + h};
    if (band.y1 > v.plot.y0 && band.y0 < v.plot.y1) {
      v.lane_rects.emplace_back(i, band);
      dl->PushClipRect(ImVec2(origin.x, v.plot.y0), canvas_max, true);
      dl->AddRectFilled(ImVec2(band.x0, band.y0), ImVec2(band.x1, band.y1),
                        i % 2 ? IM_COL32(255, 255, 255, 14) : IM_COL32(255, 255, 255, 6));
      if (i > 0 && t.lanes[i - 1].device != t.lanes[i].device)
        dl->AddLine(ImVec2(band.x0, band.y0), ImVec2(band.x1, band.y0),
                    IM_COL32(160, 160, 160, 160));
      dl->PushClipRect(ImVec2(origin.x, v.plot.y0), ImVec2(v.plot.x0 - 4, v.plot.y1), true);
      dl->AddText(ImVec2(origin.x + 4, y + h / 2 - ImGui::GetFontSize() / 2),
                  IM_COL32(230, 230, 230, 255), t.lanes[i].name.c_str());
      dl->PopClipRect();
      dl->PopClipRect();
    }
    y += h;
  }
  dl->PushClipRect(ImVec2(v.plot.x0, v.plot.y0), ImVec2(v.plot.x1, v.plot.y1), true);
  for (int pass = 0; pass < 2; ++pass) {  // boxes first, marks over them
    for (size_t i = 0; i < t.spans.size(); ++i) {
      const TimelineSpan& s = t.spans[i];
      if (s.mark != (pass == 1)) continue;
      const double start = static_cast<double>(s.start_ns), end = static_cast<double>(s.end_ns);
      if (end < v.view_t0 || start > v.view_t1) continue;
      const float top = lane_top[s.lane] + kLanePad;
      const float bottom = top + static_cast<float>(t.lanes[s.lane].rows) * kRowHeight;
      if (bottom < v.plot.y0 || top > v.plot.y1) continue;
      const SpanStyle st = span_style(t, s);
      Rect box;
      if (!s.mark) {
        const float x0 = v.x_of(start), x1 = std::max(v.x_of(end), x0 + 2);
        const float y0 = top + static_cast<float>(s.row) * kRowHeight + 1;
        box = Rect{x0, y0, x1, y0 + kRowHeight - 2};
        dl->AddRectFilled(ImVec2(box.x0, box.y0), ImVec2(box.x1, box.y1), color(st.fill), 2);
        if (st.hatched) hatch(dl, ImVec2(box.x0, box.y0), ImVec2(box.x1, box.y1));
        if (st.waited)
          dl->AddRect(ImVec2(box.x0, box.y0), ImVec2(box.x1, box.y1), kWaitedOutline, 2, 0, 2);
        const float text_x = std::max(box.x0, v.plot.x0) + 3;
        const std::string label = fit_text(span_label(t, s), box.x1 - text_x - 3);
        if (!label.empty())
          dl->AddText(ImVec2(text_x, box.cy() - ImGui::GetFontSize() / 2),
                      st.hatched || st.fill.r + st.fill.g + st.fill.b > 450
                          ? IM_COL32(20, 20, 20, 255)
                          : IM_COL32(255, 255, 255, 255),
                      label.c_str());
      } else {
        const float x = v.x_of(start);
        box = Rect{x - kMarkHalfWidth, top, x + kMarkHalfWidth, bottom};
        if (s.role == SpanRole::Enqueue) {  // a tick across the host lane
          dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), IM_COL32(235, 235, 235, 255), 1.5f);
        } else {  // an event: a diamond in its stream's lane
          const float cy = box.cy(), r = 5;
          dl->AddQuadFilled(ImVec2(x, cy - r), ImVec2(x + r, cy), ImVec2(x, cy + r),
                            ImVec2(x - r, cy), IM_COL32(240, 240, 240, 255));
        }
      }
      v.span_rects.emplace_back(i, box);
      // The last span drawn under the mouse wins: marks are drawn over boxes.
      if (mouse_in_plot && box.contains(io.MousePos.x, io.MousePos.y))
        v.hovered = static_cast<int>(i);
    }
  }
  if (v.hovered >= 0) {  // outline the op everywhere it appears: stream, engine, host
    const size_t op = t.spans[static_cast<size_t>(v.hovered)].op;
    for (const auto& [i, r] : v.span_rects)
      if (t.spans[i].op == op)
        dl->AddRect(ImVec2(r.x0 - 1, r.y0 - 1), ImVec2(r.x1 + 1, r.y1 + 1), kHoverOutline, 2, 0, 2);
    v.hover_text = span_details(t, t.spans[static_cast<size_t>(v.hovered)]);
  }
  dl->PopClipRect();
  dl->PopClipRect();
  if (!v.hover_text.empty()) ImGui::SetTooltip("%s", v.hover_text.c_str());
  if (t.empty())
    ImGui::GetWindowDrawList()->AddText(ImVec2(v.plot.x0 + 8, v.plot.y0 + 8),
                                        IM_COL32(200, 200, 200, 255),
                                        "no operations recorded (yet)");
  ImGui::End();
}

}  // namespace glass::viz::app
