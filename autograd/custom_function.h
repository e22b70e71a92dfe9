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
    AutogradContext& ctx = node->ctx;
    bool any_requires_grad = false;
    auto visit = [&](const auto& arg) {
      using A = std::decay_t<decltype(arg)>;
      if constexpr (std::is_same_v<A, Tensor>) {
        bool rg = arg.defined() && arg.requires_grad() && GradMode::is_enabled();
        any_requires_grad = any_requires_grad || rg;
        node->add_next_edge(rg ? gradient_edge(arg) : Edge{});
        node->input_shapes.emplace_back(arg.defined() ? arg.sizes() : IntArrayRef());
        node->input_devices.push_back(arg.defined() ? arg.device() : Device(kCPU));
        node->is_tensor_input.push_back(true);
        ctx.needs_input_grad_.push_back(rg);
      } else {
        node->add_next_edge(Edge{});
        node->input_shapes.emplace_back();
        node->input_devices.push_back(Device(kCPU));
        node->is_tensor_input.push_back(false);
        ctx.needs_input_grad_.push_back(false);
      }
    };
    (visit(args), ...);
    auto outputs = [&] {
      AutoGradMode no_grad(false);  // forward's own ops are not recorded
      return T::forward(&ctx, std::forward<Args>(args)...);
    }();
    tensor_list outs;
    if constexpr (std::is_same_v<decltype(outputs), Tensor>)
      outs = {outputs};
    else
      outs = outputs;
    // Save now: saved outputs are recognised by identity and stored without history.
    for (const Tensor& t : ctx.to_save_) {
      bool is_output = false;
      for (const Tensor& o : outs) is_output = is_output || o.is_same(t);
      ctx.saved_.emplace_back(t, is_output && any_requires_grad);
    }
    ctx.to_save_.clear();
    if (any_requires_grad) {
      node->set_num_inputs(static_cast<uint32_t>(outs.size()));
      ctx.node_ = node;
      for (size_t i = 0; i < outs.size(); ++i) {
        node->output_shapes.emplace_back(outs[i].sizes());
        node->output_dtypes.push_back(outs[i].dtype());
        node->output_devices.push_back(outs[i].device());
        if (ctx.non_differentiable_.count(outs[i].unsafeGetTensorImpl()) ||
            !outs[i].is_floating_point())
          continue;
        // An output that is an input (or a view of one) gets its own handle, so the
        // input keeps its own history.
        bool aliases_input = false;
        ((aliases_input = aliases_input || is_same_tensor(args, outs[i])), ...);
        if (aliases_input) outs[i] = outs[i].detach();
        set_history(outs[i], node, static_cast<uint32_t>(i));
      }
    }
    if constexpr (std::is_same_v<decltype(outputs), Tensor>)
      return outs[0];
    else
      return outs;
  }

 private:
  template <class A>
  static bool is_same_tensor(const A& arg, const Tensor& out) {
    if constexpr (std::is_same_v<std::decay_t<A>, Tensor>)
      return arg.defined() && arg.is_same(out);
    else
      return false;
  }
};

}  // namespace glass::autograd
