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
// clone(), copy_(), to(), to_copy(), pin_memory(), detail::copy_into() or reshape()
// (exercise 3), view(), reshape() or the library's
// stride search glass::view_strides() (exercise 4): the tests compare you with those, and
// read your compiled file to fail with "exercise N must not call X" when you call one.
#pragma once

#include <glass/glass.h>

#include <cstdint>
#include <optional>

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

// Exercise 4 — view()'s stride search.
// t.view(shape) never copies: it needs strides that make a tensor of `shape` read the
// same storage elements, in the same row-major order, as t (sizes, strides). Returns
// them, or std::nullopt when there are none (then view() throws and reshape() copies).
// Section 5's rule: every group of t's dims that `shape` merges must be one arithmetic
// sequence (stride[d] == stride[d+1] * size[d+1] inside it; dims of size 1 never break
// one); splitting is always possible. What the tests do not look at, because no address
// depends on it: the stride of a dim of size 1 in `shape` (return any value), and every
// stride when t has no elements (return any strides; the answer is then never nullopt).
// `shape` is given in full (no -1). Throws glass::Error when sizes and strides differ in
// length, when `shape` has a negative size, or when it holds a different number of
// elements than t.
std::optional<Shape> find_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape);

}  // namespace glass::lesson02
