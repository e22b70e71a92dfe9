// lessons/09_cuda_kernels/exercises/exercises.h — lesson 09's exercises: three kernels.
//
// You write each kernel and the launcher that launches it, in student.cu, compiled for the
// simulated GPU. Use what lessons 08 and 09 teach: GLASS_LAUNCH (cuda/launch.h) on the
// current stream (glass::cuda::getCurrentCUDAStream()), GLASS_SHARED, __syncthreads(),
// __shfl_down_sync, and tensors read through DeviceAccessor<T, N>, made on the host by
// t.packed_accessor32<T, N, DevicePtrTraits>() and indexed in the kernel as a[i][j].
//
// The tests run your launcher with the race checker on and look at the simulator's timeline
// and counters: only your kernel may run (no library op: no glass::sum, matmul, zeros,
// nothing that launches a kernel of its own), under the name declared below, and the
// counters must show the technique each exercise is about.
#pragma once

#include "core/tensor.h"
#include "cuda/kernel.h"

namespace glass::lesson09 {

// Every exercise launches blocks of this many threads (ex. 2: kTile x kTile).
inline constexpr int kBlock = 256;
inline constexpr int kTile = 16;

// Exercise 1 — a block reduction with __shfl_down_sync.
// sums[b] = x[b * kBlock] + ... + x[b * kBlock + kBlock - 1], counting only indices below
// x.size(0): block b of blockDim.x == kBlock threads sums its chunk of x. Reduce in shared
// memory down to one warp, then finish with __shfl_down_sync (the warp syncs must show it).
__global__ void block_sum_kernel(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> sums);
// x: float, 1-D, on cuda:0, any stride; sums: float, ceil(x.size(0) / kBlock) elements, on
// cuda:0. Launches block_sum_kernel once with one block per chunk.
void block_sums(const Tensor& x, const Tensor& sums);

// Exercise 2 — a tiled matmul.
// c = a @ b for a (M x K), b (K x N), c (M x N): each kTile x kTile block computes a
// kTile x kTile tile of c, staging kTile x kTile tiles of a and b in shared memory so that
// each element read from global memory is used kTile times. Any M, N, K >= 1 (not only
// multiples of kTile), any strides.
__global__ void tiled_matmul_kernel(DeviceAccessor<const float, 2> a,
                                    DeviceAccessor<const float, 2> b, DeviceAccessor<float, 2> c);
// a, b, c: float, 2-D, on cuda:0, shapes as above. Launches tiled_matmul_kernel once, with
// blocks of kTile x kTile threads (x: the column of c, y: its row).
void tiled_matmul(const Tensor& a, const Tensor& b, const Tensor& c);

// Exercise 3 — fix a shared-memory race.
// y[i] = x[i - 1] + x[i] + x[i + 1], with x taken as 0 outside [0, n): a blur. At most
// kBlurBlocks blocks of kBlock threads walk x in tiles of kBlock (a grid-stride loop); each
// tile is staged in shared memory with one element of halo on each side. student.cu gives
// the kernel with its barriers missing: the race detector reports it. Make it race-free.
inline constexpr int kBlurBlocks = 2;
__global__ void blur_kernel(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> y);
// x, y: float, 1-D, one size, on cuda:0. Launches blur_kernel once.
void blur(const Tensor& x, const Tensor& y);

}  // namespace glass::lesson09
