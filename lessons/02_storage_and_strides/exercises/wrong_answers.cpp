// lessons/02_storage_and_strides/exercises/wrong_answers.cpp — the deliberately wrong answers
// of wrong_answers.h: each passes the value checks of its exercise but calls what the
// exercise bans (or breaks the contract where the library is more lenient), and
// exercises_test.cpp asserts its grader rejects it.
#include "wrong_answers.h"

namespace glass::lesson02::wrong {

namespace {

// A helper, so the test shows the symbol check following calls through one.
Tensor copy_by_library(const Tensor& t) { return t.contiguous(); }

}  // namespace

int64_t storage_address_by_library(IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                                   IntArrayRef index) {
  return glass::storage_index(sizes, strides, offset, index);
}

Tensor make_contiguous_by_copy(const Tensor& t) { return empty(t.sizes(), t.options()).copy_(t); }

// (It also returns t itself when t is contiguous already: no copy at all.)
Tensor make_contiguous_by_contiguous(const Tensor& t) { return copy_by_library(t); }

Tensor make_contiguous_by_clone(const Tensor& t) {
  auto copy = [](const Tensor& x) { return x.clone(); };
  return copy(t);
}

Tensor make_contiguous_by_op(const Tensor& t) { return ops::clone(t); }

}  // namespace glass::lesson02::wrong
