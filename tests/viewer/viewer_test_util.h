// tests/viewer/viewer_test_util.h — what the viewer tests share: lesson 04's example with
// its tensors kept, and lookups of nodes and edges by grad_fn name or label.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/ops/factories.h"
#include "viewer/snapshot.h"

namespace glass::viz::testing {

using Sizes = std::vector<int64_t>;

// lesson 04's L = sum(tanh(x * w + b)), with its tensors kept for the checks.
struct TanhExample {
  std::vector<double> xv = {1., 2., -1.}, wv = {0.5, -0.25, 1.};
  double bv = 0.5;
  Tensor x = tensor({1., 2., -1.}).requires_grad_();  // float32, as lesson 04's
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor b = tensor({bv}).requires_grad_();
  Tensor L = (x * w + b).tanh().sum();
  SnapshotOptions names() const { return {.names = {{"x", x}, {"w", w}, {"b", b}, {"L", L}}}; }
};

inline const GraphNode& only(const Snapshot& s, const std::string& name) {
  const GraphNode* found = nullptr;
  for (const GraphNode& n : s.nodes)
    if (n.name == name || n.label == name) {
      EXPECT_EQ(found, nullptr) << "two nodes named " << name;
      found = &n;
    }
  EXPECT_NE(found, nullptr) << "no node named " << name;
  return *found;
}

inline bool has_edge(const Snapshot& s, const std::string& from, const std::string& to) {
  for (const GraphEdge& e : s.edges)
    if ((s.nodes[e.from].name == from || s.nodes[e.from].label == from) &&
        (s.nodes[e.to].name == to || s.nodes[e.to].label == to))
      return true;
  return false;
}

}  // namespace glass::viz::testing
