// lessons/04_autograd/exercises/wrong_answers.h — deliberately wrong answers to lesson 04's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Each function for exercises 1 to 3 gives the right numbers but calls what its exercise
// bans (named beside it), and a test asserts the symbol check says so; exercise 4's are
// engines with a classic bug, which its grader must catch by the numbers (and one that asks
// the library). They are compiled into an object file of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson04::wrong {

// Exercise 1: the right rows, then gradcheck "to be sure" (banned: it differentiates f by
// finite differences, evaluating it many times).
Tensor jacobian_checked_by_gradcheck(const TensorFn& f, const Tensor& x);

// Exercise 2: J v by reverse mode, two VJPs through a dummy u (the "double-backward trick"):
// g(u) = J^T u, then (dg/du)^T v = J v. Right, but a backward pass (autograd::grad, banned).
Tensor jvp_by_double_vjp(const TensorFn& f, const Tensor& x, const Tensor& v);

// Exercise 3: the right H v, then gradgradcheck "to be sure" (banned).
Tensor hessian_vector_product_checked(const TensorFn& f, const Tensor& x, const Tensor& v);

// Exercise 4: no dependency counts. A node joins the queue when its first gradient arrives
// and runs when popped, with whatever has arrived by then; a gradient that comes later,
// along a longer path, is lost. Right on a chain, wrong where paths of unequal length meet.
tensor_list engine_grad_without_dependency_counts(const Tensor& root, const tensor_list& inputs);

// Exercise 4: counts dependencies, but a gradient arriving at a slot replaces what is
// there instead of adding to it. Right on a tree, wrong at every diamond (x * x too).
tensor_list engine_grad_overwriting(const Tensor& root, const tensor_list& inputs);

// Exercise 4: the right numbers, from autograd::grad (banned: it is the engine itself).
tensor_list engine_grad_by_library(const Tensor& root, const tensor_list& inputs);

}  // namespace glass::lesson04::wrong
