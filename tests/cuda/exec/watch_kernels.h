// tests/cuda/exec/watch_kernels.h — kernels for the simulator's checks and counters
// (cuda/sim/kernel_watch.h): shared-memory races, out-of-bounds accesses, KernelStats.
//
// Racy and correct versions come in pairs that differ only in the synchronization, so a
// test shows both that the race is found and that the fix silences it.
#pragma once

#include "cuda/kernel.h"

namespace watch_test {

// ---- shared-memory races
// Each thread writes cells[t], then reads its neighbour's cells[(t + 1) % n]: with
// `barrier` a __syncthreads() separates the two, else it is a race. out[t] = the value read.
__global__ void neighbour_exchange(gptr<int> out, bool barrier);
// One warp (32 threads) sums in[0..32) through shared memory, halving each step. With
// `syncwarp`, __syncwarp() separates each step's reads from its writes (correct since
// Volta); without, lanes race. out[0] = the sum.
__global__ void warp_tree_sum(gptr<const int> in, gptr<int> out, bool syncwarp);
// out[block] = sum over the block: shuffles within each warp, one partial per warp in
// shared memory, a barrier, then warp 0 adds the partials (again with shuffles).
__global__ void shuffle_block_sum(gptr<const float> in, gptr<float> out);
// out[block] = the number of threads, counted with atomicAdd on one shared int.
__global__ void shared_atomic_count(gptr<int> out);
// A 2-D tile: tile[ty][tx] = in[...]; barrier; out[...] = tile[tx][ty] (the transpose of a
// 16 x 16 tile; blockDim (16, 16)). A racy version without the barrier when !barrier.
__global__ void tile_transpose(gptr<const float> in, gptr<float> out, int n, bool barrier);

// ---- global memory
// out[i] = in[i] for i < n.
__global__ void copy(gptr<const float> in, gptr<float> out, int n);
// out[i] = in[i + shift] for i < n: reads past the end of `in` when shift > 0.
__global__ void read_shifted(gptr<const float> in, gptr<float> out, int n, int shift);
// out[i + shift] = in[i] for i < n: writes past the end of `out` when shift > 0.
__global__ void write_shifted(gptr<const float> in, gptr<float> out, int n, int shift);
// Four floats at once, as one 16-byte access (gptr_cast): out4[i] = in4[i + shift] for
// i < n4 groups of 4.
struct alignas(16) Float4 {
  float v[4];
};
__global__ void copy_vec4(gptr<const float> in, gptr<float> out, int n4, int shift);
// out[i] = a * x[i] + b, declaring its 2 flops with GLASS_FLOPS.
__global__ void affine(gptr<const float> x, gptr<float> out, float a, float b, int n);

}  // namespace watch_test
