// bench/bench_viewer_draw.cpp — glass-viewer's frame rate on a 200-node graph.
//
// Target (issue 4): at least 30 frames per second under Xvfb with Mesa's llvmpipe (no GPU).
// A frame is what glass-viewer does each time: ImGui NewFrame, every panel, Render, the
// OpenGL3 backend's draw, and the buffer swap (vsync off). With DISPLAY set it draws in a
// GLFW window (run it under `xvfb-run -a`); without, through EGL surfaceless Mesa.
//   BM_Frame/cached      the layout computed once and reused (what the app does)
//   BM_Frame/relayout    Graphviz layout redone every frame: why the cache exists
// Built as a stub that says so when the app's packages (libimgui-dev, libglfw3-dev) are
// missing.
#include <benchmark/benchmark.h>

#ifdef GLASS_HAVE_VIEWER_APP
#include <imgui.h>

#include <cstdlib>

#include <glass/glass.h>

#include "viewer/app/app.h"
#include "viewer/app/platform.h"
#include "viewer/recorders.h"

namespace {

using namespace glass;

// A chain of 66 (mul, tanh) pairs, each with its own weight leaf, summed: 200 nodes.
// (One weight shared by every mul gives dot a 99-way fan-out that takes minutes to lay out.)
viz::Snapshot graph_200() {
  Tensor x = randn({8}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 66; ++i) y = (y * randn({8}).requires_grad_()).tanh();
  return viz::snapshot_with_gradients(y.sum(), {.names = {{"x", x}}});
}

// One window for the whole run: an X server resets when its last client leaves, so
// reopening a display between benchmarks can fail under Xvfb.
viz::app::Window& window() {
  static viz::app::Window w([] {
    viz::app::WindowOptions o;
    o.width = 1400;
    o.height = 900;
    o.vsync = false;
    o.egl = std::getenv("DISPLAY") == nullptr;
    return o;
  }());
  return w;
}

void BM_Frame(benchmark::State& state, bool relayout) {
  viz::app::Window& w = window();
  viz::app::App app;
  app.set_graph(graph_200());
  app.stride.reset(arange(12).view({4, 3}), "a");
  for (auto _ : state) {
    if (relayout) app.graph.layout_key.clear();
    w.begin_frame();
    app.frame();
    w.end_frame();
    w.present();
  }
  state.counters["nodes"] = static_cast<double>(app.graph.drawn.nodes.size());
  state.counters["fps"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(std::getenv("DISPLAY") ? "GLFW (X11)" : "EGL surfaceless");
}

BENCHMARK_CAPTURE(BM_Frame, cached, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_Frame, relayout, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace

#else

namespace {
void BM_ViewerAppMissing(benchmark::State& state) {
  state.SkipWithError("glass-viewer was not built (needs libimgui-dev, libglfw3-dev, OpenGL)");
  for (auto _ : state) {
  }
}
BENCHMARK(BM_ViewerAppMissing);
}  // namespace

#endif

BENCHMARK_MAIN();
