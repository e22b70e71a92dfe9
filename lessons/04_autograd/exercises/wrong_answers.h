// lessons/04_autograd/exercises/wrong_answers.h — deliberately wrong answers to lesson 04's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Each function here gives the right numbers but calls what its exercise bans (named
// beside it), and a test asserts the symbol check says so. They are compiled into an object
// file of their own (wrong_answers.cpp).
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

}  // namespace glass::lesson04::wrong
