// lessons/07_seeing_it/exercises/student.cpp — your answers to lesson 07's exercises (see
// exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_07
#include "exercises.h"

namespace glass::lesson07 {

std::map<std::string, int> nodes_per_module([[maybe_unused]] const viz::Snapshot& s) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

int largest_gradient_node([[maybe_unused]] const viz::Snapshot& s) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

std::string vanishing_layer([[maybe_unused]] nn::Module& model,
                            [[maybe_unused]] const Tensor& loss) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

}  // namespace glass::lesson07
