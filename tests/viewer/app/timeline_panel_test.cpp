// tests/viewer/app/timeline_panel_test.cpp — tier 2: the Timeline panel through a bare
// ImGui context (imgui_harness.h): a lane per stream and engine under the host's, hover
// text for kernels, copies and enqueue marks, zoom about the mouse, drag to pan, and the
// live mode reading this process's simulated GPU.
#include <gtest/gtest.h>
#include <imgui.h>

#include <glass/glass.h>

#include <cmath>
#include <string>

#include "cuda/sim/sim_runtime.h"
#include "viewer/app/app.h"
#include "viewer/app/imgui_harness.h"
#include "viewer/timeline.h"
#include "viewer/timeline_test_util.h"

namespace glass::viz::app {
namespace {

// An app showing the hand-made timeline alone, laid out.
struct TimelineApp {
  ImGuiHarness h;
  App app;
  TimelineApp() {
    app.set_timeline(timeline_from_records(testing::hand_made(), "hand-made"));
    app.panels = Panels::TimelineOnly;
    h.frame(app);  // ImGui sizes a new window's contents on its first frame: settle first
    h.frame(app);
  }
  const Timeline& t() const { return app.timeline.timeline; }
  // The screen box of `op_name`'s span in `lane`, as the last frame drew it.
  Rect box(const std::string& op_name, const std::string& lane) const {
    for (const auto& [i, r] : app.timeline.span_rects) {
      const TimelineSpan& s = t().spans[i];
      if (t().ops[s.op].name == op_name && t().lanes[s.lane].name == lane) return r;
    }
    ADD_FAILURE() << "no span of " << op_name << " drawn in " << lane;
    return {};
  }
  double window() const { return app.timeline.view_t1 - app.timeline.view_t0; }
};

TEST(TimelinePanel, OneLanePerStreamAndEngineUnderTheHost) {
  TimelineApp a;
  const TimelineView& v = a.app.timeline;
  ASSERT_EQ(v.lane_rects.size(), a.t().lanes.size());  // all fit in 1400x900
  EXPECT_EQ(a.t().lanes[v.lane_rects[0].first].name, "host");
  for (size_t i = 0; i + 1 < v.lane_rects.size(); ++i) {
    EXPECT_EQ(v.lane_rects[i].first, i);
    EXPECT_LE(v.lane_rects[i].second.y1, v.lane_rects[i + 1].second.y0 + 0.5f);
  }
  // The fit shows every span; the SMs' two overlapping kernels sit one above the other.
  EXPECT_EQ(v.span_rects.size(), a.t().spans.size());
  const Rect scale = a.box("scale", "cuda:0 SMs (compute engine)");
  const Rect add = a.box("add", "cuda:0 SMs (compute engine)");
  EXPECT_LT(add.x0, scale.x1);  // they overlap in time...
  EXPECT_GE(add.y0, scale.y1);  // ...and not on screen
  // Time runs left to right: the copy starts before the kernel on the other stream.
  EXPECT_LT(a.box("HtoD 4.0 KiB", "cuda:0 stream 1").x0, a.box("scale", "cuda:0 stream 2").x0);
  EXPECT_EQ(v.hovered, -1);
}

TEST(TimelinePanel, HoverShowsTheOpItsGridOrBytesAndItsTimes) {
  TimelineApp a;
  const Rect k = a.box("scale", "cuda:0 stream 2");
  a.h.frame(a.app, k.cx(), k.cy());
  ASSERT_GE(a.app.timeline.hovered, 0);
  const TimelineSpan& s = a.t().spans[static_cast<size_t>(a.app.timeline.hovered)];
  EXPECT_EQ(a.t().ops[s.op].name, "scale");
  const std::string& text = a.app.timeline.hover_text;
  EXPECT_NE(text.find("scale\nkernel on cuda:0 stream 2, compute engine"), std::string::npos)
      << text;
  EXPECT_NE(text.find("grid [4,1,1]  block [256,1,1]"), std::string::npos) << text;
  EXPECT_NE(text.find("enqueued at 0.000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("ran 0.000 ms to 0.001 ms (600 ns)"), std::string::npos) << text;

  const Rect c = a.box("HtoD 4.0 KiB", "cuda:0 copy HtoD engine");
  a.h.frame(a.app, c.cx(), c.cy());
  EXPECT_NE(a.app.timeline.hover_text.find("4096 bytes (4.0 KiB) HtoD, pinned host memory"),
            std::string::npos)
      << a.app.timeline.hover_text;

  const Rect w = a.box("DtoH 4.0 KiB", "host");  // the host's wait for the pageable copy back
  a.h.frame(a.app, w.cx(), w.cy());
  EXPECT_NE(a.app.timeline.hover_text.find("the host waited 700 ns for it"), std::string::npos)
      << a.app.timeline.hover_text;

  const Rect m = a.box("HtoD 4.0 KiB", "host");  // its enqueue mark, 100 ns before the rest
  a.h.frame(a.app, m.cx(), m.cy());
  EXPECT_NE(a.app.timeline.hover_text.find("the host enqueued it and went on"), std::string::npos)
      << a.app.timeline.hover_text;

  a.h.frame(a.app, 5, 890);  // nothing there
  EXPECT_EQ(a.app.timeline.hovered, -1);
  EXPECT_TRUE(a.app.timeline.hover_text.empty());
}

TEST(TimelinePanel, CtrlWheelZoomsInTimeAboutTheMouse) {
  TimelineApp a;
  const Rect plot = a.app.timeline.plot;
  // Whole pixels: ImGui floors the mouse position.
  const float mx = std::floor(plot.x0 + (plot.x1 - plot.x0) * 0.7f), my = plot.y0 + 40;
  const double under_mouse = a.app.timeline.time_at(mx), before = a.window();
  a.h.input(a.app, {.x = mx, .y = my, .wheel = 1, .ctrl = true});
  EXPECT_NEAR(a.window(), before * 0.8, before * 1e-6);
  EXPECT_NEAR(a.app.timeline.time_at(mx), under_mouse, before * 1e-6);
  // Spans grow with the zoom: the kernel's box is wider than before.
  const float wide = a.box("add", "cuda:0 stream 3").x1 - a.box("add", "cuda:0 stream 3").x0;
  a.h.input(a.app, {.x = mx, .y = my, .wheel = -1, .ctrl = true});
  const float narrow = a.box("add", "cuda:0 stream 3").x1 - a.box("add", "cuda:0 stream 3").x0;
  EXPECT_GT(wide, narrow * 1.2f);
  EXPECT_NEAR(a.window(), before, before * 1e-6);
}

TEST(TimelinePanel, DragPansInTimeAndFitShowsAllAgain) {
  TimelineApp a;
  const Rect plot = a.app.timeline.plot;
  const double t0 = a.app.timeline.view_t0, len = a.window();
  const double ns_per_px = len / static_cast<double>(plot.x1 - plot.x0);
  const float x = plot.cx(), y = plot.y0 + 30;
  a.h.frame(a.app, x, y, true);        // press on the canvas
  a.h.frame(a.app, x + 100, y, true);  // drag 100 px to the right: earlier times come in
  a.h.frame(a.app, x + 100, y, false);
  EXPECT_NEAR(a.app.timeline.view_t0, t0 - 100 * ns_per_px, ns_per_px * 0.01);
  EXPECT_NEAR(a.window(), len, len * 1e-9);
  a.app.timeline.fit_pending = true;
  a.h.frame(a.app);
  EXPECT_NEAR(a.app.timeline.view_t0, t0, len * 1e-9);
}

TEST(TimelinePanel, WithoutATimelineItSaysHowToGetOne) {
  ImGuiHarness h;
  App app;
  app.panels = Panels::TimelineOnly;
  h.frame(app);
  EXPECT_FALSE(app.timeline.open());
  EXPECT_TRUE(app.timeline.lane_rects.empty());
  EXPECT_THROW(app.open_timeline("/nonexistent/trace.json"), Error);
  EXPECT_FALSE(app.timeline.open());  // a bad file changes nothing
}

TEST(TimelinePanel, LiveModeReadsThisProcesssSimulatedGpu) {
  ImGuiHarness h;
  App app;
  app.panels = Panels::TimelineOnly;
  app.open_live_timeline(/*run_pipeline=*/false);
  app.timeline.refresh_s = 0;  // re-read every frame
  cuda::sim::simulator().clear_timeline();
  cuda::CUDAStream s = cuda::getStreamFromPool();
  {
    cuda::CUDAStreamGuard g(s);
    Tensor d = arange(1024).to(kFloat).pin_memory().to(kCUDA, /*non_blocking=*/true);
    s.synchronize();
  }
  h.frame(app);
  const Timeline& t = app.timeline.timeline;
  EXPECT_EQ(t.source, "simulator");
  bool copy = false;
  for (const TimelineOp& o : t.ops) copy |= o.name == "HtoD 4.0 KiB" && o.pinned;
  EXPECT_TRUE(copy) << t.ops.size() << " ops";
  EXPECT_NE(t.find_lane("cuda:0 copy HtoD engine"), nullptr);
  EXPECT_FALSE(app.timeline.span_rects.empty());
}

TEST(TimelinePanel, TheLessonPipelineRunsLiveWithoutARace) {
  ImGuiHarness h;
  App app;
  app.panels = Panels::TimelineOnly;
  cuda::sim::simulator().set_race_check(true);
  app.open_live_timeline(/*run_pipeline=*/true);
  app.timeline.refresh_s = 0;
  for (int i = 0; i < 4; ++i) h.frame(app);
  ASSERT_NE(app.timeline.pipeline, nullptr);
  app.timeline.pipeline->synchronize();
  cuda::sim::simulator().set_race_check(false);
  EXPECT_TRUE(app.error.empty()) << app.error;
  EXPECT_GE(app.timeline.pipeline->steps(), 16);
  h.frame(app);
  int kernels = 0, copies = 0;
  for (const TimelineOp& o : app.timeline.timeline.ops) {
    kernels += o.kind == cuda::sim::OpKind::Kernel;
    copies += o.kind == cuda::sim::OpKind::Copy;
  }
  EXPECT_GT(kernels, 0);
  EXPECT_GT(copies, 0);
}

}  // namespace
}  // namespace glass::viz::app
