// viewer/app/app.h — the viewer's UI state and panels, with no window and no GL.
//
// App draws every panel with Dear ImGui into whatever context is current: glass-viewer
// gives it a GLFW or EGL window (platform.h), the tests give it a bare context with a
// hand-set mouse. Everything a test asserts on is kept here as plain data — the node under
// the mouse, the storage index of the hovered cell, the norms the gradient panel drew —
// so a test reads what was drawn, not pixels.
//
// Invariants: graph.top_down and graph.left_right were laid out from the drawn snapshot's
// structure (graph.layout_key == structure_key(graph.drawn)) and are recomputed only when
// that key changes, never per frame; graph.layout is a copy of one of them. stride.view
// always shares stride.base's storage. timeline.view_t0 < timeline.view_t1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "viewer/app/cuda_pipeline.h"
#include "viewer/app/stride.h"
#include "viewer/app/training.h"
#include "viewer/compile_view.h"
#include "viewer/distributed_ddp.h"
#include "viewer/distributed_ring.h"
#include "viewer/distributed_shard.h"
#include "viewer/dot.h"
#include "viewer/layout.h"
#include "viewer/snapshot.h"
#include "viewer/timeline.h"

namespace glass::viz::app {

// A screen rectangle, in pixels (ImGui's coordinates).
struct Rect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float cx() const { return (x0 + x1) / 2; }
  float cy() const { return (y0 + y1) / 2; }
  bool contains(float x, float y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

// A string that changes exactly when the layout must: node names, labels, shapes and
// edges, but not gradient values (those only recolour).
std::string structure_key(const Snapshot& s);

// Label sizes, in pixels. to_dot's labels are 10-point text and one point is one pixel at
// zoom 1, so a label is drawn kLabelPoints * zoom pixels high. A fit never zooms out below
// GraphView::legible_px() (the graph scrolls instead): kDefaultLabelPx is ImGui's own text
// size (its built-in font is 13 px), so labels read like the rest of the UI.
inline constexpr float kLabelPoints = 10;
inline constexpr float kDefaultLabelPx = 13;
inline constexpr float kMinLabelPx = 6, kMaxLabelPx = 40;  // the setting's range

// The graph panel's state. See Note [The first screen] in graph_panel.cpp.
struct GraphView {
  Snapshot snapshot;
  bool collapse = true;  // one box per module (collapse_modules)
  // Both directions are laid out once per structure; a fit draws the one that lets the
  // whole graph be largest in the panel, unless the user picked one (auto_direction off).
  Layout top_down, left_right;
  Layout layout;  // the one drawn: a copy of top_down or left_right
  RankDir direction = RankDir::TopDown;
  bool auto_direction = true;
  std::string layout_key;    // structure_key of what the layouts were made from
  int layouts_computed = 0;  // how many times layout() ran: the cache's witness in tests
  // The label size setting (Ctrl + / Ctrl - / Ctrl 0) and the monitor's content scale
  // (glfwGetWindowContentScale: 2 on a 200% display); their product is the legible floor.
  float label_px = kDefaultLabelPx;
  float content_scale = 1;
  float legible_px() const { return label_px * content_scale; }
  float zoom = 1, pan_x = 0, pan_y = 0;
  bool fit_pending = true;  // zoom to fit on the next frame (after a new layout)
  int selected = -1;        // a node id of the drawn (possibly collapsed) snapshot
  std::vector<std::pair<int, Rect>> node_rects;  // last frame: node id -> its box on screen
  Snapshot drawn;               // the snapshot the boxes belong to (collapsed or not)
  int labels_shortened = 0;     // last frame: label lines cut with "..." to fit their box
  float smallest_label_px = 0;  // last frame: the smallest label drawn, in pixels (0: none)
  Rect canvas;                  // last frame: the area the graph is drawn in, on screen
};

// Gradient thresholds: a norm below vanishing or above exploding is highlighted.
struct GradThresholds {
  double vanishing = 1e-6, exploding = 1e2;
};

// One parameter's gradient norm, as the gradient flow panel draws it.
struct ParamNorm {
  std::string name;
  double norm = 0;
};

// The timeline panel's state (timeline_panel.cpp): what the simulated GPU ran, from a trace
// file or live from this process's simulator, the time window shown, and what the last
// frame drew. Times are in the timeline's clock (ns since the simulator started).
struct TimelineView {
  Timeline timeline;
  // Live: timeline is re-read from simulator().timeline() every refresh_s seconds, and
  // `pipeline` (when set) enqueues one chunk of lesson 08's copy/compute overlap per frame.
  bool live = false;
  std::unique_ptr<CudaPipeline> pipeline;
  bool running = true;  // the pipeline steps (the panel's pause)
  float refresh_s = 0.25f, since_refresh = 0;
  // The window drawn: [view_t0, view_t1] ns across the panel's plot. fit_pending shows the
  // whole timeline on the next frame; follow (live) keeps its newest end in view, and
  // stops once the user zooms or pans.
  double view_t0 = 0, view_t1 = 1;
  bool fit_pending = true, follow = false;
  float scroll_y = 0;  // pixels the lanes are scrolled up by, when taller than the panel
  // Last frame, for tooltips and tests:
  int hovered = -1;        // the span under the mouse (an index into timeline.spans), or -1
  std::string hover_text;  // its span_details, as the tooltip shows it
  std::vector<std::pair<size_t, Rect>> span_rects;  // each span drawn -> its box on screen
  std::vector<std::pair<size_t, Rect>> lane_rects;  // each lane drawn -> its band
  Rect plot;  // where spans are drawn: right of the lane names, below the axis

  bool open() const { return live || !timeline.source.empty(); }
  // The time at screen x (in the last frame's plot), and back.
  double time_at(float x) const;
  float x_of(double t_ns) const;
};

// The distributed panel's state (distributed_panel.cpp): a ring all-reduce recorded on the
// threads backend, animated one step per frame of the recording, and DDP's bucket timeline
// over one backward per rank. Recording takes tens of milliseconds, so it happens when the
// panel is opened or the user asks, never per frame.
struct DistributedView {
  std::optional<RingRecording> ring;
  std::optional<DdpRecording> ddp;
  int world_size = 4;  // the ring's ranks (the slider); DDP records 2
  int frame = 0;       // the ring frame shown: 0 = before the first step
  bool playing = false;
  float seconds_per_step = 1.0f, since_step = 0;
  std::string trace_path = "ddp.trace.json";        // where "export DDP trace" writes
  std::string ring_trace_path = "ring.trace.json";  // where "export ring trace" writes
  std::string status;                               // the last export's result, or an error
  // Last frame, for tooltips and tests:
  std::vector<std::pair<std::pair<int, int>, Rect>> cell_rects;  // (rank, chunk) -> its box
  int arrows = 0;                                 // transfers drawn for the shown step
  std::vector<std::pair<int, Rect>> node_bars;    // rank -> a backward node's bar
  std::vector<std::pair<int, Rect>> bucket_bars;  // rank -> a bucket all-reduce's bar
  std::string hover_text;                         // what the tooltip shows, or empty

  bool open() const { return ring.has_value() || ddp.has_value(); }
};

// The shard panel's state (shard_panel.cpp): memory per rank over one training step under
// DDP and under FSDP, and which rows of each parameter each FSDP rank owns (lesson 11).
// Recording takes a fraction of a second, so it happens when the panel is opened, when the
// user asks, or when a setting that changes the run (ranks, prefetch) changes — never per
// frame.
struct ShardView {
  std::optional<ShardRecording> rec;
  int world_size = 2;    // the ranks slider (rec->options.world_size is what was recorded)
  bool prefetch = true;  // FSDP's forward and backward prefetch (the checkbox)
  int recordings = 0;    // how many times it recorded: the tests' witness of a re-record
  std::string status;    // the last recording's error, if it failed
  // Last frame, for tooltips and tests:
  std::vector<std::pair<std::string, Rect>> plots;  // rung name -> its plot area
  std::vector<std::pair<std::string, int>> curves;  // (rung, rank) per curve drawn
  // (rung, rank) per marker drawn: a change of half a unit or more in one piece (find_jumps).
  std::vector<std::pair<std::string, int>> jumps;
  // (parameter index in rec->ownership, rank) -> its real rows' box, or its padding's.
  std::vector<std::pair<std::pair<size_t, int>, Rect>> slice_rects, padding_rects;
  Rect prefetch_box;       // the checkbox, so a test can click it
  std::string hover_text;  // what the tooltip shows, or empty

  bool open() const { return rec.has_value(); }
};

// The compiler panel's state (compile_panel.cpp): a function compiled with glass::compile,
// its graph as traced beside the graph after the passes, fused groups boxed, a graph break
// in red, and the generated loop of the selected group (lesson 12). Compiling runs the C++
// compiler (about a second, once: the kernel cache keeps it), so it happens only when a demo
// is opened, never per frame.
struct CompilePanel {
  std::optional<CompileView> view;
  Layout layout;                                            // of compile_dot(*view)
  std::vector<std::pair<std::string, std::string>> labels;  // DOT name -> label
  int selected_group = 0;                                   // whose loop the source pane shows
  std::string status;                                       // the last open's error, if any
  // Last frame, for tooltips and tests:
  std::vector<std::pair<std::string, Rect>> node_rects;  // DOT name -> its box
  std::vector<std::pair<int, Rect>> group_rects;         // fused group -> its cluster's box
  std::string hover_text;

  bool open() const { return view.has_value(); }
};

enum class Panels : uint8_t {
  All,
  GraphOnly,
  StrideOnly,
  TimelineOnly,
  DistributedOnly,
  ShardOnly,
  CompileOnly
};

struct App {
  std::string title = "glass-viewer";
  Panels panels = Panels::All;
  GraphView graph;
  GradThresholds thresholds;
  // Named live tensors the inspector can show values for (a demo's inputs, parameters).
  std::vector<std::pair<std::string, Tensor>> tensors;
  StrideLab stride;
  std::unique_ptr<Trainer> trainer;  // set when training live (--train)
  bool playing = false;
  // Gradient flow: the current per-parameter norms and their history (one row per step).
  std::vector<ParamNorm> grad_norms;
  std::vector<std::vector<double>> grad_history;
  std::vector<ParamNorm> drawn_norms;  // what the gradient panel drew on the last frame
  std::string error;                   // the last error shown in the status line
  // The lesson tour: the demo on screen ("" when training), and where the tour panel drew
  // each entry on the last frame (for tests).
  std::string current_demo;
  std::vector<std::pair<std::string, Rect>> tour_rects;
  TimelineView timeline;
  DistributedView distributed;
  ShardView shard;
  CompilePanel compile;

  // The demos in lesson order (01 first): the tour panel's entries.
  static std::vector<std::string> tour();

  // The demo glass-viewer opens without --demo: lesson 06's MLP.
  static constexpr const char* kDefaultDemo = "mlp";

  // Opens a demo by name (viewer/demos.h); a glass::Error lists the valid names. The
  // root (the loss) starts selected, so the inspector shows a tensor from the first frame.
  void open_demo(const std::string& name);
  // Starts the Fashion-MNIST MLP training (lesson 06) live in the app.
  void open_training(const TrainerOptions& options = {});
  // Sets the graph and what the inspector and gradient panels show.
  void set_graph(Snapshot s);
  // Selects the drawn graph's root (the node the snapshot was taken from), if it has one.
  void select_root();
  void set_grad_norms(std::vector<ParamNorm> norms);
  // The timeline panel: a trace file (load_timeline; a glass::Error names what is wrong
  // with it), a timeline made elsewhere, or this process's simulated GPU, live — with
  // lesson 08's pipeline running on it when `run_pipeline` (cuda::use_simulator() first).
  void open_timeline(const std::string& trace_path);
  void set_timeline(Timeline t);
  void open_live_timeline(bool run_pipeline);
  // The distributed panel: records the ring on distributed.world_size rank-threads and
  // DDP's buckets on 2 (a glass::Error names what failed).
  void open_distributed();
  // The shard panel: records DDP and FSDP on shard.world_size rank-threads, FSDP with
  // shard.prefetch (a glass::Error names what failed; the old recording stays).
  void open_shard();
  // The compiler panel: compiles demo `name` (viz::compile_demos(); a glass::Error lists
  // them, and the old view stays).
  void open_compile(const std::string& name);

  // Runs one training step when playing, then draws every panel. Call between
  // ImGui::NewFrame() and ImGui::Render().
  void frame();

  // The node the inspector shows, or null.
  const GraphNode* selected_node() const;
  // The live tensor for a node (a leaf's label in `tensors`), or an undefined tensor.
  Tensor tensor_for(const GraphNode& n) const;

  // Panels, each one ImGui window (public so tests and the bench can draw one alone).
  void graph_panel();
  void inspector_panel();
  void stride_panel();
  void gradient_panel();
  void training_panel();
  void tour_panel();
  void timeline_panel();
  void distributed_panel();
  void shard_panel();
  void compile_panel();

 private:
  void ensure_layout();
  void training_step();
  void timeline_step();     // live: one pipeline step, and the records re-read when due
  void distributed_step();  // playing: the ring's next step when its time has come
};

// The per-parameter gradient norms of a module's parameters (undefined grads: 0).
std::vector<ParamNorm> parameter_grad_norms(
    const std::vector<std::pair<std::string, Tensor>>& params);

}  // namespace glass::viz::app
