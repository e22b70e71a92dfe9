// lessons/07_seeing_it/exercises/exercises.h — the functions you write in lesson 07.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_07
// Use what lessons 01 to 06 teach and the viewer's plain data: viz::Snapshot's nodes
// (GraphNode::module, GraphNode::grad) and a tensor's sizes(), strides() and
// storage_offset(). Each answer is a loop over data the viewer already collected; none of
// them needs the graph itself, Graphviz or a window.
#pragma once

#include <glass/glass.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "viewer/app/stride.h"
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

// Exercise 3 — the address formula, by hand.
// Returns the storage index of element `index` of lab.view():
//   storage_offset + index[0]*stride[0] + index[1]*stride[1] + ...
// computed from the view's sizes(), strides() and storage_offset(): not with
// lab.storage_index, which the tests compare you with, nor glass::storage_index (both wrap
// a negative index); the tests read your compiled file and fail with "exercise 3 must not
// call X" when you call one. Throws glass::Error when `index` has the wrong number of
// entries or an entry outside [0, size) of its dim (negative entries included).
int64_t storage_address(const viz::app::StrideLab& lab, const std::vector<int64_t>& index);

}  // namespace glass::lesson07
