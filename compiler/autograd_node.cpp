// compiler/autograd_node.cpp — one autograd node for a compiled variant (see autograd_node.h).
#include "compiler/autograd_node.h"

#include <any>

#include "autograd/custom_function.h"
#include "autograd/variable.h"
#include "compiler/replay.h"
#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::compiler {
namespace {

// What backward needs besides the saved tensors.
struct NodeState {
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<BackwardCache> joint;
  std::vector<int> leaf_values;  // per input of the node: the graph value it stands for
};

// The matrix products the forward kept for the joint graph (one per
// BackwardCache::saved_values()), each with its storage's version then. Not SavedVariables: one
// written in place since is not an error but simply not used (the backward computes it again from
// the inputs, which autograd does check), since eager mode may not have needed it. Detached: a
// product that is also an output would otherwise hold its own node (a cycle).
struct KeptProducts {
  std::vector<Tensor> tensors;
  std::vector<uint32_t> versions;
};

// This backward's products (`count` of them): the kept ones still as they were. Read only, so
// backwards of a retained graph may run at once.
std::vector<Tensor> kept_products(const autograd::AutogradContext* ctx, size_t count) {
  std::vector<Tensor> out(count);
  auto it = ctx->saved_data.find("products");
  if (it == ctx->saved_data.end()) return out;  // released: computed again
  const auto& kept = std::any_cast<const KeptProducts&>(it->second);
  for (size_t k = 0; k < kept.tensors.size() && k < count; ++k)
    if (kept.tensors[k].defined() && kept.tensors[k]._version() == kept.versions[k])
      out[k] = kept.tensors[k];
  return out;
}

// The node: its products are let go with its saved tensors, when a backward without
// retain_graph is done with it.
class CompiledFunctionNode : public autograd::CustomNode {
 public:
  using CustomNode::CustomNode;
  void release_variables() override {
    CustomNode::release_variables();
    ctx.saved_data.erase("products");
  }
};

autograd::tensor_list compiled_backward(autograd::AutogradContext* ctx,
                                        autograd::tensor_list grads) {
  GLASS_CHECK(!GradMode::is_enabled(),
              "CompiledFunctionBackward: a second derivative through a compiled function is not "
              "supported (as torch.compile's AOTAutograd); call the function eagerly for "
              "higher-order gradients");
  const auto state = std::any_cast<std::shared_ptr<const NodeState>>(ctx->saved_data.at("state"));
  const Graph& graph = *state->graph;
  const autograd::tensor_list saved = ctx->get_saved_variables();
  if (state->joint) {
    const std::vector<Tensor> products = kept_products(ctx, state->joint->saved_values().size());
    std::vector<Tensor> leaves;  // without history: the joint graph computes values only
    std::vector<bool> needs;
    for (size_t i = 0; i < saved.size(); ++i) {
      leaves.push_back(saved[i].detach());
      needs.push_back(ctx->needs_input_grad(i));
    }
    if (auto got = state->joint->run(leaves, state->leaf_values, needs, grads, products))
      return *got;
  }
  std::vector<Tensor> env(graph.values.size());
  std::vector<Tensor> wanted;  // the leaves whose gradient is asked for
  for (size_t i = 0; i < saved.size(); ++i) {
    Tensor leaf = saved[i].detach();
    if (ctx->needs_input_grad(i)) {
      leaf.requires_grad_(true);
      wanted.push_back(leaf);
    }
    env[state->leaf_values[i]] = leaf;
  }
  std::vector<Tensor> got = replay_gradients(graph, std::move(env), wanted, grads);
  autograd::tensor_list result(saved.size());
  for (size_t i = 0, k = 0; i < saved.size(); ++i)
    if (ctx->needs_input_grad(i)) {
      if (k < got.size()) result[i] = got[k];
      ++k;
    }
  return result;
}

}  // namespace

bool one_node_applies(const Graph& graph) {
  for (const Node& n : graph.nodes)
    if (n.mutates() || n.op->has_tag(kRandomOp)) return false;
  return true;
}

std::vector<Tensor> run_as_one_node(const Program& program, std::shared_ptr<BackwardCache> joint,
                                    const std::vector<Tensor>& inputs) {
  const std::shared_ptr<const Graph>& graph = program.graph;
  auto state = std::make_shared<NodeState>();
  state->graph = graph;
  state->joint = std::move(joint);
  // The leaves: each input position, then every captured tensor that requires grad.
  std::vector<Tensor> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    leaves.push_back(inputs[i]);
    state->leaf_values.push_back(graph->inputs[i]);
  }
  for (size_t v = 0; v < graph->values.size(); ++v) {
    const Value& value = graph->values[v];
    if (value.kind == Value::Kind::Constant && value.constant.defined() &&
        value.constant.requires_grad()) {
      leaves.push_back(value.constant);
      state->leaf_values.push_back(static_cast<int>(v));
    }
  }
  auto node =
      std::make_shared<CompiledFunctionNode>("CompiledFunctionBackward", &compiled_backward);
  return autograd::CustomNode::apply_to(node, leaves, [&](autograd::AutogradContext* ctx) {
    ctx->saved_data["state"] = std::shared_ptr<const NodeState>(state);
    ctx->save_for_backward(leaves);  // SavedVariables: a later write in place is caught
    if (!state->joint) return program.run(inputs);
    std::vector<Tensor> kept;
    std::vector<Tensor> out = program.run(inputs, state->joint->saved_values(), &kept);
    KeptProducts products;
    for (const Tensor& k : kept) {
      const Tensor t = k.defined() ? k.detach() : Tensor();
      products.versions.push_back(t.defined() ? t._version() : 0);
      products.tensors.push_back(t);
    }
    ctx->saved_data["products"] = std::move(products);
    return out;
  });
}

}  // namespace glass::compiler
