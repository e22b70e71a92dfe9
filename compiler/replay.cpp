// compiler/replay.cpp — one node, run again (see replay.h).
#include "compiler/replay.h"

#include "autograd/engine.h"
#include "core/error.h"
#include "core/grad_mode.h"

namespace glass::compiler {

const Tensor& value_tensor(const Graph& graph, int value, const std::vector<Tensor>& env) {
  const Value& v = graph.values[value];
  // A constant reads its tensor, unless env holds one in its place (a leaf that stands for
  // it while a compiled function's backward replays the graph: autograd_node.cpp).
  if (v.kind == Value::Kind::Constant)
    return static_cast<size_t>(value) < env.size() && env[value].defined() ? env[value]
                                                                           : v.constant;
  const Tensor& t = env[value];
  GLASS_CHECK(t.defined() || v.meta.dtype == ScalarType::Undefined, "compiled graph: value %",
              value, " is read before it is computed");
  return t;
}

void run_node(const Graph& graph, const Node& node, std::vector<Tensor>& env) {
  dispatch::Stack stack;
  stack.reserve(node.args.size());
  for (const Arg& a : node.args) {
    switch (a.kind) {
      case Arg::Kind::Value: stack.emplace_back(value_tensor(graph, a.value, env)); break;
      case Arg::Kind::ValueList: {
        std::vector<Tensor> list;
        list.reserve(a.values.size());
        for (int v : a.values) list.push_back(value_tensor(graph, v, env));
        stack.emplace_back(std::move(list));
        break;
      }
      case Arg::Kind::Constant: stack.push_back(a.constant); break;
    }
  }
  // The written tensors are the argument tensors themselves (the op writes through them).
  std::vector<Tensor> written;
  for (size_t i = 0; i < node.args.size(); ++i)
    if (node.op->mutates_argument(static_cast<int>(i)) && node.args[i].kind == Arg::Kind::Value)
      written.push_back(stack[i].tensor());
  {
    AutoGradMode mode(node.grad_enabled);
    node.op->call_boxed(stack);
  }
  for (size_t w = 0; w < node.writes.size() && w < written.size(); ++w)
    env[node.writes[w]] = written[w];
  GLASS_CHECK(stack.size() == node.outputs.size(), "compiled graph: ", node.op->name(),
              "() returned ", stack.size(), " results where the trace recorded ",
              node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) env[node.outputs[i]] = stack[i].tensor();
}

std::vector<Tensor> replay_gradients(
    const Graph& graph, std::vector<Tensor> env, const std::vector<Tensor>& wanted,
    const std::vector<Tensor>& grads,
    const std::function<void(const std::vector<Tensor>& env)>& forward_done) {
  std::vector<Tensor> outs, out_grads;
  {
    AutoGradMode on(true);
    for (const Node& n : graph.nodes) run_node(graph, n, env);
    if (forward_done) forward_done(env);
    for (size_t i = 0; i < graph.outputs.size() && i < grads.size(); ++i) {
      const Tensor& o = value_tensor(graph, graph.outputs[i], env);
      if (o.defined() && o.requires_grad() && grads[i].defined()) {
        outs.push_back(o);
        out_grads.push_back(grads[i]);
      }
    }
  }
  if (outs.empty() || wanted.empty()) return std::vector<Tensor>(wanted.size());
  return autograd::grad(outs, wanted, out_grads, /*retain_graph=*/false, /*create_graph=*/false,
                        /*allow_unused=*/true);
}

}  // namespace glass::compiler
