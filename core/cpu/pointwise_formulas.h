// core/cpu/pointwise_formulas.h — the per-element formula of every floating-point
// UnaryOp and BinaryOp, clamp and where, written once.
//
// Two users: the eager CPU kernels (cpu_pointwise.cpp) call these inside their loops, and
// the compiler's generated C++ (compiler/cpp_codegen.cpp) embeds this file's text — with
// vec_math.h and scalar_ops.h — at the top of every kernel it writes. So a fused kernel
// computes each element with the very expressions eager mode uses; only the rounding
// between two fused ops can differ (pointwise.h says when).
//
// Invariant: plain C++ with no include beyond the standard library and those two headers
// (the generated source must compile on its own), and no glass type but these functions.
// Floating T (float, double) for every formula; integer T too for neg, abs, relu, sign,
// the binary arithmetic and clamp, which is what the integer kernels use. Bool kernels and
// integer pow (scalar_ops::int_pow) stay in cpu_pointwise.cpp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/cpu/vec_math.h"
#include "core/scalar_ops.h"

namespace glass::cpu::formulas {

// c ? a : b without a branch. ReLU's backward is where(y > 0, g, 0) over a mask that is
// random by nature: a branch mispredicts on half the elements (~15 cycles each), while
// selecting bits with a mask vectorises — 10x faster on a 64x128 gradient.
template <class T>
inline T select(bool c, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const Bits mask = Bits(0) - Bits(c);
    return std::bit_cast<T>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask));
  } else {
    return c ? a : b;
  }
}

// ---- unary (UnaryOp's floating members, in its order) ----------------------------------
template <class T>
inline T neg(T x) {
  return static_cast<T>(-x);  // int32's -x is an int: back to T
}
template <class T>
inline T abs(T x) {
  if constexpr (std::is_integral_v<T>)
    return x < 0 ? static_cast<T>(-x) : x;
  else
    return std::abs(x);
}
template <class T>
inline T exp(T x) {
  return vec_math::exp(x);
}
template <class T>
inline T log(T x) {
  return vec_math::log(x);
}
template <class T>
inline T sqrt(T x) {
  return std::sqrt(x);
}
template <class T>
inline T rsqrt(T x) {
  return T(1) / std::sqrt(x);
}
template <class T>
inline T sin(T x) {
  return std::sin(x);
}
template <class T>
inline T cos(T x) {
  return std::cos(x);
}
template <class T>
inline T tanh(T x) {
  return vec_math::tanh(x);
}
template <class T>
inline T sigmoid(T x) {
  return vec_math::sigmoid(x);
}
// relu(NaN) is NaN (NaN < 0 is false). A select, not `x < 0 ? 0 : x`: GCC turns the
// ternary into a branch when other ops share the loop (a fused kernel), which stops it
// vectorizing; the bit select vectorizes alone and in company.
template <class T>
inline T relu(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return select(x < T(0), T(0), x);
  else
    return x < 0 ? T(0) : x;
}
// x * Phi(x), Phi the standard normal CDF, written with erf.
template <class T>
inline T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2)));
}
template <class T>
inline T gelu_tanh(T x) {
  const T k = T(M_2_SQRTPI * M_SQRT1_2);  // sqrt(2 / pi)
  return T(0.5) * x * (T(1) + vec_math::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <class T>
inline T sign(T x) {
  return scalar_ops::is_nan(x) ? x : static_cast<T>((T(0) < x) - (x < T(0)));
}
template <class T>
inline T log1p(T x) {
  return std::log1p(x);
}

// ---- binary ------------------------------------------------------------------------------
template <class T>
inline T add(T a, T b) {
  return static_cast<T>(a + b);
}
template <class T>
inline T sub(T a, T b) {
  return static_cast<T>(a - b);
}
template <class T>
inline T mul(T a, T b) {
  return static_cast<T>(a * b);
}
template <class T>
inline T div(T a, T b) {
  return static_cast<T>(a / b);
}
template <class T>
inline T pow(T a, T b) {
  return std::pow(a, b);
}
template <class T>
inline T maximum(T a, T b) {
  return scalar_ops::max_propagate_nan(a, b);
}
template <class T>
inline T minimum(T a, T b) {
  return scalar_ops::min_propagate_nan(a, b);
}

// ---- clamp: NaN stays NaN (std::max(NaN, l) returns NaN, std::min too) -------------------
template <class T>
inline T clamp(T x, T lo, T hi) {
  return scalar_ops::is_nan(x) ? x : std::min(std::max(x, lo), hi);
}
template <class T>
inline T clamp_min(T x, T lo) {
  return x < lo ? lo : x;
}
template <class T>
inline T clamp_max(T x, T hi) {
  return x > hi ? hi : x;
}

}  // namespace glass::cpu::formulas
