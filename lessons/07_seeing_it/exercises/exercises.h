// lessons/07_seeing_it/exercises/exercises.h — the functions you write in lesson 07.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_07
// Use what lessons 01 to 06 teach and the viewer's plain data: viz::Snapshot's nodes
// (GraphNode::module, GraphNode::label, GraphNode::grad), viz::snapshot_with_gradients and
// viz::grad_stats. Each answer is a loop over data the viewer collects; none of them needs
// the graph itself, Graphviz or a window.
#pragma once

#include <glass/glass.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "viewer/recorders.h"
#include "viewer/snapshot.h"

namespace glass::lesson07 {

// Exercise 1 — how big is each module's part of the graph?
// Returns, for every module path that at least one node of `s` belongs to
// (GraphNode::module, e.g. "fc1"), how many nodes belong to it; the nodes outside every
// module (module "") are counted under the key "". A path with no nodes has no entry.
// For lesson 06's MLP, each count is how many nodes collapse_modules folds into that box.
std::map<std::string, int> nodes_per_module(const viz::Snapshot& s);

// Exercise 2 — where is the gradient largest?
// Returns the id of the node whose recorded gradient (GraphNode::grad, set by a
// GradientRecorder) has the largest norm; on a tie, the smallest such id. Nodes without a
// recorded gradient do not count; a NaN norm never wins. Returns -1 when no node has a
// recorded gradient with a non-NaN norm.
int largest_gradient_node(const viz::Snapshot& s);

// Exercise 3 — where do the gradients vanish?
// `model` holds Linear layers (parameters "<path>.weight" and "<path>.bias", e.g.
// "0.weight" in an nn::Sequential), and `loss` is a one-element tensor computed from its
// forward, not backwarded yet. Take the snapshot with gradients,
//   viz::snapshot_with_gradients(loss, {.module = &model}),
// whose leaf nodes carry the parameter names as labels and the gradient each received;
// then, for every weight, divide the norm of the gradient it received by the weight's own
// norm (viz::grad_stats(w).norm reads any tensor). Returns the path of the module whose
// weight has the smallest ratio ("0"): where an update changes the weights least,
// relative to their size. Every weight of the models the tests use receives a gradient,
// none is all zeros, and no two ratios tie.
// The gradients must come from the snapshot: not from loss.backward(), autograd's
// backward() or grad(), nor a tensor's grad(); the tests read your compiled file and fail
// with "exercise 3 must not call X" when you call one.
std::string vanishing_layer(nn::Module& model, const Tensor& loss);

}  // namespace glass::lesson07
