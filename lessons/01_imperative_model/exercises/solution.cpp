// lessons/01_imperative_model/exercises/solution.cpp — the reference answers to lesson
// 01's exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <string>
#include <unordered_set>
#include <vector>

#include "exercises.h"

namespace glass::lesson01 {

int64_t count_nodes(const Tensor& t) {
  if (!t.grad_fn()) return 0;
  // Depth-first with an explicit stack and a visited set. Without the set, a shared node
  // would be counted once per path to it, and paths multiply: 20 steps of y = y + y make
  // a graph of 21 nodes but 2^21 - 1 paths.
  std::unordered_set<const autograd::Node*> seen{t.grad_fn().get()};
  std::vector<const autograd::Node*> stack{t.grad_fn().get()};
  while (!stack.empty()) {
    const autograd::Node* node = stack.back();
    stack.pop_back();
    for (const autograd::Edge& e : node->next_edges()) {
      if (e.is_valid() && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  return static_cast<int64_t>(seen.size());
}

SquaringResult square_until(const Tensor& x, double threshold, int64_t max_steps) {
  SquaringResult r{x, 0};
  // The test reads a value out of the tensor: an ordinary C++ bool decides whether the
  // body runs again, and every run it does adds one node to y's graph.
  while (r.y.norm().item<double>() <= threshold) {
    if (r.steps == max_steps)
      throw Error("square_until(): the norm is still " + std::to_string(r.y.norm().item<double>()) +
                  " <= " + std::to_string(threshold) + " after " + std::to_string(max_steps) +
                  " squarings");
    r.y = r.y * r.y;
    ++r.steps;
  }
  return r;
}

Tensor straight_through_sign(const Tensor& x) {
  // x - x.detach() is 0 in value, but its gradient with respect to x is 1; the detached
  // sign contributes its value and no gradient. (x.sign() computed under a NoGradGuard
  // would serve as well as x.sign().detach().)
  return x.sign().detach() + (x - x.detach());
}

}  // namespace glass::lesson01
