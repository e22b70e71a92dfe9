// compiler/tracer.h — recording a function's op calls into a Graph by running it.
//
// trace() runs the function once, with the real inputs, with the Trace dispatch key on.
// Every op call on this thread reaches the compiler's trace fallback (core/dispatcher.h,
// Note [Boxed ops]), which records a node and then runs the op below Trace, so the function
// computes exactly what it computes eagerly (its results are returned too). What it records
// is only what went through an op: C++ control flow is not recorded but taken, so a trace is
// specialised to what the function did for these inputs — which guards then check
// (compile.h). An op that hands a value back to C++ (item, print: kReadsValueOp) ends the
// graph there, because what C++ does with that value cannot be recorded: a graph break.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "compiler/graph.h"

namespace glass::compiler {

struct TraceResult {
  Graph graph;
  std::vector<Tensor> outputs;            // what the function returned, computed eagerly
  std::optional<GraphBreak> graph_break;  // set when an op read a value back
};

// Traces `fn` on `inputs` (the tensors it reads, which become the graph's inputs). With
// `fullgraph`, a graph break is an error naming the op instead. Not reentrant per thread:
// tracing inside a trace is an error.
//
// `joint`: `fn` runs autograd itself (a forward, then autograd::grad), and the graph will run
// with grad mode off (joint_graph.h). Autograd sets requires_grad on the tensors it hands to
// backward formulas, which a trace of a user's function takes for requires_grad_() (a break);
// here the flags do not matter.
TraceResult trace(const std::vector<Tensor>& inputs, const std::function<std::vector<Tensor>()>& fn,
                  bool fullgraph = false, bool joint = false);

// Whether this thread is tracing now.
bool is_tracing();

// While this thread traces: the value `t` is in the graph so far (an input, or an op's result
// the trace recorded), or -1 for a tensor the trace has not met. -1 when not tracing.
int traced_value(const Tensor& t);

}  // namespace glass::compiler
