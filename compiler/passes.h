// compiler/passes.h — the graph passes: dead code, common subexpressions, constant folding,
// detaches bypassed in a joint graph, and the search for pointwise groups to fuse (each
// group's kernel computing its values itself, or recomputing a value other kernels read).
//
// Each pass keeps what the function computes and what it writes. Writes are the hard part:
// a write to a tensor changes every view of its storage, so
//   - dead-code elimination keeps a write when anything later reads that storage, or when
//     the storage is the caller's (an input or a tensor from outside the function);
//   - CSE merges two calls of one op on the same values only when no write happened between
//     them, and never a random op, a factory, or a call whose result is written later;
//   - constant folding evaluates only what is made inside the function from nothing (a
//     factory, a number) — never an input or a module's parameter, which an optimizer step
//     changes between calls — and unfolds whatever a non-folded write would change;
//   - a fused group never spans a write.
#pragma once

#include <vector>

#include "compiler/graph.h"
#include "compiler/pointwise.h"

namespace glass::compiler {

// Each returns how many nodes it removed (folded: evaluated and removed).
int eliminate_dead_code(Graph& graph);
int eliminate_common_subexpressions(Graph& graph);
int fold_constants(Graph& graph);
// For a graph that runs with grad mode off and writes nothing (a joint graph, joint_graph.h):
// detach(x) there holds x's numbers and cuts no history, so its readers read x instead, and
// a detach no longer stands between two pointwise ops that could fuse. A returned detach
// stays (a result is a tensor of its own). Returns how many it bypassed.
int bypass_detaches(Graph& graph);

// A chain (a DAG) of pointwise nodes ending in `root` (a pointwise op, or a reduction),
// whose intermediate values are computed inside its kernel, which runs where the root ran.
// Nothing else reads them, or (with `recompute`) they are computed again wherever else they
// are needed.
struct FusionGroup {
  std::vector<int> nodes;   // the members, in graph order; the last is the root (a member may
                            // be in other groups too: find_fusion_groups' `recompute`)
  std::vector<int> inputs;  // the values the kernel reads: the program's inputs 0, 1, ...
  int output = -1;          // the root's result
  PointwiseProgram program;
  Device device{kCPU};  // where every value it reads and writes lives: a CPU or a CUDA kernel
};
// Groups of at least two nodes, all of whose tensors are on one device (the CPU, or one CUDA
// device; a reduction ends only a CPU group), none of which carries a forward-mode tangent or
// needs grad — unless `forward_without_grad`: the graph's forward runs with grad mode off
// under one autograd node (autograd_node.h), so requires_grad does not stop fusion.
//
// `recompute`: a pointwise value read by a few nodes is computed again inside each reader's
// group, instead of written once and loaded by each (Inductor inlines pointwise producers
// into their consumers the same way): more arithmetic, less memory traffic. Not when a reader
// could never be fused (it loads the value anyway). Such a node is then in several groups; it
// runs on its own only where something else reads it from memory.
std::vector<FusionGroup> find_fusion_groups(const Graph& graph, bool forward_without_grad = false,
                                            bool recompute = false);

// For each node, whether it runs as a step of its own: it is no group's root, and it is in no
// group or its result is needed in memory (returned, loaded by a group's kernel, or read by
// a node that runs on its own).
std::vector<bool> nodes_run_alone(const Graph& graph, const std::vector<FusionGroup>& groups);

}  // namespace glass::compiler
