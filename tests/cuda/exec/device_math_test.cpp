// tests/cuda/exec/device_math_test.cpp — the simulator's CUDA math and integer intrinsics.
//
// References are the definitions in the CUDA Math API documentation, computed here with
// plain C++ (or written out where the value is the definition).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <limits>

#include "cuda/kernel.h"

namespace {

TEST(DeviceMath, FastIntrinsicsAreTheLibmFunctions) {
  for (float x : {0.25f, 1.0f, 3.5f}) {
    EXPECT_EQ(__expf(x), std::exp(x));
    EXPECT_EQ(__logf(x), std::log(x));
    EXPECT_EQ(__sinf(x), std::sin(x));
    EXPECT_EQ(__cosf(x), std::cos(x));
    EXPECT_EQ(__powf(x, 1.5f), std::pow(x, 1.5f));
    EXPECT_EQ(__fdividef(x, 3.0f), x / 3.0f);
    EXPECT_FLOAT_EQ(rsqrtf(x), 1.0f / std::sqrt(x));
    float s, c;
    __sincosf(x, &s, &c);
    EXPECT_EQ(s, std::sin(x));
    EXPECT_EQ(c, std::cos(x));
  }
}

TEST(DeviceMath, RoundingConversionsSaturateLikeTheGpu) {
  EXPECT_EQ(__float2int_rn(2.5f), 2);  // ties to even
  EXPECT_EQ(__float2int_rn(3.5f), 4);
  EXPECT_EQ(__float2int_rn(-2.5f), -2);
  EXPECT_EQ(__float2int_rz(-2.7f), -2);
  EXPECT_EQ(__float2int_rd(-2.1f), -3);
  EXPECT_EQ(__float2int_ru(2.1f), 3);
  EXPECT_EQ(__float2int_rn(1e10f), INT_MAX);
  EXPECT_EQ(__float2int_rz(-1e10f), INT_MIN);
  EXPECT_EQ(__float2int_rn(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(__saturatef(std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_EQ(__saturatef(1.5f), 1.0f);
  EXPECT_EQ(__saturatef(-0.5f), 0.0f);
  EXPECT_EQ(__saturatef(0.25f), 0.25f);
  EXPECT_EQ(__float_as_uint(1.0f), 0x3f800000u);
  EXPECT_EQ(__uint_as_float(0x40000000u), 2.0f);
  EXPECT_EQ(__longlong_as_double(__double_as_longlong(-3.25)), -3.25);
}

TEST(DeviceMath, IntegerIntrinsics) {
  EXPECT_EQ(__popc(0xf0f0u), 8);
  EXPECT_EQ(__popcll(~0ull), 64);
  EXPECT_EQ(__clz(0), 32);
  EXPECT_EQ(__clz(1), 31);
  EXPECT_EQ(__clz(-1), 0);
  EXPECT_EQ(__clzll(1), 63);
  EXPECT_EQ(__ffs(0), 0);
  EXPECT_EQ(__ffs(8), 4);
  EXPECT_EQ(__ffsll(1ll << 40), 41);
  EXPECT_EQ(__brev(1u), 0x80000000u);
  EXPECT_EQ(__brev(0x12345678u), 0x1e6a2c48u);
  EXPECT_EQ(__umulhi(0xffffffffu, 0xffffffffu), 0xfffffffeu);
  EXPECT_EQ(__mulhi(-2, 0x40000000), -1);
  EXPECT_EQ(__umul64hi(~0ull, 2ull), 1ull);
}

TEST(DeviceMath, MinMaxOverloadsPickTheArgumentsType) {
  EXPECT_EQ(max(3, -4), 3);
  EXPECT_EQ(min(3u, 4u), 3u);
  EXPECT_EQ(max(2.5f, 1.0f), 2.5f);
  EXPECT_EQ(min(-1.0, 2.0), -1.0);
  EXPECT_EQ(max(1LL << 40, 5LL), 1LL << 40);
}

}  // namespace
