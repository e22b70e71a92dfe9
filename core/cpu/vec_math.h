// core/cpu/vec_math.h — exp, log, tanh and sigmoid written so the compiler vectorizes them.
//
// Why this file exists: GCC turns `std::exp(x)` inside a loop into one libm call per
// element, because it may only call glibc's vector versions (libmvec) under -ffast-math.
// These functions are plain C++ — no intrinsics, no -ffast-math, correct on any IEEE-754
// machine (x86-64, ARM) — made only of +, -, *, /, comparisons, bit operations and
// std::bit_cast. Inlined into the contiguous loop of cpu_loop.h, they vectorize like
// `a + b`: checked with -fopt-info-vec for float and double with GCC 12 at -O3 and
// -march=native (AVX-512 here; GCC's default for this CPU is 8 floats per instruction),
// x86-64-v2 and -v3, AArch64 NEON and SVE, and with clang 14. (Baseline x86-64, SSE2 only,
// vectorizes the float versions; it lacks the 64-bit integer compares for double.)
//
// The invariant every function keeps: no data-dependent branch, no lookup table, no call.
// Special inputs (NaN, ±inf, 0, negatives for log, overflow) are handled by computing
// the normal path for every lane and then overriding the few lanes that need it with
// detail::select, a blend written with bit masks (its comment says why not `c ? a : b`).
//
// Method (Cody & Waite; Tang; the layout of fdlibm/musl):
//   exp(x)      x = n·ln2 + r, n = round(x / ln2), |r| <= ln2/2. ln2 is split in two
//               (hi with few bits, so n·hi is exact; lo the rest) to keep r accurate.
//               e^r is its Taylor polynomial (degree 7 float, 13 double: the first
//               dropped term is under 0.1 ulp; a minimax fit would save one or two
//               multiply-adds, Taylor keeps the coefficients checkable: 1/k!).
//               e^x = e^r · 2^n, 2^n built from bits (exponent field = n + bias). n is
//               applied as two halves so that results near overflow (n = 128 for float)
//               and subnormal results (n down to -150) never need an unrepresentable
//               2^n: subnormal results are computed (gradual underflow), not flushed.
//   log(x)      x = 2^k · m with m in [sqrt(1/2), sqrt(2)), split with integer bit
//               operations; log x = k·ln2 + log(1 + f), f = m - 1 (exact), and
//               log(1 + f) = f - f²/2 + s·(f²/2 + R(s²)) with s = f / (2 + f), R the
//               Taylor series of 2·atanh(s)/s - 2 (fdlibm's rearrangement, which keeps
//               the leading terms exact). Subnormal x is rescaled by 2^25 / 2^54 first.
//   tanh(x)     |x| < 0.625: x + x³·P(x²) (Cephes' minimax fits: a polynomial for float, a
//               rational function for double); there 1 - 2/(e^2|x| + 1) would lose bits
//               to cancellation. Otherwise 1 - 2/(e^2|x| + 1) with the sign of x put
//               back; e^2|x| = inf for large |x| gives exactly ±1.
//   sigmoid(x)  e = exp(-|x|) <= 1, then 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0:
//               exp never overflows, so large |x| gives 0 or 1, never inf/inf = NaN, and
//               for x < 0 the result keeps full relative accuracy down to subnormals.
// The rounding n = round(y) and the integer/float conversions use the "magic number"
// 1.5·2^23 (1.5·2^52 for double): y + magic lands in a binade whose ulp is 1, so the sum
// is rounded to an integer and that integer sits in the low mantissa bits. This avoids
// float<->int64 conversions, which AVX2 lacks for double.
//
// Special values: exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = +0, overflow to +inf
// and underflow to +0 where the correctly rounded result is; log(NaN) = NaN,
// log(±0) = -inf, log(x < 0) = NaN, log(+inf) = +inf; tanh(±inf) = ±1, tanh(±0) = ±0;
// sigmoid(+inf) = 1, sigmoid(-inf) = 0, sigmoid(NaN) = NaN.
//
// Accuracy, measured with g++ 12 -O3 twice: -march=native, where GCC contracts a*b + c
// into FMAs, and -march=x86-64-v2, which has no FMA. "ulp" is the spacing of the result's
// type at the result. Float: all 2^32 inputs, against <cmath> in double; double: 3·10^7
// random inputs (uniform over the useful range and random bit patterns), against <cmath>
// in long double. (Sweeps of the same kind run in tests/core/cpu/vec_math_test.cpp.)
//              float: max distance from the       float: max error,   double: max error,
//              correctly rounded float (ulps)    ulps, FMA / no FMA   ulps, FMA / no FMA
//   exp        1                                  0.94 / 1.22          0.86 / 1.17
//   log        1                                  0.75 / 0.86          0.76 / 0.81
//   tanh       1                                  1.37 / 1.34          1.35 / 1.33
//   sigmoid    2  (0.005 % of inputs, all x < 0)  2.40 / 2.40          2.36 / 2.36
// sigmoid for x < 0 is e/(1 + e): exp's error, the rounding of 1 + e and the division's
// add up, with no cancellation to blame; only a more accurate exp would lower it.
// On AArch64 (GCC 12 cross-compiled for NEON and for SVE, run under qemu) a 1-in-997
// float sweep gave the same maxima as on x86 for the same inputs.
//
// Speed (bench/bench_elementwise.cpp, 16M floats, ms at 1 / 2 threads, 2-vCPU AVX-512
// Xeon VM; bench/RESULTS.md "elementwise"):
//              <cmath> per element    vec_math        for scale: relu 9.5 / 3.8,
//   exp        40.9 / 23.0            14.2 /  7.7     memcpy of 64 MiB 7.1 / 2.8
//   sigmoid    50.2 / 27.4            20.3 / 10.9
//   tanh        245 / 128             22.6 / 11.9
// What is left is arithmetic: in L1, sigmoid costs 0.53 ns per float (8 lanes wide).
// The loop must stay simple for any of this to hold: cpu_loop.h's `out[i] = f(in[i])`.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace glass::cpu::vec_math {

template <class T>
concept IeeeFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

namespace detail {

// The per-type constants; the algorithms below are written once for both types.
template <class T>
struct Ieee;

template <>
struct Ieee<float> {
  using Bits = uint32_t;
  static constexpr int kMantissaBits = 23;
  static constexpr Bits kBias = 127;
  static constexpr float kRoundMagic = 0x1.8p23f;  // 1.5 * 2^23, see round_magic()
  // exp: e^89 overflows and e^-104 < 2^-150 rounds to 0, so clamping to these changes
  // no result and keeps n in [-150, 129].
  static constexpr float kExpHi = 89.0f, kExpLo = -104.0f;
  // ln2 = kLn2Hi + kLn2Lo; kLn2Hi = 0x1.63p-1 has 9 significant bits, so n * kLn2Hi is
  // exact for |n| < 2^15 (Cephes' split).
  static constexpr float kLn2Hi = 0x1.63p-1f, kLn2Lo = -2.12194440e-4f;
  static constexpr int kExpTaylorDegree = 7;
  static constexpr int kLogTaylorTerms = 4;  // R(z) up to z^4: s^9 in log(1 + f)
  static constexpr int kSubnormalShift = 25;
};

template <>
struct Ieee<double> {
  using Bits = uint64_t;
  static constexpr int kMantissaBits = 52;
  static constexpr Bits kBias = 1023;
  static constexpr double kRoundMagic = 0x1.8p52;
  // e^710 overflows, e^-746 < 2^-1075 rounds to 0; n stays in [-1077, 1025].
  static constexpr double kExpHi = 710.0, kExpLo = -746.0;
  // fdlibm's split: kLn2Hi has 32 significant bits, n * kLn2Hi exact for |n| < 2^21.
  static constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;
  static constexpr int kExpTaylorDegree = 13;
  static constexpr int kLogTaylorTerms = 10;  // R(z) up to z^10: s^21 in log(1 + f)
  static constexpr int kSubnormalShift = 54;
};

template <IeeeFloat T>
using Bits = typename Ieee<T>::Bits;

template <IeeeFloat T>
constexpr Bits<T> bits(T x) {
  return std::bit_cast<Bits<T>>(x);
}

// y + magic, for |y| < 2^(mantissa bits - 1). In round-to-nearest the sum is
// magic + round(y) exactly: its binade has ulp 1. So `round_magic(y) - magic` is round(y)
// as T, and `bits(round_magic(y)) - bits(magic)` is round(y) as an integer.
template <IeeeFloat T>
inline T round_magic(T y) {
  return y + Ieee<T>::kRoundMagic;
}

// The integer e (0 <= e < 2^(mantissa bits - 1)) as T: the reverse trick — put e in the
// low mantissa bits of magic, then subtract magic.
template <IeeeFloat T>
inline T small_uint_to_float(Bits<T> e) {
  constexpr T magic = Ieee<T>::kRoundMagic;
  return std::bit_cast<T>(bits(magic) + e) - magic;
}

// 2^(e - bias) for a biased exponent 1 <= e <= 2·bias: a float with only an exponent field.
template <IeeeFloat T>
inline T pow2_biased(Bits<T> e) {
  return std::bit_cast<T>(e << Ieee<T>::kMantissaBits);
}

// c ? a : b, computed with bit masks. A plain ternary is a branch to GCC: when one side is
// a constant it may sink the computation of the other side into that branch, and the
// vectorizer then needs masked instructions (AVX-512) to run it, or gives up (AVX2, NEON).
// b ^ ((a ^ b) & mask) rather than (a & mask) | (b & ~mask): the same blend, but the
// latter crashes GCC 12.2 when it vectorizes for ARM SVE.
template <IeeeFloat T>
inline T select(bool c, T a, T b) {
  const Bits<T> mask = Bits<T>(0) - Bits<T>(c);  // all ones when c
  return std::bit_cast<T>(bits(b) ^ ((bits(a) ^ bits(b)) & mask));
}

// c[0] + x·(c[1] + x·(c[2] + ...)), Horner's rule. N is a constant, so the loop unrolls.
template <class T, size_t N>
inline T horner(T x, const T (&c)[N]) {
  T p = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) p = p * x + c[i];
  return p;
}

// 1/0!, 1/1!, ..., 1/D!: the Taylor coefficients of e^r. k! is exact in double up to
// 22!, so each coefficient is one correctly rounded division.
template <IeeeFloat T, int D>
struct ExpTaylor {
  T c[D + 1];
  constexpr ExpTaylor() : c{} {
    double factorial = 1;
    for (int k = 0; k <= D; ++k) {
      if (k > 0) factorial *= k;
      c[k] = static_cast<T>(1.0 / factorial);
    }
  }
};

// 2/3, 2/5, 2/7, ...: the Taylor coefficients of R(z) = 2·atanh(s)/s - 2 in z = s².
template <IeeeFloat T, int N>
struct LogTaylor {
  T c[N + 1];  // c[0] = 0, so horner(z, c) = R(z)
  constexpr LogTaylor() : c{} {
    for (int k = 1; k <= N; ++k) c[k] = static_cast<T>(2.0 / (2 * k + 1));
  }
};

// tanh(x) for |x| < 0.625, as x + x·z·P(z), z = x²: Cephes' minimax fits (tanhf.c and
// tanh.c, S. L. Moshier), a rational one for double.
inline float tanh_near_zero(float x) {
  static constexpr float p[] = {-3.33332819422e-1f, 1.33314422036e-1f, -5.37397155531e-2f,
                                2.06390887954e-2f, -5.70498872745e-3f};
  const float z = x * x;
  return x + x * z * horner(z, p);
}

inline double tanh_near_zero(double x) {
  static constexpr double p[] = {-1.61468768441708447952e3, -9.92877231001918586564e1,
                                 -9.64399179425052238628e-1};
  static constexpr double q[] = {4.84406305325125486048e3, 2.23548839060100448583e3,
                                 1.12811678491632931402e2, 1.0};
  const double z = x * x;
  return x + x * z * (horner(z, p) / horner(z, q));
}

}  // namespace detail

// e^x. Error: within 1 ulp of the correctly rounded result (table above).
template <IeeeFloat T>
inline T exp(T x) {
  using I = detail::Ieee<T>;
  using B = detail::Bits<T>;
  constexpr T magic = I::kRoundMagic;
  // Beyond these bounds the result is already inf or 0; inside them n stays small. A NaN
  // x fails both comparisons and flows through every step below to a NaN result.
  x = detail::select(x > I::kExpHi, I::kExpHi, x);
  x = detail::select(x < I::kExpLo, I::kExpLo, x);

  // x = n·ln2 + r. x - n·hi is exact (n·hi is exact and close to x), so r carries only
  // the rounding of n·lo.
  const T shifted = detail::round_magic(x * T(1.4426950408889634));  // x / ln2
  const T n = shifted - magic;
  const T r = (x - n * I::kLn2Hi) - n * I::kLn2Lo;

  static constexpr detail::ExpTaylor<T, I::kExpTaylorDegree> taylor;
  const T p = detail::horner(r, taylor.c);  // e^r, in [0.70, 1.42]

  // 2^n = 2^n1 · 2^n2 with n1 = floor(n/2), n2 = n - n1, each a normal float. Work on
  // biased exponents so everything stays unsigned: u = n + 2·bias >= 0, then
  // n1 + bias = u >> 1 and n2 + bias = u - (u >> 1).
  const B u = detail::bits(shifted) - detail::bits(magic) + 2 * I::kBias;
  const B e1 = u >> 1;
  const B e2 = u - e1;
  // p·2^n1 is exact; the second product rounds once, to inf, a normal or a subnormal.
  return p * detail::pow2_biased<T>(e1) * detail::pow2_biased<T>(e2);
}

// Natural logarithm. Error: within 1 ulp of the correctly rounded result.
template <IeeeFloat T>
inline T log(T x) {
  using I = detail::Ieee<T>;
  using B = detail::Bits<T>;
  constexpr int kMant = I::kMantissaBits;
  constexpr B kMantMask = (B(1) << kMant) - 1;
  constexpr T kInf = std::numeric_limits<T>::infinity();

  // Subnormal x has leading zero mantissa bits; scale it into the normal range first.
  const bool subnormal = x < std::numeric_limits<T>::min();
  const T scaled = x * T(B(1) << I::kSubnormalShift);
  const T xn = detail::select(subnormal, scaled, x);
  const T k_adjust = detail::select(subnormal, T(I::kSubnormalShift), T(0));

  // Split xn = 2^k · m with m in [sqrt(1/2), sqrt(2)): adding bits(1) - bits(sqrt(1/2))
  // makes the exponent field of u step up exactly where m crosses sqrt(1/2) (musl's logf).
  constexpr B kSqrtHalf = detail::bits(T(0.70710678118654752440));
  const B u = detail::bits(xn) + (detail::bits(T(1)) - kSqrtHalf);
  const T k = detail::small_uint_to_float<T>(u >> kMant) - T(I::kBias) - k_adjust;
  const T m = std::bit_cast<T>((u & kMantMask) + kSqrtHalf);

  // log(m) = log(1 + f) = f - hfsq + s·(hfsq + R(s²)), every term but f small.
  const T f = m - T(1);  // exact (Sterbenz)
  const T s = f / (T(2) + f);
  const T z = s * s;
  static constexpr detail::LogTaylor<T, I::kLogTaylorTerms> taylor;
  const T R = detail::horner(z, taylor.c);
  const T hfsq = T(0.5) * f * f;
  // Sum from small to large; k·ln2 is added in two parts like in exp.
  const T result = s * (hfsq + R) + k * I::kLn2Lo - hfsq + f + k * I::kLn2Hi;

  // The split above produced garbage for these lanes; replace it. `x >= 0` is false for
  // negative x and for NaN, which both give NaN.
  T y = detail::select(x == T(0), -kInf, result);
  y = detail::select(x == kInf, kInf, y);
  return detail::select(x >= T(0), y, std::numeric_limits<T>::quiet_NaN());
}

// Hyperbolic tangent. Error: within 1 ulp of the correctly rounded result (float).
template <IeeeFloat T>
inline T tanh(T x) {
  // Work on |x| and put the sign back last: the polynomial alone would turn -0 into +0
  // (its x³ term, -0 times a negative coefficient, is +0).
  const T a = std::abs(x);
  const T near_zero = detail::tanh_near_zero(a);
  // e^2a = inf for large a gives 1 - 0 = 1: saturation needs no special case. NaN stays NaN.
  const T far = T(1) - T(2) / (vec_math::exp(a + a) + T(1));
  return std::copysign(detail::select(a < T(0.625), near_zero, far), x);
}

// 1 / (1 + e^-x). Error: within 2 ulp of the correctly rounded result (float).
template <IeeeFloat T>
inline T sigmoid(T x) {
  const T e = vec_math::exp(-std::abs(x));                 // in [0, 1]: cannot overflow
  const T numerator = detail::select(x >= T(0), T(1), e);  // NaN: e is NaN, so is the result
  return numerator / (T(1) + e);
}

}  // namespace glass::cpu::vec_math
