// lessons/07_seeing_it/exercises/solution.cpp — the reference answers to lesson 07's
// exercises (exercises.h has the contracts). Try them yourself first, in student.cpp.
#include <cmath>
#include <string>

#include "exercises.h"

namespace glass::lesson07 {

std::map<std::string, int> nodes_per_module(const viz::Snapshot& s) {
  std::map<std::string, int> counts;
  for (const viz::GraphNode& n : s.nodes) ++counts[n.module];
  return counts;
}

int largest_gradient_node(const viz::Snapshot& s) {
  int best = -1;
  double best_norm = 0;
  for (const viz::GraphNode& n : s.nodes) {
    if (!n.grad || std::isnan(n.grad->norm)) continue;
    // Strictly greater: on a tie the earlier (smaller) id stays.
    if (best < 0 || n.grad->norm > best_norm) {
      best = n.id;
      best_norm = n.grad->norm;
    }
  }
  return best;
}

std::string vanishing_layer(nn::Module& model, const Tensor& loss) {
  const viz::Snapshot s = viz::snapshot_with_gradients(loss, {.module = &model});
  const std::string suffix = ".weight";
  std::string layer;
  double smallest = 0;
  for (const auto& [name, w] : model.named_parameters()) {
    if (!name.ends_with(suffix)) continue;
    // The leaf of a parameter is labelled with its name, and carries what it received.
    const viz::GraphNode* leaf = s.find(name);
    GLASS_CHECK(leaf != nullptr && leaf->grad, "vanishing_layer: ", name, " received no gradient");
    const double ratio = leaf->grad->norm / viz::grad_stats(w).norm;
    if (layer.empty() || ratio < smallest) {
      layer = name.substr(0, name.size() - suffix.size());
      smallest = ratio;
    }
  }
  return layer;
}

}  // namespace glass::lesson07
