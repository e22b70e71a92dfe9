// cuda/sim/device_math.cpp — the fast-math intrinsics glibc declares but does not export.
//
// glibc's <math.h> declares __expf, __sinf, ... (its internal aliases of expf, sinf)
// but libm does not export them, so a kernel calling CUDA's __expf would fail to link.
// Here they are, with the declarations of device_math.h (which match glibc's).
// Invariant: each is the libm function it stands for, at libm's accuracy.
#include <cmath>

#include "cuda/sim/device_math.h"

extern "C" {
float __expf(float x) noexcept { return std::exp(x); }
float __exp10f(float x) noexcept { return std::pow(10.0f, x); }
float __logf(float x) noexcept { return std::log(x); }
float __log2f(float x) noexcept { return std::log2(x); }
float __log10f(float x) noexcept { return std::log10(x); }
float __sinf(float x) noexcept { return std::sin(x); }
float __cosf(float x) noexcept { return std::cos(x); }
float __tanf(float x) noexcept { return std::tan(x); }
float __powf(float x, float y) noexcept { return std::pow(x, y); }
void __sincosf(float x, float* sin_out, float* cos_out) noexcept {
  *sin_out = std::sin(x);
  *cos_out = std::cos(x);
}
}
