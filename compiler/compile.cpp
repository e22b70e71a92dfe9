// compiler/compile.cpp — variants, guards, and running a compiled graph (see compile.h).
//
// Invariant: a variant runs only for calls its guards accept, and its graph was traced on a
// call those guards accepted, so every assumption the trace made about sizes, dtypes,
// devices, numbers and grad is true of the call it runs.
#include "compiler/compile.h"

#include <cstring>
#include <iostream>
#include <sstream>

#include "compiler/autograd_node.h"
#include "compiler/joint_graph.h"
#include "compiler/passes.h"
#include "compiler/program.h"
#include "compiler/tracer.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/tensor_options.h"

namespace glass::compiler {
namespace {

bool same_number(const IValue& a, const IValue& b) {
  if (a.payload().index() != b.payload().index()) return false;
  if (a.holds<int64_t>()) return a.get<int64_t>() == b.get<int64_t>();
  if (a.holds<bool>()) return a.get<bool>() == b.get<bool>();
  if (a.holds<double>()) {  // bitwise: 0.0 and -0.0 trace differently (x * -0.0)
    double x = a.get<double>(), y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  const Scalar &x = a.get<Scalar>(), &y = b.get<Scalar>();
  if (x.type() != y.type()) return false;
  if (x.is_floating_point()) {
    double dx = x.toDouble(), dy = y.toDouble();
    return std::memcmp(&dx, &dy, sizeof dx) == 0;
  }
  return x.toLong() == y.toLong();
}

}  // namespace

struct CompiledFunction::Variant {
  // ---- guards ----
  struct TensorGuard {
    std::vector<int64_t> sizes, strides;
    int64_t storage_offset = 0;
    ScalarType dtype;
    Device device{kCPU};
    bool requires_grad;
    bool has_forward_grad;
  };
  std::vector<TensorGuard> tensors;
  std::vector<int> aliases;
  std::vector<IValue> numbers;
  uint64_t context = 0;
  bool grad_mode = true;
  ScalarType default_dtype = ScalarType::Float32;
  // Tensors from outside the function that the graph reads live: their metadata too.
  std::vector<std::pair<Tensor, TensorGuard>> constants;

  static TensorGuard guard_of(const Tensor& t) {
    return {t.sizes().vec(),
            t.strides().vec(),
            t.storage_offset(),
            t.dtype(),
            t.device(),
            t.requires_grad(),
            t.unsafeGetTensorImpl()->has_forward_grad()};
  }
  static bool matches(const Tensor& t, const TensorGuard& g) {
    if (!t.defined()) return false;
    const TensorImpl* impl = t.unsafeGetTensorImpl();
    return t.dtype() == g.dtype && t.device() == g.device && t.sizes() == g.sizes &&
           t.strides() == g.strides && t.storage_offset() == g.storage_offset &&
           impl->requires_grad() == g.requires_grad &&
           impl->has_forward_grad() == g.has_forward_grad;
  }
  // alias_pattern(ts) == aliases, without building the pattern.
  bool same_aliases(const std::vector<Tensor>& ts) const {
    for (size_t i = 0; i < ts.size(); ++i) {
      int shared = -1, same = -1;
      for (size_t j = 0; j < i && (shared < 0 || same < 0); ++j) {
        if (shared < 0 && ts[i].is_alias_of(ts[j])) shared = static_cast<int>(j);
        if (same < 0 && ts[i].is_same(ts[j])) same = static_cast<int>(j);
      }
      if (shared != aliases[2 * i] || same != aliases[2 * i + 1]) return false;
    }
    return true;
  }
  // What differs, for a tensor matches() refused; never "" (which would accept the call).
  static std::string why_not(const Tensor& t, const TensorGuard& g, const std::string& what) {
    std::string why = differs(t, g, what);
    return why.empty() ? what + "'s metadata differs from the trace's" : why;
  }
  // "" when t matches g, else what differs (`what` names the tensor).
  static std::string differs(const Tensor& t, const TensorGuard& g, const std::string& what) {
    std::ostringstream why;
    if (!t.defined())
      why << what << " is undefined";
    else if (!(t.sizes() == g.sizes))
      why << what << " has sizes " << t.sizes() << ", the trace had " << IntArrayRef(g.sizes);
    else if (t.dtype() != g.dtype)
      why << what << " is " << to_string(t.dtype()) << ", the trace had " << to_string(g.dtype);
    else if (t.device() != g.device)
      why << what << " is on " << t.device() << ", the trace had " << g.device;
    else if (t.requires_grad() != g.requires_grad)
      why << what << (t.requires_grad() ? " requires" : " does not require")
          << " grad, unlike in the trace";
    else if (!(t.strides() == g.strides) || t.storage_offset() != g.storage_offset)
      why << what << " has strides " << t.strides() << " (offset " << t.storage_offset()
          << "), the trace had " << IntArrayRef(g.strides) << " (offset " << g.storage_offset
          << ")";
    else if (t.unsafeGetTensorImpl()->has_forward_grad() != g.has_forward_grad)
      why << what << (g.has_forward_grad ? " has no" : " has a") << " forward-mode tangent, "
          << "unlike in the trace";
    return why.str();
  }

  // ---- what runs ----
  bool eager = false;  // a graph break: the function runs as written
  // With grad: the forward fused with grad mode off, under one autograd node whose backward
  // is the joint graph's, fused too, or else a replay of the graph (autograd_node.h).
  // Otherwise a graph that needs grad replays op by op.
  bool one_node = false;
  Program program;
  std::shared_ptr<BackwardCache> backward;  // one_node: its traced backwards
  VariantInfo info;

  // The first guard the call fails, or "" when it passes.
  std::string check(const std::vector<Tensor>& ts, const std::vector<IValue>& ns, uint64_t ctx,
                    bool grad) const {
    if (ts.size() != tensors.size())
      return "the call has " + std::to_string(ts.size()) + " tensors, the trace had " +
             std::to_string(tensors.size());
    // The common case, a call that matches, builds no string and allocates nothing.
    for (size_t i = 0; i < ts.size(); ++i)
      if (!matches(ts[i], tensors[i]))
        return why_not(ts[i], tensors[i], "tensor " + std::to_string(i));
    if (ns.size() != numbers.size()) return "a different number of non-tensor arguments";
    for (size_t i = 0; i < ns.size(); ++i)
      if (!same_number(ns[i], numbers[i]))
        return "argument " + ns[i].to_string() + " differs from the traced " +
               numbers[i].to_string();
    if (grad != grad_mode) return grad ? "grad mode is on, it was off" : "grad mode is off";
    if (ctx != context) return "a module's training flag changed";
    if (get_default_dtype() != default_dtype) return "the default dtype changed";
    if (!same_aliases(ts)) return "which inputs share storage (or are one tensor) changed";
    for (const auto& [t, g] : constants)
      if (!matches(t, g)) return why_not(t, g, "a tensor the function captured");
    return "";
  }
};

CompiledFunction::CompiledFunction(CompileOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  GLASS_CHECK(options_.recompile_limit >= 1, "compile: recompile_limit must be at least 1, got ",
              options_.recompile_limit);
}

CompiledFunction::~CompiledFunction() = default;

std::vector<Tensor> CompiledFunction::call(const std::vector<Tensor>& tensors,
                                           const std::vector<IValue>& numbers, uint64_t context,
                                           const std::function<std::vector<Tensor>()>& eager) {
  // Inside another trace, a compiled function is inlined: its ops join that trace.
  if (is_tracing()) return eager();
  const bool grad = GradMode::is_enabled();
  std::shared_ptr<Variant> chosen;
  std::string why;
  bool over_limit = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.calls;
    for (const auto& v : variants_) {
      std::string failed = v->check(tensors, numbers, context, grad);
      if (failed.empty()) {
        chosen = v;
        break;
      }
      why = failed;
    }
    if (!chosen && !variants_.empty()) {
      ++stats_.guard_failures;
      stats_.last_guard_failure = why;
    }
    over_limit = !chosen && static_cast<int>(variants_.size()) >= options_.recompile_limit;
    if (over_limit) {
      ++stats_.eager_calls;
      if (!warned_limit_) {
        warned_limit_ = true;
        std::cerr << "glass::compile: " << name_ << " hit its recompile limit ("
                  << options_.recompile_limit << " variants; last guard failure: " << why
                  << "); calls that match no variant now run eagerly\n";
      }
    }
  }
  if (chosen) {
    if (chosen->eager) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.eager_calls;
    }
    if (chosen->eager) return eager();
    if (chosen->one_node) return run_as_one_node(chosen->program, chosen->backward, tensors);
    return chosen->program.run(tensors);
  }
  if (over_limit) return eager();
  if (compile_debug() && !why.empty())
    std::cerr << "glass::compile: recompiling " << name_ << ": " << why << "\n";

  // Trace this call; its results are the function's own, computed as it ran.
  auto variant = std::make_shared<Variant>();
  for (const Tensor& t : tensors) {
    GLASS_CHECK(t.defined(), "compile: ", name_, " was called with an undefined tensor");
    variant->tensors.push_back(Variant::guard_of(t));
  }
  variant->aliases = alias_pattern(tensors);
  variant->numbers = numbers;
  variant->context = context;
  variant->grad_mode = grad;
  variant->default_dtype = get_default_dtype();
  TraceResult traced = trace(tensors, eager, options_.fullgraph);
  VariantInfo& info = variant->info;
  info.traced = traced.graph.to_string();
  info.traced_dot = traced.graph.to_dot("traced");
  info.graph_break = traced.graph_break;
  if (traced.graph_break && traced.graph_break->value >= 0)
    info.break_source = traced.graph.dot_name(traced.graph_break->value);
  if (traced.graph_break) {
    variant->eager = true;
    std::cerr << "glass::compile: " << traced.graph_break->message << " (in " << name_
              << "); this variant runs eagerly\n";
  } else {
    Graph& g = traced.graph;
    info.dead = eliminate_dead_code(g);
    info.merged = eliminate_common_subexpressions(g);
    info.folded = fold_constants(g);
    info.dead += eliminate_dead_code(g);
    // One node when something needs a gradient and the replay in backward is safe.
    bool wants_grad = false, tangents = false;
    for (const Value& value : g.values) {
      const bool external = value.kind == Value::Kind::Input ||
                            (value.kind == Value::Kind::Constant && value.constant.defined());
      if (external) {
        wants_grad = wants_grad || value.meta.requires_grad;
        tangents = tangents || value.meta.has_forward_grad;
      }
    }
    // Worth it when the forward fuses something, and its backward recomputes only cheap
    // elementwise work: the joint graph reads what a matrix product made from the forward
    // (AOTAutograd's partitioner, too, recomputes pointwise ops and saves what a matmul
    // made), a replay would multiply again.
    bool matmul = false;
    for (const Node& n : g.nodes) matmul = matmul || is_matrix_product(n);
    std::vector<FusionGroup> groups;
    if (grad && wants_grad && !tangents && (!matmul || options_.joint_backward) && options_.fuse &&
        options_.one_node_backward && one_node_applies(g)) {
      groups = find_fusion_groups(g, /*forward_without_grad=*/true);
      variant->one_node = !groups.empty();
    }
    if (!variant->one_node && options_.fuse) groups = find_fusion_groups(g);
    info.one_node = variant->one_node;
    for (const FusionGroup& group : groups) info.groups.push_back(group.nodes);
    info.fused_groups = static_cast<int>(groups.size());
    info.optimized = g.to_string();
    info.optimized_dot = g.to_dot("optimized", info.groups);
    for (const Value& value : g.values)
      if (value.kind == Value::Kind::Constant && !value.folded && !value.is_wrapped_number &&
          value.constant.defined())
        variant->constants.emplace_back(value.constant, Variant::guard_of(value.constant));
    variant->program = make_program(std::move(g), std::move(groups));
    info.sources = variant->program.sources;
    if (variant->one_node && options_.joint_backward)
      variant->backward =
          std::make_shared<BackwardCache>(variant->program.graph, options_.recompile_limit, name_);
    if (compile_debug())
      std::cerr << "glass::compile: " << name_ << " traced:\n"
                << info.traced << "after passes (" << info.dead << " dead, " << info.merged
                << " merged, " << info.folded << " folded, " << info.fused_groups
                << " fused groups):\n"
                << info.optimized;
  }
  {
    // Another thread may have traced a call like this one meanwhile (tracing runs outside the
    // lock): keep the first variant, so duplicates never count against the recompile limit.
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.traces;
    bool covered = false;
    for (const auto& v : variants_)
      covered = covered || v->check(tensors, numbers, context, grad).empty();
    if (!covered && static_cast<int>(variants_.size()) < options_.recompile_limit)
      variants_.push_back(std::move(variant));
  }
  return std::move(traced.outputs);
}

bool CompiledFunction::accepts(const std::vector<Tensor>& tensors,
                               const std::vector<IValue>& numbers, uint64_t context) const {
  const bool grad = GradMode::is_enabled();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& v : variants_)
    if (v->check(tensors, numbers, context, grad).empty()) return true;
  return false;
}

CompileStats CompiledFunction::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::vector<VariantInfo> CompiledFunction::variants() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<VariantInfo> out;
  for (const auto& v : variants_) {
    out.push_back(v->info);
    if (v->backward) out.back().backwards = v->backward->info();
  }
  return out;
}

}  // namespace glass::compiler
