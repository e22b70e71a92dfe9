// lessons/07_seeing_it/exercises/wrong_answers.h — deliberately wrong answers to lesson 07's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Each function here breaks one rule of exercise 3's contract (named beside it), or gives
// the right layer by reading the gradients where the exercise bans it, and a test asserts
// the grader says so. They are compiled into an object file of their own
// (wrong_answers.cpp), so the symbol check can be shown catching the banned calls.
#pragma once

#include "exercises.h"

namespace glass::lesson07::wrong {

// Exercise 3.
// The right layer, from loss.backward() and each weight's grad(): banned calls.
std::string vanishing_layer_by_backward(nn::Module& model, const Tensor& loss);
// The smallest gradient norm, not divided by the weight's norm.
std::string vanishing_layer_absolute(nn::Module& model, const Tensor& loss);
// The largest ratio: where the gradient explodes, not where it vanishes.
std::string vanishing_layer_largest(nn::Module& model, const Tensor& loss);
// The first layer, always: right for a plain deep sigmoid stack, and only there.
std::string vanishing_layer_first(nn::Module& model, const Tensor& loss);

}  // namespace glass::lesson07::wrong
