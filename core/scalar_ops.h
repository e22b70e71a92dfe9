// core/scalar_ops.h — the per-element semantics that every backend's kernels share.
//
// PyTorch's rules for the few elementwise ops where "the obvious C++" is wrong: NaN wins
// in maximum/minimum, and integer pow is exact (by squaring; a negative exponent gives 0
// except for bases 1 and -1). The CPU kernels (core/cpu/cpu_pointwise.cpp) and the CUDA
// kernels (cuda/kernels/pointwise_ops.cuh) both call these, so the two cannot drift.
// Plain C++; under nvcc the functions are also compiled for the device.
#pragma once

#include <type_traits>

#ifdef __CUDACC__
#define GLASS_HOST_DEVICE __host__ __device__
#else
#define GLASS_HOST_DEVICE
#endif

namespace glass::scalar_ops {

template <class T>
GLASS_HOST_DEVICE constexpr bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  return false;
}

template <class T>
GLASS_HOST_DEVICE T max_propagate_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a > b ? a : b;
}

template <class T>
GLASS_HOST_DEVICE T min_propagate_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a < b ? a : b;
}

// Integer power by squaring; negative exponents give 0 except for bases 1 and -1.
template <class T>
GLASS_HOST_DEVICE T int_pow(T base, T exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result *= base;
    exp >>= 1;
    base *= base;
  }
  return result;
}

}  // namespace glass::scalar_ops
