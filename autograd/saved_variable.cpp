// autograd/saved_variable.cpp — saving tensors and checking them on the way back.
#include "autograd/saved_variable.h"

#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::autograd {

SavedVariable::SavedVariable(const Tensor& t, bool is_output, bool output_requires_grad) {
  if (!t.defined()) return;
  saved_version_ = t._version();
  saved_storage_ = t.storage().id();
  is_output_ = is_output;
  // An output is saved before it becomes the owner's output (record() saves, then
  // set_history), so it will require grad even if it does not yet.
  requires_grad_ = (is_output && output_requires_grad) || t.requires_grad();
  if (is_output) {
    AutogradMeta* m = get_meta(t);
    output_nr_ = m ? m->output_nr : 0;
    NoGradGuard no_grad;
    data_ = t.detach();  // same storage, no grad_fn: no cycle back to the owner
  } else {
    data_ = t;
  }
}

SavedTensorInfo SavedVariable::info() const {
  SavedTensorInfo i;
  i.released = released_;
  i.is_output = is_output_;
  i.saved_version = saved_version_;
  if (!data_.defined()) return i;
  i.defined = true;
  i.sizes = DimVector(data_.sizes());
  i.strides = DimVector(data_.strides());
  i.dtype = data_.dtype();
  i.device = data_.device();
  i.version = data_._version();
  i.rebound = data_.storage().id() != saved_storage_;
  return i;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  GLASS_CHECK(!released_,
              "Trying to backward through the graph a second time (or directly access "
              "saved tensors after they have already been freed). Saved intermediate values of "
              "the graph are freed when you call backward() or autograd::grad(). Specify "
              "retain_graph=true if you need to backward through the graph a second time.");
  if (!data_.defined()) return Tensor();
  GLASS_CHECK(data_.storage().id() == saved_storage_,
              "one of the variables needed for gradient computation has had its data replaced "
              "since it was saved: [",
              to_string(data_.dtype()), " ", data_.sizes(), "] now views other memory (set_data, ",
              "or Module::to, re-points a tensor; saved by ",
              (owner ? owner->name() : std::string("a backward node")),
              "). Hint: run backward before moving or rebinding the parameters it used.");
  GLASS_CHECK(data_._version() == saved_version_,
              "one of the variables needed for gradient computation has been modified by an "
              "inplace operation: [",
              to_string(data_.dtype()), " ", data_.sizes(), "] is at version ", data_._version(),
              "; expected version ", saved_version_, " instead (saved by ",
              (owner ? owner->name() : std::string("a backward node")),
              "). Hint: the inplace "
              "op came after this tensor was used; clone() it before modifying, or enable "
              "anomaly detection to find the forward op.");
  if (!is_output_ || !requires_grad_) return data_;
  NoGradGuard no_grad;
  Tensor out = data_.detach();
  if (owner) set_history(out, owner, output_nr_);
  return out;
}

}  // namespace glass::autograd
