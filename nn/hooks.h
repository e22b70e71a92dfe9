// nn/hooks.h — code that runs around a module's forward and before its backward.
//
// PyTorch's module hooks, which libtorch's C++ modules lack: register_forward_pre_hook,
// register_forward_hook and register_full_backward_pre_hook (Module's methods, module.h).
// Forward signatures differ from module to module, so a hook sees the tensors of a call as
// one list: every Tensor argument (and every element of a std::vector<Tensor> argument) in
// order, and likewise the tensors forward returned (a Tensor, a vector of them, or a
// tuple/pair of those). FSDP is the reason they are here: it gathers a unit's parameters in
// a forward pre-hook, frees them in a forward hook, and gathers them again in a backward
// pre-hook, which runs when the gradients of the module's outputs are about to flow into it.
//
// Invariants: a module without hooks runs forward exactly as before (one test of a
// pointer); hooks run in registration order, each kind over a snapshot taken when that
// kind starts, so a hook that removes a hook of the same kind does not change the current
// call; a hook may replace tensors in its list but not change how many there are.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace glass::nn {

class Module;

// inputs: the call's tensors, which the hook may replace before forward sees them.
using ForwardPreHook = std::function<void(Module& module, std::vector<Tensor>& inputs)>;
// outputs: what forward returned, which the hook may replace before the caller sees it.
using ForwardHook = std::function<void(Module& module, const std::vector<Tensor>& inputs,
                                       std::vector<Tensor>& outputs)>;
// grad_outputs: the gradient of each output that required grad (undefined: none flowed),
// which the hook may replace before they flow into the module's graph.
using BackwardPreHook = std::function<void(Module& module, std::vector<Tensor>& grad_outputs)>;

namespace detail {

// One module's hooks. Owned by the module; handles and backward nodes hold it weakly, so
// they outlive the module harmlessly.
struct ModuleHooks {
  std::vector<std::pair<uint64_t, ForwardPreHook>> forward_pre;
  std::vector<std::pair<uint64_t, ForwardHook>> forward;
  std::vector<std::pair<uint64_t, BackwardPreHook>> backward_pre;
  uint64_t next_id = 0;

  bool empty() const { return forward_pre.empty() && forward.empty() && backward_pre.empty(); }
};

}  // namespace detail

// What a register_*_hook call returns (torch.utils.hooks.RemovableHandle). remove() is
// idempotent, and harmless after the module is gone.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<detail::ModuleHooks> hooks, uint64_t id)
      : hooks_(std::move(hooks)), id_(id) {}
  void remove();

 private:
  std::weak_ptr<detail::ModuleHooks> hooks_;
  uint64_t id_ = 0;
};

}  // namespace glass::nn
