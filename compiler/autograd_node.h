// compiler/autograd_node.h — a compiled variant as one autograd node (AOTAutograd's first
// step: the forward compiled whole, the backward from the ops' own formulas).
//
// With grad mode on and inputs that require grad, run_as_one_node runs the variant's
// forward — its fused kernels included — with grad mode off, and records one node,
// CompiledFunctionBackward, as the grad_fn of every floating output. The node saves only the
// inputs (and, for a joint graph, keeps the matrix products: BackwardCache::saved_values()),
// so its backward computes the rest of the forward again (as activation checkpointing does),
// then each op's own backward formula. That pair, traced once and fused, is the joint graph
// (joint_graph.h), which runs where it could be traced. Otherwise the backward replays the
// graph op by op with grad on, from detached copies of the saved inputs, and asks autograd for
// their gradients. Second derivatives are refused with a clear error, as torch.compile's
// AOTAutograd refuses them.
//
// Invariant: a graph runs this way only when one_node_applies(): no write in place (the
// replay would write twice) and no random op (the replay would draw other numbers).
#pragma once

#include <memory>
#include <vector>

#include "compiler/graph.h"
#include "compiler/joint_graph.h"
#include "compiler/program.h"

namespace glass::compiler {

bool one_node_applies(const Graph& graph);

// Runs `program` (a compiled variant) on `inputs` with grad mode off, under one node. The
// graph's inputs are `inputs`; captured constants that require grad get gradients too.
// `joint`: the variant's traced backwards (null: always replay), for which the node also
// keeps the matrix products the forward made (until a backward without retain_graph is done).
std::vector<Tensor> run_as_one_node(const Program& program, std::shared_ptr<BackwardCache> joint,
                                    const std::vector<Tensor>& inputs);

}  // namespace glass::compiler
