// compiler/program.cpp — steps, kernels and running them (see program.h).
#include "compiler/program.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "compiler/cuda_pointwise.h"
#include "compiler/kernel_cache.h"
#include "compiler/pointwise.h"
#include "compiler/replay.h"
#include "core/error.h"

namespace glass::compiler {
namespace {

void compile_groups(const std::vector<FusionGroup>& groups,
                    std::vector<std::function<Tensor(TensorList)>>& kernels,
                    std::vector<std::string>& sources) {
  // One batch (one compiler run) per device: the CPU's, and each CUDA device's, since a GPU's
  // kernels are compiled for its own architecture.
  std::map<int, std::vector<size_t>> cpu, cuda;  // device index -> groups
  for (size_t k = 0; k < groups.size(); ++k) {
    const Device device = groups[k].device;
    sources.push_back(device.is_cuda() ? emit_cuda({groups[k].program})
                                       : emit_cpp(groups[k].program));
    (device.is_cuda() ? cuda : cpu)[device.index()].push_back(k);
  }
  const auto programs_of = [&](const std::vector<size_t>& which) {
    std::vector<PointwiseProgram> programs;
    for (size_t k : which) programs.push_back(groups[k].program);
    return programs;
  };
  for (const auto& [index, which] : cpu) {
    if (!host_compiler().available()) {
      static std::once_flag warned;
      std::call_once(warned, [] {
        std::cerr << "glass::compile: no C++ compiler found (set GLASS_CXX); fused groups are "
                     "interpreted with eager ops\n";
      });
      break;
    }
    std::vector<CompiledPointwise> built = compile_pointwise(programs_of(which));
    for (size_t j = 0; j < built.size(); ++j)
      kernels[which[j]] = [kernel = std::move(built[j])](TensorList in) { return kernel(in); };
  }
  for (const auto& [index, which] : cuda) {
    // A group that cannot be built runs as eager ops, with one message per process: the CUDA
    // path depends on more of the machine (headers, NVRTC, a GPU's architecture) than the C++.
    std::string why = cuda_codegen_unavailable();
    if (why.empty()) {
      try {
        std::vector<CompiledCudaPointwise> built =
            compile_cuda_pointwise(programs_of(which), Device(kCUDA, index));
        for (size_t j = 0; j < built.size(); ++j)
          kernels[which[j]] = [kernel = std::move(built[j])](TensorList in) { return kernel(in); };
        continue;
      } catch (const Error& e) {
        why = e.what();
      }
    }
    static std::once_flag warned;
    std::call_once(warned, [why] {
      std::cerr << "glass::compile: fused groups on CUDA tensors run as eager ops: " << why << "\n";
    });
  }
}

}  // namespace

Program make_program(Graph graph, std::vector<FusionGroup> groups) {
  Program p;
  std::vector<int> root_of(graph.nodes.size(), -1);  // the group a node is the root of
  for (size_t k = 0; k < groups.size(); ++k) root_of[groups[k].nodes.back()] = static_cast<int>(k);
  const std::vector<bool> alone = nodes_run_alone(graph, groups);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (root_of[n] >= 0)
      p.steps.push_back({-1, root_of[n]});
    else if (alone[n])
      p.steps.push_back({static_cast<int>(n), -1});
  }
  p.kernels.resize(groups.size());
  compile_groups(groups, p.kernels, p.sources);
  p.groups = std::move(groups);
  p.graph = std::make_shared<const Graph>(std::move(graph));
  return p;
}

bool compile_debug() {
  const char* debug = std::getenv("GLASS_COMPILE_DEBUG");
  return debug != nullptr && std::string_view(debug) == "1";
}

std::vector<std::vector<int>> Program::group_nodes() const {
  std::vector<std::vector<int>> out;
  for (const FusionGroup& g : groups) out.push_back(g.nodes);
  return out;
}

std::vector<Tensor> Program::run(const std::vector<Tensor>& inputs, const std::vector<int>& keep,
                                 std::vector<Tensor>* kept) const {
  const Graph& g = *graph;
  GLASS_CHECK(inputs.size() == g.inputs.size(), "compiled graph: called with ", inputs.size(),
              " tensors, it takes ", g.inputs.size());
  std::vector<Tensor> env(g.values.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) env[g.inputs[i]] = inputs[i];
  for (const Step& s : steps) {
    if (s.node >= 0) {
      run_node(g, g.nodes[s.node], env);
      continue;
    }
    const FusionGroup& group = groups[s.group];
    std::vector<Tensor> operands;
    operands.reserve(group.inputs.size());
    for (int v : group.inputs) operands.push_back(value_tensor(g, v, env));
    const auto& kernel = kernels[s.group];
    env[group.output] = kernel ? kernel(operands) : interpret_pointwise(group.program, operands);
  }
  if (kept != nullptr)
    for (int v : keep) kept->push_back(env[v]);  // undefined where only a kernel computed it
  std::vector<Tensor> out;
  out.reserve(g.outputs.size());
  for (int v : g.outputs) out.push_back(value_tensor(g, v, env));
  return out;
}

}  // namespace glass::compiler
