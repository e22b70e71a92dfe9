// core/ops/random.h — random tensors from one seeded, process-wide generator.
//
// glass::manual_seed(s) makes every later random op reproducible (same seed, same
// calls, same numbers). The generator is a 64-bit Mersenne Twister guarded by a mutex;
// values are glasstorch's own, not bit-identical to PyTorch's.
#pragma once

#include <cstdint>

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

void manual_seed(uint64_t seed);
uint64_t initial_seed();

Tensor rand(IntArrayRef size, const TensorOptions& options = {});   // U[0, 1)
Tensor randn(IntArrayRef size, const TensorOptions& options = {});  // N(0, 1)
// Integers uniform in [low, high) (dtype Long unless options say otherwise).
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options = {});

namespace detail {
// Draws from the global generator (used by the CPU random kernels).
uint64_t next_random_u64();
double next_uniform01();  // [0, 1), 53 random bits
}  // namespace detail

namespace ops {
extern Op<Tensor&(Tensor&, double, double)> uniform_;
extern Op<Tensor&(Tensor&, double, double)> normal_;
}  // namespace ops

}  // namespace glass
