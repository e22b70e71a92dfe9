// lessons/05_custom_functions/exercises/student.cpp — your answers to lesson 05's
// exercises (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson05 {

// ---- exercise 1 ------------------------------------------------------------------------

Tensor LogSumExp::forward([[maybe_unused]] AutogradContext* ctx, [[maybe_unused]] Tensor x) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

tensor_list LogSumExp::backward([[maybe_unused]] AutogradContext* ctx,
                                [[maybe_unused]] tensor_list grad_output) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

Tensor MyExp::forward([[maybe_unused]] AutogradContext* ctx, [[maybe_unused]] Tensor x) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

tensor_list MyExp::backward([[maybe_unused]] AutogradContext* ctx,
                            [[maybe_unused]] tensor_list grad_output) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

Tensor Huber::forward([[maybe_unused]] AutogradContext* ctx, [[maybe_unused]] Tensor x,
                      [[maybe_unused]] Tensor target, [[maybe_unused]] double delta) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

tensor_list Huber::backward([[maybe_unused]] AutogradContext* ctx,
                            [[maybe_unused]] tensor_list grad_output) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

// ---- exercise 4 ------------------------------------------------------------------------

Tensor MulAdd::forward([[maybe_unused]] AutogradContext* ctx, [[maybe_unused]] Tensor a,
                       [[maybe_unused]] Tensor b) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

tensor_list MulAdd::backward([[maybe_unused]] AutogradContext* ctx,
                             [[maybe_unused]] tensor_list grad_output) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

}  // namespace glass::lesson05
