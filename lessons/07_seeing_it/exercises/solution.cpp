// lessons/07_seeing_it/exercises/solution.cpp — the reference answers to lesson 07's
// exercises (exercises.h has the contracts). Try them yourself first, in student.cpp.
#include <cmath>

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

int64_t storage_address(const viz::app::StrideLab& lab, const std::vector<int64_t>& index) {
  const Tensor& v = lab.view();
  GLASS_CHECK(static_cast<int64_t>(index.size()) == v.dim(), "storage_address: index has ",
              index.size(), " entries for a view of ", v.dim(), " dims");
  int64_t address = v.storage_offset();
  for (size_t d = 0; d < index.size(); ++d) {
    GLASS_CHECK(index[d] >= 0 && index[d] < v.sizes()[d], "storage_address: index ", index[d],
                " is out of range for dim ", d, " of size ", v.sizes()[d]);
    address += index[d] * v.strides()[d];
  }
  return address;
}

}  // namespace glass::lesson07
