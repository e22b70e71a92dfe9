// lessons/03_broadcasting/exercises/wrong_answers.h — deliberately wrong answers to lesson
// 03's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here gives the right
// values by calling what its exercise bans (named beside it), and a test asserts the symbol
// check says so. They are compiled into an object file of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson03::wrong {

Shape broadcast_shape_by_library(IntArrayRef a, IntArrayRef b);         // broadcast_shapes
Shape broadcast_strides_by_expand(const Tensor& t, IntArrayRef shape);  // expand().strides()
Tensor broadcast_add_by_plus(const Tensor& a, const Tensor& b);         // a + b

}  // namespace glass::lesson03::wrong
