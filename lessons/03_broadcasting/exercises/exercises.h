// lessons/03_broadcasting/exercises/exercises.h — the functions you write in lesson 03.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Use only what lessons 02 and 03 teach: a tensor's metadata (sizes(), strides(),
// storage_offset(), dim(), size(), dtype(), storage().data()), empty(), and the address
// formula glass::storage_index(sizes, strides, offset, index) (your lesson 02 exercise 1).
// Not broadcast_shapes(), broadcast_tensors(), expand()/expand_as() or TensorIterator,
// which broadcasts and promotes for every kernel (any exercise), nor kernels_for(), nor
// the + and - operators, add() or sub() (exercise 3), nor glass::result_type() (exercise
// 4; glass::promote_types, the pairwise rule inside one tier, is yours to use there):
// the tests compare you with those, and read your compiled
// file to fail with "exercise N must not call X" when you call one.
#pragma once

#include <glass/glass.h>

#include <vector>

namespace glass::lesson03 {

// Exercise 1 — the broadcast shape.
// Align `a` and `b` on the right, counting a missing leading dim as size 1. At each
// position the two sizes must be equal, or one of them 1 (the result takes the other).
// Throws glass::Error when some position has two different sizes, neither of them 1.
Shape broadcast_shape(IntArrayRef a, IntArrayRef b);

// Exercise 2 — the strides of a broadcast operand.
// The strides `t` gets when it is broadcast to `shape` (what t.expand(shape).strides()
// returns and what TensorIterator hands a kernel, in elements): for each dim of `shape`,
// aligned on the right with t's dims,
//   t's stride        where t's size equals the target size,
//   0                 where t's size is 1 and the target size is not,
//   0                 for the leading dims t does not have.
// Throws glass::Error when t has more dims than `shape`, or a size of t is neither the
// target size nor 1.
Shape broadcast_strides(const Tensor& t, IntArrayRef shape);

// Exercise 3 — broadcasting addition by hand.
// a + b for two Float tensors of any shapes and layouts that broadcast together: make
// the result with empty(shape, kFloat), then for every index of the result read a and b
// at that index through their broadcast strides (exercise 2) and the address formula.
// Throws glass::Error when a or b is not Float, or when the shapes do not broadcast.
Tensor broadcast_add(const Tensor& a, const Tensor& b);

// Exercise 4 — the result's dtype (section 5, type promotion).
// An operand as type promotion sees it: its dtype and its tier.
enum class Tier {
  Dims,     // a tensor with at least one dim
  ZeroDim,  // a 0-dim tensor, such as scalar_tensor(2.5, kDouble)
  Number,   // a C++ number, such as the 2.5 in t * 2.5 (a "wrapped number")
};
struct Operand {
  ScalarType dtype;  // Bool, Int32, Int64, Float32 or Float64; a Number is Bool, Int64
  Tier tier;         // (an integer) or floating (a C++ number is never Int32)
};
// The dtype an op on these operands computes in (torch.result_type's rule):
//   1. within each tier, the dtypes promote along Bool < Int32 < Int64 < Float32 < Float64
//      (the larger wins), except that a floating Number counts as the default dtype,
//      get_default_dtype() (Float unless changed), whatever its own;
//   2. then the tiers combine from the lowest up: the Number tier's dtype, then the
//      ZeroDim tier's over it, then the Dims tier's over that. A higher tier keeps its
//      dtype unless the lower one's category is higher (Bool < integer < floating): then
//      the lower one's dtype is taken. A tier with no operand takes no part.
// Throws glass::Error when `operands` is empty.
ScalarType result_type(const std::vector<Operand>& operands);

}  // namespace glass::lesson03
