// core/philox.h — Philox 4x32-10, the counter-based generator behind CUDA random numbers.
//
// Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC 2011;
// the Random123 library; cuRAND's and PyTorch's CUDA generator use it). Philox is a
// keyed bijection of a 128-bit counter: philox(counter, key) gives 4 random 32-bit words,
// and any counter can be computed without computing the ones before it. So a kernel
// thread needs no state: it computes the words of "its" counter directly, and the
// numbers cannot depend on how many threads or blocks ran, or in what order.
//
// glasstorch's stream of one random fill (CUDAGeneratorImpl, core/generator.h):
//   key     = the generator's seed (64 bits)
//   counter = (group, offset): the group index g = 0, 1, ... in the low 64 bits and the
//             generator's offset in the high 64 bits; each fill takes one offset.
// Group g supplies the elements g*V ... g*V + V-1 of the fill (V = 4 values from 32-bit
// words, 2 from 64-bit ones); the conversions from words to values are below.
//
// Plain C++: compiled for the host (the simulator, the tests, randperm) and, under nvcc,
// also for the device. Invariant: every function here is exact integer or exactly-rounded
// arithmetic, so the host and a GPU compute bit-identical results.
#pragma once

#include <cstdint>

#include "core/scalar_ops.h"  // GLASS_HOST_DEVICE

namespace glass::philox {

struct Counter {
  uint32_t word[4];
};
struct Key {
  uint32_t word[2];
};

// The constants of Philox 4x32 (Random123's PHILOX_M4x32_* and PHILOX_W32_*): two odd
// multipliers and the Weyl sequence increments (the golden ratio and sqrt(3) - 1).
inline constexpr uint32_t kM0 = 0xD2511F53u;
inline constexpr uint32_t kM1 = 0xCD9E8D57u;
inline constexpr uint32_t kW0 = 0x9E3779B9u;
inline constexpr uint32_t kW1 = 0xBB67AE85u;
inline constexpr int kRounds = 10;

// One round: two 32x32 -> 64-bit products, their halves mixed with the other words and
// the key. (On a GPU the high half is one mul.hi instruction.)
GLASS_HOST_DEVICE inline Counter philox_round(Counter c, Key k) {
  const uint64_t p0 = uint64_t(kM0) * c.word[0];
  const uint64_t p1 = uint64_t(kM1) * c.word[2];
  const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
  const uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
  return Counter{{hi1 ^ c.word[1] ^ k.word[0], lo1, hi0 ^ c.word[3] ^ k.word[1], lo0}};
}

// Philox 4x32-10: ten rounds, the key bumped by the Weyl increments between rounds.
GLASS_HOST_DEVICE inline Counter philox4x32_10(Counter c, Key k) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) {
      k.word[0] += kW0;
      k.word[1] += kW1;
    }
    c = philox_round(c, k);
  }
  return c;
}

GLASS_HOST_DEVICE inline uint32_t low32(uint64_t x) { return uint32_t(x); }
GLASS_HOST_DEVICE inline uint32_t high32(uint64_t x) { return uint32_t(x >> 32); }

// The four words of group g of the fill at (seed, offset).
GLASS_HOST_DEVICE inline Counter group_words(uint64_t seed, uint64_t offset, uint64_t group) {
  return philox4x32_10(Counter{{low32(group), high32(group), low32(offset), high32(offset)}},
                       Key{{low32(seed), high32(seed)}});
}

// ---- words to values ---------------------------------------------------------------------
// Uniform [0, 1) with as many random bits as the type's mantissa holds (24 / 53), so
// every value is exactly representable and none rounds up to 1.
GLASS_HOST_DEVICE inline float uniform_float(uint32_t w) { return float(w >> 8) * 0x1.0p-24f; }
GLASS_HOST_DEVICE inline uint64_t join64(uint32_t lo, uint32_t hi) {
  return (uint64_t(hi) << 32) | lo;
}
GLASS_HOST_DEVICE inline double uniform_double(uint32_t lo, uint32_t hi) {
  return double(join64(lo, hi) >> 11) * 0x1.0p-53;
}

}  // namespace glass::philox
