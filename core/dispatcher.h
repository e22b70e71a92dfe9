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
// Note [Op names in events]
// A few entries serve a family of ops and take the member as their first argument
// (binary(BinaryOp::Mul, a, b)). Their OpDispatched event names the op as the user wrote
// it ("mul", "mul_" for the in-place entries binary_ and unary_) and carries the entry
// ("binary") beside it; any other entry is its op, so name == entry. Both are static
// strings, chosen only once a subscriber is known to listen (op_event_name).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/device_kernels.h"
#include "core/events.h"
#include "core/grad_mode.h"
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

template <class Sig>
class Op;

template <class R, class... Args>
class Op<R(Args...)> {
 public:
  using Fn = R (*)(Args...);

  constexpr Op(const char* name, Fn backend) : name_(name) {
    table_[static_cast<int>(DispatchKey::Backend)] = backend;
  }

  const char* name() const { return name_; }
  void register_handler(DispatchKey key, Fn fn) { table_[static_cast<int>(key)] = fn; }
  bool has_handler(DispatchKey key) const { return table_[static_cast<int>(key)] != nullptr; }

  // The full dispatch: the first applicable key from the top of the chain.
  R operator()(Args... args) const {
    const auto& ts = dispatch::thread_state();
    if (ts.tracing && usable(DispatchKey::Trace))
      return run(DispatchKey::Trace, std::forward<Args>(args)...);
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

 private:
  // The Autograd key applies when it has a handler, is not excluded, and either grad mode
  // is on and some tensor argument requires grad, or some argument carries a tangent.
  bool autograd_applies(const std::remove_reference_t<Args>&... args) const {
    if (!usable(DispatchKey::Autograd)) return false;
    dispatch::AutogradDemand d;
    (dispatch::collect(d, args), ...);
    return (d.reverse && GradMode::is_enabled()) || d.forward;
  }
  bool usable(DispatchKey key) const {
    return table_[static_cast<int>(key)] != nullptr &&
           !(dispatch::thread_state().excluded & (1u << static_cast<int>(key)));
  }
  R run(DispatchKey key, Args... args) const {
    if (events::enabled())
      events::publish({.kind = events::Kind::OpDispatched,
                       .name = dispatch::op_event_name(name_, args...),
                       .entry = name_,
                       .detail = to_string(key)});
    return table_[static_cast<int>(key)](std::forward<Args>(args)...);
  }

  const char* name_;
  std::array<Fn, kNumDispatchKeys> table_{};
};

}  // namespace glass
