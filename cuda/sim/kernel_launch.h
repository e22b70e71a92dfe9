// cuda/sim/kernel_launch.h — what a kernel launch hands the simulated GPU.
//
// The launch helper (cuda/launch.h) turns `kernel<<<grid, block, shmem, stream>>>(args)`
// into a KernelLaunch: a function that runs every thread of one block (the block
// runner, cuda/sim/block_runner.h), plus the memory the kernel's pointer arguments point
// into (for the stream-race checker and the timeline). The simulator queues it on the
// stream like any other operation; when its turn comes, the compute engine spreads the
// grid's blocks over the SM workers, each of which calls run_block for its blocks.
//
// Invariant: enqueue_kernel returns before any block runs (the host never waits for a
// kernel), and run_block is called exactly once per block index of the grid, on an SM
// worker thread, never on the thread that launched it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cuda/runtime.h"

namespace glass::cuda::sim {

// One memory operand of an operation: an address inside a device allocation, and
// whether the operation writes it (a write may also read).
struct Access {
  const void* ptr = nullptr;
  bool write = false;
};

struct KernelLaunch {
  std::string name;  // the kernel's name, for the timeline and error messages
  Dim3 grid, block;
  size_t dynamic_shared_bytes = 0;
  // Runs all threads of block `block_idx` on the calling SM worker. Called concurrently
  // for different blocks. An exception thrown here is the kernel's error: the simulator
  // makes it sticky on the device and rethrows it from the next synchronizing call.
  std::function<void(Dim3 block_idx)> run_block;
  std::vector<Access> accesses;
};

// Queues the launch on `stream` and returns at once.
void enqueue_kernel(StreamHandle stream, KernelLaunch launch);

}  // namespace glass::cuda::sim
