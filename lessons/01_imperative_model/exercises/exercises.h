// lessons/01_imperative_model/exercises/exercises.h — the functions you write in lesson 01.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Use only what lesson 01 teaches: tensors and their ops (factories, + - * /, sum(),
// norm(), sign(), item()), requires_grad_(), grad_fn() and a Node's name() and
// next_edges() (autograd/node.h), backward() and grad(), detach() and NoGradGuard. Not a
// custom autograd::Function (lesson 05) in exercise 3: the tests read your compiled file
// and fail with "exercise 3 must not call X" when you write one.
#pragma once

#include <glass/glass.h>

#include <cstdint>

namespace glass::lesson01 {

// Exercise 1 — the size of a graph.
// The number of distinct nodes reachable from t.grad_fn() by following next_edges():
// the grad_fn itself, every node below it, and the AccumulateGrad nodes of the leaves.
// A node reached along several paths (a shared subexpression such as the h of h * h, or a
// leaf used twice) counts once; an invalid edge (an input that needs no gradient) leads
// to no node. A tensor without a grad_fn has a graph of 0 nodes.
int64_t count_nodes(const Tensor& t);

// Exercise 2 — a loop whose trip count the data decides.
struct SquaringResult {
  Tensor y;           // x squared elementwise `steps` times, i.e. x^(2^steps)
  int64_t steps = 0;  // how many times the loop body ran
};
// Starting from y = x, replaces y by y * y for as long as y.norm() <= threshold, and
// returns the final y with the number of squarings. y carries the graph of exactly those
// multiplications, each one a MulBackward0 whose two edges lead to the previous y, so
// after y.sum().backward(), x.grad() is 2^steps * x^(2^steps - 1). With 0 steps, y is x
// itself. Throws glass::Error when the norm still has not passed the threshold after
// max_steps squarings (a vector whose elements all have |x_i| < 1 only shrinks).
SquaringResult square_until(const Tensor& x, double threshold, int64_t max_steps = 30);

// Exercise 3 — a value from one expression, a gradient from another.
// The "straight-through" sign: its values are x.sign() (-1, 0 or 1 per element), but
// backward treats it as the identity, so the gradient that reaches x is the incoming
// gradient unchanged. (x.sign() alone has derivative 0 wherever it is defined: every
// gradient through it would be 0.) The result has x's shape and dtype; it requires grad
// exactly when x does.
Tensor straight_through_sign(const Tensor& x);

}  // namespace glass::lesson01
