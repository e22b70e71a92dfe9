// core/ops/random.h — random tensors, drawn from a Generator (core/generator.h).
//
// Every factory takes an optional generator where libtorch's does (rand(size, generator,
// options), ...); without one it draws from the default generator of the device it fills,
// which glass::manual_seed(s) reseeds (same seed, same calls, same numbers). The CPU
// draws from a Mersenne Twister; CUDA devices from Philox, so a simulated GPU and a real
// one draw the same numbers for the same seed.
#pragma once

#include <cstdint>
#include <optional>

#include "core/dispatcher.h"
#include "core/generator.h"
#include "core/tensor.h"

namespace glass {

Tensor rand(IntArrayRef size, const TensorOptions& options = {});  // U[0, 1)
Tensor rand(IntArrayRef size, std::optional<Generator> generator,
            const TensorOptions& options = {});
Tensor randn(IntArrayRef size, const TensorOptions& options = {});  // N(0, 1)
Tensor randn(IntArrayRef size, std::optional<Generator> generator,
             const TensorOptions& options = {});
// Integers uniform in [low, high) (dtype Long unless options say otherwise).
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, std::optional<Generator> generator,
               const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef size, std::optional<Generator> generator,
               const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options = {});
Tensor randperm(int64_t n, std::optional<Generator> generator, const TensorOptions& options = {});

namespace detail {
// Draws from the default CPU generator (for host-side shuffles, e.g. the DataLoader's seed).
uint64_t next_random_u64();
double next_uniform01();  // [0, 1), 53 random bits
}  // namespace detail

namespace ops {
// self.uniform_(from, to, generator) and self.normal_(mean, std, generator), as libtorch's:
// they draw from `generator` if given — which must be one for self's device type — else
// from the default generator of self's device.
using RandomFillSig = Tensor&(Tensor&, double, double, std::optional<Generator>);
extern Op<RandomFillSig> uniform_;
extern Op<RandomFillSig> normal_;
// self.random_(low, high, generator): integers uniform in [low, high) (what randint fills).
extern Op<Tensor&(Tensor&, int64_t, int64_t, std::optional<Generator>)> random_;
// randperm(n) as an op: a permutation of 0..n-1 drawn on the host, of a dtype on a device.
extern Op<Tensor(int64_t, ScalarType, Device, std::optional<Generator>)> randperm;
}  // namespace ops

}  // namespace glass
