// autograd/saved_variable.h — a tensor a Node keeps for its backward formula.
//
// It remembers the tensor's version and storage when saved. Note [Version Counter
// Sharing] in core/storage.h: any in-place write to the same storage bumps that number,
// and set_data re-points the tensor at another storage; either way the saved values are
// gone, and unpack() refuses.
// A saved *output* of the node itself is stored without its grad_fn (which would be the
// node: a cycle) and gets it back, weakly, when unpacked.
#pragma once

#include <memory>
#include <string>

#include "autograd/node.h"
#include "core/tensor.h"

namespace glass::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // `output_requires_grad`: whether the node becomes the output's grad_fn (false when
  // the node exists only to compute forward-mode tangents).
  SavedVariable(const Tensor& t, bool is_output, bool output_requires_grad = true);

  // The saved tensor, with its history (for create_graph). `owner` names the node in
  // error messages and is the grad_fn restored on a saved output.
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  void reset() {
    data_ = Tensor();
    released_ = true;
  }
  bool defined() const { return data_.defined() || released_; }
  // Metadata and versions of the saved tensor, for tools that draw the graph (node.h).
  SavedTensorInfo info() const;

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint64_t saved_storage_ = 0;  // Storage::id() when saved
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

}  // namespace glass::autograd
