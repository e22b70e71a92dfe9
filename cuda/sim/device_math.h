// cuda/sim/device_math.h — CUDA's device math that <cmath> lacks, for the simulator.
//
// <cmath> already gives kernels expf, sqrtf, fmaxf, sincosf, exp10f... (glibc declares
// the C names globally). This header adds the rest of what CUDA kernels commonly call:
// the fast-math intrinsics (__expf, __fdividef, ...), rsqrtf, the conversions with an
// explicit rounding mode, bit reinterpretations, integer intrinsics (__popc, __clz,
// __umulhi, ...) and CUDA's min/max overloads.
//
// Invariant: every function computes the math it names as accurately as the host's libm
// (the conversions and integer intrinsics exactly). The GPU's fast intrinsics (__expf,
// __sinf, ...) are approximations with a few ulp of error, so the simulator is at least as
// accurate as a GPU, never less; tests comparing a GPU with the simulator need a tolerance.
#pragma once

#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>

// glibc declares these names (its internal aliases) without exporting them, so they are
// defined in device_math.cpp; the declarations match glibc's exactly.
extern "C" {
float __expf(float x) noexcept;
float __exp10f(float x) noexcept;
float __logf(float x) noexcept;
float __log2f(float x) noexcept;
float __log10f(float x) noexcept;
float __sinf(float x) noexcept;
float __cosf(float x) noexcept;
float __tanf(float x) noexcept;
float __powf(float x, float y) noexcept;
void __sincosf(float x, float* sin_out, float* cos_out) noexcept;
}

// [SECTION] floating point
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float fdividef(float x, float y) { return x / y; }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
// Clamps to [0, 1]; NaN becomes 0, as on a GPU.
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }

// [SECTION] conversions. float -> int saturates at the int range and maps NaN to 0, as
// the GPU's cvt instructions do (a plain C++ cast would be undefined behaviour there).
namespace glass::cuda::sim::detail {
inline int saturate_to_int(double rounded) {
  if (std::isnan(rounded)) return 0;
  if (rounded >= 2147483647.0) return INT_MAX;
  if (rounded <= -2147483648.0) return INT_MIN;
  return static_cast<int>(rounded);
}
}  // namespace glass::cuda::sim::detail
inline int __float2int_rn(float x) {  // to nearest, ties to even
  return glass::cuda::sim::detail::saturate_to_int(std::nearbyint(double(x)));
}
inline int __float2int_rz(float x) {
  return glass::cuda::sim::detail::saturate_to_int(std::trunc(double(x)));
}
inline int __float2int_rd(float x) {
  return glass::cuda::sim::detail::saturate_to_int(std::floor(double(x)));
}
inline int __float2int_ru(float x) {
  return glass::cuda::sim::detail::saturate_to_int(std::ceil(double(x)));
}
inline float __int2float_rn(int x) { return static_cast<float>(x); }

inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }

// [SECTION] integer intrinsics
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
// 1 + the index of the lowest set bit; 0 when x == 0.
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) {
  return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1;
}
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1u);
  return r;
}
// The high 32 (64) bits of the full product (Philox's multiply).
inline unsigned __umulhi(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}

// [SECTION] min / max: CUDA declares these overloads for device code (global namespace).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
