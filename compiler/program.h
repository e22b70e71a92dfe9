// compiler/program.h — an optimised graph ready to run: its nodes and fused groups in the
// order they run, and each group's kernel.
//
// Invariant: every node of the graph runs on its own (replayed, replay.h) where it was, when
// its result is needed in memory, and inside each fused group it is a member of, which runs
// where the group's last node (its root) was; so every value a step reads from memory is
// computed by an earlier step, as in the trace. A node runs once, unless fusion recomputes
// it (passes.h, `recompute`).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/graph.h"
#include "compiler/passes.h"

namespace glass::compiler {

struct Program {
  struct Step {
    int node = -1;   // a node of the graph, run as recorded
    int group = -1;  // or a fused group
  };
  std::shared_ptr<const Graph> graph;
  std::vector<Step> steps;
  std::vector<FusionGroup> groups;
  // One per group: its compiled kernel (C++ on the CPU, CUDA on a CUDA device), or empty where
  // none could be built (no compiler, no NVRTC): then the group is interpreted.
  std::vector<std::function<Tensor(TensorList)>> kernels;
  std::vector<std::string> sources;  // each group's generated source

  // The graph's outputs for `inputs` (one per graph input, in order). With `kept`: also the
  // tensor of each value in `keep` (undefined for one no step left in memory: a value only a
  // fused kernel computed).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::vector<int>& keep = {},
                          std::vector<Tensor>* kept = nullptr) const;
  // Each group's nodes, for the viewer and Graph::to_dot.
  std::vector<std::vector<int>> group_nodes() const;
};

// Orders `graph`'s nodes and `groups` into steps and builds every group's kernel: the CPU
// groups in one C++ shared object, each CUDA device's groups in one CUDA source. A group that
// cannot be built here keeps an empty kernel, with one warning per process saying why.
Program make_program(Graph graph, std::vector<FusionGroup> groups);

// GLASS_COMPILE_DEBUG=1: print each graph before and after the passes, and what it became.
bool compile_debug();

}  // namespace glass::compiler
