// core/dispatcher.h — how an op call finds the code that runs it.
//
// Every primitive op is an Op<Signature> object with one slot per dispatch key. A call
// walks a fixed chain, outermost first, and runs the first key that applies and has a
// handler:
//
//     Trace     the compiler is recording this thread        (registered by compiler/)
//     Autograd  grad mode is on and an input requires grad    (registered by autograd/)
//     Backend   always; the native implementation, which checks arguments, allocates
//               outputs on the operands' device and calls that device's kernels
//               (device_kernels.h: CPU now, CUDA from cuda/)
//
// A handler does its part and passes the call on with op.redispatch(my_key, args...),
// which runs the next key down. Upper layers fill their slots at start-up, which is how
// core can call into autograd and the compiler without including them.
//
// Note [Below-key exclusion]
// While a handler's redispatch runs, its key and those above it are excluded on this
// thread. So when the Backend implementation of, say, softmax calls exp() internally,
// that inner call goes straight to Backend: autograd records one SoftmaxBackward node,
// not the ops softmax is made of. (PyTorch: AutoDispatchBelowAutograd.)
//
// Note [Boxed ops]
// Every Op is also a BoxedOp: the same op with its arguments in one generic form (a Stack
// of IValues), registered by name when it is constructed. Code that treats every op alike
// uses that form: registered_ops() lists them with their schemas, and while the compiler
// traces, an op with no Trace handler of its own is handed, boxed, to the one trace
// fallback the compiler registers, which records it and runs it below Trace with
// redispatch_boxed. So no op runs unrecorded during a trace. (PyTorch: the boxed
// fallback of a dispatch key, e.g. the Python dispatcher's.)
//
// Note [Op names in events]
// A few entries serve a family of ops and take the member as their first argument
// (binary(BinaryOp::Mul, a, b)). Their OpDispatched event names the op as the user wrote
// it ("mul", "mul_" for the in-place entries binary_ and unary_) and carries the entry
// ("binary") beside it; any other entry is its op, so name == entry. Both are static
// strings, chosen only once a subscriber is known to listen (op_event_name).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device_kernels.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ivalue.h"
#include "core/tensor.h"

namespace glass {

enum class DispatchKey : uint8_t { Trace = 0, Autograd = 1, Backend = 2 };
inline constexpr int kNumDispatchKeys = 3;
const char* to_string(DispatchKey k);

namespace dispatch {

// Per-thread dispatch state (see Note [Below-key exclusion]).
struct ThreadState {
  bool tracing = false;  // set by the compiler's tracer
  uint8_t excluded = 0;  // bit k set: key k is skipped
};
ThreadState& thread_state();

// Excludes `key` and every key above it for the current scope.
class ExcludeGuard {
 public:
  explicit ExcludeGuard(DispatchKey key) : prev_(thread_state().excluded) {
    thread_state().excluded |= static_cast<uint8_t>((2u << static_cast<int>(key)) - 1);
  }
  ~ExcludeGuard() { thread_state().excluded = prev_; }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  uint8_t prev_;
};

// Turns tracing on for the current scope (used by compiler/).
class TracingGuard {
 public:
  explicit TracingGuard(bool on = true) : prev_(thread_state().tracing) {
    thread_state().tracing = on;
  }
  ~TracingGuard() { thread_state().tracing = prev_; }
  TracingGuard(const TracingGuard&) = delete;
  TracingGuard& operator=(const TracingGuard&) = delete;

 private:
  bool prev_;
};

// What autograd work the tensor arguments ask for: reverse mode (some input requires grad;
// honoured only while grad mode is on) and forward mode (some input carries a tangent).
// Overloads pick out the tensors; other arguments ask for nothing.
struct AutogradDemand {
  bool reverse = false;
  bool forward = false;
};
inline void collect(AutogradDemand& d, const Tensor& t) {
  if (!t.defined()) return;
  const TensorImpl* impl = t.unsafeGetTensorImpl();
  d.reverse |= impl->requires_grad();
  d.forward |= impl->has_forward_grad();
}
inline void collect(AutogradDemand& d, TensorList ts) {
  for (const Tensor& t : ts) collect(d, t);
}
inline void collect(AutogradDemand& d, const std::vector<Tensor>& ts) {
  collect(d, TensorList(ts));
}
template <class T>
requires(!std::is_convertible_v<const T&, const Tensor&> &&
         !std::is_convertible_v<const T&, TensorList>) inline void collect(AutogradDemand&,
                                                                           const T&) {}

// The op an OpDispatched event names (Note [Op names in events]): the member of the family
// an entry's leading UnaryOp/BinaryOp/ReduceOp selects, in its in-place spelling when the
// entry's name ends in '_'; otherwise the entry itself.
template <class First, class... Rest>
const char* op_event_name(const char* entry, [[maybe_unused]] const First& first, const Rest&...) {
  using T = std::remove_cvref_t<First>;
  if constexpr (std::is_same_v<T, UnaryOp> || std::is_same_v<T, BinaryOp>)
    return std::string_view(entry).ends_with('_') ? inplace_name(first) : to_string(first);
  else if constexpr (std::is_same_v<T, ReduceOp>)
    return to_string(first);
  else
    return entry;
}
inline const char* op_event_name(const char* entry) { return entry; }

}  // namespace dispatch

// What the compiler must know about an op beyond its signature.
enum OpTag : uint8_t {
  kNoTags = 0,
  kViewOp = 1,       // the result shares the first argument's storage
  kRandomOp = 2,     // draws from a generator: two calls differ, so never merged or folded
  kFactoryOp = 4,    // makes a new tensor from no tensor
  kReadsValueOp = 8  // hands a tensor's value back to C++ (item): a trace cannot go on
};

// One op in its boxed form (Note [Boxed ops]). Constructed at compile time (constexpr), so
// an op exists before any code runs and an upper layer's start-up code may register its
// handlers in whatever order the linker runs it.
class BoxedOp {
 public:
  constexpr BoxedOp(const char* name, uint8_t tags) : name_(name), tags_(tags) {}
  virtual ~BoxedOp() = default;
  BoxedOp(const BoxedOp&) = delete;
  BoxedOp& operator=(const BoxedOp&) = delete;

  const char* name() const { return name_; }
  uint8_t tags() const { return tags_; }
  bool has_tag(OpTag tag) const { return (tags_ & tag) != 0; }

  // "binary(BinaryOp, Tensor, Tensor) -> Tensor"; "Tensor(a!)" marks an argument written
  // in place.
  virtual std::string schema() const = 0;
  virtual int num_arguments() const = 0;
  virtual bool mutates_argument(int index) const = 0;
  // The full dispatch, from the top of the chain. The stack holds the arguments, first
  // first; the call replaces them by the results (none, one, or a tuple's elements). An
  // in-place op's result is its written argument.
  virtual void call_boxed(dispatch::Stack& stack) const = 0;
  // The same, from below key `from` (what a boxed handler of `from` calls).
  virtual void redispatch_boxed(DispatchKey from, dispatch::Stack& stack) const = 0;

 private:
  const char* name_;
  uint8_t tags_;
};

namespace dispatch {

// The registry: each file that defines ops lists them once, at start-up
// (`const bool registered = dispatch::register_ops({&ops::view, ...});`); only the list is
// touched there, never an op, so the order files start in does not matter.
bool register_ops(std::initializer_list<const BoxedOp*> ops);
// Every registered op (core's, and any an upper layer registers), by name.
std::vector<const BoxedOp*> registered_ops();
const BoxedOp* find_op(std::string_view name);  // nullptr when there is none

// The handler of the Trace key for every op without one of its own (Note [Boxed ops]).
using TraceFallback = void (*)(const BoxedOp& op, dispatch::Stack& stack);
void set_trace_fallback(TraceFallback fallback);  // nullptr removes it
TraceFallback trace_fallback();

}  // namespace dispatch

template <class Sig>
class Op;

template <class R, class... Args>
class Op<R(Args...)> final : public BoxedOp {
 public:
  using Fn = R (*)(Args...);

  constexpr Op(const char* name, Fn backend, uint8_t tags = kNoTags) : BoxedOp(name, tags) {
    table_[static_cast<int>(DispatchKey::Backend)] = backend;
  }

  void register_handler(DispatchKey key, Fn fn) { table_[static_cast<int>(key)] = fn; }
  bool has_handler(DispatchKey key) const { return table_[static_cast<int>(key)] != nullptr; }

  // The full dispatch: the first applicable key from the top of the chain.
  R operator()(Args... args) const {
    const auto& ts = dispatch::thread_state();
    if (ts.tracing && !excluded(DispatchKey::Trace)) {
      if (has_handler(DispatchKey::Trace))
        return run(DispatchKey::Trace, std::forward<Args>(args)...);
      if (dispatch::TraceFallback fallback = dispatch::trace_fallback())
        return run_boxed_fallback(fallback, args...);
    }
    if (autograd_applies(args...)) return run(DispatchKey::Autograd, std::forward<Args>(args)...);
    return run(DispatchKey::Backend, std::forward<Args>(args)...);
  }

  // Called by the handler of `from` to pass the call on down the chain.
  R redispatch(DispatchKey from, Args... args) const {
    dispatch::ExcludeGuard guard(from);
    if (from == DispatchKey::Trace && autograd_applies(args...))
      return run(DispatchKey::Autograd, std::forward<Args>(args)...);
    return run(DispatchKey::Backend, std::forward<Args>(args)...);
  }

  std::string schema() const override {
    std::string s = std::string(name()) + "(";
    size_t i = 0;
    ((s += (i++ ? ", " : "") + boxing::type_name<Args>()), ...);
    return s + ") -> " + boxing::type_name<R>();
  }
  int num_arguments() const override { return static_cast<int>(sizeof...(Args)); }
  bool mutates_argument(int index) const override {
    constexpr bool mutable_args[] = {boxing::is_mutable_tensor_v<Args>..., false};
    return index >= 0 && index < num_arguments() && mutable_args[index];
  }
  void call_boxed(dispatch::Stack& stack) const override {
    call_unboxed(stack, [this](Args... a) -> R { return (*this)(std::forward<Args>(a)...); });
  }
  void redispatch_boxed(DispatchKey from, dispatch::Stack& stack) const override {
    call_unboxed(
        stack, [this, from](Args... a) -> R { return redispatch(from, std::forward<Args>(a)...); });
  }

 private:
  // The index of the argument an in-place op returns: its first non-const Tensor&.
  static constexpr size_t kWrittenArg = [] {
    constexpr bool mutable_args[] = {boxing::is_mutable_tensor_v<Args>..., false};
    for (size_t i = 0; i < sizeof...(Args); ++i)
      if (mutable_args[i]) return i;
    return sizeof...(Args);
  }();

  template <class F>
  void call_unboxed(dispatch::Stack& stack, F&& f) const {
    GLASS_CHECK(stack.size() == sizeof...(Args), name(), "(): a boxed call needs ", sizeof...(Args),
                " arguments (", schema(), "), got ", stack.size());
    if constexpr (std::is_void_v<R>) {
      [&]<size_t... I>(std::index_sequence<I...>) { f(boxing::Unbox<Args>::get(stack[I])...); }
      (std::index_sequence_for<Args...>{});
      stack.clear();
    } else {
      // A Tensor& result refers into the stack: copy the handle out before clearing it.
      std::remove_cvref_t<R> result = [&]<size_t... I>(std::index_sequence<I...>)->R {
        return f(boxing::Unbox<Args>::get(stack[I])...);
      }
      (std::index_sequence_for<Args...>{});
      stack.clear();
      push_result(stack, std::move(result));
    }
  }
  template <class T>
  static void push_result(dispatch::Stack& stack, T&& value) {
    using Plain = std::remove_cvref_t<T>;
    if constexpr (requires { std::tuple_size<Plain>::value; })
      std::apply([&](auto&&... parts) { (stack.emplace_back(std::move(parts)), ...); },
                 std::forward<T>(value));
    else
      stack.emplace_back(std::forward<T>(value));
  }

  // Boxes the call, hands it to the compiler's fallback and unboxes what it left.
  R run_boxed_fallback(dispatch::TraceFallback fallback,
                       const std::remove_reference_t<Args>&... args) const {
    if (events::enabled())
      events::publish({.kind = events::Kind::OpDispatched,
                       .name = dispatch::op_event_name(name(), args...),
                       .entry = name(),
                       .detail = to_string(DispatchKey::Trace)});
    dispatch::Stack stack;
    stack.reserve(sizeof...(Args));
    (stack.emplace_back(static_cast<const std::remove_cvref_t<Args>&>(args)), ...);
    fallback(*this, stack);
    if constexpr (std::is_void_v<R>) {
      return;
    } else if constexpr (std::is_lvalue_reference_v<R>) {
      // An in-place op returns the caller's own argument, which the fallback wrote through.
      static_assert(kWrittenArg < sizeof...(Args), "a reference result needs a Tensor& argument");
      return const_cast<R>(std::get<kWrittenArg>(std::forward_as_tuple(args...)));
    } else if constexpr (requires { std::tuple_size<R>::value; }) {
      GLASS_CHECK(stack.size() == std::tuple_size_v<R>, name(), "(): the trace fallback left ",
                  stack.size(), " results, expected ", std::tuple_size_v<R>);
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return R(std::move(stack[I].template get<std::tuple_element_t<I, R>>())...);
      }
      (std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
      GLASS_CHECK(stack.size() == 1, name(), "(): the trace fallback left ", stack.size(),
                  " results, expected 1");
      return std::move(stack[0].template get<R>());
    }
  }

  bool excluded(DispatchKey key) const {
    return (dispatch::thread_state().excluded & (1u << static_cast<int>(key))) != 0;
  }

  // The Autograd key applies when it has a handler, is not excluded, and either grad mode
  // is on and some tensor argument requires grad, or some argument carries a tangent.
  bool autograd_applies(const std::remove_reference_t<Args>&... args) const {
    if (!usable(DispatchKey::Autograd)) return false;
    dispatch::AutogradDemand d;
    (dispatch::collect(d, args), ...);
    return (d.reverse && GradMode::is_enabled()) || d.forward;
  }
  bool usable(DispatchKey key) const { return has_handler(key) && !excluded(key); }
  R run(DispatchKey key, Args... args) const {
    if (events::enabled())
      events::publish({.kind = events::Kind::OpDispatched,
                       .name = dispatch::op_event_name(name(), args...),
                       .entry = name(),
                       .detail = to_string(key)});
    return table_[static_cast<int>(key)](std::forward<Args>(args)...);
  }

  std::array<Fn, kNumDispatchKeys> table_{};
};

}  // namespace glass
