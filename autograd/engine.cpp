// autograd/engine.cpp — dependency counting and the ready queue (see engine.h).
#include "autograd/engine.h"

#include <deque>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/anomaly_mode.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"

namespace glass::autograd {
namespace {

using detail::str_cat;

// Gradients waiting at a node's inputs; contributions to one input are summed.
using InputBuffer = std::vector<Tensor>;

void accumulate(InputBuffer& buf, uint32_t pos, const Tensor& g) {
  if (!g.defined()) return;
  buf[pos] = buf[pos].defined() ? buf[pos] + g : g;
}

// The end-of-backward callbacks (queue_callback) of the innermost backward pass running
// on this thread; null when none is. Every node and hook of a pass runs on the thread
// that called backward(), so a thread-local is all the bookkeeping needed; a nested pass
// installs its own queue and restores the outer one when it ends, even by an exception.
thread_local std::deque<std::function<void()>>* t_callbacks = nullptr;

class CallbackScope {
 public:
  CallbackScope() : outer_(t_callbacks) { t_callbacks = &queue_; }
  ~CallbackScope() { t_callbacks = outer_; }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

  // Runs callbacks until none is left, including ones queued while draining.
  void drain() {
    while (!queue_.empty()) {
      std::function<void()> callback = std::move(queue_.front());
      queue_.pop_front();
      callback();
    }
  }

 private:
  std::deque<std::function<void()>> queue_;
  std::deque<std::function<void()>>* outer_;
};

// The ready queue pops its largest: nodes that run as soon as ready (AccumulateGrad), then
// later-created nodes first; sequence numbers are unique, so the order is the same on every run.
struct CompareSeq {
  bool operator()(Node* a, Node* b) const {
    if (a->runs_as_soon_as_ready() != b->runs_as_soon_as_ready()) return b->runs_as_soon_as_ready();
    return a->sequence_nr() < b->sequence_nr();
  }
};

tensor_list run(const tensor_list& outputs, const tensor_list& grad_outputs, bool keep_graph,
                bool create_graph, const tensor_list& inputs, bool accumulate_grad,
                bool allow_unused, const char* api) {
  GLASS_CHECK(!outputs.empty(), api, "(): expected at least one output tensor");
  GLASS_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), api, "(): got ",
              grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  // Roots and their seed gradients.
  std::vector<Edge> roots;
  tensor_list seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    GLASS_CHECK(out.defined(), api, "(): output ", i, " is an undefined tensor");
    Edge e = gradient_edge(out);
    GLASS_CHECK(e.is_valid(), api, "(): element ", i,
                " of tensors does not require grad and does "
                "not have a grad_fn (was it computed under NoGradGuard, or from tensors that do "
                "not require grad?)");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      GLASS_CHECK(out.numel() == 1, api,
                  "(): grad can be implicitly created only for scalar "
                  "outputs; the output has shape ",
                  out.sizes(), ". Pass a gradient of that shape.");
      g = ones_like(out);
    } else {
      GLASS_CHECK(g.sizes() == out.sizes(), api, "(): mismatch in shape: the gradient has shape ",
                  g.sizes(), " but the output has shape ", out.sizes());
      GLASS_CHECK(g.device() == out.device(), api, "(): the gradient is on ", g.device(),
                  " but the output is on ", out.device(),
                  "; pass a gradient on the output's device (.to(output.device()))");
    }
    roots.push_back(e);
    seeds.push_back(g);
  }

  // Dependencies: how many edges from reachable nodes point at each node.
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (const Edge& e : roots)
    if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& next : n->next_edges()) {
      if (!next.is_valid()) continue;
      deps[next.function.get()]++;
      if (seen.insert(next.function.get()).second) stack.push_back(next.function.get());
    }
  }

  // Where to capture gradients for `inputs` (grad(), or backward(inputs=...)).
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GLASS_CHECK(inputs[i].defined() && inputs[i].requires_grad(), api, "(): input ", i,
                " does not require grad");
    input_edges.push_back(gradient_edge(inputs[i]));
  }
  tensor_list captured(inputs.size());
  std::vector<bool> reached(inputs.size(), false);

  std::unordered_map<Node*, InputBuffer> buffers;
  std::unordered_map<Node*, std::shared_ptr<Node>>
      keep_alive;  // nodes may be shared only via edges
  auto buffer_of = [&](const std::shared_ptr<Node>& n) -> InputBuffer& {
    auto it = buffers.find(n.get());
    if (it == buffers.end()) {
      it = buffers.emplace(n.get(), InputBuffer(n->num_inputs())).first;
      keep_alive.emplace(n.get(), n);
    }
    return it->second;
  };
  std::priority_queue<Node*, std::vector<Node*>, CompareSeq> ready;
  for (size_t i = 0; i < roots.size(); ++i)
    accumulate(buffer_of(roots[i].function), roots[i].input_nr, seeds[i]);
  // Each node is queued once: two roots may be outputs of one node (its inputs are filled
  // by both seeds, then it runs once), and a root another root reaches waits for it, as any
  // node waits for the edges into it.
  std::unordered_set<Node*> queued;
  for (const Edge& e : roots)
    if (deps[e.function.get()] == 0 && queued.insert(e.function.get()).second)
      ready.push(e.function.get());

  glass::AutoGradMode grad_mode(
      create_graph);  // backward formulas record a graph only for create_graph
  CallbackScope callbacks;
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::shared_ptr<Node> holder = keep_alive[node];
    InputBuffer grads = std::move(buffers[node]);
    buffers.erase(node);
    auto* accumulator = dynamic_cast<AccumulateGrad*>(node);
    bool is_accumulator = accumulator != nullptr;
    // Tensor hooks, then retain_grad, see the gradient before anything uses it.
    // Indexed, and each hook copied before it runs: a hook may add hooks to this node.
    for (const auto* hooks : {&node->pre_hooks(), &node->retain_grad_hooks()}) {
      for (size_t h = 0; h < hooks->size(); ++h) {
        auto [nr, hook] = (*hooks)[h];
        if (!hook || nr >= grads.size() || !grads[nr].defined()) continue;  // !hook: removed
        Tensor r = hook(grads[nr]);
        if (r.defined()) grads[nr] = r;
      }
    }
    if (accumulator && !grads.empty()) grads[0] = run_leaf_hooks(accumulator->variable(), grads[0]);
    bool is_input = false;
    for (size_t i = 0; i < input_edges.size(); ++i) {
      if (input_edges[i].function.get() != node) continue;
      is_input = true;
      reached[i] = true;
      captured[i] = grads[input_edges[i].input_nr];
    }
    bool run_node = !is_accumulator || (accumulate_grad && (inputs.empty() || is_input));
    tensor_list out;
    if (run_node) {
      if (events::enabled())
        events::publish({.kind = events::Kind::BackwardNodeRun, .name = "backward", .ptr = node});
      if (!AnomalyMode::is_enabled()) {
        out = node->apply(std::move(grads));
      } else {
        try {
          out = node->apply(std::move(grads));
        } catch (const Error& e) {
          detail::throw_error(str_cat(e.what(), "\n(anomaly mode) while running ", node->name(),
                                      node->forward_trace().empty() ? "" : "; ",
                                      node->forward_trace()));
        }
        for (size_t i = 0; i < out.size(); ++i) {
          if (!out[i].defined() || !out[i].is_floating_point()) continue;
          bool has_nan = (out[i] != out[i]).sum().item<int64_t>() > 0;
          GLASS_CHECK(
              !has_nan, "Function '", node->name(), "' returned nan values in its ", i,
              "th output (anomaly mode). ",
              node->forward_trace().empty() ? std::string("") : node->forward_trace() + ".");
        }
      }
      if (!keep_graph) node->release_variables();
    }
    const auto& edges = node->next_edges();
    GLASS_INTERNAL_ASSERT(!run_node || is_accumulator || out.size() == edges.size(), node->name(),
                          " returned ", out.size(), " gradients for ", edges.size(), " inputs");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.is_valid()) continue;
      if (run_node && i < out.size())
        accumulate(buffer_of(e.function), e.input_nr, out[i]);
      else
        buffer_of(e.function);
      if (--deps[e.function.get()] == 0 && queued.insert(e.function.get()).second)
        ready.push(e.function.get());
    }
  }
  callbacks.drain();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!accumulate_grad)
      GLASS_CHECK(reached[i] || allow_unused, api, "(): one of the differentiated tensors (input ",
                  i,
                  ") appears to not have been used in the graph. Set allow_unused=true if this is "
                  "the desired behavior.");
  }
  return captured;
}

// Any program that uses the engine also records graphs: register the handlers here too
// (see tensor_methods.cpp for why registration rides on a referenced file).
const bool g_registered = [] {
  register_autograd_handlers();
  return true;
}();

}  // namespace

void backward(const tensor_list& outputs, const tensor_list& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph, const tensor_list& inputs) {
  run(outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph, inputs, true, true,
      "backward");
}

void queue_callback(std::function<void()> callback) {
  GLASS_CHECK(t_callbacks != nullptr,
              "queue_callback: no backward pass is running on this thread (call it from a "
              "hook or a custom Function's backward while backward() or grad() runs)");
  GLASS_CHECK(callback != nullptr, "queue_callback: the callback is empty");
  t_callbacks->push_back(std::move(callback));
}

tensor_list grad(const tensor_list& outputs, const tensor_list& inputs,
                 const tensor_list& grad_outputs, std::optional<bool> retain_graph,
                 bool create_graph, bool allow_unused) {
  GLASS_CHECK(!inputs.empty(), "grad(): expected at least one input tensor");
  return run(outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph, inputs,
             false, allow_unused, "grad");
}

}  // namespace glass::autograd
