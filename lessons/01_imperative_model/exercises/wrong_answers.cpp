// lessons/01_imperative_model/exercises/wrong_answers.cpp — the deliberately wrong answer of
// wrong_answers.h: right values and gradients by a banned route, which exercises_test.cpp
// asserts the symbol check catches.
#include "wrong_answers.h"

namespace glass::lesson01::wrong {

namespace {

struct SignPassingGradient : autograd::Function<SignPassingGradient> {
  static Tensor forward(autograd::AutogradContext*, Tensor x) { return x.sign(); }
  static autograd::tensor_list backward(autograd::AutogradContext*,
                                        autograd::tensor_list grad_output) {
    return {grad_output[0]};
  }
};

}  // namespace

Tensor straight_through_sign_by_function(const Tensor& x) { return SignPassingGradient::apply(x); }

}  // namespace glass::lesson01::wrong
