// viewer/recorders.cpp — GradientRecorder (pre-hooks) and ForwardRecorder (core's events).
//
// ForwardRecorder keeps one rule: a node is tied to a module scope only if its
// GraphNodeCreated event arrived while that scope was open (nn's ModuleEnter/ModuleExit,
// nn/module.h), so every module a scope gives is exact.
#include "viewer/recorders.h"

#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/custom_function.h"
#include "autograd/node.h"
#include "core/dispatcher.h"
#include "core/error.h"
#include "core/events.h"
#include "nn/module.h"
#include "viewer/graph_reader.h"
#include "viewer/modules.h"

namespace glass::viz {

// [SECTION] GradientRecorder -------------------------------------------------------------------

// Shared by the recorder and its hooks; the hooks hold it weakly, so a hook outliving the
// recorder (autograd keeps hooks as long as the node lives) finds nothing and does nothing.
struct GradientRecorder::State {
  std::mutex mutex;
  // sequence_nr -> input_nr -> the last gradient seen there. The engine sums everything
  // sent to one input before running the node, so a hook sees each input's total once.
  std::unordered_map<uint64_t, std::map<uint32_t, GradStats>> seen;
};

GradientRecorder::GradientRecorder(const Tensor& root) : state_(std::make_shared<State>()) {
  GLASS_CHECK(root.defined(), "viz::GradientRecorder: the root tensor is undefined");
  if (!root.grad_fn()) return;
  std::unordered_set<const autograd::Node*> visited;
  std::vector<std::shared_ptr<autograd::Node>> stack = {root.grad_fn()};
  visited.insert(root.grad_fn().get());
  std::weak_ptr<State> weak = state_;
  while (!stack.empty()) {
    std::shared_ptr<autograd::Node> node = stack.back();
    stack.pop_back();
    uint64_t seq = node->sequence_nr();
    for (uint32_t nr = 0; nr < node->num_inputs(); ++nr) {
      node->add_pre_hook(nr, [weak, seq, nr](const Tensor& g) -> Tensor {
        std::shared_ptr<State> state = weak.lock();
        if (!state) return Tensor();
        GradStats stats = grad_stats(g);
        std::lock_guard<std::mutex> lock(state->mutex);
        state->seen[seq][nr] = stats;
        return Tensor();  // undefined: keep the gradient as it is
      });
    }
    for (const autograd::Edge& e : node->next_edges())
      if (e.is_valid() && visited.insert(e.function.get()).second) stack.push_back(e.function);
  }
}

GradientRecorder::~GradientRecorder() = default;

std::optional<GradStats> GradientRecorder::find(uint64_t sequence_nr) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->seen.find(sequence_nr);
  if (it == state_->seen.end()) return std::nullopt;
  // Several outputs (split, max(dim)): one gradient made of all of them.
  GradStats all;
  double sum_sq = 0;
  bool any_max = false;
  for (const auto& [nr, st] : it->second) {
    all.numel += st.numel;
    all.nan_count += st.nan_count;
    all.inf_count += st.inf_count;
    sum_sq += st.norm * st.norm;
    if (!std::isnan(st.max_abs)) {
      all.max_abs = any_max ? std::max(all.max_abs, st.max_abs) : st.max_abs;
      any_max = true;
    }
  }
  all.norm = std::sqrt(sum_sq);  // nan if any part is nan
  if (!any_max && all.numel > 0) all.max_abs = std::nan("");
  return all;
}

void GradientRecorder::apply_to(Snapshot& s) const {
  for (GraphNode& n : s.nodes)
    if (n.kind != NodeKind::Module) n.grad = find(n.sequence_nr);
}

Snapshot snapshot_with_gradients(const Tensor& root, const SnapshotOptions& options,
                                 bool retain_graph) {
  Snapshot s = snapshot(root, options);
  GLASS_CHECK(root.grad_fn() != nullptr,
              "viz::snapshot_with_gradients(): the root has no grad_fn, so there is no "
              "backward to run (does it require grad? was it computed under NoGradGuard?)");
  GradientRecorder recorder(root);
  root.backward(Tensor(), retain_graph);
  recorder.apply_to(s);
  return s;
}

// [SECTION] ForwardRecorder --------------------------------------------------------------------

// Events arrive on the thread that publishes them; State is what the callback fills.
struct ForwardRecorder::State {
  // One module forward seen running (a ModuleEnter event), and the scope it ran inside.
  // The frames form a tree; a node remembers the innermost one, and the chain up to the
  // model is walked only when a snapshot maps modules to paths.
  struct Frame {
    const void* module;  // the nn::Module, as published; compared, never dereferenced
    int parent;          // index into frames; -1: outside every scope
  };

  std::mutex mutex;
  std::thread::id thread = std::this_thread::get_id();
  bool stopped = false;
  detail::GraphReader reader{GraphKind::Forward};
  std::vector<OpRecord> ops;
  int pending = -1;  // the last op dispatched to the Autograd key, still without its node
  std::vector<Frame> frames;
  int scope = -1;                           // the innermost open frame; -1: none
  std::unordered_map<int, int> node_scope;  // node id -> its frame, for announced nodes

  void on_event(const events::Event& e) {
    if (e.kind == events::Kind::ModuleEnter) {
      frames.push_back({e.ptr, scope});
      scope = static_cast<int>(frames.size()) - 1;
    } else if (e.kind == events::Kind::ModuleExit) {
      // Exits match enters (ModuleScope is RAII); an exit whose enter came before the
      // recorder started matches no open frame and is ignored.
      for (int f = scope; f >= 0; f = frames[f].parent)
        if (frames[f].module == e.ptr) {
          scope = frames[f].parent;
          break;
        }
    } else if (e.kind == events::Kind::OpDispatched) {
      ops.push_back({e.name, e.entry, e.detail, -1});
      // The Autograd key's handler runs the op below itself, then records the node, so
      // the next GraphNodeCreated belongs to this op.
      if (std::string_view(e.detail) == to_string(DispatchKey::Autograd))
        pending = static_cast<int>(ops.size()) - 1;
    } else if (e.kind == events::Kind::GraphNodeCreated && e.ptr != nullptr) {
      // The node is complete (edges, saved tensors) when the event fires, and alive: the
      // op's output holds it. Read it now; nothing of it is kept.
      const auto* node = static_cast<const autograd::Node*>(e.ptr);
      int id = reader.add(*node);
      if (scope >= 0) node_scope[id] = scope;
      // Leaves and custom functions' nodes are announced by no event: read them as this
      // node's inputs, and a custom function's own inputs with them. Any other input
      // already has its node, or was created before recording began (then it stays
      // unexpanded: an input from outside).
      std::vector<const autograd::Node*> stack = {node};
      while (!stack.empty()) {
        const autograd::Node* n = stack.back();
        stack.pop_back();
        for (const autograd::Node* in : reader.expand(*n))
          if (dynamic_cast<const autograd::CustomNode*>(in) != nullptr) stack.push_back(in);
      }
      if (pending >= 0) {
        ops[pending].node = id;
        pending = -1;
      }
    }
  }
};

ForwardRecorder::ForwardRecorder() : state_(std::make_shared<State>()) {
  std::shared_ptr<State> state = state_;
  subscription_ = events::subscribe([state](const events::Event& e) {
    if (std::this_thread::get_id() != state->thread) return;
    std::lock_guard<std::mutex> lock(state->mutex);
    if (!state->stopped) state->on_event(e);
  });
}

ForwardRecorder::~ForwardRecorder() { stop(); }

void ForwardRecorder::stop() {
  if (subscription_ < 0) return;
  events::unsubscribe(subscription_);
  subscription_ = -1;
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stopped = true;
}

Snapshot ForwardRecorder::snapshot(const Tensor& output, const SnapshotOptions& options) const {
  std::vector<State::Frame> frames;
  std::unordered_map<int, int> node_scope;
  detail::GraphReader reader = [&] {
    std::lock_guard<std::mutex> lock(state_->mutex);
    detail::GraphReader copy = state_->reader;
    copy.snapshot().ops = state_->ops;
    frames = state_->frames;
    node_scope = state_->node_scope;
    return copy;
  }();
  reader.finish(output, options);
  Snapshot s = std::move(reader.snapshot());
  if (options.module == nullptr) return s;
  // A node created inside module scopes belongs to the innermost of them that is a
  // submodule in options.module's tree. When that is the model itself (or no scope is in
  // the tree) the scopes say nothing exact: the op may have run in the model's own code or
  // in a child it called as impl->forward(), which announces no scope. Such nodes, and
  // nodes created outside every scope, are left to inference.
  std::unordered_map<const void*, std::string> path_of;
  for (const auto& [path, m] : options.module->named_modules())
    path_of.try_emplace(static_cast<const void*>(m.get()), path);
  std::vector<std::optional<std::string>> scoped(s.nodes.size());
  for (const auto& [id, frame] : node_scope) {
    std::string path;
    for (int f = frame; f >= 0; f = frames[f].parent)
      if (auto it = path_of.find(frames[f].module); it != path_of.end()) {
        path = it->second;
        break;
      }
    if (!path.empty()) scoped[id] = path;
  }
  assign_modules(s, *options.module, scoped);
  return s;
}

}  // namespace glass::viz
