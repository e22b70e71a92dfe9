// compiler/compile.h — glass::compile: a function traced once, optimised, and run as a graph.
//
//   auto f = glass::compile([](const Tensor& a, const Tensor& b) { return (a * b).relu(); });
//   Tensor y = f(x1, x2);   // first call: trace, passes, codegen; later calls: guards, run
//
// The pipeline, and what each stage stands for in PyTorch 2:
//   trace      (Dynamo)   run the function once with the Trace key on; record every op call
//                         into a Graph (tracer.h); note what the recording assumed — guards
//   passes                dead code, common subexpressions, constant folding (passes.h)
//   fusion     (Inductor) chains of pointwise ops, with a reduction at the end, become one
//                         PointwiseProgram each, compiled to C++ in one shared object
//                         (pointwise.h, kernel_cache.h); what is not fused runs as recorded
//   guards                each later call checks that its inputs match what the trace saw:
//                         sizes, dtypes, devices, requires_grad, which inputs share storage,
//                         the numbers passed, grad mode (and a module's training flag). A
//                         failed guard traces again: a second variant, up to
//                         `recompile_limit` (8, as Dynamo's), past which it warns once and
//                         runs eagerly
//   graph breaks          an op that hands a value back to C++ (item(), printing) ends what
//                         a trace can see. That variant runs eagerly, with a one-line message
//                         naming the op; with `fullgraph` it is an error instead
//
// Differentiable: when grad mode is on and an input requires grad, the variant's forward
// runs fused with grad mode off under one autograd node, CompiledFunctionBackward, whose
// backward recomputes the forward and applies each op's own formula: traced together and
// fused (joint_graph.h), or replayed op by op (autograd_node.h; no second derivatives, as
// AOTAutograd). That is chosen when the forward fuses something
// and holds no matrix product (recomputing one in backward would cost more than fusion
// saves); a graph that writes in place or draws random numbers, inputs with forward-mode
// tangents, and every other graph replay op by op through autograd instead.
//
// Strides and storage offsets are guarded too, as Dynamo guards them: reshape(),
// contiguous() and the function's own C++ decide view-or-copy by them, and a trace keeps
// the decision. Tensors the function captures from outside are read live by handle, their
// metadata guarded. What a trace cannot see: a value read through data_ptr() or an accessor;
// assigning a different tensor to a captured variable (pass it as an input, or compile a
// module, whose parameters and buffers are inputs); a captured tensor that was also passed
// as an argument on the traced call (the trace cannot tell the two uses apart and reads the
// argument); and tensors reached through autograd's metadata, such as p.grad(), which are
// read live like any captured tensor (a new .grad() tensor is not seen).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/graph.h"

namespace glass {

struct CompileOptions {
  bool fullgraph = false;   // a graph break is an error (torch.compile(fullgraph=True))
  int recompile_limit = 8;  // variants kept before running eagerly (Dynamo's cache limit)
  bool fuse = true;         // false: passes, no generated code (the graph replays op by op)
  // With grad: the forward (fused) under one autograd node whose backward recomputes it
  // (AOTAutograd's shape; no second derivatives). false: replay op by op through autograd.
  bool one_node_backward = true;
  // Under one node: the backward traced with the forward it recomputes (a joint graph) and
  // fused, as AOTAutograd and Inductor do; up to recompile_limit kinds of backward (output
  // gradients' layouts). false: the backward replays the graph op by op.
  bool joint_backward = true;
  CompileOptions& set_fullgraph(bool on) {
    fullgraph = on;
    return *this;
  }
  CompileOptions& set_recompile_limit(int n) {
    recompile_limit = n;
    return *this;
  }
  CompileOptions& set_one_node_backward(bool on) {
    one_node_backward = on;
    return *this;
  }
  CompileOptions& set_joint_backward(bool on) {
    joint_backward = on;
    return *this;
  }
  CompileOptions& set_fuse(bool on) {
    fuse = on;
    return *this;
  }
};

namespace compiler {

// One traced backward of a variant that runs as one autograd node (joint_graph.h): the
// joint graph from the saved inputs and the output gradients to the input gradients.
struct BackwardInfo {
  std::string traced;     // as recorded: the forward replayed, then each backward formula
  std::string optimized;  // after the passes
  std::string traced_dot, optimized_dot;
  // What the passes did: dead nodes removed, detaches bypassed, merged, folded.
  int dead = 0, bypassed = 0, merged = 0, folded = 0;
  int fused_groups = 0;
  std::vector<std::vector<int>> groups;  // the optimised graph's nodes of each fused group
  int saved = 0;  // matrix products read from the forward's results instead of recomputed
  std::vector<std::string> sources;  // each fused group's generated source
  std::string replayed;  // why this backward replays the graph instead ("" when it runs fused)
};

// What one variant of a compiled function holds, for tests, the viewer and the lesson.
struct VariantInfo {
  std::string traced;     // the graph as recorded (Graph::to_string)
  std::string optimized;  // after the passes
  std::string traced_dot, optimized_dot;
  int fused_groups = 0;
  std::vector<std::vector<int>> groups;   // the optimised graph's nodes of each fused group
  std::vector<std::string> sources;       // the generated C++ (CUDA for a CUDA group) of each group
  std::optional<GraphBreak> graph_break;  // set: this variant runs eagerly
  std::string break_source;  // the traced DOT's name for what made the value it read, or ""
  bool one_node = false;     // runs as one autograd node (forward fused; backward: `backwards`)
  int dead = 0, merged = 0, folded = 0;  // what the passes removed
  std::vector<BackwardInfo> backwards;   // one_node: each backward traced so far
};

struct CompileStats {
  int64_t calls = 0;
  int64_t traces = 0;              // first trace and every recompile
  int64_t guard_failures = 0;      // calls no variant's guards accepted
  int64_t eager_calls = 0;         // past the recompile limit, or a graph-broken variant
  std::string last_guard_failure;  // why the last retrace happened ("tensor 0 has sizes ...")
};

// The engine behind glass::compile, independent of the function's C++ signature: a call is
// its tensors, the other arguments (numbers: guarded by value), and the function itself,
// which runs only when it must be traced or run eagerly.
class CompiledFunction {
 public:
  explicit CompiledFunction(CompileOptions options, std::string name = "compiled function");
  ~CompiledFunction();
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  // `context` is part of the guards (a module's training flag).
  std::vector<Tensor> call(const std::vector<Tensor>& tensors, const std::vector<IValue>& numbers,
                           uint64_t context, const std::function<std::vector<Tensor>()>& eager);

  // Whether some variant's guards accept these arguments: what every call checks first
  // (the benchmark of the guards' cost times this).
  bool accepts(const std::vector<Tensor>& tensors, const std::vector<IValue>& numbers,
               uint64_t context = 0) const;

  CompileStats stats() const;
  std::vector<VariantInfo> variants() const;
  const CompileOptions& options() const { return options_; }

 private:
  struct Variant;
  CompileOptions options_;
  std::string name_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Variant>> variants_;
  CompileStats stats_;
  bool warned_limit_ = false;
};

// ---- the typed front end -----------------------------------------------------------------

namespace detail {

inline void collect_arg(std::vector<Tensor>& tensors, std::vector<IValue>&, const Tensor& t) {
  tensors.push_back(t);
}
inline void collect_arg(std::vector<Tensor>& tensors, std::vector<IValue>& numbers,
                        const std::vector<Tensor>& ts) {
  tensors.insert(tensors.end(), ts.begin(), ts.end());
  numbers.emplace_back(static_cast<int64_t>(ts.size()));  // the list's length is a guard
}
template <class T>
requires std::is_arithmetic_v<T>
void collect_arg(std::vector<Tensor>&, std::vector<IValue>& numbers, T v) {
  if constexpr (std::is_same_v<T, bool>)
    numbers.emplace_back(v);
  else if constexpr (std::is_floating_point_v<T>)
    numbers.emplace_back(static_cast<double>(v));
  else
    numbers.emplace_back(static_cast<int64_t>(v));
}
inline void collect_arg(std::vector<Tensor>&, std::vector<IValue>& numbers, const Scalar& s) {
  numbers.emplace_back(s);
}

template <class R>
std::vector<Tensor> to_tensors(R&& r) {
  using T = std::remove_cvref_t<R>;
  if constexpr (std::is_same_v<T, Tensor>) {
    return {std::forward<R>(r)};
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    return std::forward<R>(r);
  } else {
    static_assert(
        requires { std::tuple_size<T>::value; },
        "glass::compile: the function must return a Tensor, a std::vector<Tensor>, "
        "or a tuple (or pair) of Tensors");
    return std::apply([](auto&&... t) { return std::vector<Tensor>{Tensor(t)...}; },
                      std::forward<R>(r));
  }
}

template <class R>
R from_tensors(std::vector<Tensor> ts) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return std::move(ts.at(0));
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    return ts;
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) { return R(std::move(ts.at(I))...); }
    (std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

// Boxes a call's arguments, and `extra` tensors after them (a module's state), runs the call
// through `engine` (`run` is the function itself, for a trace or an eager call), and unboxes
// the result as R.
template <class R, class Run, class... A>
R call_compiled(CompiledFunction& engine, const std::vector<Tensor>& extra, uint64_t context,
                const Run& run, const A&... args) {
  std::vector<Tensor> tensors;
  std::vector<IValue> numbers;
  (collect_arg(tensors, numbers, args), ...);
  if (!extra.empty()) {
    numbers.emplace_back(static_cast<int64_t>(extra.size()));
    tensors.insert(tensors.end(), extra.begin(), extra.end());
  }
  return from_tensors<R>(engine.call(tensors, numbers, context, [&] { return to_tensors(run()); }));
}

}  // namespace detail
}  // namespace compiler

// A compiled callable: call it as the function (tensors, std::vector<Tensor>, numbers).
template <class F>
class Compiled {
 public:
  Compiled(F fn, CompileOptions options, std::string name = "compiled function")
      : fn_(std::move(fn)),
        engine_(std::make_shared<compiler::CompiledFunction>(options, std::move(name))) {}

  template <class... A>
  auto operator()(A&&... args) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, A&...>>;
    return compiler::detail::call_compiled<R>(
        *engine_, {}, 0, [&] { return std::invoke(fn_, args...); }, args...);
  }

  const compiler::CompiledFunction& engine() const { return *engine_; }
  compiler::CompileStats stats() const { return engine_->stats(); }
  std::vector<compiler::VariantInfo> variants() const { return engine_->variants(); }

 private:
  F fn_;
  std::shared_ptr<compiler::CompiledFunction> engine_;
};

// Anything used through -> like a module: a std::shared_ptr<LinearImpl>, or a holder (Linear).
template <class P>
concept ModuleHandle = requires(const P& p) {
  p->parameters();
  p->buffers();
  p->is_training();
  p->named_modules();
};

// A compiled module: module->forward(args...), with the module's parameters and buffers as
// inputs of every call (never constants: an optimizer step must be seen by the next call)
// and the training flags of it and its submodules a guard.
template <ModuleHandle P>
class CompiledModule {
 public:
  CompiledModule(P module, CompileOptions options)
      : module_(std::move(module)),
        engine_(std::make_shared<compiler::CompiledFunction>(options, "compiled module")) {}

  template <class... A>
  auto operator()(A&&... args) const {
    using R = std::remove_cvref_t<decltype(module_->forward(args...))>;
    std::vector<Tensor> state = module_->parameters();
    std::vector<Tensor> buffers = module_->buffers();
    state.insert(state.end(), buffers.begin(), buffers.end());
    // Every submodule's training flag (one child put in eval() changes the graph).
    uint64_t training = (1469598103934665603ull ^ (module_->is_training() ? 1u : 2u)) *
                        1099511628211ull;  // FNV-1a over the flags, root first
    for (const auto& named : module_->named_modules())
      training = (training ^ (named.second->is_training() ? 1u : 2u)) * 1099511628211ull;
    return compiler::detail::call_compiled<R>(
        *engine_, state, training, [&] { return module_->forward(args...); }, args...);
  }

  const P& module() const { return module_; }
  const compiler::CompiledFunction& engine() const { return *engine_; }
  compiler::CompileStats stats() const { return engine_->stats(); }
  std::vector<compiler::VariantInfo> variants() const { return engine_->variants(); }

 private:
  P module_;
  std::shared_ptr<compiler::CompiledFunction> engine_;
};

// torch.compile(fn) / torch.compile(module).
template <class F>
requires(!ModuleHandle<std::decay_t<F>>) Compiled<std::decay_t<F>> compile(
    F&& fn, CompileOptions options = {}) {
  return Compiled<std::decay_t<F>>(std::forward<F>(fn), options);
}
template <class P>
requires ModuleHandle<std::decay_t<P>> CompiledModule<std::decay_t<P>> compile(
    P&& module, CompileOptions options = {}) {
  return CompiledModule<std::decay_t<P>>(std::forward<P>(module), options);
}

}  // namespace glass
