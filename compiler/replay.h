// compiler/replay.h — running a recorded node again, on the tensors of a new call.
//
// `env` holds a tensor for every value computed so far (indexed by value id). A node's
// arguments are rebuilt from it and its constants, and the op is called boxed from the top of
// the dispatch chain, so autograd records it as it would in eager mode and a write lands in the
// caller's own tensor (or in a view of it). The node's results and writes are stored back.
#pragma once

#include <functional>
#include <vector>

#include "compiler/graph.h"

namespace glass::compiler {

void run_node(const Graph& graph, const Node& node, std::vector<Tensor>& env);

// The tensor a value has in `env`, or its constant (unless env holds one in its place).
const Tensor& value_tensor(const Graph& graph, int value, const std::vector<Tensor>& env);

// A compiled graph's backward by replay: the graph run again with grad on from `env` (the
// leaves in place of the values they stand for), then autograd::grad of its outputs, given
// `grads` (undefined where an output got none), for the leaves in `wanted`. One gradient per
// wanted leaf, undefined where the outputs do not depend on it. `forward_done`, when given, sees
// `env` once the graph has run, before autograd does (the joint trace maps values there).
std::vector<Tensor> replay_gradients(
    const Graph& graph, std::vector<Tensor> env, const std::vector<Tensor>& wanted,
    const std::vector<Tensor>& grads,
    const std::function<void(const std::vector<Tensor>& env)>& forward_done = nullptr);

}  // namespace glass::compiler
