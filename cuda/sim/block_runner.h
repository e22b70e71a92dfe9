// cuda/sim/block_runner.h — how one block of a kernel runs on the simulated GPU.
//
// An SM worker calls run_block() for each block it is given; every thread of the block
// then runs on that worker's OS thread, one at a time:
//
//   * Plain mode. Threads start as a plain loop on the worker's own stack — thread 0 to
//     completion, then thread 1, ... A kernel that never reaches a barrier or a warp
//     collective costs one function call per thread and no context switch at all.
//   * Fiber mode. When a thread reaches __syncthreads() or a warp collective while
//     other threads of the block are still to run, the block switches to fibers from that
//     point: threads that already returned count as arrived (as on current GPUs), the
//     thread that reached the barrier waits on the worker's own stack, and each thread
//     not yet started gets a fiber (Boost.Context) when it is first scheduled. A
//     round-robin queue then runs each runnable thread until it waits or returns.
//
// A block barrier releases when every non-exited thread waits at the same call site; a
// warp collective when every non-exited lane named in its mask is at it. The last thread
// to arrive releases the others and carries on without a switch, so one __syncthreads()
// across n threads costs about n switches.
//
// Invariant: run_block() returns only when every thread of the block has returned, or
// throws glass::Error — for threads waiting at two different barriers, a collective that
// can never complete (never a hang), or an exception thrown by the kernel — after
// unwinding every thread's stack; either way the worker can run the next block.
// Fiber stacks are pooled per OS thread and reused (cuda/sim/fiber_stacks.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "cuda/runtime.h"

namespace glass::cuda::sim {

// One block of one launch.
struct BlockSpec {
  const char* kernel = "";  // the kernel's name, for error messages
  Dim3 grid, block;         // the launch's shape
  Dim3 block_idx;           // this block
  size_t dynamic_shared_bytes = 0;
};

// Runs thread_body once per thread of the block, with threadIdx, blockIdx, blockDim and
// gridDim set for it (cuda/sim/device.h). Not reentrant on one OS thread.
void run_block(const BlockSpec& spec, const std::function<void()>& thread_body);

// Counters over every block run in the process (all threads), for tests and benchmarks.
struct BlockRunnerStats {
  uint64_t blocks_run = 0;        // blocks finished or failed
  uint64_t fibers_created = 0;    // simulated threads that ran as fibers
  uint64_t stacks_allocated = 0;  // fiber stacks mapped (pooled, so this stops growing)
  uint64_t switches = 0;          // context switches between simulated threads
  uint64_t barriers = 0;          // block barriers released
  uint64_t warp_collectives = 0;  // warp collectives completed
};
BlockRunnerStats block_runner_stats();
void reset_block_runner_stats();

namespace detail {
// "kernel 'k', block (1, 0, 0), thread (5, 0, 0): " for the running simulated thread (empty
// outside a block), to begin an error message with.
std::string current_thread_where();
}  // namespace detail

}  // namespace glass::cuda::sim
