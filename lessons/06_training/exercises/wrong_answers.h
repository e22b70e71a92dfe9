// lessons/06_training/exercises/wrong_answers.h — deliberately wrong answers to lesson 06's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Each function here gives the right numbers by calling what its exercise bans (named
// beside it), and a test asserts the symbol check says so. They are compiled into an object
// file of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson06::wrong {

double accuracy_by_argmax(const Tensor& logits, const Tensor& labels);   // argmax(1)
double accuracy_by_max_dim(const Tensor& logits, const Tensor& labels);  // max(1)'s indices
void sgd_momentum_step_by_optim(const std::vector<Tensor>& params, std::vector<Tensor>& buffers,
                                double lr, double momentum, double weight_decay);  // optim::SGD

}  // namespace glass::lesson06::wrong
