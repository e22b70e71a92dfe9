// lessons/12_the_compiler/exercises/exercises.h — the functions you write in lesson 12.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_12
// Use what lesson 12 teaches: the graph IR (compiler/graph.h: Graph, Node, Value, Arg,
// Graph::uses), a BoxedOp's name(), TensorMeta, and the tensor ops of lessons 01–06.
// Each exercise bans the library's own answer, and the tests check it: they run nm on your
// compiled student.cpp, where a call to a banned function is an undefined symbol.
#pragma once

#include <glass/glass.h>

#include <vector>

#include "compiler/compile.h"
#include "compiler/graph.h"

namespace glass::lesson12 {

// Exercise 1 — a fusion pass for one pattern: chains of elementwise functions of one input.
// A unary node is a node whose op is named "unary" (x.exp(), x.relu(), ...: its args are the
// UnaryOp, then the tensor). Return every maximal chain u1 -> u2 -> ... -> uk (k >= 2) of
// unary nodes in which each u(i+1) reads u(i)'s result, and that result is read by nothing
// else: by no other node, and it is not one of the graph's outputs. Each chain is its
// nodes' indices in graph.nodes, first to last; chains in the order of their first node.
// Banned: compiler::find_fusion_groups (and anything else in compiler/passes.h).
std::vector<std::vector<int>> unary_chains(const compiler::Graph& graph);

// Exercise 2 — a guard. record() notes what a trace of a call with `inputs` assumed:
// each tensor's sizes, dtype and requires_grad, and whether grad mode is on. accepts()
// says whether a later call with `inputs` may run that trace: the same number of tensors,
// each with the same sizes, dtype and requires_grad as recorded, and the same grad mode.
// Values never matter.
// Banned: compiler::CompiledFunction (its call, accepts, ...) and glass::compile.
struct Guard {
  std::vector<compiler::TensorMeta> tensors;  // sizes, dtype, requires_grad (strides unused)
  bool grad_mode = true;
};
Guard record(const std::vector<Tensor>& inputs);
bool accepts(const Guard& guard, const std::vector<Tensor>& inputs);

// Exercise 3 — remove a graph break. lesson 12's branchy() reads the sum back into C++:
//   if (x.sum().item<double>() > 0) return x * 2;
//   return x * -0.5;
// Write the same function without reading any value into C++, so that it compiles with
// fullgraph and one trace serves inputs whose sums have either sign.
// x: float32, any shape, on the CPU.
// Banned: item() and printing (the graph breaks: the tests compile your function with
// fullgraph, which refuses them, and look for the calls in your compiled code). Reading a
// value through data_ptr() or an accessor is no way out: the trace cannot see that read,
// so the branch the first call took is frozen into the graph, and the tests call one
// compiled function with sums of both signs.
Tensor branch_free(const Tensor& x);

}  // namespace glass::lesson12
