// compiler/tracer.cpp — the trace fallback and the per-thread tracer (see tracer.h).
//
// Invariant: while a trace runs, every tensor it has seen is held (keep_), so a TensorImpl
// address names one tensor for the whole trace and never a later one at the same address.
#include "compiler/tracer.h"

#include <set>
#include <sstream>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/views.h"

namespace glass::compiler {
namespace {

class Tracer {
 public:
  Tracer(bool fullgraph, bool joint) : fullgraph_(fullgraph), joint_(joint) {}

  int add_input(const Tensor& t, int index) {
    Value v;
    v.kind = Value::Kind::Input;
    v.meta = TensorMeta::of(t);
    v.input = index;
    int id = graph_.add_value(std::move(v));
    graph_.inputs.push_back(id);
    // A tensor passed twice is one value: the first position names it.
    seen_.try_emplace(t.unsafeGetTensorImpl(), id);
    keep_.push_back(t);
    follow(t);
    return id;
  }

  // A tensor no recorded op made (so a constant, if the call goes on) that shares memory with
  // one the trace follows: made outside the ops the trace sees (a view built by hand, say),
  // so the trace cannot know how it relates to the inputs. Returns its description, or "".
  std::string untraced_alias(const Tensor& t) const {
    if (!t.defined() || seen_.count(t.unsafeGetTensorImpl()) || same_view_as(t) >= 0) return "";
    // By the bytes, not the Storage object: from_blob over a followed tensor's data_ptr()
    // is a new Storage of the same memory.
    const char* lo = static_cast<const char*>(t.storage().data());
    const char* hi = lo + t.storage().nbytes();
    bool overlaps = false;
    for (const auto& [a, b] : followed_bytes_) overlaps = overlaps || (lo < b && a < hi);
    if (!overlaps || lo == nullptr) return "";
    return "a tensor of shape " + shape_text(t) +
           " that no op the trace saw made shares memory with one the trace follows (made "
           "outside the dispatcher, e.g. from_blob over data_ptr()), so the trace cannot tell "
           "how it relates to the inputs";
  }

  static std::string shape_text(const Tensor& t) {
    std::ostringstream os;
    os << t.sizes();
    return os.str();
  }

  void follow(const Tensor& t) {
    const char* lo = static_cast<const char*>(t.storage().data());
    if (lo != nullptr) followed_bytes_.emplace_back(lo, lo + t.storage().nbytes());
  }

  // The value a tensor the function handed to an op is: one traced so far, or else a tensor
  // from outside the function, which becomes a constant read live at each call.
  int value_of(const Tensor& t) {
    auto it = seen_.find(t.unsafeGetTensorImpl());
    if (it != seen_.end()) return it->second;
    if (int same = same_view_as(t); same >= 0) return detached(t, same);
    Value v;
    v.kind = Value::Kind::Constant;
    v.meta = TensorMeta::of(t);
    v.constant = t;
    v.is_wrapped_number = t.unsafeGetTensorImpl()->is_wrapped_number();
    return remember(t, graph_.add_value(std::move(v)));
  }

  // In a joint trace: a traced value that `t`, a tensor no recorded op made, is a detach()
  // of — the same bytes seen the same way (storage, offset, sizes, strides, dtype), without
  // history, of a storage nothing wrote into (so the two hold the same numbers for the whole
  // trace). Autograd makes such tensors below the Trace key: a saved output is kept detached
  // (no cycle back to its node) and handed to its formula as a new detach
  // (autograd/saved_variable.h). A user's function gets no such benefit of the doubt (its
  // from_blob over an input stays a break). -1 when there is none.
  int same_view_as(const Tensor& t) const {
    if (!joint_ || !t.defined() || t.requires_grad() || t.storage().data() == nullptr) return -1;
    if (written_.count(t.storage().data())) return -1;
    for (auto it = keep_.rbegin(); it != keep_.rend(); ++it) {
      const Tensor& k = *it;
      if (k.storage().data() == t.storage().data() && k.storage_offset() == t.storage_offset() &&
          k.sizes() == t.sizes() && k.strides() == t.strides() && k.dtype() == t.dtype() &&
          k.device() == t.device()) {
        // A node's result only (a saved output is one): an input's aliasing with another
        // input is not something the joint graph's cache is keyed by.
        const int id = seen_.at(k.unsafeGetTensorImpl());
        if (graph_.values[id].kind == Value::Kind::NodeOutput) return id;
      }
    }
    return -1;
  }

  // Records `t` as what it is: detach(value), a node like any other, so a replay makes a
  // tensor with the same numbers and no history, as autograd did.
  int detached(const Tensor& t, int value) {
    Node n;
    n.op = &ops::detach;
    n.grad_enabled = GradMode::is_enabled();
    Arg arg;
    arg.kind = Arg::Kind::Value;
    arg.value = value;
    n.args.push_back(std::move(arg));
    Value v;
    v.meta = TensorMeta::of(t);
    v.node = static_cast<int>(graph_.nodes.size());
    const int id = remember(t, graph_.add_value(std::move(v)));
    n.outputs.push_back(id);
    graph_.nodes.push_back(std::move(n));
    return id;
  }

  void record(const BoxedOp& op, dispatch::Stack& stack) {
    if (graph_break_) {  // past a break the function just runs
      op.redispatch_boxed(DispatchKey::Trace, stack);
      return;
    }
    std::string untraced;
    for (const IValue& a : stack) {
      if (a.is_tensor()) untraced = untraced_alias(a.tensor());
      if (a.is_tensor_list())
        for (const Tensor& t : a.get<std::vector<Tensor>>())
          if (untraced.empty()) untraced = untraced_alias(t);
      if (!untraced.empty()) break;
    }
    if (!untraced.empty()) {
      brk(op, stack, std::string("graph break at ") + op.name() + "(): " + untraced);
      return;
    }
    if (op.has_tag(kReadsValueOp) || data_dependent_shape(op, stack)) {
      std::string message =
          op.has_tag(kReadsValueOp)
              ? std::string("graph break: ") + op.name() +
                    "() hands a tensor's value back to C++, so what the function does next "
                    "depends on data a trace cannot record"
              : std::string("graph break: the shape of ") + op.name() +
                    "()'s result depends on its input's values (a mask), and C++ may read it "
                    "as a number the trace would freeze";
      GLASS_CHECK(!fullgraph_, "compile(fullgraph=true): ", message,
                  ". Remove the read (keep the value a tensor), or compile without fullgraph");
      int read = -1;
      if (!stack.empty() && stack[0].is_tensor() && stack[0].tensor().defined()) {
        auto it = seen_.find(stack[0].tensor().unsafeGetTensorImpl());
        if (it != seen_.end()) read = it->second;
      }
      graph_break_ = GraphBreak{op.name(), message, read};
      op.redispatch_boxed(DispatchKey::Trace, stack);
      return;
    }
    Node n;
    n.op = &op;
    n.grad_enabled = GradMode::is_enabled();
    std::vector<std::pair<int, Tensor>> written;  // argument index, the tensor it writes
    for (size_t i = 0; i < stack.size(); ++i) {
      const IValue& a = stack[i];
      Arg arg;
      if (a.is_tensor() && a.tensor().defined()) {
        arg.kind = Arg::Kind::Value;
        arg.value = value_of(a.tensor());
        if (op.mutates_argument(static_cast<int>(i))) written.emplace_back(arg.value, a.tensor());
      } else if (a.is_tensor_list()) {
        arg.kind = Arg::Kind::ValueList;
        for (const Tensor& t : a.get<std::vector<Tensor>>()) arg.values.push_back(value_of(t));
      } else {
        arg.constant = a;
      }
      n.args.push_back(std::move(arg));
    }
    op.redispatch_boxed(DispatchKey::Trace, stack);

    int node = static_cast<int>(graph_.nodes.size());
    for (auto& [before, t] : written) {
      Value v;
      v.meta = TensorMeta::of(t);
      v.node = node;
      v.written = before;
      if (t.storage().data() != nullptr) written_.insert(t.storage().data());
      n.writes.push_back(remember(t, graph_.add_value(std::move(v))));
    }
    for (const IValue& r : stack) {
      GLASS_CHECK(r.is_tensor(), "trace: ", op.name(), "() returned a ", r.type_name(),
                  "; only ops returning tensors can be recorded");
      const Tensor& t = r.tensor();
      int same = -1;  // an in-place op returns the tensor it wrote
      for (size_t w = 0; w < written.size(); ++w)
        if (t.defined() && t.is_same(written[w].second)) same = n.writes[w];
      if (same >= 0) {
        n.outputs.push_back(same);
        continue;
      }
      Value v;
      v.meta = t.defined() ? TensorMeta::of(t) : TensorMeta{};
      v.node = node;
      n.outputs.push_back(t.defined() ? remember(t, graph_.add_value(std::move(v)))
                                      : graph_.add_value(std::move(v)));
    }
    graph_.nodes.push_back(std::move(n));
  }

  // nonzero, and indexing by a boolean mask: a result whose shape the values decide (Dynamo
  // breaks there too, by default).
  static bool data_dependent_shape(const BoxedOp& op, const dispatch::Stack& stack) {
    const std::string_view name = op.name();
    if (name == "nonzero") return true;
    if (name != "index") return false;  // index_put_ writes into self: its shape is fixed
    for (const IValue& a : stack)
      if (a.is_tensor_list())
        for (const Tensor& t : a.get<std::vector<Tensor>>())
          if (t.defined() && t.dtype() == kBool) return true;
    return false;
  }

  // Ends the graph before `op` (which then just runs), for a reason other than a value read.
  void brk(const BoxedOp& op, dispatch::Stack& stack, std::string message) {
    GLASS_CHECK(!fullgraph_, "compile(fullgraph=true): ", message);
    graph_break_ = GraphBreak{op.name(), std::move(message), -1};
    op.redispatch_boxed(DispatchKey::Trace, stack);
  }

  TraceResult finish(std::vector<Tensor> outputs) {
    // requires_grad_() is no op: a factory's requires_grad=true, or a call in the function,
    // changes a traced tensor (an input too) behind the trace's back. Each tensor's flag now
    // must be what its latest value recorded.
    if (!graph_break_ && !joint_)
      for (const Tensor& t : keep_) {
        const int id = seen_.at(t.unsafeGetTensorImpl());
        const Value& v = graph_.values[id];
        if (v.kind == Value::Kind::Constant || t.requires_grad() == v.meta.requires_grad) continue;
        std::string message =
            "graph break: requires_grad_() was called on a tensor of shape " + shape_text(t) +
            " inside the function (or a factory was given requires_grad=true); a trace "
            "records ops, and that is none";
        GLASS_CHECK(!fullgraph_, "compile(fullgraph=true): ", message);
        graph_break_ = GraphBreak{"requires_grad_", message, id};
        break;
      }
    // A result no op made that shares memory with a followed tensor: its relation to the
    // inputs is unknown, so a replay could not make it again.
    if (!graph_break_)
      for (const Tensor& t : outputs)
        if (std::string why = untraced_alias(t); !why.empty()) {
          GLASS_CHECK(!fullgraph_, "compile(fullgraph=true): graph break at the return: ", why);
          graph_break_ = GraphBreak{"return", "graph break at the return: " + why, -1};
          break;
        }
    // After a break the results came from code the trace did not see: the graph ends at
    // the break, with no outputs.
    if (graph_break_) return TraceResult{std::move(graph_), std::move(outputs), graph_break_};
    for (const Tensor& t : outputs) {
      GLASS_CHECK(t.defined(), "compile: the function returned an undefined tensor");
      graph_.outputs.push_back(value_of(t));
    }
    return TraceResult{std::move(graph_), std::move(outputs), graph_break_};
  }

  int find(const Tensor& t) const {
    auto it = seen_.find(t.unsafeGetTensorImpl());
    return it == seen_.end() ? -1 : it->second;
  }

 private:
  int remember(const Tensor& t, int id) {
    seen_[t.unsafeGetTensorImpl()] = id;
    keep_.push_back(t);
    if (graph_.values[id].kind != Value::Kind::Constant) {
      follow(t);
    }
    return id;
  }

  bool fullgraph_;
  bool joint_;
  Graph graph_;
  std::unordered_map<const TensorImpl*, int> seen_;
  std::vector<Tensor> keep_;
  // The bytes of the inputs and of every recorded result.
  std::vector<std::pair<const char*, const char*>> followed_bytes_;
  std::optional<GraphBreak> graph_break_;
  std::set<const void*> written_;  // the storages (by their bytes) an op wrote into
};

thread_local Tracer* t_tracer = nullptr;

void trace_fallback(const BoxedOp& op, dispatch::Stack& stack) {
  if (t_tracer == nullptr) {  // tracing was turned on by someone else: just run the op
    op.redispatch_boxed(DispatchKey::Trace, stack);
    return;
  }
  t_tracer->record(op, stack);
}

}  // namespace

bool is_tracing() { return t_tracer != nullptr; }

int traced_value(const Tensor& t) {
  return t_tracer != nullptr && t.defined() ? t_tracer->find(t) : -1;
}

TraceResult trace(const std::vector<Tensor>& inputs, const std::function<std::vector<Tensor>()>& fn,
                  bool fullgraph, bool joint) {
  GLASS_CHECK(t_tracer == nullptr,
              "compile: a compiled function was called while another is being traced on this "
              "thread; nested tracing is not supported (call the inner function directly)");
  // Installed on first use: compiler/ registers the fallback for every op in core.
  static const bool installed = [] {
    dispatch::set_trace_fallback(&trace_fallback);
    return true;
  }();
  (void)installed;
  Tracer tracer(fullgraph, joint);
  for (size_t i = 0; i < inputs.size(); ++i) {
    GLASS_CHECK(inputs[i].defined(), "compile: input ", i, " is an undefined tensor");
    tracer.add_input(inputs[i], static_cast<int>(i));
  }
  t_tracer = &tracer;
  struct Reset {
    ~Reset() { t_tracer = nullptr; }
  } reset;
  std::vector<Tensor> outputs;
  {
    dispatch::TracingGuard tracing;
    outputs = fn();
  }
  return tracer.finish(std::move(outputs));
}

}  // namespace glass::compiler
