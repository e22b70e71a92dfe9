// autograd/custom_function.h — user-defined differentiable functions, libtorch's way.
//
//   struct MyReLU : glass::autograd::Function<MyReLU> {
//     static Tensor forward(AutogradContext* ctx, Tensor input) {
//       ctx->save_for_backward({input});
//       return input.clamp_min(0);
//     }
//     static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
//       Tensor input = ctx->get_saved_variables()[0];
//       Tensor grad_input = grad_output[0].clone();
//       grad_input.index_put_({input < 0}, 0);  // the seed's grad_input[input < 0] = 0
//       return {grad_input};
//     }
//   };
//   Tensor y = MyReLU::apply(x);
//
// apply() runs forward with grad mode off (its ops are not recorded), then records one
// CustomNode as the grad_fn of every output; backward() must return one gradient per
// forward argument (undefined for arguments that are not tensors or need none), each of
// its input's shape — both are checked, with a message that names the function.
#pragma once

#include <any>
#include <functional>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/node.h"
#include "autograd/saved_variable.h"
#include "autograd/variable.h"
#include "core/grad_mode.h"

namespace glass::autograd {

// State shared between a custom function's forward and backward.
class AutogradContext {
 public:
  // Tensors backward needs; checked against in-place changes like any saved tensor.
  void save_for_backward(tensor_list to_save);
  tensor_list get_saved_variables() const;
  // Outputs that have no gradient (e.g. an index); backward gets none for them.
  void mark_non_differentiable(const tensor_list& outputs);
  // needs_input_grad(i): does forward argument i require a gradient?
  bool needs_input_grad(size_t i) const {
    return i < needs_input_grad_.size() && needs_input_grad_[i];
  }
  // Anything else backward needs (sizes, flags, scalars): std::any by name.
  std::unordered_map<std::string, std::any> saved_data;

 private:
  template <class T>
  friend struct Function;
  friend class CustomNode;
  tensor_list to_save_;
  std::vector<SavedVariable> saved_;
  std::unordered_set<const TensorImpl*> non_differentiable_;
  std::vector<bool> needs_input_grad_;
  std::weak_ptr<Node> node_;
};

// The grad_fn of a custom function's outputs: calls the user's backward.
class CustomNode : public Node {
 public:
  using Backward = tensor_list (*)(AutogradContext*, tensor_list);
  CustomNode(std::string name, Backward backward) : name_(std::move(name)), backward_(backward) {}

  // Function<T>::apply for a list of tensor arguments known only at run time (the
  // compiler's compiled functions): one edge per tensor of `inputs`, `forward` run with grad
  // mode off (it may save tensors and data through the context), and `node` recorded as the
  // grad_fn of every floating output (one that is an input gets a handle of its own).
  // Returns forward's outputs.
  static tensor_list apply_to(const std::shared_ptr<CustomNode>& node, const tensor_list& inputs,
                              const std::function<tensor_list(AutogradContext*)>& forward);

  // The two halves of every apply (Function<T>::apply and apply_to share them).
  // record_argument: one forward argument's edge (when it needs a gradient), shape and device;
  // nullptr for an argument that is not a tensor. Returns whether it needs a gradient.
  static bool record_argument(CustomNode& node, const Tensor* arg);
  // record_outputs, after forward: stores the tensors forward saved (an output is saved
  // without its history, recognised by identity), then, when any argument needs a gradient,
  // makes `node` the grad_fn of each floating, differentiable output. An output that is an
  // argument gets a handle of its own, so the argument keeps its history; a result returned
  // twice gets one history, shared by both handles.
  static void record_outputs(const std::shared_ptr<CustomNode>& node, tensor_list& outs,
                             const tensor_list& tensor_args, bool any_requires_grad);
  std::string name() const override { return name_; }
  tensor_list apply(tensor_list&& grads) override;
  void release_variables() override;
  std::vector<SavedTensorInfo> saved_tensors() const override {
    std::vector<SavedTensorInfo> out;
    for (const SavedVariable& s : ctx.saved_) out.push_back(s.info());
    return out;
  }

  AutogradContext ctx;
  std::vector<DimVector> input_shapes;  // per forward argument (empty for non-tensors)
  std::vector<Device> input_devices;    // per forward argument (cpu for non-tensors)
  std::vector<bool> is_tensor_input;
  std::vector<DimVector> output_shapes;
  std::vector<ScalarType> output_dtypes;
  std::vector<Device> output_devices;

 private:
  std::string name_;
  Backward backward_;
};

// Demangled C++ type name of T, plus "Backward" (PyTorch names CppNode<MyReLU> alike).
std::string custom_node_name(const std::type_info& type);

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CustomNode>(custom_node_name(typeid(T)), &T::backward);
    bool any_requires_grad = false;
    tensor_list tensor_args;  // for record_outputs' check that an output is an argument
    auto visit = [&](const auto& arg) {
      if constexpr (std::is_same_v<std::decay_t<decltype(arg)>, Tensor>) {
        any_requires_grad = CustomNode::record_argument(*node, &arg) || any_requires_grad;
        tensor_args.push_back(arg);
      } else {
        CustomNode::record_argument(*node, nullptr);
      }
    };
    (visit(args), ...);
    auto outputs = [&] {
      AutoGradMode no_grad(false);  // forward's own ops are not recorded
      return T::forward(&node->ctx, std::forward<Args>(args)...);
    }();
    tensor_list outs;
    if constexpr (std::is_same_v<decltype(outputs), Tensor>)
      outs = {outputs};
    else
      outs = outputs;
    CustomNode::record_outputs(node, outs, tensor_args, any_requires_grad);
    if constexpr (std::is_same_v<decltype(outputs), Tensor>)
      return outs[0];
    else
      return outs;
  }
};

}  // namespace glass::autograd
