// viewer/app/main.cpp — glass-viewer: the lessons' graphs, views and training, live.
//
//   glass-viewer --demo mlp                        the lesson 06 MLP's graph (glass-dot's names)
//   glass-viewer --train                           train the Fashion-MNIST MLP in the app
//   glass-viewer --demo tanh_mlp --screenshot g.png --frames 3 [--egl] [--graph-only]
//   glass-viewer --tensor 3,4 --view 'select(0, 1)' --view 'select(1, 2)' --stride-only
//   glass-viewer --timeline trace.json             the simulated GPU's Chrome trace, as lanes
//   glass-viewer --timeline-live                   lesson 08's pipeline on the simulated GPU
//   glass-viewer --distributed --ring-frame 4      lesson 10's ring all-reduce and DDP buckets
//   glass-viewer --shard --ranks 3                 FSDP's memory per rank against DDP's
//   glass-viewer --compile passes                  a compiled function before/after the passes
//
// Usage errors print what was wrong and exit 2; a screenshot run exits 0 once the PNG is
// written. Everything drawn comes from viewer/app/app.h; this file only owns the loop.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "core/error.h"
#include "viewer/app/app.h"
#include "viewer/app/platform.h"
#include "viewer/demos.h"
#include "viewer/view_recipe.h"

namespace {

constexpr const char* kUsage = R"(usage: glass-viewer [options]
  --demo NAME         open a demo's graph (glass-dot --list names them; default mlp,
                      lesson 06's MLP, with its loss selected)
  --train             train lesson 06's Fashion-MNIST MLP live, one step per frame (pause, step, play)
  --screenshot FILE   render --frames frames, write the last one as a PNG, and exit
  --frames N          frames to render before the screenshot (default 3)
  --size WxH          window size in pixels (default 1400x900)
  --graph-only        draw only the graph panel, filling the window
  --tensor SIZES      open the stride lab on x = arange(n).view(SIZES) (SIZES as 3,4)
  --view RECIPE       a view of it written as code, e.g. 't().slice(0, 0, 3, 2)'; a second
                      --view is shown beside the first (view B), with the cells they share
  --stride-only       draw only the stride lab, filling the window
  --timeline FILE     open the Chrome trace JSON the simulated GPU wrote
                      (simulator().write_chrome_trace(path)): one lane per stream and
                      engine, the host's enqueue marks; hover a span for its op and times
  --timeline-live     run lesson 08's copy/compute pipeline on the simulated GPU and
                      watch its timeline live
  --distributed       record lesson 10's ring all-reduce (4 ranks) and a DDP backward
                      (2 ranks) on the threads backend, and show them step by step
  --ring-frame N      with --distributed: show the ring after step N (0: before the first)
  --shard             record one training step under DDP and under FSDP on rank-threads
                      and show each rank's memory over it, and which rows of each
                      parameter each FSDP rank owns (glass-dot --shard writes it as SVG)
  --ranks N           with --shard: ranks, 1 to 8 (default 2)
  --no-prefetch       with --shard: FSDP without prefetch
  --compile NAME      compile a lesson 12 function (seed, passes, branch, mlp, backward)
                      and show its graph as traced beside the graph after the passes,
                      fused groups boxed (click one for its generated loop), a graph
                      break in red; backward shows the backward's joint graph
  --all-panels        with --timeline, --timeline-live, --distributed, --shard or
                      --compile: every panel, not that one alone
  --egl               render with EGL on Mesa's surfaceless platform (no X server needed;
                      only with --screenshot: there is no window to show)
  --list              list the demos
  --help              this text
In the graph: drag or wheel to scroll (Shift+wheel: sideways), Ctrl+wheel to zoom,
Ctrl + / Ctrl - for larger or smaller labels (Ctrl 0: the default), click to select.
In the timeline: Ctrl+wheel zooms in time, drag or Shift+wheel pans, wheel scrolls lanes.
)";

int to_int(const std::string& flag, const std::string& s, int least = 1) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  GLASS_CHECK(ec == std::errc() && end == s.data() + s.size() && v >= least, flag,
              least == 1 ? " needs a positive integer" : " needs an integer from 0", ", got '", s,
              "'");
  return v;
}

int run(int argc, char** argv) {
  namespace app = glass::viz::app;
  std::string demo = app::App::kDefaultDemo, screenshot;
  bool train = false, graph_only = false, stride_only = false;
  bool timeline_live = false, all_panels = false, distributed = false;
  bool shard = false, prefetch = true;
  std::string compile;  // a compile demo (viz::compile_demos())
  std::optional<int> ring_frame, ranks;
  std::string tensor, timeline;
  std::vector<std::string> views;
  int frames = 3;
  app::WindowOptions window;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      GLASS_CHECK(i + 1 < argc, a, " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--list") {
      for (const auto& d : glass::viz::demos())
        std::cout << d.name << "  " << d.description << "\n";
      return 0;
    } else if (a == "--demo") {
      demo = value();
    } else if (a == "--train") {
      train = true;
    } else if (a == "--screenshot") {
      screenshot = value();
    } else if (a == "--frames") {
      frames = to_int(a, value());
    } else if (a == "--size") {
      std::string v = value();
      size_t x = v.find('x');
      GLASS_CHECK(x != std::string::npos, "--size needs WxH (e.g. 1400x900), got '", v, "'");
      window.width = to_int(a, v.substr(0, x));
      window.height = to_int(a, v.substr(x + 1));
    } else if (a == "--graph-only") {
      graph_only = true;
    } else if (a == "--stride-only") {
      stride_only = true;
    } else if (a == "--tensor") {
      tensor = value();
    } else if (a == "--view") {
      views.push_back(value());
      GLASS_CHECK(views.size() <= 2, "--view: the stride lab shows two views, A and B");
    } else if (a == "--timeline") {
      timeline = value();
    } else if (a == "--timeline-live") {
      timeline_live = true;
    } else if (a == "--distributed") {
      distributed = true;
    } else if (a == "--ring-frame") {
      ring_frame = to_int(a, value(), /*least=*/0);
    } else if (a == "--shard") {
      shard = true;
    } else if (a == "--ranks") {
      ranks = to_int(a, value());
      GLASS_CHECK(*ranks <= 8, "--ranks: the shard panel runs 1 to 8 ranks, got ", *ranks);
    } else if (a == "--no-prefetch") {
      prefetch = false;
    } else if (a == "--compile") {
      compile = value();
    } else if (a == "--all-panels") {
      all_panels = true;
    } else if (a == "--egl") {
      window.egl = true;
    } else {
      GLASS_CHECK(false, "unknown option '", a, "' (see --help)");
    }
  }
  GLASS_CHECK(!window.egl || !screenshot.empty(),
              "--egl renders off screen: use it with --screenshot FILE");
  GLASS_CHECK(timeline.empty() || !timeline_live,
              "--timeline FILE and --timeline-live are two timelines; give one of them");
  GLASS_CHECK(
      !all_panels || !timeline.empty() || timeline_live || distributed || shard || !compile.empty(),
      "--all-panels goes with --timeline FILE, --timeline-live, --distributed, --shard or "
      "--compile");
  GLASS_CHECK(compile.empty() || (timeline.empty() && !timeline_live && !distributed && !shard),
              "--compile fills the bottom of the window as --distributed, --shard and a "
              "timeline do; give one of them");
  GLASS_CHECK((!ranks && prefetch) || shard, "--ranks and --no-prefetch go with --shard");
  GLASS_CHECK(!shard || (timeline.empty() && !timeline_live && !distributed),
              "--shard fills the bottom of the window as --distributed and a timeline do; "
              "give one of them");
  GLASS_CHECK(!ring_frame || distributed, "--ring-frame goes with --distributed");
  GLASS_CHECK(!distributed || (timeline.empty() && !timeline_live),
              "--distributed and a timeline both fill the bottom of the window; give one");

  app::App ui;  // opened before any window, so a bad --demo fails without a display
  if (train) {
    ui.open_training();
    ui.playing = true;  // one step per frame from the start; the panel pauses
  } else
    ui.open_demo(demo);
  GLASS_CHECK(views.empty() || !tensor.empty(), "--view needs --tensor SIZES to view");
  if (!tensor.empty()) {
    ui.stride.reset(glass::viz::numbered_tensor(tensor, app::StrideLab::kMaxElements), "x");
    for (size_t v = 0; v < views.size(); ++v) {
      if (v == 1) ui.stride.compare(true), ui.stride.set_active(1);
      ui.stride.apply(views[v]);
    }
  }
  if (graph_only) ui.panels = app::Panels::GraphOnly;
  if (stride_only) ui.panels = app::Panels::StrideOnly;
  // A trace that cannot be read fails here, before any window (exit 2, naming the file).
  if (!timeline.empty()) ui.open_timeline(timeline);
  if (timeline_live) ui.open_live_timeline(/*run_pipeline=*/true);
  if ((!timeline.empty() || timeline_live) && !all_panels) ui.panels = app::Panels::TimelineOnly;
  if (distributed) {
    ui.open_distributed();  // runs the ranks (threads) before any window opens
    const int last = static_cast<int>(ui.distributed.ring->frames.size()) - 1;
    const int shown = ring_frame.value_or(0);
    GLASS_CHECK(shown <= last, "--ring-frame ", shown, ": the ring of ", ui.distributed.world_size,
                " ranks has frames 0 to ", last);
    ui.distributed.frame = shown;
    if (!all_panels) ui.panels = app::Panels::DistributedOnly;
  }
  if (shard) {
    ui.shard.world_size = ranks.value_or(2);
    ui.shard.prefetch = prefetch;
    ui.open_shard();  // runs the ranks (threads) before any window opens
    if (!all_panels) ui.panels = app::Panels::ShardOnly;
  }
  if (!compile.empty()) {
    ui.open_compile(compile);  // a bad name fails here, before any window (exit 2)
    if (!all_panels) ui.panels = app::Panels::CompileOnly;
  }
  window.title = ui.title;
  window.visible = screenshot.empty();
  app::Window w(window);
  for (int frame = 0;; ++frame) {
    if (w.should_close()) break;
    if (const float scale = w.content_scale(); scale != ui.graph.content_scale) {
      ui.graph.content_scale = scale;  // labels at least 13 px × scale: fit again
      ui.graph.fit_pending = true;
    }
    w.begin_frame();
    ui.frame();
    w.end_frame();
    if (!screenshot.empty() && frame + 1 >= frames) {
      app::write_png(screenshot, w.read_pixels(), w.width(), w.height());
      std::cout << "wrote " << screenshot << " (" << w.width() << "x" << w.height() << ", "
                << frames << " frames, " << ui.graph.drawn.nodes.size() << " nodes";
      if (ui.timeline.open())
        std::cout << ", " << ui.timeline.timeline.ops.size() << " timeline ops in "
                  << ui.timeline.timeline.lanes.size() << " lanes";
      std::cout << ")\n";
      return 0;
    }
    w.present();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "glass-viewer: error: " << e.what() << "\n";
    return 2;
  }
}
