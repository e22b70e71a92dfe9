// autograd/engine.h — running the backward graph (seed §IV).
//
// backward() starts from the roots' grad_fns, counts for every reachable node how many
// edges point into it (its dependencies), and runs a node once all its incoming
// gradients have arrived, summing gradients that meet at one input (the `a + a` case).
// The dependency counts are what make the order right: a node enters the ready queue only
// when nothing left can still send it a gradient. Among ready nodes the latest-created
// runs first (a depth-first flavour that frees memory early, as PyTorch does); creation
// order alone would not do — a leaf's AccumulateGrad is created after the first node that
// reads the leaf. Each node applies its vector-Jacobian product; no Jacobian is formed.
#pragma once

#include <functional>
#include <optional>

#include "autograd/node.h"
#include "core/tensor.h"

namespace glass::autograd {

// Accumulates d(outputs)/d(leaf) into every leaf's .grad() (or only into `inputs`'s).
// grad_outputs[i] may be undefined for a one-element output (then it is 1).
void backward(const tensor_list& outputs, const tensor_list& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const tensor_list& inputs = {});

// Returns d(outputs)/d(inputs) without touching any .grad(). An input the outputs do
// not depend on is an error unless allow_unused (then its gradient is undefined).
tensor_list grad(const tensor_list& outputs, const tensor_list& inputs,
                 const tensor_list& grad_outputs = {},
                 std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                 bool allow_unused = false);

// PyTorch's Variable._execution_engine.queue_callback: runs `callback` once the backward
// pass now running on this thread has run every node of its graph, before backward() (or
// grad()) returns. DDP queues one from a post-accumulate-grad hook to wait for its last
// buckets. Callbacks run in queue order; one may queue another, which runs too. With a
// backward nested inside a hook or custom Function, a callback belongs to the innermost
// pass. Throws when no backward pass is running on this thread. If a callback throws,
// backward() rethrows it and the callbacks still queued are dropped.
void queue_callback(std::function<void()> callback);

}  // namespace glass::autograd
