// lessons/12_the_compiler/exercises/student.cpp — your answers to lesson 12's exercises
// (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_12
#include "exercises.h"

namespace glass::lesson12 {

// ---- exercise 1 ------------------------------------------------------------------------

std::vector<std::vector<int>> unary_chains([[maybe_unused]] const compiler::Graph& graph) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

Guard record([[maybe_unused]] const std::vector<Tensor>& inputs) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

bool accepts([[maybe_unused]] const Guard& guard,
             [[maybe_unused]] const std::vector<Tensor>& inputs) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

Tensor branch_free([[maybe_unused]] const Tensor& x) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

}  // namespace glass::lesson12
