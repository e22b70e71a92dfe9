// core/deterministic.h — the switch for bitwise-reproducible kernels (libtorch's name).
//
// Some device kernels are fastest when threads race to write one element (index_put_ and
// scatter_add_ on CUDA, with duplicate indices). Float addition is not associative, so the
// order in which atomic adds land — which changes from run to run — changes the last bits
// of the sum; and without accumulation, which duplicate's store lands last is up to the
// scheduler. With deterministic algorithms on, those kernels use an order-independent
// method instead (slower, bitwise equal run to run and to the CPU: the last index wins).
//
// Invariant: a process-wide flag, off by default, read with one relaxed atomic load.
#pragma once

namespace glass {

// torch.use_deterministic_algorithms(mode): from now on, kernels with a nondeterministic
// fast path take their deterministic one.
void use_deterministic_algorithms(bool mode);
bool are_deterministic_algorithms_enabled();

}  // namespace glass
