// cuda/kernels/pointwise_ops.cuh — the math of each elementwise op, as device functors.
//
// One functor per op, with the semantics of the CPU kernels (core/cpu/cpu_pointwise.cpp;
// the rules where plain C++ differs from PyTorch come from one place, core/scalar_ops.h)
// — NaN propagates through maximum/minimum, relu(NaN) is NaN, integer pow by squaring,
// PyTorch's Bool arithmetic — so a CUDA result equals the CPU's up to the last bits of
// transcendental functions. Math goes through the C functions (expf, exp, ...) that
// both nvcc's device library and the host's libm provide, overloaded here by type.
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "core/scalar_ops.h"
#include "cuda/kernel.h"

namespace glass::cuda::GLASS_KERNEL_NS {

// ---- float / double overloads of the C math functions -----------------------------------
#define GLASS_DEVICE_MATH(name, fn)                                   \
  __device__ __forceinline__ float name(float x) { return fn##f(x); } \
  __device__ __forceinline__ double name(double x) { return fn(x); }
GLASS_DEVICE_MATH(d_exp, exp)
GLASS_DEVICE_MATH(d_log, log)
GLASS_DEVICE_MATH(d_log1p, log1p)
GLASS_DEVICE_MATH(d_sqrt, sqrt)
GLASS_DEVICE_MATH(d_sin, sin)
GLASS_DEVICE_MATH(d_cos, cos)
GLASS_DEVICE_MATH(d_tanh, tanh)
GLASS_DEVICE_MATH(d_erf, erf)
GLASS_DEVICE_MATH(d_fabs, fabs)
#undef GLASS_DEVICE_MATH
__device__ __forceinline__ float d_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double d_pow(double a, double b) { return pow(a, b); }

// ---- unary ----------------------------------------------------------------------------
template <class T>
struct NegOp {
  __device__ T operator()(T x) const { return static_cast<T>(-x); }
};
template <class T>
struct AbsOp {
  __device__ T operator()(T x) const { return x < T(0) ? static_cast<T>(-x) : x; }
};
template <class T>
struct FAbsOp {
  __device__ T operator()(T x) const { return d_fabs(x); }
};
template <class T>
struct ExpOp {
  __device__ T operator()(T x) const { return d_exp(x); }
};
template <class T>
struct LogOp {
  __device__ T operator()(T x) const { return d_log(x); }
};
template <class T>
struct Log1pOp {
  __device__ T operator()(T x) const { return d_log1p(x); }
};
template <class T>
struct SqrtOp {
  __device__ T operator()(T x) const { return d_sqrt(x); }
};
template <class T>
struct RsqrtOp {
  __device__ T operator()(T x) const { return T(1) / d_sqrt(x); }
};
template <class T>
struct SinOp {
  __device__ T operator()(T x) const { return d_sin(x); }
};
template <class T>
struct CosOp {
  __device__ T operator()(T x) const { return d_cos(x); }
};
template <class T>
struct TanhOp {
  __device__ T operator()(T x) const { return d_tanh(x); }
};
template <class T>
struct SigmoidOp {
  __device__ T operator()(T x) const { return T(1) / (T(1) + d_exp(-x)); }
};
// relu(NaN) is NaN: the comparison is false for NaN, so x passes through.
template <class T>
struct ReluOp {
  __device__ T operator()(T x) const { return x < T(0) ? T(0) : x; }
};
template <class T>
struct GeluOp {  // x * Phi(x), Phi the standard normal CDF
  __device__ T operator()(T x) const {
    return T(0.5) * x * (T(1) + d_erf(x * T(0.70710678118654752440)));
  }
};
template <class T>
struct GeluTanhOp {
  __device__ T operator()(T x) const {
    const T k = T(0.79788456080286535588);  // sqrt(2 / pi)
    return T(0.5) * x * (T(1) + d_tanh(k * (x + T(0.044715) * x * x * x)));
  }
};
template <class T>
struct SignOp {
  __device__ T operator()(T x) const {
    if (scalar_ops::is_nan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct LogicalNotOp {
  __device__ bool operator()(bool x) const { return !x; }
};
struct BoolIdentityOp {
  __device__ bool operator()(bool x) const { return x; }
};
template <class To, class From>
struct CastOp {
  __device__ To operator()(From x) const { return static_cast<To>(x); }
};

// ---- binary ---------------------------------------------------------------------------
template <class T>
struct AddOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a + b); }
};
template <class T>
struct SubOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a - b); }
};
template <class T>
struct MulOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a * b); }
};
template <class T>
struct DivOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a / b); }
};
template <class T>
struct PowOp {
  __device__ T operator()(T base, T exp) const {
    if constexpr (std::is_integral_v<T>) {
      return scalar_ops::int_pow(base, exp);
    } else {
      return d_pow(base, exp);
    }
  }
};
template <class T>
struct MaximumOp {
  __device__ T operator()(T a, T b) const { return scalar_ops::max_propagate_nan(a, b); }
};
template <class T>
struct MinimumOp {
  __device__ T operator()(T a, T b) const { return scalar_ops::min_propagate_nan(a, b); }
};
template <class T>
struct EqOp {
  __device__ bool operator()(T a, T b) const { return a == b; }
};
template <class T>
struct NeOp {
  __device__ bool operator()(T a, T b) const { return a != b; }
};
template <class T>
struct LtOp {
  __device__ bool operator()(T a, T b) const { return a < b; }
};
template <class T>
struct LeOp {
  __device__ bool operator()(T a, T b) const { return a <= b; }
};
template <class T>
struct GtOp {
  __device__ bool operator()(T a, T b) const { return a > b; }
};
template <class T>
struct GeOp {
  __device__ bool operator()(T a, T b) const { return a >= b; }
};
// PyTorch's Bool arithmetic: + and maximum are "or", * and minimum are "and", a ** b is a || !b.
struct OrOp {
  __device__ bool operator()(bool a, bool b) const { return a || b; }
};
struct AndOp {
  __device__ bool operator()(bool a, bool b) const { return a && b; }
};
struct BoolPowOp {
  __device__ bool operator()(bool a, bool b) const { return a || !b; }
};

// ---- clamp: as clamp_kernel on the CPU -----------------------------------------------------

// Both bounds. NaN input stays NaN; with lo > hi every element becomes hi (PyTorch's rule).
template <class T>
struct ClampOp {
  T lo, hi;
  __device__ T operator()(T x) const {
    if (scalar_ops::is_nan(x)) return x;
    const T up = x < lo ? lo : x;
    return up > hi ? hi : up;
  }
};
// One bound: the comparison is false for NaN, so NaN passes through.
template <class T>
struct ClampMinOp {
  T lo;
  __device__ T operator()(T x) const { return x < lo ? lo : x; }
};
template <class T>
struct ClampMaxOp {
  T hi;
  __device__ T operator()(T x) const { return x > hi ? hi : x; }
};

}  // namespace glass::cuda::GLASS_KERNEL_NS
