// lessons/02_storage_and_strides/exercises/wrong_answers.h — deliberately wrong answers to
// lesson 02's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here breaks one rule of
// its exercise's contract (named beside it), and a test asserts the grader says so. They
// are compiled into an object file of their own (wrong_answers.cpp), so the symbol check
// that catches banned calls can be shown catching the banned ones here.
#pragma once

#include "exercises.h"

namespace glass::lesson02::wrong {

// Exercise 1: glass::storage_index, which wraps a negative index instead of throwing.
int64_t storage_address_by_library(IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                                   IntArrayRef index);

// Exercise 3: the library's copies, each one a banned call.
Tensor make_contiguous_by_copy(const Tensor& t);        // empty(...).copy_(t)
Tensor make_contiguous_by_contiguous(const Tensor& t);  // t.contiguous(), in a helper
Tensor make_contiguous_by_clone(const Tensor& t);       // t.clone(), in a lambda
Tensor make_contiguous_by_op(const Tensor& t);          // the dispatcher's ops::clone

}  // namespace glass::lesson02::wrong
