// lessons/01_imperative_model/exercises/student.cpp — your answers to lesson 01's
// exercises (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson01 {

int64_t count_nodes([[maybe_unused]] const Tensor& t) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

SquaringResult square_until([[maybe_unused]] const Tensor& x, [[maybe_unused]] double threshold,
                            [[maybe_unused]] int64_t max_steps) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

Tensor straight_through_sign([[maybe_unused]] const Tensor& x) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

}  // namespace glass::lesson01
