// lessons/03_broadcasting/exercises/wrong_answers.h — deliberately wrong answers to lesson
// 03's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here gives the right
// values by calling what its exercise bans (named beside it), or breaks one rule of its
// contract, and a test asserts the grader says so. They are compiled into an object file
// of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson03::wrong {

Shape broadcast_shape_by_library(IntArrayRef a, IntArrayRef b);         // broadcast_shapes
Shape broadcast_strides_by_expand(const Tensor& t, IntArrayRef shape);  // expand().strides()
Tensor broadcast_add_by_plus(const Tensor& a, const Tensor& b);         // a + b

// Exercise 4.
ScalarType result_type_by_library(const std::vector<Operand>& operands);  // glass::result_type
// promote_types over every operand, as if tiers did not exist: Long [3] * 0-dim Int32
// comes out right, Int32 [3] * 0-dim Long does not (Long, not Int).
ScalarType result_type_ignoring_tiers(const std::vector<Operand>& operands);
// A floating Number counts as its own dtype: Long [3] * 2.5 becomes Double, not Float.
ScalarType result_type_number_keeps_its_dtype(const std::vector<Operand>& operands);
// A lower tier wins when its dtype is larger, not its category: Float [3] * 0-dim Double
// becomes Double.
ScalarType result_type_by_dtype_not_category(const std::vector<Operand>& operands);

}  // namespace glass::lesson03::wrong
