// cuda/sim/fiber_stacks.h — the stacks of the block runner's fibers, pooled per OS thread.
//
// A simulated thread that reaches a barrier runs on a fiber (block_runner.h), and every
// fiber needs a stack. Mapping one per fiber would cost system calls per thread per
// block, so each OS thread keeps the stacks its finished fibers give back and hands them
// to its next fibers: once an SM worker has run a block of a given size, it maps no more.
//
// Invariant: a stack has 64 KiB usable and an inaccessible guard page below it, so a
// kernel that overflows its stack faults instead of corrupting memory. A stack goes back
// to the pool of the OS thread that took it (Boost.Context frees a fiber's stack where
// the fiber ends, and the runner never moves a fiber between OS threads), and the pool
// unmaps its stacks when that thread exits.
#pragma once

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <cstdint>

namespace glass::cuda::sim {

inline constexpr size_t kFiberStackBytes = 64 * 1024;

// Boost.Context's StackAllocator, over the calling OS thread's pool.
struct PooledFiberStack {
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sc) noexcept;
};

// Stacks mapped so far by every thread of the process.
uint64_t fiber_stacks_mapped();

}  // namespace glass::cuda::sim
