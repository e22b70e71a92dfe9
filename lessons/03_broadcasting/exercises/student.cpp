// lessons/03_broadcasting/exercises/student.cpp — your answers to lesson 03's exercises
// (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson03 {

Shape broadcast_shape([[maybe_unused]] IntArrayRef a, [[maybe_unused]] IntArrayRef b) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

Shape broadcast_strides([[maybe_unused]] const Tensor& t, [[maybe_unused]] IntArrayRef shape) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

Tensor broadcast_add([[maybe_unused]] const Tensor& a, [[maybe_unused]] const Tensor& b) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

ScalarType result_type([[maybe_unused]] const std::vector<Operand>& operands) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

}  // namespace glass::lesson03
