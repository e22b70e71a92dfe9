// nn/module.cpp — registration, the depth-first walks behind named_parameters(), and
// train/eval/zero_grad. Names are checked once at registration so every walk can trust them.
#include "nn/module.h"

#include <algorithm>
#include <set>

#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::nn {

namespace {
template <typename Entries>
auto find_name(Entries& entries, const std::string& name) {
  return std::find_if(entries.begin(), entries.end(),
                      [&](const auto& entry) { return entry.first == name; });
}
}  // namespace

void Module::check_new_name(const std::string& name, const char* what) const {
  GLASS_CHECK(!name.empty(), name_, ": a ", what, " needs a non-empty name");
  GLASS_CHECK(name.find('.') == std::string::npos, name_, ": ", what, " name '", name,
              "' must not contain '.', which separates the levels of a dotted name");
  const bool clash =
      (std::string(what) != "parameter" && find_name(parameters_, name) != parameters_.end()) ||
      (std::string(what) != "buffer" && find_name(buffers_, name) != buffers_.end()) ||
      (std::string(what) != "submodule" && find_name(children_, name) != children_.end());
  GLASS_CHECK(!clash, name_, ": cannot register ", what, " '", name,
              "': the name is already used by another member");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  GLASS_CHECK(tensor.defined(), name_, ": parameter '", name, "' is an undefined tensor");
  GLASS_CHECK(!requires_grad || tensor.is_floating_point(), name_, ": parameter '", name,
              "' has dtype ", tensor.dtype(), "; only floating-point tensors can require grad");
  // A parameter is a leaf: if the caller built it from other tensors, cut that history.
  if (!tensor.is_leaf()) tensor = tensor.detach();
  tensor.requires_grad_(requires_grad);
  auto it = find_name(parameters_, name);
  if (it != parameters_.end()) {
    it->second = tensor;
  } else {
    parameters_.emplace_back(name, tensor);
  }
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_new_name(name, "buffer");
  GLASS_CHECK(tensor.defined(), name_, ": buffer '", name, "' is an undefined tensor");
  auto it = find_name(buffers_, name);
  if (it != buffers_.end()) {
    it->second = tensor;
  } else {
    buffers_.emplace_back(name, tensor);
  }
  return tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "submodule");
  GLASS_CHECK(module != nullptr, name_, ": submodule '", name, "' is null");
  GLASS_CHECK(module.get() != this, name_, ": a module cannot be its own submodule");
  auto it = find_name(children_, name);
  if (it != children_.end()) {
    it->second = std::move(module);
  } else {
    children_.emplace_back(name, std::move(module));
  }
}

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  to_impl(TensorOptions(dtype).device(device), non_blocking);
}
void Module::to(ScalarType dtype, bool non_blocking) {
  to_impl(TensorOptions(dtype), non_blocking);
}
void Module::to(Device device, bool non_blocking) { to_impl(TensorOptions(device), non_blocking); }

// Two passes, so that a failed move (no CUDA runtime, out of memory) changes nothing:
// every tensor is converted first, and only then do the tensors take their new data.
void Module::to_impl(const TensorOptions& options, bool non_blocking) {
  GLASS_CHECK(!options.has_dtype() || is_floating_type(options.dtype()), name_,
              "::to(): parameters can only be cast to a floating-point dtype, got ",
              to_string(options.dtype()));
  NoGradGuard no_grad;                           // moving a parameter is not an op of the model
  std::vector<std::pair<Tensor, Tensor>> moves;  // (tensor, its new data)
  std::set<const TensorImpl*> planned;           // a shared tensor moves once
  auto plan = [&](const Tensor& t) {
    if (!t.defined() || !planned.insert(t.unsafeGetTensorImpl()).second) return;
    TensorOptions o = t.is_floating_point() ? options : options.dtype(std::nullopt);
    moves.emplace_back(t, t.to(o, non_blocking));
  };
  std::vector<const Module*> pending{this};  // depth-first; a module may sit on the stack
  while (!pending.empty()) {
    const Module* m = pending.back();
    pending.pop_back();
    for (const auto& [name, parameter] : m->parameters_) {
      plan(parameter);
      plan(parameter.grad());
    }
    for (const auto& [name, buffer] : m->buffers_) plan(buffer);
    for (const auto& [name, child] : m->children_) pending.push_back(child.get());
  }
  for (const auto& [tensor, data] : moves) tensor.set_data(data);
}

void Module::collect(const std::string& prefix, bool recurse, bool buffers,
                     NamedTensors& out) const {
  for (const auto& [name, tensor] : buffers ? buffers_ : parameters_) {
    out.emplace_back(prefix + name, tensor);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_) {
    child->collect(prefix + name + ".", true, buffers, out);
  }
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect("", recurse, /*buffers=*/false, out);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect("", recurse, /*buffers=*/true, out);
  return out;
}

namespace {
std::vector<Tensor> values(const NamedTensors& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (const auto& entry : named) out.push_back(entry.second);
  return out;
}
}  // namespace

std::vector<Tensor> Module::parameters(bool recurse) const {
  return values(named_parameters(recurse));
}
std::vector<Tensor> Module::buffers(bool recurse) const { return values(named_buffers(recurse)); }

NamedTensors Module::state_dict() const {
  NamedTensors out = named_parameters();
  for (auto& entry : named_buffers()) out.push_back(std::move(entry));
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& entry : children_) out.push_back(entry.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  // shared_from_this needs a shared owner; a module on the stack still lists its children.
  std::shared_ptr<Module> self = weak_from_this().lock();
  out.emplace_back("", self);
  for (const auto& [name, child] : children_) {
    for (auto& [sub, module] : child->named_modules()) {
      out.emplace_back(sub.empty() ? name : name + "." + sub, module);
    }
  }
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& entry : children_) entry.second->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& parameter : parameters()) autograd::zero_grad(parameter, set_to_none);
}

void Module::print_tree(std::ostream& os, int indent) const {
  pretty_print(os);
  if (children_.empty()) return;
  os << "(\n";
  for (const auto& [name, child] : children_) {
    os << std::string(indent + 2, ' ') << "(" << name << "): ";
    child->print_tree(os, indent + 2);
    os << "\n";
  }
  os << std::string(indent, ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  module.print_tree(os);
  return os;
}

}  // namespace glass::nn
