// tests/cuda/exec/exec_kernels.h — the kernels the execution tests run (defined in *.cu).
//
// Each is ordinary CUDA C++ written to the project's convention (cuda/kernel.h), so the
// same source would compile under nvcc; here the host compiler builds it for the
// simulator and the tests call it through the block runner or GLASS_LAUNCH.
#pragma once

#include <atomic>
#include <vector>

#include "cuda/kernel.h"

namespace exec_test {

// ---- blocks and shared memory (block_kernels.cu)
// Each thread writes its threadIdx, blockIdx, blockDim and gridDim (12 ints) at its
// global linear index.
__global__ void write_builtins(gptr<int> out);
// out[blockIdx.x] = sum of the block's slice of in; blockDim.x == 256, static shared.
__global__ void block_sum_static(gptr<const float> in, gptr<float> out, int n);
// The same with dynamic shared memory of blockDim.x floats.
__global__ void block_sum_dynamic(gptr<const float> in, gptr<float> out, int n);
// Reverses each block's slice of data through dynamic shared memory.
__global__ void reverse_blocks(gptr<int> data);
// out (cols x rows) = in (rows x cols) transposed, through a 16x16 shared tile.
__global__ void transpose_tiled(gptr<const float> in, gptr<float> out, int rows, int cols);
// Inclusive prefix sum of one block (blockDim.x <= 256), Hillis-Steele: 2 barriers a step.
__global__ void block_scan(gptr<const int> in, gptr<int> out);
// Threads t >= active return at once; the others sum in[0..active) through shared memory.
__global__ void sum_with_trailing_exits(gptr<const int> in, gptr<int> out, int active);
// Threads with t % 3 == 0 return at once; thread 1 sums the others' in[t].
__global__ void sum_with_interleaved_exits(gptr<const int> in, gptr<int> out);
// Only the block's last thread reaches __syncthreads(); the others have returned.
__global__ void barrier_in_last_thread(gptr<int> out);
// out[0..3) = __syncthreads_count / _and / _or of pred[t] (written by thread 0).
__global__ void barrier_votes(gptr<const int> pred, gptr<int> out);

// ---- warp collectives (warp_kernels.cu)
// out[warp] = sum of the warp's in[] (shfl_down tree; lane 0 writes).
__global__ void warp_sum_down(gptr<const int> in, gptr<int> out);
// Every lane gets the sum over its segment of `width` lanes (xor butterfly).
__global__ void warp_sum_xor(gptr<const float> in, gptr<float> out, int width);
// Inclusive scan within each warp (shfl_up, Kogge-Stone).
__global__ void warp_inclusive_scan(gptr<const int> in, gptr<int> out);
// out[i] = in[lane src of i's segment of `width` lanes].
__global__ void warp_broadcast(gptr<const double> in, gptr<double> out, int src, int width);
// out[i] = __shfl_down_sync(in[i], delta) (values from a 2-D block's linear order).
__global__ void warp_shift_down(gptr<const int> in, gptr<int> out, unsigned delta);
// Per warp: ballots[w], any[w], all[w] of in[i] > threshold.
__global__ void warp_votes(gptr<const int> in, int threshold, gptr<unsigned> ballots, gptr<int> any,
                           gptr<int> all);
// The two-level block sum: warp shuffles, then warp 0 over the warps' sums in shared memory.
__global__ void block_sum_two_level(gptr<const float> in, gptr<float> out, int n);
// Lanes 0-15 and 16-31 swap values in two separate collectives with disjoint masks.
__global__ void split_warp_swaps(gptr<const int> in, gptr<int> out);

// ---- atomics (atomic_kernels.cu)
__global__ void histogram(gptr<const int> in, int n, gptr<unsigned> bins, int nbins);
// Every thread adds in[i] to *fsum, *dsum, *usum, subtracts it from *isub, and takes
// max / min into *maxv / *minv, and adds it to *cas_sum with an atomicCAS loop.
__global__ void atomic_mix(gptr<const int> in, int n, gptr<float> fsum, gptr<double> dsum,
                           gptr<unsigned long long> usum, gptr<int> isub, gptr<int> maxv,
                           gptr<int> minv, gptr<unsigned long long> cas_sum);
// Counts the block's threads with a shared-memory atomic: out[block] = blockDim.x.
__global__ void count_threads_in_shared(gptr<int> out);
// Each thread takes a ticket t with atomicInc (tickets wrap after `wrap`) and counts it:
// ++seen[t].
__global__ void tickets(gptr<unsigned> counter, unsigned wrap, gptr<unsigned> seen);

// ---- launches (launch_kernels.cu)
// A kernel whose pointers travel inside a struct, as a generic kernel's argument pack does.
struct AxpyArgs {
  int n = 0;
  float a = 0;
  gptr<const float> x;
  gptr<float> y;
};
#ifndef __CUDACC__
// The pack's memory, for the launch's access list (cuda/launch.h): x read, y written.
void append_accesses(const AxpyArgs& args, std::vector<glass::cuda::sim::Access>& out);
#endif
// y[i] += a * x[i]
__global__ void axpy_packed(AxpyArgs args);

// out[i] = value: a template kernel, launched as GLASS_LAUNCH(fill_value<double>, ...).
template <class T>
__global__ void fill_value(gptr<T> out, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

// ---- errors (error_kernels.cu)
// Threads t < 16 and t >= 16 wait at two different barriers: kDivergentLine and +2.
__global__ void divergent_barriers(gptr<int> out);
extern const int kDivergentLine;
// All threads pass one barrier; then the last thread waits at kDivergentAfterLine and
// the others at kDivergentAfterLine + 2.
__global__ void divergent_after_barrier(gptr<int> out);
extern const int kDivergentAfterLine;
// Lanes 0-15 shuffle (kWarpDeadlockLine) while lanes 16-31 wait at a barrier (+2).
__global__ void warp_vs_barrier(gptr<int> out);
extern const int kWarpDeadlockLine;
// The same, but lane 31 returns first: the deadlock is found when the last thread to
// run returns, not when it waits.
__global__ void warp_deadlock_at_exit(gptr<int> out);
extern const int kExitDeadlockLine;
// Lane 0 calls __shfl_sync with a mask that leaves it out.
__global__ void shuffle_without_own_lane(gptr<int> out);
// Thread `who` dereferences a null gptr after a barrier.
__global__ void null_read_after_barrier(gptr<int> out, int who);
// Every thread holds a Tracker; all but the last wait at one barrier, the last at
// another. The trackers count their destructions in g_trackers_destroyed.
__global__ void divergent_with_locals(gptr<int> out);
extern std::atomic<int> g_trackers_destroyed;

}  // namespace exec_test
