// lessons/09_cuda_kernels/exercises/exercises.h — lesson 09's exercises: three kernels, each
// with the launcher that launches it. Invariant: this file is the whole contract the tests
// (exercises_test.cpp) grade against; the lesson's own kernels (lesson_kernels.h) take
// kBlock from here, so lesson and exercises agree on the block size.
//
// You write each kernel and its launcher in student.cu, compiled for the simulated GPU. Use
// what lessons 08 and 09 teach: GLASS_LAUNCH (cuda/launch.h) on the current stream
// (glass::cuda::getCurrentCUDAStream()), GLASS_SHARED, __syncthreads(), __shfl_down_sync,
// and tensors read through DeviceAccessor<T, N>, made on the host by
// t.packed_accessor32<T, N, DevicePtrTraits>() and indexed in the kernel as a[i][j].
//
// How you are graded (exercises_test.cpp), so that only your own kernel can pass:
//  - student.cu may include only exercises.h, cuda/stream.h, <algorithm>, <cmath>,
//    <cstdint> and <limits>, and may not name the simulator's switches (simulator,
//    set_race_check, set_kernel_checks, clear_timeline, reset_sticky_error) or the
//    library's reductions (block_reduce, warp_reduce): the test StudentCodeUsesOnlyWhatIsAllowed
//    reads the file. (The library's cuda/kernels/reduce.cuh has exercise 1's answer.)
//  - A launcher runs no tensor op at all (no sum, matmul, zeros, empty, cpu(), copy_: every
//    op is seen on core's event channel) and no copy or memset; its outputs come allocated
//    (and filled with NaN) by the test. It launches its kernel exactly once, with the grid
//    and block its contract gives; the test also launches your kernel itself with that
//    grid and compares what the two launches did, counter for counter.
//  - Checking stays on (bounds, shared-memory races, divergent barriers), and the counters
//    must be the ones the technique gives, exactly (the test says what it expected).
#pragma once

#include "core/tensor.h"
#include "cuda/kernel.h"

namespace glass::lesson09 {

// Every exercise launches blocks of this many threads (ex. 2: kTile x kTile), as do the
// lesson's own kernels.
inline constexpr int kBlock = 256;
inline constexpr int kTile = 16;
inline constexpr int kWarp = 32;

// Exercise 1 — a warp-shuffle block reduction: the sum of squares of each row.
// out[r] = x[r][0]^2 + ... + x[r][n - 1]^2 for x of shape (rows, n): block r of kBlock
// threads does row r. Thread t first adds the squares of x[r][t], x[r][t + kBlock], ... in
// a register (any n >= 0; a thread with nothing to add holds 0). Then, unlike the lesson's
// rungs, the block reduces warp first: each warp adds its 32 values with __shfl_down_sync
// (offsets 16, 8, 4, 2, 1), lane 0 of each warp stores the warp's sum in shared memory, one
// __syncthreads(), and warp 0 adds the kBlock / kWarp warp sums with __shfl_down_sync again.
// One barrier per block; each x element loaded once.
__global__ void row_sumsq_kernel(DeviceAccessor<const float, 2> x, DeviceAccessor<float, 1> out);
// x: float, 2-D (rows >= 1, n >= 0), on cuda:0, any strides; out: float, rows elements, on
// cuda:0. Launches row_sumsq_kernel once: grid rows, block kBlock.
void row_sumsq(const Tensor& x, const Tensor& out);

// Exercise 2 — a tiled matmul.
// c = a @ b for a (M x K), b (K x N), c (M x N): each kTile x kTile block computes a
// kTile x kTile tile of c, staging kTile x kTile tiles of a and b in shared memory so that
// each element read from global memory is used kTile times. Any M, N, K >= 1 (not only
// multiples of kTile), any strides.
__global__ void tiled_matmul_kernel(DeviceAccessor<const float, 2> a,
                                    DeviceAccessor<const float, 2> b, DeviceAccessor<float, 2> c);
// a, b, c: float, 2-D, on cuda:0, shapes as above. Launches tiled_matmul_kernel once, with
// blocks of kTile x kTile threads (x: the column of c, y: its row), grid
// (ceil(N / kTile), ceil(M / kTile)).
void tiled_matmul(const Tensor& a, const Tensor& b, const Tensor& c);

// Exercise 3 — fix a shared-memory race.
// y[i] = x[i - 1] + x[i] + x[i + 1], with x taken as 0 outside [0, n): a blur. At most
// kBlurBlocks blocks of kBlock threads walk x in tiles of kBlock (a grid-stride loop); each
// tile is staged in shared memory with one element of halo on each side. student.cu gives
// the kernel with its barriers missing: the race detector reports it. Make it race-free.
inline constexpr int kBlurBlocks = 2;
__global__ void blur_kernel(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> y);
// x, y: float, 1-D, one size n >= 1, on cuda:0. Launches blur_kernel once: grid
// min(ceil(n / kBlock), kBlurBlocks), block kBlock.
void blur(const Tensor& x, const Tensor& y);

}  // namespace glass::lesson09
