// core/ops/pointwise.h — elementwise ops: unary, binary, comparisons, where, copy, fill.
//
// Every op here runs through TensorIterator (broadcasting, promotion, strides) and one
// entry of the kernel contract (device_kernels.h). Conventions, as in libtorch:
//   op(a, b)       returns a new tensor of the broadcast shape and promoted dtype;
//   a.op_(b)       writes into a: b must broadcast to a's shape, the result dtype must be
//                  castable to a's dtype (a float result cannot go into a Long tensor),
//                  and a's version counter is bumped;
//   op_out(out, a, b) writes into out, which must already have the broadcast shape.
// Scalar arguments act like 0-dim "wrapped numbers" in promotion (type_promotion.h).
#pragma once

#include <optional>
#include <string>

#include "core/device_kernels.h"
#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Scalar& a, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);

Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);  // log(1 + x), accurate for |x| << 1
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
// approximate: "none" (exact, with erf) or "tanh", as in PyTorch.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor sign(const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);

// condition ? a : b, broadcasting all three; condition must be Bool.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);

// A copy of `self` with a new dtype and/or device (always copies; `device` has its index
// resolved). non_blocking: see Tensor::to.
Tensor to_copy(const Tensor& self, ScalarType dtype, Device device, bool non_blocking = false);

namespace detail {
// Initialise a tensor that was just allocated: like copy_ / fill_ but without a version
// bump (a new tensor starts at version 0), and not differentiable (ops::copy_into/fill_into).
void copy_into(const Tensor& dst, const Tensor& src, bool non_blocking = false);
void fill_into(const Tensor& dst, const Scalar& value);
}  // namespace detail

namespace ops {
extern Op<Tensor(UnaryOp, const Tensor&)> unary;
extern Op<Tensor&(UnaryOp, Tensor&)> unary_;
extern Op<Tensor(BinaryOp, const Tensor&, const Tensor&)> binary;
extern Op<Tensor&(BinaryOp, Tensor&, const Tensor&)> binary_;
extern Op<Tensor(const Tensor&, std::optional<Scalar>, std::optional<Scalar>)> clamp;
extern Op<Tensor&(Tensor&, std::optional<Scalar>, std::optional<Scalar>)> clamp_;
extern Op<Tensor(const Tensor&, const Tensor&, const Tensor&)> where;
extern Op<Tensor&(Tensor&, const Tensor&, const Scalar&)> masked_fill_;
extern Op<Tensor&(Tensor&, const Tensor&, bool non_blocking)> copy_;
extern Op<Tensor&(Tensor&, const Scalar&)> fill_;
extern Op<Tensor(const Tensor&, ScalarType, Device, bool non_blocking)> to_copy;
// detail::copy_into and fill_into as ops: writes into a tensor just made, which count as
// no in-place write (no version bump), yet a trace must see them like any other write.
extern Op<void(Tensor&, const Tensor&, bool non_blocking)> copy_into;
extern Op<void(Tensor&, const Scalar&)> fill_into;
}  // namespace ops

}  // namespace glass
