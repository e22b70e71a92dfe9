// lessons/03_broadcasting/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each passes its exercise's value checks by calling the library function
// the exercise is about, and exercises_test.cpp asserts the symbol check rejects it.
#include "wrong_answers.h"

namespace glass::lesson03::wrong {

Shape broadcast_shape_by_library(IntArrayRef a, IntArrayRef b) { return broadcast_shapes(a, b); }

Shape broadcast_strides_by_expand(const Tensor& t, IntArrayRef shape) {
  return t.expand(shape).strides().vec();
}

Tensor broadcast_add_by_plus(const Tensor& a, const Tensor& b) {
  if (a.dtype() != kFloat || b.dtype() != kFloat)
    throw Error("broadcast_add(): expects Float tensors");
  return a + b;
}

}  // namespace glass::lesson03::wrong
