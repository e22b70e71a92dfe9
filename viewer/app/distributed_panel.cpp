// viewer/app/distributed_panel.cpp — the Distributed panel: the ring all-reduce animated
// chunk by chunk, and DDP's buckets over backward, per rank (issue 11, lesson 10).
//
// Ring: a grid of ranks (rows) × chunks (columns). A cell's colour is how many ranks'
// values are summed into it (dark: only its own, bright green: all n), its number is the
// partial sum — rank r started with 2^r, so the number in binary is the set of ranks in it
// (the tooltip spells them out). The shown step's transfers are arrows from the sender's
// chunk to the same chunk one rank down (the last rank's wraps round to rank 0), and the
// cells they landed in are outlined. A slider picks the step; play steps once a second.
//
// Buckets: per rank a compute lane (each backward node a bar; an AccumulateGrad bar takes
// the colour of the bucket its parameter is in) and a communication lane (each bucket
// queued, pale, then all-reduced, solid, in its colour), on one time axis, with backward's
// end marked: a solid bar left of the mark is communication hidden behind backward.
//
// Invariant: the panel draws DistributedView's recordings as they are and records what it
// drew (cell_rects, arrows, node_bars, bucket_bars, hover_text) for tests; recording
// happens only in open_distributed() and on the user's "record" button.
//
// [SECTION] state   [SECTION] ring   [SECTION] buckets   [SECTION] panel
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "viewer/app/app.h"
#include "viewer/distributed_trace.h"

namespace glass::viz::app {

namespace {

constexpr float kCellW = 64, kCellH = 30, kLabelW = 70;
constexpr float kLaneH = 22, kLanePad = 4;
constexpr ImU32 kOutline = IM_COL32(255, 214, 0, 255);
constexpr ImU32 kArrow = IM_COL32(255, 140, 40, 255);
constexpr ImU32 kTextLight = IM_COL32(235, 235, 235, 255);

// Dark blue-grey (one rank in it) to bright green (all of them).
ImU32 count_color(int count, int n) {
  const float t = n > 1 ? static_cast<float>(count - 1) / static_cast<float>(n - 1) : 1.f;
  return IM_COL32(static_cast<int>(60 - 20 * t), static_cast<int>(70 + 140 * t),
                  static_cast<int>(110 - 40 * t), 255);
}

// A bucket's colour: distinct for the first few, then repeating.
ImU32 bucket_color(int index, int alpha = 255) {
  static constexpr int kPalette[][3] = {{228, 87, 86},   {76, 120, 168},  {242, 142, 43},
                                        {118, 183, 178}, {176, 122, 161}, {237, 201, 72}};
  const auto& c = kPalette[static_cast<size_t>(index) % std::size(kPalette)];
  return IM_COL32(c[0], c[1], c[2], alpha);
}

std::string ranks_of(uint32_t mask) {
  std::string s;
  for (int r = 0; r < 32; ++r)
    if (mask & (1u << r)) s += (s.empty() ? "" : " + ") + std::to_string(r);
  return s;
}

std::string ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

// The bucket holding parameter `name` (an AccumulateGrad node is "AccumulateGrad <name>").
int bucket_of_node(const DdpRankTimeline& t, const std::string& node_name) {
  const std::string prefix = "AccumulateGrad ";
  if (node_name.rfind(prefix, 0) != 0) return -1;
  const std::string param = node_name.substr(prefix.size());
  for (const DdpBucketSpan& b : t.buckets)
    if (std::find(b.parameters.begin(), b.parameters.end(), param) != b.parameters.end())
      return b.index;
  return -1;
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImVec2 c1, ImVec2 c2) {
  dl->AddBezierCubic(a, c1, c2, b, kArrow, 2.5f);
  const ImVec2 d(b.x - c2.x, b.y - c2.y);  // the head points along the curve's last tangent
  const float len = std::max(std::sqrt(d.x * d.x + d.y * d.y), 1e-3f);
  const ImVec2 u(d.x / len, d.y / len), p(-u.y, u.x);
  dl->AddTriangleFilled(b, ImVec2(b.x - 9 * u.x + 5 * p.x, b.y - 9 * u.y + 5 * p.y),
                        ImVec2(b.x - 9 * u.x - 5 * p.x, b.y - 9 * u.y - 5 * p.y), kArrow);
}

}  // namespace

// [SECTION] state ---------------------------------------------------------------------------

void App::open_distributed() {
  DistributedView& v = distributed;
  // Both recordings or neither: the ring and the DDP view always come from one press.
  auto ring = record_ring({.world_size = v.world_size});
  auto ddp = record_ddp({});
  v.ring = std::move(ring);
  v.ddp = std::move(ddp);
  v.frame = 0;
  v.since_step = 0;
  v.status.clear();
}

void App::distributed_step() {
  DistributedView& v = distributed;
  if (!v.ring) return;
  v.since_step += ImGui::GetIO().DeltaTime;
  if (v.since_step < v.seconds_per_step) return;
  v.since_step = 0;
  v.frame = (v.frame + 1) % static_cast<int>(v.ring->frames.size());  // then round again
}

// [SECTION] ring ----------------------------------------------------------------------------

namespace {

void ring_grid(DistributedView& v) {
  const RingRecording& rec = *v.ring;
  const int n = rec.world_size;
  v.frame = std::clamp(v.frame, 0, static_cast<int>(rec.frames.size()) - 1);
  const RingFrame& f = rec.frames[static_cast<size_t>(v.frame)];
  ImGui::Text("%s", f.caption().c_str());
  if (f.step >= 0)
    ImGui::TextDisabled(f.gather_phase
                            ? "each rank passes a finished chunk right; it is copied in place"
                            : "each rank sends a chunk right and adds the one it receives "
                              "to its own");
  else
    ImGui::TextDisabled(
        "the tensor is cut into %d chunks; n - 1 steps reduce-scatter, "
        "n - 1 all-gather",
        n);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = o.x + kLabelW + 30;  // room for the wrap-round arrows
  const float top = o.y + ImGui::GetFontSize() + 4;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int c = 0; c < n; ++c) {
    char label[32];
    std::snprintf(label, sizeof label, "chunk %d", c);
    dl->AddText(ImVec2(left + static_cast<float>(c) * kCellW + 6, o.y), kTextLight, label);
  }
  auto cell_box = [&](int r, int c) {
    const float x = left + static_cast<float>(c) * kCellW;
    const float y = top + static_cast<float>(r) * kCellH;
    return Rect{x + 1, y + 1, x + kCellW - 1, y + kCellH - 1};
  };
  for (int r = 0; r < n; ++r) {
    char label[32];
    std::snprintf(label, sizeof label, "rank %d", r);
    dl->AddText(ImVec2(o.x, cell_box(r, 0).cy() - ImGui::GetFontSize() / 2), kTextLight, label);
    for (int c = 0; c < n; ++c) {
      const RingCell& cell = f.cells[static_cast<size_t>(r)][static_cast<size_t>(c)];
      const Rect b = cell_box(r, c);
      dl->AddRectFilled(ImVec2(b.x0, b.y0), ImVec2(b.x1, b.y1), count_color(cell.count, n), 3);
      char text[32];
      std::snprintf(text, sizeof text, "%g", cell.values.empty() ? 0.0 : cell.values.front());
      const ImVec2 ts = ImGui::CalcTextSize(text);
      dl->AddText(ImVec2(b.cx() - ts.x / 2, b.cy() - ts.y / 2), kTextLight, text);
      v.cell_rects.push_back({{r, c}, b});
      if (b.contains(mouse.x, mouse.y))
        v.hover_text = "rank " + std::to_string(r) + ", chunk " + std::to_string(c) + ": " + text +
                       " = ranks " + ranks_of(cell.mask) + " (" + std::to_string(cell.count) +
                       " of " + std::to_string(n) + " summed in, " +
                       std::to_string(cell.values.size()) + " elements)";
    }
  }
  // This step's transfers: sender's chunk -> the same chunk on the next rank, outlined.
  for (const RingTransfer& t : f.transfers) {
    const Rect from = cell_box(t.rank, t.send_chunk), to = cell_box(t.to, t.send_chunk);
    const Rect landed = cell_box(t.rank, t.recv_chunk);
    dl->AddRect(ImVec2(landed.x0, landed.y0), ImVec2(landed.x1, landed.y1), kOutline, 3, 0, 2);
    if (t.to > t.rank) {  // one row down, bowing right of the column
      const ImVec2 a(from.x1 - 8, from.cy()), b(to.x1 - 8, to.cy());
      arrow(dl, a, b, ImVec2(a.x + 22, a.y + 6), ImVec2(b.x + 22, b.y - 6));
    } else {  // the last rank to rank 0: round the left of the grid
      const float x = left - 24;
      const ImVec2 a(from.x0 + 6, from.cy()), b(to.x0 + 6, to.cy());
      arrow(dl, a, b, ImVec2(x - (a.x - x) * 0.2f, a.y), ImVec2(x - (b.x - x) * 0.2f, b.y));
    }
    ++v.arrows;
  }
  ImGui::Dummy(ImVec2(left - o.x + static_cast<float>(n) * kCellW + 20,
                      top - o.y + static_cast<float>(n) * kCellH + 6));
  // The legend: what the colours count.
  const ImVec2 l = ImGui::GetCursorScreenPos();
  for (int k = 1; k <= n; ++k) {
    const float x = l.x + static_cast<float>(k - 1) * 28;
    dl->AddRectFilled(ImVec2(x, l.y), ImVec2(x + 24, l.y + 14), count_color(k, n), 2);
    dl->AddText(ImVec2(x + 8, l.y), kTextLight, std::to_string(k).c_str());
  }
  ImGui::Dummy(ImVec2(static_cast<float>(n) * 28, 14));
  ImGui::SameLine();
  ImGui::TextDisabled("ranks summed in;  outlined: received this step");
}

// [SECTION] buckets -------------------------------------------------------------------------

void bucket_timeline(DistributedView& v) {
  const DdpRecording& rec = *v.ddp;
  ImGui::Text("DDP: %zu-layer MLP on %d ranks, %zu buckets, link %lld us + %.1f GB/s",
              rec.options.layers.size() - 1, rec.options.world_size,
              rec.ranks.empty() ? size_t{0} : rec.ranks[0].buckets.size(),
              static_cast<long long>(rec.options.link.latency.count()),
              rec.options.link.bytes_per_second / 1e9);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x - kLabelW - 10, 100.f);
  const float x0 = o.x + kLabelW;
  const double t1 = static_cast<double>(std::max<int64_t>(rec.t1_ns, 1));
  auto x_of = [&](int64_t ns) {
    return x0 + static_cast<float>(static_cast<double>(ns) / t1) * width;
  };
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  // The axis: 0 and the end, in ms.
  dl->AddText(ImVec2(x0, o.y), kTextLight, "0 ms");
  const std::string end = ms(rec.t1_ns);
  dl->AddText(ImVec2(x0 + width - ImGui::CalcTextSize(end.c_str()).x, o.y), kTextLight,
              end.c_str());
  float y = o.y + ImGui::GetFontSize() + 4;
  for (const DdpRankTimeline& t : rec.ranks) {
    const std::string rank = "rank " + std::to_string(t.rank);
    dl->AddText(ImVec2(o.x, y + 3), kTextLight, (rank + " bwd").c_str());
    dl->AddText(ImVec2(o.x, y + kLaneH + 3), kTextLight, (rank + " comm").c_str());
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + width, y + 2 * kLaneH),
                      IM_COL32(255, 255, 255, 10));
    for (const DdpNodeSpan& s : t.nodes) {
      const int bucket = bucket_of_node(t, s.name);
      const Rect b{x_of(s.start_ns), y + 2, std::max(x_of(s.end_ns), x_of(s.start_ns) + 1),
                   y + kLaneH - 2};
      dl->AddRectFilled(ImVec2(b.x0, b.y0), ImVec2(b.x1, b.y1),
                        bucket >= 0 ? bucket_color(bucket) : IM_COL32(150, 150, 150, 255));
      dl->AddRect(ImVec2(b.x0, b.y0), ImVec2(b.x1, b.y1), IM_COL32(30, 30, 30, 255));
      v.node_bars.emplace_back(t.rank, b);
      if (b.contains(mouse.x, mouse.y))
        v.hover_text =
            rank + ": " + s.name + "\n" + ms(s.start_ns) + " to " + ms(s.end_ns) +
            (bucket >= 0 ? "\nits parameter is in bucket " + std::to_string(bucket) : "");
    }
    const float cy = y + kLaneH;
    for (const DdpBucketSpan& bk : t.buckets) {
      const Rect q{x_of(bk.ready_ns), cy + 2, x_of(bk.started_ns), cy + kLaneH - 2};
      const Rect b{x_of(bk.started_ns), cy + 2, std::max(x_of(bk.finished_ns), q.x1 + 2),
                   cy + kLaneH - 2};
      dl->AddRectFilled(ImVec2(q.x0, q.y0), ImVec2(q.x1, q.y1), bucket_color(bk.index, 90));
      dl->AddRectFilled(ImVec2(b.x0, b.y0), ImVec2(b.x1, b.y1), bucket_color(bk.index));
      const std::string label = "b" + std::to_string(bk.index);
      if (ImGui::CalcTextSize(label.c_str()).x < b.x1 - b.x0 - 4)
        dl->AddText(ImVec2(b.x0 + 3, b.y0 + 2), IM_COL32(20, 20, 20, 255), label.c_str());
      v.bucket_bars.emplace_back(t.rank, b);
      if (q.contains(mouse.x, mouse.y) || b.contains(mouse.x, mouse.y)) {
        std::string params;
        for (const std::string& p : bk.parameters) params += (params.empty() ? "" : ", ") + p;
        v.hover_text = rank + ": bucket " + std::to_string(bk.index) + " (" +
                       std::to_string(bk.bytes / 1024) + " KiB: " + params + ")\nqueued " +
                       ms(bk.ready_ns) + ", all-reduce " + ms(bk.started_ns) + " to " +
                       ms(bk.finished_ns);
      }
    }
    // Backward's end: communication left of this line was hidden behind computation.
    const float xe = x_of(t.backward_end_ns);
    dl->AddLine(ImVec2(xe, y), ImVec2(xe, y + 2 * kLaneH), IM_COL32(255, 255, 255, 200), 1.5f);
    y += 2 * kLaneH + kLanePad;
  }
  ImGui::Dummy(ImVec2(kLabelW + width, y - o.y));
  ImGui::TextDisabled(
      "bars: backward nodes (a parameter's gradient in its bucket's colour); "
      "below: buckets queued (pale) and all-reduced; white line: backward's end");
}

}  // namespace

// [SECTION] panel ---------------------------------------------------------------------------

void App::distributed_panel() {
  ImGui::SetNextWindowBgAlpha(1);  // opaque: it opens over other panels
  ImGui::Begin("Distributed");
  DistributedView& v = distributed;
  v.cell_rects.clear();
  v.node_bars.clear();
  v.bucket_bars.clear();
  v.arrows = 0;
  v.hover_text.clear();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("ranks", &v.world_size, 2, 8);
  ImGui::SameLine();
  if (ImGui::Button(v.open() ? "record again" : "record")) {
    try {
      open_distributed();
    } catch (const std::exception& e) {  // glass errors, and a thread the system refused
      v.status = e.what();
    }
  }
  if (!v.open()) {
    ImGui::TextWrapped(
        "Records a ring all-reduce and a DDP backward on the threads backend (ranks as "
        "threads of this process): press record, or the lesson tour's lesson 10 entry.");
    ImGui::End();
    return;
  }
  if (v.ring) {
    ImGui::SameLine();
    if (ImGui::Button(v.playing ? "pause" : "play")) v.playing = !v.playing;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(200);
    ImGui::SliderInt("step", &v.frame, 0, static_cast<int>(v.ring->frames.size()) - 1);
  }
  const auto export_button = [&v](const char* label, const std::string& path, auto trace) {
    ImGui::SameLine();
    if (!ImGui::Button(label)) return;
    try {
      write_text_file(path, trace());
      v.status = "wrote " + path + " (open it in chrome://tracing or Perfetto)";
    } catch (const Error& e) {
      v.status = e.what();
    }
  };
  if (v.ring)
    export_button("export ring trace", v.ring_trace_path, [&v] { return v.ring->chrome_trace(); });
  if (v.ddp)
    export_button("export DDP trace", v.trace_path, [&v] { return v.ddp->chrome_trace(); });
  if (!v.status.empty()) ImGui::TextDisabled("%s", v.status.c_str());
  if (v.ring) ring_grid(v);
  ImGui::Separator();
  if (v.ddp) bucket_timeline(v);
  if (!v.hover_text.empty()) ImGui::SetTooltip("%s", v.hover_text.c_str());
  ImGui::End();
}

}  // namespace glass::viz::app
