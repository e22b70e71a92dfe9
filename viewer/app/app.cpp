// viewer/app/app.cpp — the panels of glass-viewer, drawn with Dear ImGui (app.h).
//
// Nothing here touches a window or GL: each panel is one ImGui window filled through its
// draw list, and records what it drew (node boxes, grid cells, norms) in App for tests.
// The graph layout is cached on structure_key() and recomputed only when it changes.
//
// The Graph, Stride layout, Timeline, Distributed and Shard panels are in graph_panel.cpp,
// stride_panel.cpp, timeline_panel.cpp, distributed_panel.cpp, shard_panel.cpp and
// compile_panel.cpp.
//
// [SECTION] state   [SECTION] inspector   [SECTION] gradient flow   [SECTION] training
// [SECTION] frame
#include "viewer/app/app.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "nn/module.h"
#include "viewer/app/draw.h"
#include "viewer/demos.h"
#include "viewer/modules.h"
#include "viewer/recorders.h"

namespace glass::viz::app {

// [SECTION] state ---------------------------------------------------------------------------

std::string structure_key(const Snapshot& s) {
  std::string key;
  for (const GraphNode& n : s.nodes)
    key += n.name + '|' + n.label + '|' + n.module + '|' + to_string(n.output) + '\n';
  for (const GraphEdge& e : s.edges)
    key += std::to_string(e.from) + '>' + std::to_string(e.to) + ';';
  return key;
}

std::vector<ParamNorm> parameter_grad_norms(
    const std::vector<std::pair<std::string, Tensor>>& params) {
  std::vector<ParamNorm> out;
  for (const auto& [name, p] : params)
    out.push_back({name, p.grad().defined() ? grad_stats(p.grad()).norm : 0.0});
  return out;
}

std::vector<std::string> App::tour() {
  // Each description starts "lesson NN:", so sorting by it (stably) is lesson order.
  std::vector<const Demo*> order;
  for (const Demo& d : demos()) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(), [](const Demo* a, const Demo* b) {
    return a->description.substr(0, 9) < b->description.substr(0, 9);
  });
  std::vector<std::string> names;
  for (const Demo* d : order) names.push_back(d->name);
  return names;
}

void App::open_demo(const std::string& name) {
  const Demo& demo = find_demo(name);
  current_demo = name;
  trainer.reset();
  playing = false;
  manual_seed(0);  // as capture() does: the same graph and values as glass-dot's
  DemoRun run = demo.build();
  Tensor root = run.forward();
  tensors = run.names;
  std::vector<std::pair<std::string, Tensor>> params;
  if (run.module) params = run.module->named_parameters();
  tensors.insert(tensors.end(), params.begin(), params.end());
  tensors.emplace_back(run.root_name, root);  // the inspector's first tensor (select_root)
  SnapshotOptions opts{.module = run.module.get(), .names = run.names};
  opts.names.emplace_back(run.root_name, root);
  set_graph(snapshot_with_gradients(root, opts));
  select_root();
  if (params.empty())
    for (const auto& [n, t] : run.names)
      if (t.requires_grad()) params.emplace_back(n, t);
  set_grad_norms(parameter_grad_norms(params));
  title = "glass-viewer: " + name;
  for (const auto& [n, t] : tensors)  // the stride lab starts on the first 2-D tensor
    if (t.dim() == 2 && t.numel() <= 64) {
      stride.reset(t.detach(), n);
      return;
    }
  stride.reset(arange(12).view({4, 3}), "a");
}

void App::open_training(const TrainerOptions& options) {
  trainer = std::make_unique<Trainer>(options);
  current_demo.clear();
  title = "glass-viewer: training the Fashion-MNIST MLP (lesson 06)";
  training_step();
  select_root();  // kept across steps: every step's graph has the same structure
  stride.reset(arange(12).view({4, 3}), "a");
}

void App::training_step() {
  StepResult r = trainer->step();
  if (trainer->steps() % 20 == 1) trainer->evaluate();
  tensors = trainer->parameters();
  tensors.emplace_back("loss", r.loss_tensor);
  set_graph(std::move(r.graph));
  set_grad_norms(parameter_grad_norms(trainer->parameters()));
}

void App::set_graph(Snapshot s) {
  graph.snapshot = std::move(s);
  graph.drawn = graph.collapse && !graph.snapshot.modules.empty() ? collapse_modules(graph.snapshot)
                                                                  : graph.snapshot;
  if (graph.selected >= static_cast<int>(graph.drawn.nodes.size())) graph.selected = -1;
}

void App::set_grad_norms(std::vector<ParamNorm> norms) {
  std::vector<double> row;
  for (const ParamNorm& p : norms) row.push_back(p.norm);
  grad_history.push_back(std::move(row));
  if (grad_history.size() > 500) grad_history.erase(grad_history.begin());
  grad_norms = std::move(norms);
}

void App::select_root() {
  graph.selected = -1;
  for (const GraphNode& n : graph.drawn.nodes)
    if (n.is_root) graph.selected = n.id;
}

const GraphNode* App::selected_node() const {
  if (graph.selected < 0 || graph.selected >= static_cast<int>(graph.drawn.nodes.size()))
    return nullptr;
  return &graph.drawn.nodes[static_cast<size_t>(graph.selected)];
}

Tensor App::tensor_for(const GraphNode& n) const {
  for (const auto& [name, t] : tensors)
    if (!n.label.empty() && name == n.label) return t;
  return Tensor();
}

// [SECTION] inspector -----------------------------------------------------------------------

void App::inspector_panel() {
  ImGui::Begin("Tensor inspector");
  const GraphNode* n = selected_node();
  if (!n) {
    ImGui::TextWrapped("Click a node in the graph.");
    ImGui::End();
    return;
  }
  ImGui::Text("%s  %s", n->name.c_str(), n->label.c_str());
  if (!n->op.empty()) ImGui::Text("op: %s", n->op.c_str());
  if (!n->module.empty()) ImGui::Text("module: %s", n->module.c_str());
  Tensor t = tensor_for(*n);
  TensorMeta m = t.defined() ? meta_of(t) : n->output;
  ImGui::Text("shape   %s", sizes_str(m.sizes).c_str());
  ImGui::Text("strides %s",
              m.strides.empty() ? "(not known for an inner node)" : sizes_str(m.strides).c_str());
  ImGui::Text("dtype   %s", to_string(m).c_str());
  if (t.defined()) {
    ImGui::Text("offset  %lld   version %u   contiguous %s",
                static_cast<long long>(t.storage_offset()), t._version(),
                t.is_contiguous() ? "yes" : "no");
    ImGui::Text("device  %s", t.device().str().c_str());
  }
  if (n->grad)
    ImGui::Text("gradient: |g| %.4g  max|g| %.4g  NaN %lld  Inf %lld", n->grad->norm,
                n->grad->max_abs, static_cast<long long>(n->grad->nan_count),
                static_cast<long long>(n->grad->inf_count));
  for (const SavedTensor& s : n->saved)
    ImGui::BulletText("saved %s%s", to_string(s.meta).c_str(),
                      s.version_check_fails() ? "  (modified in place!)" : "");
  if (t.defined()) {
    if (t.numel() == 1)  // a loss: its value, which a heatmap of one cell would not say
      ImGui::Text("value   %.6g", values_of(t).front());
    else
      heatmap("values", t);
    if (t.grad().defined()) heatmap("gradient", t.grad());
    if (ImGui::Button("open in stride lab")) {
      try {
        stride.reset(t.detach(), n->label);
      } catch (const Error& e) {
        error = e.what();
      }
    }
  }
  ImGui::End();
}

// [SECTION] gradient flow -------------------------------------------------------------------

void App::gradient_panel() {
  ImGui::Begin("Gradient flow");
  drawn_norms.clear();
  double top = 1e-12;
  for (const ParamNorm& p : grad_norms) top = std::max(top, std::isfinite(p.norm) ? p.norm : 0.0);
  for (size_t i = 0; i < grad_norms.size(); ++i) {
    const ParamNorm& p = grad_norms[i];
    char label[64];
    std::snprintf(label, sizeof label, "%.4g", p.norm);
    bool bad =
        p.norm < thresholds.vanishing || p.norm > thresholds.exploding || !std::isfinite(p.norm);
    if (bad) ImGui::PushStyleColor(ImGuiCol_PlotHistogram, IM_COL32(230, 60, 60, 255));
    ImGui::ProgressBar(static_cast<float>(std::isfinite(p.norm) ? p.norm / top : 1.0),
                       ImVec2(160, 0), label);
    if (bad) ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::Text("%s", p.name.c_str());
    if (grad_history.size() > 1) {  // this parameter's norm over the steps
      std::vector<float> h;
      for (const auto& row : grad_history)
        if (i < row.size()) h.push_back(static_cast<float>(row[i]));
      ImGui::SameLine();
      ImGui::PlotLines(("##h" + p.name).c_str(), h.data(), static_cast<int>(h.size()), 0, nullptr,
                       FLT_MAX, FLT_MAX, ImVec2(140, 18));
    }
    drawn_norms.push_back(p);
  }
  if (grad_norms.empty()) ImGui::TextDisabled("no parameters with gradients");
  ImGui::End();
}

// [SECTION] training ------------------------------------------------------------------------

void App::training_panel() {
  ImGui::Begin("Training");
  if (!trainer) {
    ImGui::TextWrapped(
        "Press \"Train lesson 06's MLP live\" in the lesson tour (or run `glass-viewer "
        "--train`) to train the Fashion-MNIST MLP here.");
    ImGui::End();
    return;
  }
  if (ImGui::Button(playing ? "pause" : "play")) playing = !playing;
  ImGui::SameLine();
  if (ImGui::Button("step") && !playing) training_step();
  ImGui::SameLine();
  ImGui::Text("step %lld", static_cast<long long>(trainer->steps()));
  const auto& losses = trainer->losses();
  if (!losses.empty()) {
    std::vector<float> l(losses.begin(), losses.end());
    ImGui::PlotLines("loss", l.data(), static_cast<int>(l.size()), 0,
                     ("loss " + std::to_string(losses.back())).c_str(), 0, FLT_MAX, ImVec2(0, 80));
  }
  const auto& acc = trainer->accuracies();
  if (!acc.empty()) {
    std::vector<float> a(acc.begin(), acc.end());
    ImGui::PlotLines("test acc", a.data(), static_cast<int>(a.size()), 0,
                     ("acc " + std::to_string(acc.back())).c_str(), 0, 1, ImVec2(0, 60));
  }
  ImGui::Text("samples (label -> prediction)");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (const Trainer::Sample& smp : trainer->samples(6)) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    std::vector<double> px = values_of(smp.image);
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) {
        int g = static_cast<int>(255 * px[static_cast<size_t>(y * 28 + x)]);
        dl->AddRectFilled(
            ImVec2(p.x + static_cast<float>(x) * 2, p.y + static_cast<float>(y) * 2),
            ImVec2(p.x + static_cast<float>(x) * 2 + 2, p.y + static_cast<float>(y) * 2 + 2),
            IM_COL32(g, g, g, 255));
      }
    ImGui::Dummy(ImVec2(56, 56));
    ImGui::SameLine();
    const auto& names = Trainer::class_names();
    ImGui::TextColored(
        smp.label == smp.predicted ? ImVec4(0.5f, 1, 0.5f, 1) : ImVec4(1, 0.5f, 0.5f, 1),
        "%s -> %s", names[static_cast<size_t>(smp.label)].c_str(),
        names[static_cast<size_t>(smp.predicted)].c_str());
  }
  ImGui::End();
}

// [SECTION] frame ---------------------------------------------------------------------------

// The lesson tour: every demo in lesson order, one click to open it, and lesson 06's
// training to run live.
void App::tour_panel() {
  ImGui::Begin("Lesson tour");
  tour_rects.clear();
  for (const std::string& name : tour()) {
    const Demo& d = find_demo(name);
    if (ImGui::Selectable((d.description + "##" + name).c_str(), name == current_demo)) {
      try {
        open_demo(name);
      } catch (const Error& e) {
        error = e.what();
      }
    }
    ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    tour_rects.emplace_back(name, Rect{lo.x, lo.y, hi.x, hi.y});
  }
  if (ImGui::Button("Train lesson 06's MLP live")) {
    try {
      open_training();
    } catch (const Error& e) {
      error = e.what();  // e.g. the dataset package is missing
    }
  }
  if (ImGui::Button("Lesson 08: the simulated GPU's timeline, live")) {
    try {
      open_live_timeline(/*run_pipeline=*/true);
    } catch (const Error& e) {
      error = e.what();  // e.g. a real GPU already serves kCUDA in this process
    }
  }
  if (ImGui::Button("Lesson 10: the ring all-reduce and DDP's buckets")) {
    try {
      open_distributed();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (ImGui::Button("Lesson 11: FSDP's memory per rank against DDP's")) {
    try {
      open_shard();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (ImGui::Button("Lesson 12: a compiled function before and after the passes")) {
    try {
      open_compile("seed");
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", error.c_str());
  ImGui::End();
}

void App::frame() {
  if (trainer && playing) training_step();  // one step per frame, on the UI thread
  if (timeline.live) {
    try {
      timeline_step();
    } catch (const Error& e) {  // the device failed: stop stepping, say why
      error = e.what();
      timeline.running = false;
    }
  }
  if (distributed.playing) distributed_step();
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  if (panels != Panels::All) {
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(d);
    if (panels == Panels::GraphOnly)
      graph_panel();
    else if (panels == Panels::TimelineOnly)
      timeline_panel();
    else if (panels == Panels::DistributedOnly)
      distributed_panel();
    else if (panels == Panels::ShardOnly)
      shard_panel();
    else if (panels == Panels::CompileOnly)
      compile_panel();
    else
      stride_panel();
    return;
  }
  // Four columns of tiles on first use; the user may move them afterwards.
  auto place = [&](float x, float y, float w, float h) {
    ImGui::SetNextWindowPos(ImVec2(d.x * x, d.y * y), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(d.x * w, d.y * h), ImGuiCond_FirstUseEver);
  };
  place(0, 0, 0.55f, 0.6f);
  graph_panel();
  place(0.55f, 0, 0.45f, 0.2f);
  tour_panel();
  place(0.55f, 0.2f, 0.45f, 0.4f);
  inspector_panel();
  place(0, 0.6f, 0.55f, 0.4f);
  stride_panel();
  place(0.55f, 0.6f, 0.225f, 0.4f);
  gradient_panel();
  place(0.775f, 0.6f, 0.225f, 0.4f);
  training_panel();
  if (timeline.open()) {  // over the bottom row, across the window, once there is one
    place(0, 0.6f, 1, 0.4f);
    timeline_panel();
  }
  if (distributed.open()) {  // the same: over the bottom row once recorded
    place(0, 0.45f, 1, 0.55f);
    distributed_panel();
  }
  if (shard.open()) {
    place(0, 0.35f, 1, 0.65f);
    shard_panel();
  }
  if (compile.open()) {
    place(0, 0.3f, 1, 0.7f);
    compile_panel();
  }
}

}  // namespace glass::viz::app
