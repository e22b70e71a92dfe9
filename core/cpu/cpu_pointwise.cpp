// core/cpu/cpu_pointwise.cpp — CPU kernels for the elementwise entries of the contract.
//
// Each kernel turns the runtime dtype into a C++ type once (dispatch_dtype) and the
// op enum into a lambda once, outside the loop, so the loop body is one inlined
// expression (cpu_loop.h). Floating-point semantics follow PyTorch: NaN propagates
// through maximum/minimum/clamp, relu(NaN) is NaN. exp, log, tanh and sigmoid use
// core/cpu/vec_math.h instead of <cmath>: a libm call per element keeps GCC from
// vectorizing the loop (sigmoid on 16M floats: 56.6 ms with std::exp; see vec_math.h).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/cpu_loop.h"
#include "core/cpu/pointwise_formulas.h"
#include "core/scalar_ops.h"

namespace glass::cpu {
namespace {

using formulas::select;
using scalar_ops::int_pow;
using scalar_ops::is_nan;
using scalar_ops::max_propagate_nan;
using scalar_ops::min_propagate_nan;

}  // namespace

void copy_kernel(TensorIterator& iter) {
  ScalarType to = iter.dtype(0), from = iter.dtype(1);
  if (to == from && iter.is_contiguous()) {
    size_t esize = element_size(to);
    iter.for_each([&](char** data, const int64_t*, int64_t n) {
      std::memcpy(data[0], data[1], static_cast<size_t>(n) * esize);
    });
    return;
  }
  dispatch_dtype(to, "copy_", [&]<class To>() {
    dispatch_dtype(from, "copy_", [&]<class From>() {
      cpu_kernel<To, From>(iter, [](From x) { return static_cast<To>(x); });
    });
  });
}

void fill_kernel(TensorIterator& iter, const Scalar& value) {
  dispatch_dtype(iter.dtype(0), "fill_", [&]<class T>() {
    const T v = value.to<T>();
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(data[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(data[0] + i * strides[0]) = v;
      }
    });
  });
}

void unary_kernel(TensorIterator& iter, UnaryOp op) {
  dispatch_dtype(iter.common_dtype(), to_string(op), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case UnaryOp::LogicalNot: return cpu_kernel<bool, bool>(iter, [](bool x) { return !x; });
        case UnaryOp::Sign: return cpu_kernel<bool, bool>(iter, [](bool x) { return x; });
        default: GLASS_INTERNAL_ASSERT(false, to_string(op), " reached the kernel with Bool");
      }
    } else if constexpr (std::is_integral_v<T>) {
      namespace f = formulas;  // shared with generated kernels, as the floating ones below
      switch (op) {
        case UnaryOp::Neg: return cpu_kernel<T, T>(iter, [](T x) { return f::neg(x); });
        case UnaryOp::Abs: return cpu_kernel<T, T>(iter, [](T x) { return f::abs(x); });
        case UnaryOp::Relu: return cpu_kernel<T, T>(iter, [](T x) { return f::relu(x); });
        case UnaryOp::Sign: return cpu_kernel<T, T>(iter, [](T x) { return f::sign(x); });
        default:
          GLASS_INTERNAL_ASSERT(false, to_string(op), " reached the kernel with an integer dtype");
      }
    } else {
      // The formulas are shared with the compiler's generated kernels (pointwise_formulas.h).
      namespace f = formulas;
      switch (op) {
        case UnaryOp::Neg: return cpu_kernel<T, T>(iter, [](T x) { return f::neg(x); });
        case UnaryOp::Abs: return cpu_kernel<T, T>(iter, [](T x) { return f::abs(x); });
        case UnaryOp::Exp: return cpu_kernel<T, T>(iter, [](T x) { return f::exp(x); });
        case UnaryOp::Log: return cpu_kernel<T, T>(iter, [](T x) { return f::log(x); });
        case UnaryOp::Log1p: return cpu_kernel<T, T>(iter, [](T x) { return f::log1p(x); });
        case UnaryOp::Sqrt: return cpu_kernel<T, T>(iter, [](T x) { return f::sqrt(x); });
        case UnaryOp::Rsqrt: return cpu_kernel<T, T>(iter, [](T x) { return f::rsqrt(x); });
        case UnaryOp::Sin: return cpu_kernel<T, T>(iter, [](T x) { return f::sin(x); });
        case UnaryOp::Cos: return cpu_kernel<T, T>(iter, [](T x) { return f::cos(x); });
        case UnaryOp::Tanh: return cpu_kernel<T, T>(iter, [](T x) { return f::tanh(x); });
        case UnaryOp::Sigmoid: return cpu_kernel<T, T>(iter, [](T x) { return f::sigmoid(x); });
        case UnaryOp::Relu: return cpu_kernel<T, T>(iter, [](T x) { return f::relu(x); });
        case UnaryOp::Gelu: return cpu_kernel<T, T>(iter, [](T x) { return f::gelu(x); });
        case UnaryOp::GeluTanh: return cpu_kernel<T, T>(iter, [](T x) { return f::gelu_tanh(x); });
        case UnaryOp::Sign: return cpu_kernel<T, T>(iter, [](T x) { return f::sign(x); });
        case UnaryOp::LogicalNot: break;
      }
      GLASS_INTERNAL_ASSERT(false, to_string(op), " has no floating-point kernel");
    }
  });
}

void binary_kernel(TensorIterator& iter, BinaryOp op) {
  if (is_comparison(op) && op != BinaryOp::LogicalAnd && op != BinaryOp::LogicalOr) {
    dispatch_dtype(iter.common_dtype(), to_string(op), [&]<class T>() {
      switch (op) {
        case BinaryOp::Eq: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a == b; });
        case BinaryOp::Ne: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a != b; });
        case BinaryOp::Lt: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a < b; });
        case BinaryOp::Le: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a <= b; });
        case BinaryOp::Gt: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a > b; });
        case BinaryOp::Ge: return cpu_kernel<bool, T, T>(iter, [](T a, T b) { return a >= b; });
        default: break;
      }
    });
    return;
  }
  if (op == BinaryOp::LogicalAnd)
    return cpu_kernel<bool, bool, bool>(iter, [](bool a, bool b) { return a && b; });
  if (op == BinaryOp::LogicalOr)
    return cpu_kernel<bool, bool, bool>(iter, [](bool a, bool b) { return a || b; });
  dispatch_dtype(iter.common_dtype(), to_string(op), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      switch (op) {  // PyTorch: + is "or", * is "and" on bools
        case BinaryOp::Add:
        case BinaryOp::Maximum:
          return cpu_kernel<bool, bool, bool>(iter, [](bool a, bool b) { return a || b; });
        case BinaryOp::Mul:
        case BinaryOp::Minimum:
          return cpu_kernel<bool, bool, bool>(iter, [](bool a, bool b) { return a && b; });
        case BinaryOp::Pow:
          return cpu_kernel<bool, bool, bool>(iter, [](bool a, bool b) { return a || !b; });
        default: GLASS_INTERNAL_ASSERT(false, to_string(op), " reached the kernel with Bool");
      }
    } else {
      namespace f = formulas;
      switch (op) {
        case BinaryOp::Add: return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::add(a, b); });
        case BinaryOp::Sub: return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::sub(a, b); });
        case BinaryOp::Mul: return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::mul(a, b); });
        case BinaryOp::Div: return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::div(a, b); });
        case BinaryOp::Pow:
          if constexpr (std::is_integral_v<T>)
            return cpu_kernel<T, T, T>(iter, [](T a, T b) { return int_pow(a, b); });
          else
            return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::pow(a, b); });
        case BinaryOp::Maximum:
          return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::maximum(a, b); });
        case BinaryOp::Minimum:
          return cpu_kernel<T, T, T>(iter, [](T a, T b) { return f::minimum(a, b); });
        default: GLASS_INTERNAL_ASSERT(false, to_string(op), " has no arithmetic kernel");
      }
    }
  });
}

void clamp_kernel(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  dispatch_numeric(iter.common_dtype(), "clamp", [&]<class T>() {
    if (lo && hi) {
      const T l = lo->to<T>(), h = hi->to<T>();
      return cpu_kernel<T, T>(iter, [=](T x) { return formulas::clamp(x, l, h); });
    }
    if (lo) {
      const T l = lo->to<T>();
      return cpu_kernel<T, T>(iter, [=](T x) { return formulas::clamp_min(x, l); });
    }
    const T h = hi->to<T>();
    return cpu_kernel<T, T>(iter, [=](T x) { return formulas::clamp_max(x, h); });
  });
}

void where_kernel(TensorIterator& iter) {
  dispatch_dtype(iter.common_dtype(), "where", [&]<class T>() {
    cpu_kernel<T, bool, T, T>(iter, [](bool c, T a, T b) { return select(c, a, b); });
  });
}

void masked_fill_kernel(TensorIterator& iter, const Scalar& value) {
  dispatch_dtype(iter.common_dtype(), "masked_fill_", [&]<class T>() {
    const T v = value.to<T>();
    cpu_kernel<T, T, bool>(iter, [=](T x, bool m) { return select(m, v, x); });
  });
}

}  // namespace glass::cpu
