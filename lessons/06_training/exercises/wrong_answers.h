// lessons/06_training/exercises/wrong_answers.h — deliberately wrong answers to lesson 06's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Exercises 1 and 2's functions here give the right numbers by calling what their exercise
// bans (named beside each), and a test asserts the symbol check says so; so does exercise
// 4's last one. Exercise 4's others call nothing banned but are wrong in one classic way
// each (beside it), and a test asserts its grader rejects each. They are compiled into an
// object file of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson06::wrong {

double accuracy_by_argmax(const Tensor& logits, const Tensor& labels);   // argmax(1)
double accuracy_by_max_dim(const Tensor& logits, const Tensor& labels);  // max(1)'s indices
void sgd_momentum_step_by_optim(const std::vector<Tensor>& params, std::vector<Tensor>& buffers,
                                double lr, double momentum, double weight_decay);  // optim::SGD

// Exercise 4.
double scheduled_lr_warmup_off_by_one(int64_t step, const Schedule& schedule);  // step / warmup
double step_warmup_off_by_one(const std::vector<Tensor>& params, double max_norm, int64_t step,
                              const Schedule& schedule);  // with the lr above
double step_clipping_each_parameter(const std::vector<Tensor>& params, double max_norm,
                                    int64_t step, const Schedule& schedule);  // its own norm
double step_clipping_after_the_update(const std::vector<Tensor>& params, double max_norm,
                                      int64_t step, const Schedule& schedule);  // too late
double step_by_clip_grad_norm(const std::vector<Tensor>& params, double max_norm, int64_t step,
                              const Schedule& schedule);  // nn::utils::clip_grad_norm_

}  // namespace glass::lesson06::wrong
