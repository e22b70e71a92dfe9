// lessons/09_cuda_kernels/exercises/student.cu — your answers to lesson 09's exercises (see
// exercises.h for each contract and how it is graded, README.md for the ideas). Invariant:
// it compiles as handed out, and every exercise test fails until you write the answer.
//
// Exercises 1 and 2: write the kernel, then its launcher (whose body only reports that it
// is not written yet). Exercise 3: the kernel is written but races; fix it. Test with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_09
#include <algorithm>

#include "cuda/stream.h"
#include "exercises.h"

namespace glass::lesson09 {

using cuda::Dim3;

// ---- exercise 1 ------------------------------------------------------------------------

__global__ void row_sumsq_kernel([[maybe_unused]] DeviceAccessor<const float, 2> x,
                                 [[maybe_unused]] DeviceAccessor<float, 1> out) {
  // TODO: add this thread's squares of row blockIdx.x in a register, reduce each warp with
  // __shfl_down_sync, stage the warp sums in GLASS_SHARED memory, one __syncthreads(), and
  // let warp 0 reduce those.
}

void row_sumsq([[maybe_unused]] const Tensor& x, [[maybe_unused]] const Tensor& out) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

__global__ void tiled_matmul_kernel([[maybe_unused]] DeviceAccessor<const float, 2> a,
                                    [[maybe_unused]] DeviceAccessor<const float, 2> b,
                                    [[maybe_unused]] DeviceAccessor<float, 2> c) {
  // TODO: for each kTile-wide step along K, stage a tile of a and one of b in shared
  // memory, then accumulate this thread's element of c from them.
}

void tiled_matmul([[maybe_unused]] const Tensor& a, [[maybe_unused]] const Tensor& b,
                  [[maybe_unused]] const Tensor& c) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

// TODO: the race detector reports a race on 'tile'. Find every pair of accesses by
// different threads that nothing orders, and order them.
__global__ void blur_kernel(DeviceAccessor<const float, 1> x, DeviceAccessor<float, 1> y) {
  GLASS_SHARED(float, tile, kBlock + 2);  // tile[t + 1] is x[base + t]; a halo at each end
  const int n = x.size(0);
  const int t = threadIdx.x;
  for (int base = blockIdx.x * kBlock; base < n; base += gridDim.x * kBlock) {
    const int i = base + t;
    tile[t + 1] = i < n ? x[i] : 0.0f;
    if (t == 0) tile[0] = i > 0 ? x[i - 1] : 0.0f;
    if (t == kBlock - 1) tile[kBlock + 1] = i + 1 < n ? x[i + 1] : 0.0f;
    if (i < n) y[i] = tile[t] + tile[t + 1] + tile[t + 2];
  }
}

void blur(const Tensor& x, const Tensor& y) {
  const int64_t tiles = (x.size(0) + kBlock - 1) / kBlock;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(tiles, 1), kBlurBlocks));
  GLASS_LAUNCH(blur_kernel, Dim3(blocks), Dim3(kBlock), 0, cuda::getCurrentCUDAStream(),
               x.packed_accessor32<const float, 1, DevicePtrTraits>(),
               y.packed_accessor32<float, 1, DevicePtrTraits>());
}

}  // namespace glass::lesson09
