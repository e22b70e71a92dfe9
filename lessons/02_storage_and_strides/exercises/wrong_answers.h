// lessons/02_storage_and_strides/exercises/wrong_answers.h — deliberately wrong answers to
// lesson 02's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here breaks one rule of
// its exercise's contract (named beside it), and a test asserts the grader says so. They
// are compiled into an object file of their own (wrong_answers.cpp), so the symbol check
// that catches banned calls can be shown catching the banned ones here.
#pragma once

#include <optional>

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

// Exercise 4: the library's answers, each a banned call ...
std::optional<Shape> find_view_strides_by_library(IntArrayRef sizes, IntArrayRef strides,
                                                  IntArrayRef shape);  // glass::view_strides
std::optional<Shape> find_view_strides_by_view(IntArrayRef sizes, IntArrayRef strides,
                                               IntArrayRef shape);  // Tensor::view
// ... and rules that are too strict or too lenient:
// views only a contiguous tensor (x.t().view({4, 3, 1}) is a view, and it says no);
std::optional<Shape> find_view_strides_only_contiguous(IntArrayRef sizes, IntArrayRef strides,
                                                       IntArrayRef shape);
// treats the whole tensor as one chunk stepping by its last stride (merges across gaps);
std::optional<Shape> find_view_strides_one_chunk(IntArrayRef sizes, IntArrayRef strides,
                                                 IntArrayRef shape);
// lets a dim of size 1 with an odd stride break a chunk ([3, 1, 4] strides [4, 7, 1]
// flattens to [12] with stride 1, and it says no).
std::optional<Shape> find_view_strides_size_one_breaks(IntArrayRef sizes, IntArrayRef strides,
                                                       IntArrayRef shape);

}  // namespace glass::lesson02::wrong
