// lessons/04_autograd/exercises/student.cpp — your answers to lesson 04's exercises (see
// exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson04 {

Tensor jacobian_by_vjp([[maybe_unused]] const TensorFn& f, [[maybe_unused]] const Tensor& x) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

Tensor jvp([[maybe_unused]] const TensorFn& f, [[maybe_unused]] const Tensor& x,
           [[maybe_unused]] const Tensor& v) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

Tensor hessian_vector_product([[maybe_unused]] const TensorFn& f, [[maybe_unused]] const Tensor& x,
                              [[maybe_unused]] const Tensor& v) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

tensor_list engine_grad([[maybe_unused]] const Tensor& root,
                        [[maybe_unused]] const tensor_list& inputs) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

}  // namespace glass::lesson04
