// lessons/01_imperative_model/exercises/wrong_answers.h — deliberately wrong answers to
// lesson 01's exercises, which exercises_test.cpp checks its graders reject.
//
// The function here gives the right values and gradients by what its exercise bans (named
// beside it), and a test asserts the symbol check says so. It is compiled into an object
// file of its own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson01::wrong {

// Exercise 3: a custom autograd::Function whose backward passes the gradient through
// (lesson 05's tool, not this lesson's detach trick).
Tensor straight_through_sign_by_function(const Tensor& x);

}  // namespace glass::lesson01::wrong
