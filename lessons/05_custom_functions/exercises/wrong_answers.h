// lessons/05_custom_functions/exercises/wrong_answers.h — deliberately wrong answers to
// lesson 05's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each Function here for exercises 1 to 3
// gives the right values and gradients but breaks one rule of its exercise's contract (named
// beside it), exercise 4's get the un-broadcasting wrong or call what it bans, and a test
// asserts the grader says so. They are compiled into an object file of their own
// (wrong_answers.cpp), so the symbol check can be shown catching the banned call.
#pragma once

#include "exercises.h"

namespace glass::lesson05::wrong {

// Exercise 1: forward and backward by the library's logsumexp and softmax (banned).
struct LogSumExpByLibrary : autograd::Function<LogSumExpByLibrary> {
  static Tensor forward(AutogradContext* ctx, Tensor x);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 2: saves a copy of the input (x.clone(), so overwriting x is harmless) and runs
// exp again in backward.
struct ExpSavingInput : autograd::Function<ExpSavingInput> {
  static Tensor forward(AutogradContext* ctx, Tensor x);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 3: computes grad_target even when the target needs no gradient.
struct HuberIgnoringNeedsInputGrad : autograd::Function<HuberIgnoringNeedsInputGrad> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor target, double delta);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 4 (these two break the arithmetic, not a rule: the grader must see it in the
// gradients): returns g * (b + 1) and g * a unreduced, of the broadcast shape.
struct MulAddUnreduced : autograd::Function<MulAddUnreduced> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 4: reduces over the wrong dims — every dim, then expands the total back to the
// input's shape. The shapes are right, and so are the values when nothing broadcast to a
// 0-dim input; elsewhere each element gets the whole sum instead of its own share.
struct MulAddSummingEveryDim : autograd::Function<MulAddSummingEveryDim> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

// Exercise 4: the right gradients, reduced by autograd's own sum_to (banned).
struct MulAddByLibrarySumTo : autograd::Function<MulAddByLibrarySumTo> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b);
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output);
};

}  // namespace glass::lesson05::wrong
