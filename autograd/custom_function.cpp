// autograd/custom_function.cpp — running and checking a custom function's backward.
#include "autograd/custom_function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "core/ops/factories.h"

namespace glass::autograd {

void AutogradContext::save_for_backward(tensor_list to_save) { to_save_ = std::move(to_save); }

tensor_list AutogradContext::get_saved_variables() const {
  tensor_list out;
  std::shared_ptr<Node> owner = node_.lock();
  for (const SavedVariable& s : saved_) out.push_back(s.unpack(owner));
  return out;
}

void AutogradContext::mark_non_differentiable(const tensor_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.insert(t.unsafeGetTensorImpl());
}

std::string custom_node_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string n = status == 0 && name ? name.get() : type.name();
  if (auto colon = n.rfind("::"); colon != std::string::npos) n = n.substr(colon + 2);
  return n + "Backward";
}

bool CustomNode::record_argument(CustomNode& node, const Tensor* arg) {
  const bool is_tensor = arg != nullptr;
  const bool defined = is_tensor && arg->defined();
  const bool rg = defined && arg->requires_grad() && GradMode::is_enabled();
  node.add_next_edge(rg ? gradient_edge(*arg) : Edge{});
  node.input_shapes.emplace_back(defined ? arg->sizes() : IntArrayRef());
  node.input_devices.push_back(defined ? arg->device() : Device(kCPU));
  node.is_tensor_input.push_back(is_tensor);
  node.ctx.needs_input_grad_.push_back(rg);
  return rg;
}

void CustomNode::record_outputs(const std::shared_ptr<CustomNode>& node, tensor_list& outs,
                                const tensor_list& tensor_args, bool any_requires_grad) {
  AutogradContext& ctx = node->ctx;
  for (const Tensor& t : ctx.to_save_) {
    bool is_output = false;
    for (const Tensor& o : outs) is_output = is_output || o.is_same(t);
    ctx.saved_.emplace_back(t, is_output && any_requires_grad);
  }
  ctx.to_save_.clear();
  if (!any_requires_grad) return;
  node->set_num_inputs(static_cast<uint32_t>(outs.size()));
  ctx.node_ = node;
  for (size_t i = 0; i < outs.size(); ++i) {
    node->output_shapes.emplace_back(outs[i].sizes());
    node->output_dtypes.push_back(outs[i].dtype());
    node->output_devices.push_back(outs[i].device());
    if (ctx.non_differentiable_.count(outs[i].unsafeGetTensorImpl()) ||
        !outs[i].is_floating_point())
      continue;
    bool earlier = false;
    for (size_t j = 0; j < i; ++j) earlier = earlier || outs[j].is_same(outs[i]);
    if (earlier) continue;
    bool aliases_argument = false;
    for (const Tensor& t : tensor_args)
      aliases_argument = aliases_argument || (t.defined() && t.is_same(outs[i]));
    if (aliases_argument) outs[i] = outs[i].detach();
    set_history(outs[i], node, static_cast<uint32_t>(i));
  }
}

tensor_list CustomNode::apply_to(const std::shared_ptr<CustomNode>& node, const tensor_list& inputs,
                                 const std::function<tensor_list(AutogradContext*)>& forward) {
  bool any_requires_grad = false;
  for (const Tensor& t : inputs)
    any_requires_grad = record_argument(*node, &t) || any_requires_grad;
  tensor_list outs;
  {
    AutoGradMode no_grad(false);  // forward's own ops are not recorded
    outs = forward(&node->ctx);
  }
  record_outputs(node, outs, inputs, any_requires_grad);
  return outs;
}

tensor_list CustomNode::apply(tensor_list&& grads) {
  // Undefined incoming gradients become zeros, so user code can do arithmetic on them.
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined() && i < output_shapes.size())
      grads[i] = zeros(output_shapes[i], TensorOptions(output_dtypes[i]).device(output_devices[i]));
  tensor_list out = backward_(&ctx, std::move(grads));
  size_t expected = next_edges().size();
  GLASS_CHECK(out.size() == expected, name_,
              ": function backward returned an incorrect number of "
              "gradients (expected ",
              expected, ", got ", out.size(),
              "); return one per forward "
              "argument, an undefined Tensor() for arguments without a gradient");
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined()) continue;
    if (!next_edges()[i].is_valid()) {
      out[i] = Tensor();  // a gradient for an input that needs none is dropped, as in PyTorch
      continue;
    }
    GLASS_CHECK(is_tensor_input[i], name_, ": function backward returned a gradient for argument ",
                i, ", which is not a tensor");
    GLASS_CHECK(out[i].sizes() == IntArrayRef(input_shapes[i]), name_,
                ": function backward returned "
                "a gradient of shape ",
                out[i].sizes(), " for input ", i, " of shape ", IntArrayRef(input_shapes[i]));
    GLASS_CHECK(out[i].device() == input_devices[i], name_,
                ": function backward returned a gradient on ", out[i].device(), " for input ", i,
                ", which is on ", input_devices[i], "; return it on the input's device");
  }
  return out;
}

void CustomNode::release_variables() {
  for (SavedVariable& s : ctx.saved_) s.reset();
}

}  // namespace glass::autograd
