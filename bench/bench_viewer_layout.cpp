// bench/bench_viewer_layout.cpp — laying out a 1,000-node graph with Graphviz (target: < 1 s).
//
// The graph is a real backward graph: 200 blocks of Linear(4, 4) + tanh, each block five
// nodes (AddmmBackward0, TBackward0, TanhBackward0 and the two parameter leaves), plus the
// loss's SumBackward0: 1,001 nodes, 1,000 edges (the first Linear's input needs no
// gradient), drawn with the default DotOptions (one cluster per Linear). What the GUI pays when the
// graph's structure changes is snapshot + to_dot + layout; the steps are timed apart, with
// references in the same run: the same number of nodes as a plain chain (dot's floor for 1,000
// nodes), the same graph without clusters, and rendering it to SVG (layout plus the SVG writer).
//
//   build/bench/bench_viewer_layout --benchmark_min_time=1 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Measured (Release, Graphviz 2.43, 2 shared cores under load, means of 3):
//   snapshot .......................   5.9 ms
//   to_dot .........................   0.8 ms
//   layout, with module clusters ...   219 ms   <- what the GUI pays; target < 1 s
//   layout, no clusters ............   154 ms
//   layout, 1,001-node chain .......    86 ms   reference: dot's floor for this size
//   render to SVG ..................   263 ms   layout + the SVG writer
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "core/ops/random.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "viewer/dot.h"
#include "viewer/graphviz.h"
#include "viewer/layout.h"
#include "viewer/snapshot.h"

namespace {

namespace viz = glass::viz;

constexpr int kBlocks = 200;

struct DeepNet {
  glass::nn::Sequential seq;
  glass::Tensor loss;
  DeepNet() {
    glass::manual_seed(0);
    for (int i = 0; i < kBlocks; ++i) {
      seq->push_back(glass::nn::Linear(4, 4));
      seq->push_back(glass::nn::Tanh());
    }
    loss = seq->forward(glass::randn({2, 4})).sum();
  }
  viz::Snapshot snapshot(bool with_module) {
    return viz::snapshot(loss, {.module = with_module ? seq.ptr().get() : nullptr});
  }
};

DeepNet& net() {
  static DeepNet n;
  return n;
}

void BM_snapshot_1000_nodes(benchmark::State& state) {
  for (auto _ : state) {
    viz::Snapshot s = net().snapshot(true);
    benchmark::DoNotOptimize(s.nodes.data());
  }
  state.counters["nodes"] = static_cast<double>(net().snapshot(true).nodes.size());
}

void BM_to_dot_1000_nodes(benchmark::State& state) {
  viz::Snapshot s = net().snapshot(true);
  for (auto _ : state) {
    std::string dot = viz::to_dot(s);
    benchmark::DoNotOptimize(dot.data());
  }
}

void BM_layout_1000_nodes(benchmark::State& state) {
  viz::Snapshot s = net().snapshot(state.range(0) != 0);
  std::string dot = viz::to_dot(s);
  for (auto _ : state) {
    viz::Layout l = viz::layout(dot);
    benchmark::DoNotOptimize(l.nodes.data());
  }
  state.counters["nodes"] = static_cast<double>(s.nodes.size());
  state.counters["edges"] = static_cast<double>(s.edges.size());
  state.SetLabel(state.range(0) ? "with module clusters" : "no clusters");
}

// Reference: 1,001 nodes in a single chain, the simplest graph of that size.
void BM_layout_1000_node_chain(benchmark::State& state) {
  std::string dot = "digraph chain {\n  node [shape=box];\n";
  for (int i = 0; i < 1000; ++i)
    dot += "  n" + std::to_string(i) + " -> n" + std::to_string(i + 1) + ";\n";
  dot += "}\n";
  for (auto _ : state) {
    viz::Layout l = viz::layout(dot);
    benchmark::DoNotOptimize(l.nodes.data());
  }
}

void BM_render_svg_1000_nodes(benchmark::State& state) {
  std::string dot = viz::to_dot(net().snapshot(true));
  for (auto _ : state) {
    std::string svg = viz::render(dot, viz::Format::Svg);
    benchmark::DoNotOptimize(svg.data());
  }
}

}  // namespace

BENCHMARK(BM_snapshot_1000_nodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_to_dot_1000_nodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_layout_1000_nodes)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_layout_1000_node_chain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_render_svg_1000_nodes)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
