// lessons/02_storage_and_strides/exercises/exercises.h — the functions you write in
// lesson 02.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Use only what lesson 02 teaches: sizes(), strides(), storage_offset(), dim(), size(),
// numel(), storage().data(), element_size(), options(), empty() and as_strided(). Not
// storage_index() (exercises 1 and 3), slice() or narrow() (exercise 2), contiguous(),
// clone(), copy_(), to() or reshape() (exercise 3): the tests compare you with those, and
// read your compiled file to fail with "exercise N must not call X" when you call one.
#pragma once

#include <glass/glass.h>

#include <cstdint>

namespace glass::lesson02 {

// Exercise 1 — the address formula.
// The storage element (counted in elements from the start of the storage) that holds
// element `index` of a tensor with these sizes, strides and storage offset:
//     offset + index[0]*strides[0] + ... + index[k]*strides[k]
// Throws glass::Error when `index` does not have one entry per dim, or when an entry is
// outside [0, sizes[d]).
int64_t storage_address(IntArrayRef sizes, IntArrayRef strides, int64_t offset, IntArrayRef index);

// Exercise 2 — a slice is metadata.
// The view of `t` that keeps indices start, start + step, ... (all < end) along `dim`;
// the same tensor t.slice(dim, start, end, step) gives, but built with t.as_strided(...),
// so it shares t's storage and allocates nothing. Requires 0 <= dim < t.dim(),
// 0 <= start <= end <= t.size(dim) and step >= 1; throws glass::Error otherwise.
Tensor strided_slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);

// Exercise 3 — a strided copy.
// A new contiguous tensor with t's sizes, dtype and values (a fresh storage, even when t
// is already contiguous). Visit t's indices in row-major order and, for each, copy
// element_size() bytes from storage element storage_address(...) of t's storage: storage
// is untyped bytes, so one loop serves every dtype.
Tensor make_contiguous(const Tensor& t);

}  // namespace glass::lesson02
