// nn/module.h — Module, the unit a network is built from, and ModuleHolder (nn::Linear).
//
// A Module owns named parameters (tensors an optimizer updates), named buffers (state
// that is saved but not trained, such as running statistics) and named submodules. Names
// are unique within a module; `named_parameters()` walks the tree depth-first in
// registration order and joins names with dots ("fc1.weight"), the keys a checkpoint uses.
// A Module does not own a `forward` signature: each subclass declares the one it needs,
// as libtorch's do; Sequential type-erases them (nn/modules/container.h).
// Every forward the library calls (ModuleHolder::operator(), each Sequential step) goes
// through call_forward: inside a ModuleScope, which announces it on core's events, and
// through the module's hooks (nn/hooks.h), if it has any.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/events.h"
#include "core/tensor.h"
#include "nn/hooks.h"

namespace glass::nn {

using NamedTensor = std::pair<std::string, Tensor>;
using NamedTensors = std::vector<NamedTensor>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type's name as printed ("Linear"); not the name it is registered under.
  const std::string& name() const { return name_; }

  // Registers `tensor` as a parameter (it becomes a leaf that requires grad unless
  // requires_grad is false) and returns the handle, which the caller usually keeps in a
  // member: both name the same tensor. Re-registering a name replaces the old tensor.
  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor tensor);

  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  // The holder form, libtorch's usual spelling: `fc1 = register_module("fc1", Linear(4, 2));`
  // returns the holder's own type (Linear, not ModuleHolder<LinearImpl>).
  template <typename Holder>
  requires requires(const Holder& h) { h.ptr(); }
  Holder register_module(const std::string& name, Holder holder) {
    add_child(name, holder.ptr());
    return holder;
  }

  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  // Parameters then buffers, dotted names: what a checkpoint holds.
  NamedTensors state_dict() const;

  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module and every descendant, depth-first, dotted names ("" for this one).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();

  // Training mode matters to Dropout (and, later, batch statistics); it propagates to
  // every submodule.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves and/or casts every parameter and buffer of this module and its descendants, and
  // every defined .grad(), as libtorch's Module::to: `model->to(glass::kCUDA)`. The tensors
  // keep their identity (Tensor::set_data), so handles held elsewhere — LinearImpl::weight,
  // an optimizer's parameter list — see the moved data. A dtype applies to floating-point
  // tensors only (integer buffers keep theirs, as in PyTorch). Device(kCUDA) without an
  // index is the current CUDA device. A move that fails (no CUDA runtime) changes nothing.
  // An optimizer's state is not moved: make the optimizer after moving the model (its
  // state is then created on the parameters' device).
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);

  // Clears every parameter's .grad(). set_to_none (PyTorch's default since 2.0) drops the
  // tensor, so the next backward allocates it fresh; otherwise it is zeroed in place.
  void zero_grad(bool set_to_none = true);

  // Hooks (nn/hooks.h), as PyTorch's: run before forward (and may replace its input
  // tensors), after it (and may replace its outputs), and before the gradients of its
  // outputs flow into its graph, once per backward. They run wherever the library calls
  // forward (a holder's operator(), Sequential); calling impl->forward() directly skips them.
  RemovableHandle register_forward_pre_hook(ForwardPreHook hook);
  RemovableHandle register_forward_hook(ForwardHook hook);
  RemovableHandle register_full_backward_pre_hook(BackwardPreHook hook);
  bool has_hooks() const { return hooks_ != nullptr && !hooks_->empty(); }
  // call_forward's steps (below), for a module that has hooks.
  void run_forward_pre_hooks(std::vector<Tensor>& inputs);
  void run_forward_hooks(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);
  // Routes the gradients of `outputs` (those that require grad, with grad mode on) through
  // one node that runs the backward pre-hooks; replaces them by the node's outputs.
  void attach_backward_pre_hooks(std::vector<Tensor>& outputs);

  // One line per module, indented by depth, e.g. "Linear(in_features=4, out_features=2)".
  virtual void pretty_print(std::ostream& os) const { os << name_; }
  void print_tree(std::ostream& os, int indent = 0) const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const;
  void to_impl(const TensorOptions& options, bool non_blocking);
  void check_new_name(const std::string& name, const char* what) const;

  std::string name_;
  bool training_ = true;
  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::shared_ptr<detail::ModuleHooks> hooks_;  // made by the first register_*_hook
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// Publishes ModuleEnter on construction and ModuleExit on destruction (ptr: the module),
// so a subscriber knows exactly which module every op in between ran in — the viewer
// groups a graph by module this way — without nn calling up into the viewer. The pair
// nests like the calls: the destructor also runs when forward throws. Enter is published
// only when someone listens (one relaxed atomic load otherwise) and Exit only if Enter
// was, so a subscriber never sees an Exit whose Enter was skipped for lack of listeners.
// ptr is the Module* (not the derived Impl*), which is what named_modules() hands out.
class ModuleScope {
 public:
  explicit ModuleScope(const Module& module) {
    if (!events::enabled()) return;
    module_ = &module;
    events::publish({.kind = events::Kind::ModuleEnter, .ptr = module_});
  }
  ~ModuleScope() {
    if (module_ != nullptr) events::publish({.kind = events::Kind::ModuleExit, .ptr = module_});
  }
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  const Module* module_ = nullptr;
};

// [SECTION] call_forward: forward, inside a ModuleScope, through the module's hooks.
namespace detail {

// A forward argument the hooks see: a Tensor or a std::vector<Tensor>.
template <class A>
inline constexpr bool kHoldsTensors =
    std::is_same_v<std::decay_t<A>, Tensor> || std::is_same_v<std::decay_t<A>, std::vector<Tensor>>;

// How call_forward keeps an argument: tensors by value (a pre-hook may replace them),
// everything else as the reference it came as.
template <class A>
using Held = std::conditional_t<kHoldsTensors<A>, std::decay_t<A>, A&&>;

inline void gather_tensors(const Tensor& t, std::vector<Tensor>& out) { out.push_back(t); }
inline void gather_tensors(const std::vector<Tensor>& ts, std::vector<Tensor>& out) {
  out.insert(out.end(), ts.begin(), ts.end());
}
template <class T>
void gather_tensors(const T&, std::vector<Tensor>&) {}  // not a tensor: hooks do not see it

inline void scatter_tensors(Tensor& t, const std::vector<Tensor>& in, size_t& next) {
  t = in[next++];
}
inline void scatter_tensors(std::vector<Tensor>& ts, const std::vector<Tensor>& in, size_t& next) {
  for (Tensor& t : ts) t = in[next++];
}
template <class T>
void scatter_tensors(T&, const std::vector<Tensor>&, size_t&) {}

// The tensors of a value forward returned: a Tensor, a vector, or a tuple/pair of those.
template <class R>
std::vector<Tensor> tensors_of(const R& value) {
  std::vector<Tensor> out;
  if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... parts) { (gather_tensors(parts, out), ...); }, value);
  } else {
    gather_tensors(value, out);
  }
  return out;
}
template <class R>
void set_tensors_of(R& value, const std::vector<Tensor>& tensors) {
  size_t next = 0;
  if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](auto&... parts) { (scatter_tensors(parts, tensors, next), ...); }, value);
  } else {
    scatter_tensors(value, tensors, next);
  }
}

template <class Impl, class... Args>
auto forward_with_hooks(Impl& impl, Args&&... args) {
  std::tuple<Held<Args>...> held(std::forward<Args>(args)...);
  std::vector<Tensor> inputs = tensors_of(held);
  impl.run_forward_pre_hooks(inputs);
  set_tensors_of(held, inputs);
  using R = decltype(impl.forward(std::forward<Args>(args)...));
  if constexpr (std::is_void_v<R>) {
    std::apply([&](auto&&... a) { impl.forward(std::forward<decltype(a)>(a)...); },
               std::move(held));
    std::vector<Tensor> none;
    impl.run_forward_hooks(inputs, none);
  } else {
    R out =
        std::apply([&](auto&&... a) -> R { return impl.forward(std::forward<decltype(a)>(a)...); },
                   std::move(held));
    std::vector<Tensor> outputs = tensors_of(out);
    impl.run_forward_hooks(inputs, outputs);
    impl.attach_backward_pre_hooks(outputs);
    set_tensors_of(out, outputs);
    return out;
  }
}

}  // namespace detail

// Runs impl.forward(args...) as the library does everywhere: announced by a ModuleScope,
// and through the module's hooks when it has any.
template <class Impl, class... Args>
decltype(auto) call_forward(Impl& impl, Args&&... args) {
  ModuleScope scope(impl);
  if (!impl.has_hooks()) [[likely]]
    return impl.forward(std::forward<Args>(args)...);
  return detail::forward_with_hooks(impl, std::forward<Args>(args)...);
}

// ModuleHolder<LinearImpl> is what `nn::Linear` names: a shared handle with `->` access and
// `operator()` forwarding to forward(), so `Linear fc(4, 2); fc(x); fc->weight` read as in
// libtorch. Copies share the module.
//
// `Linear fc{nullptr};` makes an empty holder, to be assigned later (the usual member
// declaration before register_module in a constructor); using it before then is an error.
template <typename Impl>
class ModuleHolder {
 public:
  // Constrained so that copying a holder never tries to build an Impl from a holder.
  template <typename... Args>
  requires std::constructible_from<Impl, Args...>
  explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  ModuleHolder(std::nullptr_t) {}

  bool is_empty() const { return impl_ == nullptr; }
  Impl* get() const {
    GLASS_CHECK(impl_ != nullptr, "accessing an empty ModuleHolder (declared with {nullptr}); ",
                "assign it a module, e.g. fc = register_module(\"fc\", Linear(4, 2))");
    return impl_.get();
  }
  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  operator std::shared_ptr<Impl>() const { return impl_; }

  // Runs forward through call_forward. Calling impl->forward() directly announces nothing
  // and runs no hook.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    return call_forward(*get(), std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

// GLASS_MODULE(Linear) declares `class Linear : public ModuleHolder<LinearImpl>`.
#define GLASS_MODULE(Name)                                     \
  class Name : public ::glass::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::glass::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

}  // namespace glass::nn
