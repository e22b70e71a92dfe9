// nn/modules/container.h — Sequential and ModuleList: modules that hold modules.
//
// Both register what they hold as children named "0", "1", ... in order, so parameters
// get the dotted names PyTorch gives them ("0.weight", "2.bias") and train()/eval()/
// zero_grad() reach every layer. Sequential also chains the forwards; ModuleList only
// holds (its owner decides how to call the layers).
//
// Note [Type-erased forward]
// Module declares no forward (each layer has its own signature), so Sequential cannot
// call children through Module*. Instead push_back(), which still knows the concrete
// type, stores beside each child a std::function that calls *that* type's
// forward(const Tensor&). One indirect call per layer is the whole cost. Each step goes
// through call_forward (nn/module.h) for its layer — announced, and through its hooks —
// with the layer itself, not a holder, so the layer is announced once.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

namespace detail {
template <typename M>
std::shared_ptr<M> as_module_ptr(const std::shared_ptr<M>& module) {
  return module;
}
template <typename Impl>
std::shared_ptr<Impl> as_module_ptr(const ModuleHolder<Impl>& holder) {
  return holder.ptr();
}

void check_index(size_t index, size_t size, const char* container);

template <typename T>
T* cast_module(const std::shared_ptr<Module>& module, size_t index, const char* container) {
  T* typed = dynamic_cast<T*>(module.get());
  GLASS_CHECK(typed != nullptr, container, ": module ", index, " is a ", module->name(),
              ", not the type asked for");
  return typed;
}
}  // namespace detail

// What a container accepts: a holder (Linear(4, 2)) or a shared_ptr to a module.
template <typename T>
concept AnyModule = requires(const std::remove_cvref_t<T>& m) {
  { detail::as_module_ptr(m) } -> std::convertible_to<std::shared_ptr<Module>>;
};

// Sequential(Linear(784, 512), ReLU(), Linear(512, 10)): forward(x) runs the layers in
// order, each on the previous one's output. Every layer's forward takes one Tensor.
// Mind the initial weights: C++ evaluates a call's arguments in an unspecified order (g++
// goes right to left), so with parentheses the layers draw their random init in an order
// the compiler picks. Braces fix it — Sequential{Linear(784, 512), ReLU(), ...} evaluates
// left to right ([dcl.init.list]) — as does one push_back per statement.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <AnyModule... Modules>
  requires(sizeof...(Modules) > 0) explicit SequentialImpl(Modules&&... modules)
      : SequentialImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a layer named by its position ("0", "1", ...).
  template <AnyModule M>
  void push_back(M&& module) {
    push_back(std::to_string(size()), std::forward<M>(module));
  }
  // Appends a layer under a name of the caller's choosing (unique within this Sequential).
  template <AnyModule M>
  void push_back(const std::string& name, M&& module) {
    auto impl = detail::as_module_ptr(module);
    using Impl = typename decltype(impl)::element_type;
    static_assert(
        requires(Impl & m, const Tensor& x) {
          { m.forward(x) } -> std::convertible_to<Tensor>;
        },
        "Sequential holds modules whose forward takes one Tensor and returns a Tensor");
    check_new_step(name, impl != nullptr);
    register_module(name, impl);
    // The raw pointer is safe: the Step's shared_ptr owns the same module.
    Impl* raw = impl.get();
    steps_.push_back(
        {name, impl, [raw](const Tensor& x) -> Tensor { return call_forward(*raw, x); }});
  }

  // x: whatever the first layer takes → whatever the last one returns.
  Tensor forward(const Tensor& x) const;

  size_t size() const { return steps_.size(); }
  bool is_empty() const { return steps_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  // The layer as its concrete type: seq->at<LinearImpl>(0).weight.
  template <typename T>
  T& at(size_t index) const {
    return *detail::cast_module<T>(ptr(index), index, "Sequential");
  }
  template <typename T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::shared_ptr<T>(ptr(index), detail::cast_module<T>(ptr(index), index, "Sequential"));
  }

  void pretty_print(std::ostream& os) const override;

 private:
  struct Step {
    std::string name;
    std::shared_ptr<Module> module;
    std::function<Tensor(const Tensor&)> forward;  // Note [Type-erased forward]
  };
  void check_new_step(const std::string& name, bool defined) const;

  std::vector<Step> steps_;
};
GLASS_MODULE(Sequential);

// ModuleList(Linear(4, 4), Linear(4, 4)): an indexable, iterable list of submodules with
// no forward of its own, for layers the owner calls in its own way (a loop over blocks).
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <AnyModule... Modules>
  requires(sizeof...(Modules) > 0) explicit ModuleListImpl(Modules&&... modules)
      : ModuleListImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a module named by its position ("0", "1", ...).
  template <AnyModule M>
  void push_back(M&& module) {
    std::shared_ptr<Module> impl = detail::as_module_ptr(module);
    GLASS_CHECK(impl != nullptr, "ModuleList: push_back() got an empty module holder");
    register_module(std::to_string(modules_.size()), impl);
    modules_.push_back(std::move(impl));
  }

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  template <typename T>
  T& at(size_t index) const {
    return *detail::cast_module<T>(ptr(index), index, "ModuleList");
  }
  template <typename T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::shared_ptr<T>(ptr(index), detail::cast_module<T>(ptr(index), index, "ModuleList"));
  }

  // Iterates the modules in order, as std::shared_ptr<Module>.
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  void pretty_print(std::ostream& os) const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
GLASS_MODULE(ModuleList);

}  // namespace glass::nn
