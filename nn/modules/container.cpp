// nn/modules/container.cpp — Sequential's forward and the containers' checked access.
#include "nn/modules/container.h"

namespace glass::nn {

void detail::check_index(size_t index, size_t size, const char* container) {
  GLASS_CHECK(index < size, container, ": index ", index, " is out of range for a ", container,
              " of ", size, " module", size == 1 ? "" : "s");
}

void SequentialImpl::check_new_step(const std::string& name, bool defined) const {
  GLASS_CHECK(defined, "Sequential: push_back() got an empty module holder");
  for (const Step& step : steps_)
    GLASS_CHECK(step.name != name, "Sequential: a module named '", name,
                "' is already in this Sequential; choose another name");
}

Tensor SequentialImpl::forward(const Tensor& x) const {
  GLASS_CHECK(!steps_.empty(), "Sequential: forward() on an empty Sequential; push_back() ",
              "layers first");
  Tensor y = steps_.front().forward(x);
  for (size_t i = 1; i < steps_.size(); ++i) y = steps_[i].forward(y);
  return y;
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  detail::check_index(index, steps_.size(), "Sequential");
  return steps_[index].module;
}

// PyTorch prints an empty container as "Sequential()"; a full one gets its "(" from
// Module::print_tree, which lists the children.
void SequentialImpl::pretty_print(std::ostream& os) const {
  os << "Sequential" << (steps_.empty() ? "()" : "");
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  detail::check_index(index, modules_.size(), "ModuleList");
  return modules_[index];
}

void ModuleListImpl::pretty_print(std::ostream& os) const {
  os << "ModuleList" << (modules_.empty() ? "()" : "");
}

}  // namespace glass::nn
